"""The set-points a controller's trajectories carry (loop.setpoint_window): those not yet due
when a trajectory begins; after a stall longer than the node's lead, the motion resumes from
the last set-point sent, and after the robot refused what was sent, from where it stands
(never a jump the front would refuse); the final set-point always."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from humanoid_core.loop import MAX_RESUMES, TRAJECTORY_DELAY, Setpoint, SetpointBatcher, points_still_ahead

PERIOD = 0.005
LEAD = 0.8  # s, the HOAP-2's command_lead
SPEED = 1.0  # rad/s of the synthetic motion (below the limit)
LIMIT = np.full(3, 5.0)  # rad/s


def setpoints(first: float, count: int, speed: float = SPEED) -> list[Setpoint]:
    """A motion at ``speed`` rad/s, one set-point per PERIOD from robot time ``first``."""
    return [Setpoint(first + k * PERIOD, np.full(3, speed * (first + k * PERIOD)), np.full(3, speed))
            for k in range(count)]


def batcher(warnings: list[str] | None = None) -> SetpointBatcher:
    return SetpointBatcher(LIMIT, LEAD, send_period=0.05, warn=(warnings if warnings is not None else []).append)


def fed(computed: list[Setpoint], warnings: list[str] | None = None) -> SetpointBatcher:
    filled = batcher(warnings)
    for setpoint in computed:
        filled.add(setpoint, final=False)
    return filled


def speed_from(held: Setpoint, start: float, first: Setpoint) -> float:
    """The front's check: the speed from the set-point held at the trajectory's start to its first point."""
    return float(np.max(np.abs(first.positions - held.positions)) / (first.stamp - start))


def test_a_trajectory_carries_the_set_points_due_after_its_start():
    computed = setpoints(1.0 + LEAD, 40)
    filled, warnings = fed(computed), []
    batch = filled.flush(1.0)
    assert batch is not None and batch.start == pytest.approx(1.0 + TRAJECTORY_DELAY)
    assert [s.stamp for s in batch.setpoints] == [s.stamp for s in computed]
    later = filled.flush(1.0 + LEAD + 0.05)  # the first ones are due now: dropped, they were sent
    assert later is not None and min(s.stamp for s in later.setpoints) > 1.0 + LEAD + 0.05 + TRAJECTORY_DELAY
    assert filled.delay == 0.0 and not warnings


def accelerating(first: float, count: int) -> list[Setpoint]:
    """A motion at t^2 / 2 rad (t: robot time; within LIMIT), one set-point per PERIOD, each with
    the velocity a controller gives it: the change since the set-point before (behind the true
    one by half a period, as the walk controller's)."""
    stamps = first + PERIOD * np.arange(-1, count)
    return [Setpoint(t, np.full(3, t * t / 2), np.full(3, (t * t - s * s) / 2 / PERIOD))
            for s, t in itertools.pairwise(stamps)]


def test_a_set_point_goes_out_with_the_same_velocity_in_every_trajectory_that_carries_it():
    """Smoothed velocities (the central difference of each set-point's neighbours) for every
    set-point whose neighbours are known, the first of a trajectory too once the one before it
    went due: consecutive trajectories then carry the same path where they overlap, which the
    robot's path check does not check again (humanoid_core.guards.self_collision_guard). The
    newest, whose successor is not computed yet, keeps its own."""
    filled = fed(accelerating(1.0 + LEAD, 200))
    sent: dict[float, np.ndarray] = {}
    firsts = 0
    for k in range(12):
        batch = filled.flush(1.0 + LEAD + k * 0.05)
        assert batch is not None
        for n, (setpoint, velocity) in enumerate(zip(batch.setpoints[:-1], batch.velocities, strict=False)):
            key = round(setpoint.stamp, 6)
            if key in sent:
                np.testing.assert_array_equal(velocity, sent[key], err_msg=f"{key} (point {n} of trajectory {k})")
                firsts += n == 0
            sent[key] = velocity
            np.testing.assert_allclose(velocity, setpoint.stamp, rtol=1e-9)  # the true one
        assert batch.velocities[-1] == pytest.approx(np.full(3, batch.setpoints[-1].stamp - PERIOD / 2))
    assert firsts >= 10  # the first set-point of each trajectory after the first ones due


def test_a_motion_resumed_after_a_stall_starts_with_the_velocity_of_its_own_first_set_point():
    """The one before it was sent long before, the robot comes to it from where it holds: no
    neighbour to smooth with."""
    filled = fed(accelerating(1.0 + LEAD - 40 * PERIOD, 41))  # up to 1.8
    filled.flush(1.0)
    filled.flush(1.75)  # due up to 1.85: what came before 1.8 is behind the robot
    for setpoint in accelerating(1.805, 300):
        filled.add(setpoint, final=False)
    batch = filled.flush(2.5)
    assert batch is not None and filled.delay > 0.0
    assert batch.setpoints[0].stamp == pytest.approx(2.5 + LEAD)
    np.testing.assert_array_equal(batch.velocities[0], batch.setpoints[0].velocities)


def test_after_a_stall_the_motion_resumes_from_the_last_set_point_sent():
    """The node sent set-points up to 1.8 and then got no CPU until 2.5: the robot held the one
    for 1.8. The set-points computed since (from 1.805) go out with the next trajectory, the
    first of them the node's lead after now (the margin against a late arrival that a motion's
    first trajectory has), the rest as far apart as planned: the robot moves on from where it
    holds, well within the speed limit. Heading for where the plan is by now would be a jump
    of 0.8 rad in 5 ms, which the front refuses, and every later trajectory with it."""
    warnings: list[str] = []
    filled = fed(setpoints(1.0 + LEAD - 40 * PERIOD, 41), warnings)  # up to 1.8
    filled.flush(1.0)
    held = filled.last_sent
    assert held is not None and held.stamp == pytest.approx(1.8)
    for setpoint in setpoints(1.805, 300):  # what the node computes once it runs again
        filled.add(setpoint, final=False)
    batch = filled.flush(2.5)
    assert batch is not None
    first = batch.setpoints[0]
    np.testing.assert_allclose(first.positions, SPEED * 1.805)  # the plan's next set-point after 1.8
    assert first.stamp == pytest.approx(2.5 + LEAD)
    assert speed_from(held, batch.start, first) < 0.01 * SPEED
    assert np.diff([s.stamp for s in batch.setpoints]) == pytest.approx(PERIOD)
    assert filled.delay == pytest.approx(2.5 + LEAD - 1.805)
    assert warnings and "holds the last one sent from 0.800 s before" in warnings[-1]
    # and it stays so: the next trajectory goes on from there, no second shift
    again = filled.flush(2.55)
    assert again is not None and again.setpoints[0].stamp == pytest.approx(2.5 + LEAD)
    assert filled.delay == pytest.approx(2.5 + LEAD - 1.805) and len(warnings) == 1


def test_the_final_set_point_ends_the_motion_after_a_stall_and_the_next_motion_is_on_plan_again():
    filled = fed(setpoints(1.6, 41))
    filled.flush(1.0)  # sent up to 1.8
    rest = setpoints(1.805, 20)
    for setpoint in rest[:-1]:
        filled.add(setpoint, final=False)
    filled.add(Setpoint(rest[-1].stamp, rest[-1].positions, np.zeros(3)), final=True)
    batch = filled.flush(3.0, final=True)
    assert batch is not None and len(batch.setpoints) == 20  # the whole rest, not the final alone
    np.testing.assert_allclose(batch.setpoints[0].positions, rest[0].positions)
    np.testing.assert_allclose(batch.setpoints[-1].positions, rest[-1].positions)
    assert not np.any(batch.velocities[-1])  # ends at rest
    assert filled.delay == 0.0 and filled.ahead == []
    for setpoint in setpoints(5.0 + LEAD, 10):  # the next motion: on its own plan
        filled.add(setpoint, final=False)
    assert filled.flush(5.0).setpoints[0].stamp == pytest.approx(5.0 + LEAD)


def test_a_node_behind_its_readings_sends_only_set_points_ahead_of_the_robots_clock():
    """A queue of readings (a loaded machine): the reading handled is stamped 5.0 while the
    robot's clock reads 5.5. Before anything of the motion was sent, what a trajectory sent now
    carries is what is still ahead of the clock (the front would refuse the rest as past), and
    the motion's final set-point, due already, goes out for the node's command lead after the
    clock, not after the reading (a transport 0.37 s late, as seen on the HOAP-2 at real time,
    still reaches it)."""
    batch = fed(setpoints(5.0, 160)).flush(5.0, clock=5.5)  # set-points for 5.0 .. 5.795
    assert batch is not None and batch.start == pytest.approx(5.5 + TRAJECTORY_DELAY)
    assert min(s.stamp for s in batch.setpoints) > 5.5 + TRAJECTORY_DELAY
    assert len(batch.setpoints) == len([s for s in setpoints(5.0, 160) if s.stamp > 5.6 + 1e-6])
    # the same reading handled in time: everything after the trajectory's own start goes
    assert len(fed(setpoints(5.0, 160)).flush(5.0, clock=5.0).setpoints) == 160 - 21

    warnings: list[str] = []
    late = batcher(warnings)
    last = setpoints(5.0, 10)
    for setpoint in last[:-1]:
        late.add(setpoint, final=False)
    late.add(last[-1], final=True)
    (final,) = late.flush(5.0, final=True, clock=5.5).setpoints
    assert final.stamp == pytest.approx(5.5 + LEAD)
    np.testing.assert_array_equal(final.positions, last[-1].positions)
    assert warnings and "the final set-point came" in warnings[-1]
    # the validator's rule: the trajectory, stamped at its start, arriving 0.37 s after that
    stamp, arrival = 5.5 + TRAJECTORY_DELAY, 5.5 + TRAJECTORY_DELAY + 0.37
    assert points_still_ahead(np.array([final.stamp - stamp]), stamp, arrival, "start").all()


def test_a_final_set_point_sent_and_due_already_is_sent_again_to_end_on_it():
    filled = batcher()
    last = setpoints(5.0 + LEAD, 10)
    for setpoint in last:
        filled.add(setpoint, final=False)
    filled.flush(5.0)  # all ten sent
    filled.add(Setpoint(last[-1].stamp, last[-1].positions, np.zeros(3)), final=True)  # replaces the last
    batch = filled.flush(7.0, final=True)
    (final,) = batch.setpoints
    assert final.stamp == pytest.approx(7.0 + LEAD)
    np.testing.assert_array_equal(final.positions, last[-1].positions)


def test_a_clock_that_is_not_the_robots_is_not_used():
    """A simulation's time against the node's system clock: the readings' own time rules."""
    batch = fed(setpoints(5.0 + LEAD, 160)).flush(5.0, clock=1.8e9)
    assert batch is not None and batch.start == pytest.approx(5.0 + TRAJECTORY_DELAY)


def test_an_abandoned_motion_leaves_no_delay_to_the_next():
    """A fall ends a motion that had been held back by a stall: the next one runs on its own plan."""
    filled = fed(setpoints(1.6, 41))
    filled.flush(1.0)
    for setpoint in setpoints(1.805, 100):
        filled.add(setpoint, final=False)
    filled.flush(2.5)
    assert filled.delay > 0.0
    filled.abandon()
    assert (filled.ahead, filled.delay) == ([], 0.0)
    for setpoint in setpoints(5.0 + LEAD, 10):
        filled.add(setpoint, final=False)
    assert filled.flush(5.0).setpoints[0].stamp == pytest.approx(5.0 + LEAD)


FAST = 4.0  # rad/s: a motion near the limit (a Bioloid's arms in its walk)


def streamed(measured_at, until: float) -> tuple[SetpointBatcher, list[Setpoint], list[str], list]:
    """A motion at FAST rad/s from robot time 1.1 (the first trajectory's start), flushed at
    every reading (PERIOD apart) from 1.0 until ``until`` with the joints measured at
    ``measured_at(now)``: the batcher, the plan, the warnings and the trajectories sent
    (reading time, batch)."""
    warnings: list[str] = []
    plan = setpoints(1.1, 800, FAST)
    filled = fed(plan, warnings)
    sent = []
    for now in np.arange(1.0, until, PERIOD):
        batch = filled.flush(float(now), measured=measured_at(float(now)))
        if batch is not None:
            sent.append((float(now), batch))
    return filled, plan, warnings, sent


def test_a_robot_that_refused_what_was_sent_is_sent_the_motion_from_where_it_stands():
    """The robot took the trajectories up to robot time 1.2 and then refused one (too late,
    say): it holds there while the node's plan goes on at 4 rad/s, so every later trajectory
    would be a jump the front refuses. Once the robot is measured off every set-point of the
    last half second, the motion resumes from where it stands, reachable within the limits;
    and the robot that takes it is then followed without a second shift."""
    stopped = np.full(3, FAST * 1.2)
    filled, _plan, warnings, sent = streamed(lambda now: np.full(3, FAST * min(max(now, 1.1), 1.2)), 2.0)
    assert len(warnings) == 1 and "did not take the set-points sent" in warnings[0]
    when, resumed = next((now, batch) for now, batch in sent if batch.setpoints[0].stamp > now + 0.2)
    assert 1.2 + 0.5 < when < 1.2 + 0.6  # as soon as it is off the last half second's set-points
    first = resumed.setpoints[0]
    assert np.max(np.abs(first.positions - stopped)) / (first.stamp - resumed.start) <= LIMIT[0] / 2 + 1e-9
    assert np.diff([s.stamp for s in resumed.setpoints]) == pytest.approx(PERIOD)  # then as planned
    # the robot takes it: its set-point leads in from where it stood, then goes on as planned
    times = [resumed.start] + [s.stamp for s in resumed.setpoints]
    path = np.array([stopped[0]] + [s.positions[0] for s in resumed.setpoints])
    for now in np.arange(when + PERIOD, when + 1.0, PERIOD):
        filled.flush(float(now), measured=np.full(3, np.interp(now - 0.05, times, path)))  # lagging 50 ms
    assert len(warnings) == 1
    assert filled.delay == pytest.approx(first.stamp - first.positions[0] / FAST)  # the plan's time of it


def test_a_servo_that_lags_its_set_points_is_not_taken_for_a_refusal():
    """Measured 0.1 s behind the plan at 4 rad/s, the robot is 0.8 rad from each next
    trajectory's first set-point (the front would refuse that jump from where the servos are),
    yet it follows: nothing changes."""
    filled, _plan, warnings, sent = streamed(lambda now: np.full(3, FAST * max(1.1, now - 0.1)), 2.5)
    assert warnings == [] and filled.delay == 0.0
    assert all(batch.setpoints[0].stamp < now + TRAJECTORY_DELAY + 2 * PERIOD for now, batch in sent[1:])


def test_a_node_behind_the_robots_clock_at_a_motions_start_leads_in_to_what_is_still_ahead():
    """The node handles the motion's first reading (stamped 5.0, the robot where the plan
    begins) when the robot's clock reads 5.5: the set-points up to 5.6 are due already, and
    the plan at 4 rad/s is 2.4 rad away by then. The first trajectory leads in to the first
    set-point still ahead within the limits (the front refuses a jump, and then every later
    trajectory: the robot would never have moved)."""
    warnings: list[str] = []
    plan = setpoints(5.0, 300, FAST)
    batch = fed(plan, warnings).flush(5.0, clock=5.5, measured=plan[0].positions)
    assert batch is not None and batch.start == pytest.approx(5.5 + TRAJECTORY_DELAY)
    first = batch.setpoints[0]
    assert np.max(np.abs(first.positions - plan[0].positions)) / (first.stamp - batch.start) <= LIMIT[0] / 2 + 1e-9
    assert np.diff([s.stamp for s in batch.setpoints]) == pytest.approx(PERIOD)
    assert warnings and "out of reach from where the robot is" in warnings[-1]


def test_a_robot_that_takes_nothing_is_resumed_twice_in_a_row_then_the_motion_goes_on_as_planned():
    """A robot that refuses everything (standing where the motion began): without a bound,
    every lead-in refused would be followed by another from the same set-point, and the motion
    (and its goal) would never end. After two resumes it did not take, the motion goes on as
    planned, later by those two lead-ins only, and ends; the controller's end check then says
    the robot did not reach it."""
    filled, _plan, warnings, sent = streamed(lambda now: np.full(3, FAST * 1.1), 8.0)
    resumed = [w for w in warnings if "the motion goes on from where the robot is" in w]
    assert len(resumed) == MAX_RESUMES, warnings
    assert len(warnings) == MAX_RESUMES + 1 and "goes on as planned" in warnings[-1]
    assert filled.delay < MAX_RESUMES * (LEAD + 0.5 + PERIOD)
    assert filled.ahead == [] and sent[-1][1].setpoints[-1].stamp < 8.0  # the motion ended


def test_a_resume_is_led_in_from_the_robots_set_point_when_the_servos_are_elsewhere():
    """A lowering at 4 rad/s, refused after robot time 1.2: the robot interface holds its
    set-point there, and the servos, pulled on by gravity, are measured 0.3 rad past it. The
    robot interface leads in from its set-point: timed from the measured joints alone, the
    resume's lead-in would ask 2.8 rad/s of that set-point, more than the half of the limit
    (2.5) a lead-in keeps to."""
    warnings: list[str] = []
    filled = fed(setpoints(1.1, 800, -FAST), warnings)
    held = np.full(3, -FAST * 1.2)
    resumed = None
    for now in np.arange(1.0, 2.0, PERIOD):
        setpoint = np.full(3, -FAST * min(max(now, 1.1), 1.2))
        filled.heard_setpoint(float(now), setpoint)
        batch = filled.flush(float(now), measured=setpoint - (0.3 if now > 1.2 else 0.0))
        if batch is not None and batch.setpoints[0].stamp > now + 0.2:
            resumed = batch
            break
    assert resumed is not None and "did not take the set-points sent" in warnings[0]
    first = resumed.setpoints[0]
    assert np.max(np.abs(first.positions - held)) / (first.stamp - resumed.start) <= LIMIT[0] / 2 + 1e-9


def test_a_motion_starts_from_the_robots_set_point_while_it_is_fresh():
    """The origin of a motion (a walk's crouch, a gait's run): the robot's set-point, as the
    robot interface leads in from it (a Bioloid sags a few hundredths of a radian below its
    stance); a joint measured unknown stays unknown, and a set-point older than a trajectory's
    delay (a robot released writes none) leaves the measured joints."""
    filled = batcher()
    measured = np.array([0.10, np.nan, 0.30])
    assert np.array_equal(filled.origin(2.0, measured), measured, equal_nan=True)  # none heard
    filled.heard_setpoint(2.0, np.array([0.12, 0.2, np.nan]))
    assert np.array_equal(filled.origin(2.0, measured), [0.12, np.nan, 0.30], equal_nan=True)
    assert np.array_equal(filled.origin(2.0 + TRAJECTORY_DELAY + PERIOD, measured), measured, equal_nan=True)


def test_a_last_set_point_sent_again_is_led_in_from_the_robots_set_point_too():
    """The end check sends the last set-point again to a robot not there: led in at half the
    limits from the farther of the measured joints and the robot's set-point."""
    filled = fed(setpoints(1.1, 20))
    filled.flush(1.0, final=True)
    last = filled.last_sent
    filled.heard_setpoint(3.0, last.positions - 3.0)
    again = filled.resend_last(3.0, last.positions - 0.5)
    assert again.setpoints[0].stamp - again.start == pytest.approx(2.0 * 3.0 / LIMIT[0])  # measured alone: LEAD


def test_a_last_set_point_sent_again_by_a_node_behind_its_readings_starts_after_its_clock():
    """A node handling a reading 0.6 s old (a starved container on the robot) sends the last
    set-point again starting TRAJECTORY_DELAY after its clock, not after the old reading: a
    trajectory scheduled from the reading would already be under way, and refused as late."""
    filled = fed(setpoints(1.1, 20))
    filled.flush(1.0, final=True)
    last = filled.last_sent
    again = filled.resend_last(3.0, last.positions - 0.5, clock=3.6)
    assert again.start == pytest.approx(3.6 + TRAJECTORY_DELAY)
    assert again.setpoints[0].stamp > 3.6 + TRAJECTORY_DELAY
    assert filled.resend_last(3.0, last.positions - 0.5, clock=2.0).start == pytest.approx(3.0 + TRAJECTORY_DELAY)
