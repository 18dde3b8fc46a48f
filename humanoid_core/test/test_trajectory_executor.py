"""The trajectory executor in-process: the path it samples, tolerances, preemption,
plans made outside its lock, stale and NaN readings treated as unknown."""

import math

import numpy as np
import pytest

from humanoid_core.loop import (
    CommandRejectedError,
    ErrorCode,
    JointState,
    PlanOutdatedError,
    RunState,
    Tolerances,
    TrajectoryExecutor,
    ValidatedSetpoint,
    ValidatedTrajectory,
    run_spline,
)

NAMES = ("a", "b", "c")


def trajectory(times, positions, joints=(0, 1), velocities=None, start_time=None) -> ValidatedTrajectory:
    return ValidatedTrajectory(tuple(NAMES[i] for i in joints), np.array(joints), np.array(times, float),
                               np.array(positions, float), None if velocities is None else np.array(velocities),
                               None, start_time)


def reading(t: float, position, valid=(True, True, True), velocity=None) -> JointState:
    position = np.array(position, float)
    return JointState(t, position, np.zeros(3) if velocity is None else np.array(velocity, float),
                      np.zeros(3), np.array(valid))


def loose(joints: int = 2, **changes) -> Tolerances:
    return Tolerances(**{"path": np.full(joints, math.inf), "goal": np.full(joints, 0.01), "goal_time": 0.5,
                         **changes})


@pytest.fixture
def executor() -> TrajectoryExecutor:
    ex = TrajectoryExecutor(NAMES)
    ex.hold(np.array([0.0, 0.0, 0.3]))
    return ex


def test_an_unchanged_hold_returns_the_same_command_object(executor):
    first = executor.update(reading(0.0, [0, 0, 0.3]))
    assert executor.update(reading(0.01, [0, 0, 0.3])) is first
    np.testing.assert_allclose(first.position, [0, 0, 0.3])


def test_the_run_follows_exactly_the_planned_path_from_the_current_setpoint(executor):
    plan = executor.plan(trajectory([1.0, 2.0], [[0.5, -0.5], [1.0, 0.0]]), now=10.0)
    assert plan.start == 10.0 and plan.end == 12.0
    run = executor.start(plan, loose())
    times = np.linspace(10.0, 12.0, 41)
    expected = plan.configurations(times)
    for t, row in zip(times, expected, strict=True):
        command = executor.update(reading(t, row))
        np.testing.assert_allclose(command.position, row, atol=1e-12)
    np.testing.assert_allclose(expected[0], [0, 0, 0.3])  # starts from the held set-point
    np.testing.assert_allclose(expected[-1], [1.0, 0.0, 0.3])  # joint c, not in the trajectory, holds
    assert run.state is RunState.SUCCEEDED and run.done.is_set()


def test_run_spline_is_the_pure_definition_of_the_path():
    traj = trajectory([0.5], [[1.0, 2.0]])
    spline = run_spline(traj, 3.0, np.array([0.0, 0.0]), np.zeros(2))
    np.testing.assert_allclose(spline.times, [3.0, 3.5])
    np.testing.assert_allclose(spline.sample(3.25)[0], [0.5, 1.0])  # linear law: positions only


def test_a_plan_made_before_another_command_is_refused_and_nothing_starts(executor):
    plan = executor.plan(trajectory([1.0], [[0.5, 0.5]]), now=0.0)
    executor.stream(ValidatedSetpoint(np.array([2]), np.array([0.1]), None))
    with pytest.raises(PlanOutdatedError):
        executor.start(plan, loose())
    assert executor.active is None


def test_a_plan_during_a_run_starts_where_the_run_will_be(executor):
    first = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(), now=0.0)
    executor.update(reading(0.2, [0.2, 0.2, 0.3]))
    plan = executor.plan(trajectory([1.0], [[0.0, 0.0]]), now=0.5)
    np.testing.assert_allclose(plan.setpoint[:2], [0.5, 0.5])  # the first run's path at 0.5
    second = executor.start(plan, loose())
    assert first.state is RunState.PREEMPTED and first.code is ErrorCode.PREEMPTED
    assert executor.active is second


def test_a_future_start_holds_until_its_header_time(executor):
    executor.run(trajectory([1.0], [[1.0, 1.0]], start_time=5.0), loose(), now=0.0)
    np.testing.assert_allclose(executor.update(reading(4.0, [0, 0, 0.3])).position, [0, 0, 0.3])
    np.testing.assert_allclose(executor.update(reading(5.5, [0, 0, 0.3])).position, [0.5, 0.5, 0.3])


