"""The set-points a controller's trajectories carry (loop.setpoint_window): those not yet due
when a trajectory begins; after a stall longer than the node's lead, the motion resumes from
the last set-point sent (never a jump the front would refuse); the final set-point always."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_core.loop import TRAJECTORY_DELAY, Setpoint, SetpointBatcher, points_still_ahead

PERIOD = 0.005
LEAD = 0.8  # s, the HOAP-2's command_lead
SPEED = 1.0  # rad/s of the synthetic motion (below the limit)
LIMIT = np.full(3, 5.0)  # rad/s


def setpoints(first: float, count: int) -> list[Setpoint]:
    """A motion at SPEED rad/s, one set-point per PERIOD from robot time ``first``."""
    return [Setpoint(first + k * PERIOD, np.full(3, SPEED * (first + k * PERIOD)), np.full(3, SPEED))
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
