"""The self-collision veto in the ROS-free control loop, on the ideal driver: trajectories
into the head are refused before any motion, streaming set-points toward it stop short of
contact and the robot follows again once commands are safe; off, everything goes through."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_core.guards import SelfCollisionGuard, SelfCollisionGuardParameters
from humanoid_core.loop import (
    TRAJECTORY_DELAY,
    CommandRejectedError,
    ControlLoop,
    ErrorCode,
    IdealDriver,
    InterfaceParameters,
    PointData,
    RunState,
    Setpoint,
    SetpointBatcher,
    TrajectoryRequest,
)
from humanoid_description import CollisionModel, load_model

ROBOT = "hoap2"
#: The right arm raised, turned in and bent: its forearm goes over the head (a true collision
#: of test_collision_geometry.py).
ARM = ("rarm_joint1", "rarm_joint3", "rarm_joint4")
INTO_HEAD = np.radians([-90.0, 90.0, -60.0])
#: Raised and turned in, elbow straight: clear of the head.
RAISED = np.radians([-90.0, 90.0, 0.0])


class Log:
    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.infos: list[str] = []


def make(veto: bool = True):
    model = load_model(ROBOT)
    log = Log()
    guard = SelfCollisionGuard(ROBOT, SelfCollisionGuardParameters(veto=veto), warn=log.warnings.append,
                               inform=log.infos.append)
    driver = IdealDriver(model.joints, initial=model.pose_positions("zero"))
    loop = ControlLoop(driver, model.joints, InterfaceParameters(control_rate=200.0), guard)
    loop.start()
    return loop, driver, guard, log


def arm(driver) -> np.ndarray:
    joints = load_model(ROBOT).joints
    return np.array([driver.position[joints.index(j)] for j in ARM])


def distance_to_head(positions: np.ndarray) -> float:
    model = load_model(ROBOT)
    pairs = {frozenset((p.link_a, p.link_b)): p.distance for p in CollisionModel(model).distances(positions)}
    return min(d for pair, d in pairs.items() if "head" in pair and any(link.startswith("rarm") for link in pair))


def run_until(loop, condition, cycles=5000):
    for _ in range(cycles):
        if condition():
            return
        loop.cycle()
    raise AssertionError("condition not reached")


def test_a_trajectory_into_the_head_is_refused_before_any_motion():
    loop, driver, guard, _ = make()
    loop.cycle()
    before = driver.position.copy()
    with pytest.raises(CommandRejectedError) as refused:
        loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED), PointData(2.5, INTO_HEAD)]))
    error = refused.value
    assert error.code is ErrorCode.SELF_COLLISION
    message = str(error)
    assert "rarm_forearm" in message and "head" in message and "safety distance 5 mm" in message
    time_said = float(message.split("t = ")[1].split(" s")[0])
    assert 1.5 < time_said < 2.5  # the raised arm is clear; the bend brings it there
    assert all(f"{joint} = " in message for joint in ARM)
    for _ in range(100):
        loop.cycle()
    np.testing.assert_array_equal(driver.position, before)
    assert loop.trajectory_executor.active is None and guard.refused_trajectories == 1
    assert loop.status().commands_rejected == 1


def test_a_clear_trajectory_runs_to_its_end():
    loop, driver, _, _ = make()
    run = loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED), PointData(2.5, np.zeros(3))]))
    run_until(loop, run.done.is_set)
    assert run.state is RunState.SUCCEEDED, run.message
    np.testing.assert_allclose(arm(driver), np.zeros(3), atol=0.05)


def test_streaming_toward_the_head_stops_short_of_contact_and_follows_again_when_safe():
    loop, driver, guard, log = make()
    loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED)]))
    run_until(loop, lambda: loop.trajectory_executor.active is None)
    elbow = np.radians(np.arange(0.0, -60.5, -0.5))  # 0.5 deg steps, as a 100 Hz stream would send them
    for value in elbow:
        loop.stream(["rarm_joint4"], [float(value)])
        loop.cycle()
    run_until(loop, lambda: np.allclose(driver.velocity, 0.0))
    held = driver.position.copy()
    assert held[load_model(ROBOT).joints.index("rarm_joint4")] > INTO_HEAD[2] + 0.1  # stopped well before -60
    clearance = distance_to_head(held)
    assert 0.005 <= clearance < 0.02, clearance  # short of contact, within a step or two of the safety distance
    assert guard.holding is not None and "rarm_" in guard.holding
    assert len(log.warnings) >= 1 and "rarm_" in log.warnings[0] and "head" in log.warnings[0]
    assert guard.status()[0].level.name == "WARN"
    # later commands further in are refused too, without moving the robot
    loop.stream(["rarm_joint4"], [float(INTO_HEAD[2])])
    for _ in range(50):
        loop.cycle()
    np.testing.assert_allclose(driver.position, held)
    # a safe command is followed again
    loop.stream(["rarm_joint4"], [-0.2])
    run_until(loop, lambda: abs(driver.position[load_model(ROBOT).joints.index("rarm_joint4")] + 0.2) < 1e-6)
    assert guard.holding is None and log.infos and "following set-points again" in log.infos[-1]


def test_after_a_refused_set_point_a_trajectory_starts_from_where_the_robot_is_held():
    loop, driver, _, _ = make()
    loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED)]))
    run_until(loop, lambda: loop.trajectory_executor.active is None)
    loop.stream(list(ARM), list(INTO_HEAD))  # one jump into the head: refused, the raised arm is held
    for _ in range(20):
        loop.cycle()
    np.testing.assert_allclose(arm(driver), RAISED, atol=1e-9)
    run = loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, np.zeros(3))]))  # from there: clear
    run_until(loop, run.done.is_set)
    assert run.state is RunState.SUCCEEDED, run.message


def test_with_the_veto_off_everything_goes_through():
    loop, driver, guard, _ = make(veto=False)
    run = loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED), PointData(2.5, INTO_HEAD)]))
    run_until(loop, run.done.is_set)
    assert run.state is RunState.SUCCEEDED
    assert distance_to_head(driver.position) < 0.0
    assert guard.refused_trajectories == guard.refused_setpoints == 0
    assert "off" in guard.status()[0].message


# -- a stream of overlapping trajectories (a walk's): each new path checked where it is new --------
LEAD, SEND_PERIOD, SPACING = 0.7, 0.05, 0.01  # s: as the walk controller streams (docs/walking.md)
RISE = 3.0  # s the arm takes from the zero pose to RAISED


def raising(t: float) -> tuple[np.ndarray, np.ndarray]:
    """A smooth rise of the arm to RAISED (clear of the head all along): positions, velocities."""
    s = min(max(t / RISE, 0.0), 1.0)
    rate = 0.5 * np.pi / RISE * np.sin(np.pi * s) if 0.0 < t < RISE else 0.0
    return RAISED * (0.5 - 0.5 * np.cos(np.pi * s)), RAISED * rate


def streamed(start: float, path=raising, lead: float = LEAD) -> TrajectoryRequest:
    """The trajectory sent for ``start``: the path's points every SPACING up to ``lead`` ahead."""
    points = []
    for k in range(1, round(lead / SPACING) + 1):
        positions, velocities = path(start + k * SPACING)
        points.append(PointData(k * SPACING, positions, velocities))
    return TrajectoryRequest(ARM, points, start_time=start)