def test_a_trajectory_starting_later_replaces_the_running_one_from_its_start(executor):
    """As ROS's joint_trajectory_controller: until the new run's start the joints follow
    the run it preempted (and, sent before that one started, the one before), then join
    the new path from where they are: set-points sent ahead are immune to delays."""
    first = executor.run(trajectory([10.0], [[10.0, 10.0]]), loose(), now=0.0)  # 1 rad/s
    second = executor.run(trajectory([1.0], [[0.0, 0.0]], start_time=3.0), loose(), now=1.0)
    third = executor.run(trajectory([1.0], [[5.0, 5.0]], start_time=4.0), loose(), now=1.5)
    assert first.state is RunState.PREEMPTED and second.state is RunState.PREEMPTED
    np.testing.assert_allclose(executor.update(reading(2.0, [2, 2, 0.3])).position, [2.0, 2.0, 0.3])
    command = executor.update(reading(3.5, [3.5, 3.5, 0.3]))  # the second run's path
    np.testing.assert_allclose(command.position[:2], second.spline.sample(3.5)[0])
    assert 0.0 < command.position[0] < 3.0
    joined = executor.update(reading(4.0, [0, 0, 0.3])).position  # the third starts where the second is
    np.testing.assert_allclose(joined[:2], second.spline.sample(4.0)[0])
    np.testing.assert_allclose(executor.update(reading(5.0, [5, 5, 0.3])).position, [5.0, 5.0, 0.3])
    assert third.state is RunState.SUCCEEDED


def test_a_late_trajectory_keeps_its_timeline_instead_of_being_shifted(executor):
    """Stamped 0.25 s before it can start, a ramp is joined where its timeline is then."""
    late = trajectory([0.1, 0.2, 0.3, 0.4, 0.5], [[x, x] for x in (0.1, 0.2, 0.3, 0.4, 0.5)], start_time=1.0)
    plan = executor.plan(late, now=1.25)
    assert plan.start == 1.25 and plan.end == pytest.approx(1.5)  # it ends when its stamp says
    np.testing.assert_allclose(plan.trajectory.times, [0.05, 0.15, 0.25])  # the points not yet due
    np.testing.assert_allclose(plan.configurations(np.array([1.3, 1.4, 1.5]))[:, 0], [0.3, 0.4, 0.5])


def test_a_stream_of_late_overlapping_trajectories_follows_its_pattern_without_going_back(executor):
    """A walk's stream: each trajectory holds the pattern ahead of its stamp and arrives 30 ms
    late; the set-points follow the pattern forward, never back by the delay."""
    pattern = lambda t: 0.5 * np.sin(2.0 * np.pi * t)  # noqa: E731
    written, t = [], 0.0
    for k in range(20):
        stamp = 0.1 * k
        times = np.arange(0.01, 0.31, 0.01)
        executor.run(trajectory(times, [[pattern(stamp + x)] * 2 for x in times], start_time=stamp), loose(),
                     now=stamp + 0.03)
        while t < stamp + 0.1:
            t = round(t + 0.005, 6)
            written.append((t, executor.update(reading(t, [0, 0, 0.3])).position[0]))
    times, positions = np.array(written).T
    following = times > 0.05  # after the first trajectory's own lead-in from rest
    np.testing.assert_allclose(positions[following], pattern(times[following]), atol=0.02)


def test_a_stream_sent_ahead_keeps_moving_when_each_trajectory_takes_over(executor):
    """A walk's stream sent ahead (each trajectory stamped 0.1 s after its sending, on the
    control grid): where a run takes over, at its start, the set-point keeps the motion's
    velocity. It was zero there (the spline's first point counted as before its span): one
    control cycle of standstill per trajectory, a jolt that unloaded the walking robot's feet."""
    speed = 0.5  # rad/s, a ramp
    velocities, t = [], 0.0
    for k in range(12):
        sent = round(0.05 * k, 6)  # every 50 ms, stamped 0.1 s ahead on the control grid
        stamp = round(sent + 0.1, 6)
        times = np.arange(0.01, 0.41, 0.01)
        executor.run(trajectory(times, [[speed * (stamp + x)] * 2 for x in times], start_time=stamp,
                                velocities=[[speed] * 2 for _ in times]), loose(), now=sent)
        while t < sent + 0.05 - 1e-9:
            t = round(t + 0.005, 6)
            velocities.append((t, executor.update(reading(t, [0, 0, 0.3])).velocity[0]))
    times, speeds = np.array(velocities).T
    moving = times >= 0.2  # past the first run's lead-in from rest
    np.testing.assert_allclose(speeds[moving], speed, atol=1e-9)