def send_at(loop, driver, start: float, request: TrajectoryRequest):
    """Run the loop to 0.1 s before ``start`` (as the walk controller sends), then send."""
    run_until(loop, lambda: driver.now() >= start - 0.1)
    return loop.accept_trajectory(request)


def test_a_stream_of_overlapping_trajectories_is_checked_only_where_each_is_new():
    loop, driver, guard, _ = make()
    samples = []
    for k in range(12):
        start = 0.2 + k * SEND_PERIOD
        before = guard.path_samples
        send_at(loop, driver, start, streamed(start))
        samples.append(guard.path_samples - before)
    first, later = samples[0], samples[-4:]
    assert first >= LEAD / guard.params.trajectory_sample_period  # the whole first path
    assert max(later) < first / 4, samples  # the new 0.05 s (and the joins) of each later one
    assert guard.refused_trajectories == 0
    values = guard.status()[0].values
    assert values["trajectory_samples"] == str(guard.path_samples)


def test_a_controllers_stream_through_its_batcher_is_checked_only_where_each_trajectory_is_new():
    """As the walk controller streams: one set-point per SPACING, computed LEAD ahead with its
    own velocity (the change since the one before), sent by a SetpointBatcher every SEND_PERIOD
    with its velocities smoothed. A set-point goes out with the same velocity in every
    trajectory that carries it, so each later path is checked over its new SEND_PERIOD and the
    segment before it, not again at its join with the running one."""
    loop, driver, guard, _ = make()
    batcher = SetpointBatcher(np.full(len(ARM), 5.0), LEAD, SEND_PERIOD)
    previous = raising(LEAD)[0]
    samples = []
    for k in range(1, 120):
        now = k * SPACING
        positions = raising(now + LEAD)[0]
        batcher.add(Setpoint(now + LEAD, positions, (positions - previous) / SPACING), final=False)
        previous = positions
        batch = batcher.flush(now)
        if batch is None:
            continue
        run_until(loop, lambda now=now: driver.now() >= now - 1e-9)
        before = guard.path_samples
        loop.accept_trajectory(TrajectoryRequest(ARM, [
            PointData(s.stamp - batch.start, s.positions, v) for s, v in zip(batch.setpoints, batch.velocities,
                                                                             strict=True)], start_time=batch.start))
        samples.append(guard.path_samples - before)
    new = (SEND_PERIOD + SPACING) / guard.params.trajectory_sample_period  # and no refinement: clear of the head
    assert samples[0] >= (LEAD - TRAJECTORY_DELAY) / guard.params.trajectory_sample_period  # the whole first path
    # (the first trajectories join the running one ever later before their first set-point,
    # the motion's first, computed LEAD ahead: from the first set-point due on, each joins on one)
    assert max(samples[-8:]) <= new + 2, str(samples)
    assert guard.refused_trajectories == 0


BEND = 0.4  # s the elbow takes to bend into the head


def into_the_head_after(turn: float):
    """The rise, then (from ``turn`` s on) a bend of the elbow into the head."""
    def path(t: float) -> tuple[np.ndarray, np.ndarray]:
        if t < turn:
            return raising(t)
        s = min((t - turn) / BEND, 1.0)
        raised, _ = raising(turn)
        return raised + (INTO_HEAD - raised) * s, (INTO_HEAD - raised) / BEND * (s < 1.0)
    return path


def test_a_streamed_trajectory_whose_new_part_goes_into_the_head_is_refused():
    loop, driver, guard, _ = make()
    for k in range(8):
        send_at(loop, driver, 0.2 + k * SEND_PERIOD, streamed(0.2 + k * SEND_PERIOD))
    start = 0.2 + 8 * SEND_PERIOD
    turn = start + LEAD - SEND_PERIOD  # where the path cleared before ends: from there on it is new
    with pytest.raises(CommandRejectedError) as refused:
        send_at(loop, driver, start, streamed(start, into_the_head_after(turn), lead=LEAD + BEND))
    assert refused.value.code is ErrorCode.SELF_COLLISION
    time_said = float(str(refused.value).split("t = ")[1].split(" s")[0])
    assert turn - start < time_said <= turn - start + BEND  # from the trajectory's start, where it happens
    assert guard.refused_trajectories == 1


def raised(_t: float) -> tuple[np.ndarray, np.ndarray]:
    return RAISED, np.zeros(3)


def into_the_head_and_back(begin: float, each_way: float = 0.25):
    """The arm held raised, its elbow bent into the head and back out from ``begin`` s on."""
    def path(t: float) -> tuple[np.ndarray, np.ndarray]:
        s = (t - begin) / each_way
        if not 0.0 < s < 2.0:
            return raised(t)
        reach, rate = (s, 1.0) if s <= 1.0 else (2.0 - s, -1.0)
        return RAISED + (INTO_HEAD - RAISED) * reach, (INTO_HEAD - RAISED) / each_way * rate
    return path


def test_a_trajectory_changed_where_it_overlaps_the_cleared_path_is_checked_there():
    loop, driver, guard, _ = make()
    run = loop.accept_trajectory(TrajectoryRequest(ARM, [PointData(1.5, RAISED)]))
    run_until(loop, run.done.is_set)
    first = driver.now() + 0.2
    for k in range(8):
        send_at(loop, driver, first + k * SEND_PERIOD, streamed(first + k * SEND_PERIOD, raised))
    start = first + 8 * SEND_PERIOD
    begin = start + 0.1  # in and out again by start + 0.6, within the 0.65 s shared in time with the one before
    with pytest.raises(CommandRejectedError) as refused:
        send_at(loop, driver, start, streamed(start, into_the_head_and_back(begin)))
    assert refused.value.code is ErrorCode.SELF_COLLISION, refused.value
    time_said = float(str(refused.value).split("t = ")[1].split(" s")[0])
    assert begin - start < time_said < begin - start + 0.5
    # the path cleared before is still the reference: the next unchanged trajectory is cleared
    send_at(loop, driver, start + SEND_PERIOD, streamed(start + SEND_PERIOD, raised))
    assert guard.refused_trajectories == 1