def test_a_trajectory_that_ended_before_it_could_start_is_refused(executor):
    with pytest.raises(CommandRejectedError, match=r"ended 0\.1 s before it could start") as refused:
        executor.plan(trajectory([0.1, 0.2], [[0.1, 0.1], [0.2, 0.2]], start_time=1.0), now=1.3)
    assert refused.value.code is ErrorCode.OLD_HEADER_TIMESTAMP


def test_a_path_violation_aborts_naming_the_joint_and_holds_where_measured(executor):
    run = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(path=np.array([0.1, 0.1])), now=0.0)
    executor.update(reading(0.1, [0.1, 0.1, 0.3]))
    command = executor.update(reading(0.5, [0.5, 0.2, 0.3]))  # b lags 0.3 rad
    assert run.state is RunState.ABORTED and run.code is ErrorCode.PATH_TOLERANCE_VIOLATED
    assert "joint b" in run.message and "0.3000 rad" in run.message
    np.testing.assert_allclose(command.position, [0.5, 0.2, 0.3])
    assert executor.active is None


def test_the_goal_must_be_reached_within_the_goal_time(executor):
    run = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(), now=0.0)
    executor.update(reading(1.0, [1.0, 0.9, 0.3]))
    assert run.state is RunState.RUNNING  # within goal_time: still waiting
    executor.update(reading(1.6, [1.0, 0.9, 0.3]))
    assert run.state is RunState.ABORTED and run.code is ErrorCode.GOAL_TOLERANCE_VIOLATED
    assert "joint b" in run.message


def test_a_goal_velocity_tolerance_waits_for_the_joint_to_settle(executor):
    run = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(goal_velocity=np.array([0.05, 0.05])), now=0.0)
    executor.update(reading(1.0, [1.0, 1.0, 0.3], velocity=[0.0, 0.2, 0.0]))
    assert run.state is RunState.RUNNING
    executor.update(reading(1.1, [1.0, 1.0, 0.3], velocity=[0.0, 0.01, 0.0]))
    assert run.state is RunState.SUCCEEDED


def test_a_path_velocity_tolerance_is_enforced(executor):
    run = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(path_velocity=np.array([0.5, 0.5])), now=0.0)
    executor.update(reading(0.5, [0.5, 0.5, 0.3], velocity=[1.0, 0.0, 0.0]))  # b should move at 1 rad/s
    assert run.code is ErrorCode.PATH_TOLERANCE_VIOLATED and "velocity" in run.message and "joint b" in run.message


@pytest.mark.parametrize("stale", ["invalid", "nan"])
def test_an_unknown_reading_is_never_compared_and_aborts_after_the_stale_timeout(executor, stale):
    run = executor.run(trajectory([2.0], [[1.0, 1.0]]), loose(path=np.array([0.05, 0.05])), now=0.0)
    position = [0.5, 99.0 if stale == "invalid" else math.nan, 0.3]  # b's value must not be used
    valid = (True, stale == "nan", True)
    executor.update(reading(1.0, position, valid))
    assert run.state is RunState.RUNNING  # 99 rad off, but unknown: no path violation
    assert math.isnan(run.feedback.actual_position[1]) and run.feedback.actual_position[0] == 0.5
    executor.update(reading(1.0 + TrajectoryExecutor.STALE_TIMEOUT, position, valid))
    assert run.code is ErrorCode.DRIVER_FAILURE and "joint b" in run.message
    command = executor.update(reading(1.6, position, valid))
    assert np.all(np.isfinite(command.position))  # an unknown reading never becomes a set-point


def test_a_joint_read_again_holds_where_it_is_measured(executor):
    executor.update(reading(0.0, [0, 0, 0.3], valid=(True, True, False)))
    command = executor.update(reading(0.1, [0, 0, 0.7]))
    np.testing.assert_allclose(command.position, [0, 0, 0.7])


def test_cancel_stops_where_the_setpoint_is(executor):
    run = executor.run(trajectory([1.0], [[1.0, 1.0]]), loose(), now=0.0)
    executor.update(reading(0.5, [0.5, 0.5, 0.3]))
    executor.stop(run)
    assert run.state is RunState.CANCELED
    np.testing.assert_allclose(executor.update(reading(0.6, [0.5, 0.5, 0.3])).position, [0.5, 0.5, 0.3])
    np.testing.assert_allclose(executor.update(reading(0.7, [0.5, 0.5, 0.3])).velocity, 0.0)
