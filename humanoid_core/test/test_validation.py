"""Command validation against a robot's joint table: every rejection names what and why."""

import math

import numpy as np
import pytest

from humanoid_core.loop import CommandRejectedError, CommandValidator, ErrorCode, PointData
from humanoid_description import RobotModel


@pytest.fixture(scope="module")
def joints():
    return RobotModel("hoap2").joints


@pytest.fixture(scope="module")
def validator(joints):
    return CommandValidator(joints, start_tolerance=0.1, max_points=1000, max_duration=600.0)


def here(joints) -> np.ndarray:
    return np.zeros(len(joints))


def rejected(call, *args, **kwargs) -> CommandRejectedError:
    with pytest.raises(CommandRejectedError) as info:
        call(*args, **kwargs)
    return info.value


def test_a_good_trajectory_comes_back_as_arrays(validator, joints):
    names = ["rarm_joint1", "larm_joint1"]
    traj = validator.trajectory(names, [PointData(1.0, [0.5, 0.5], [0.0, 0.0]), PointData(2.0, [1.0, 1.0], [0, 0])],
                                here(joints))
    assert traj.joint_names == tuple(names)
    assert list(traj.joint_indices) == [joints.index(n) for n in names]
    np.testing.assert_allclose(traj.positions, [[0.5, 0.5], [1.0, 1.0]])
    assert traj.velocities is not None and traj.accelerations is None


@pytest.mark.parametrize(("names", "points", "code", "words"), [
    (["nope"], [PointData(1.0, [0.0])], ErrorCode.INVALID_JOINTS, ["unknown joint 'nope'", "rleg_joint1"]),
    (["rarm_joint1", "rarm_joint1"], [PointData(1.0, [0.0, 0.0])], ErrorCode.INVALID_JOINTS, ["more than once"]),
    ([], [PointData(1.0, [])], ErrorCode.INVALID_JOINTS, ["no joint names"]),
    (["rarm_joint1"], [], ErrorCode.INVALID_GOAL, ["no points"]),
    (["rarm_joint1"], [PointData(1.0, [0.0, 0.0])], ErrorCode.INVALID_GOAL, ["point 0 positions: 2 values for 1"]),
    (["rarm_joint1"], [PointData(1.0, [0.1]), PointData(2.0, [math.nan])], ErrorCode.INVALID_GOAL,
     ["point 1 positions", "rarm_joint1", "nan"]),
    (["rarm_joint1"], [PointData(1.0, [0.1]), PointData(1.0, [0.2])], ErrorCode.INVALID_GOAL,
     ["point 1", "not after point 0"]),
    (["rarm_joint1"], [PointData(-1.0, [0.1])], ErrorCode.INVALID_GOAL, ["point 0", "finite time"]),
    (["rarm_joint1"], [PointData(1.0, [0.1], [0.0]), PointData(2.0, [0.2])], ErrorCode.INVALID_GOAL,
     ["point 1", "velocities must be given for every point"]),
    (["rarm_joint1"], [PointData(1.0, [0.1]), PointData(2.0, [1e308])], ErrorCode.INVALID_GOAL,
     ["point 1, joint rarm_joint1", "outside its limits"]),
    (["rarm_joint1"], [PointData(1.0, [0.1], [99.0])], ErrorCode.INVALID_GOAL,
     ["point 0, joint rarm_joint1: velocity 99 rad/s exceeds its limit"]),
    (["rarm_joint1"], [PointData(0.01, [1.0])], ErrorCode.INVALID_GOAL,
     ["joint rarm_joint1 would have to move at 100 rad/s", "the current position to point 0"]),
    (["rarm_joint1"], [PointData(0.0, [0.5])], ErrorCode.INVALID_GOAL, ["point 0 at time 0", "0.5 rad away"]),
])
def test_bad_trajectories_are_rejected_with_code_and_reason(validator, joints, names, points, code, words):
    error = rejected(validator.trajectory, names, points, here(joints))
    assert error.code is code
    for word in words:
        assert word in str(error), (word, str(error))


def test_the_first_offender_is_reported_among_many(validator, joints):
    points = [PointData(1.0 + i, [0.1]) for i in range(50)]
    points[20] = PointData(21.0, [5.0])
    points[30] = PointData(31.0, [-5.0])
    assert "point 20," in str(rejected(validator.trajectory, ["rarm_joint1"], points, here(joints)))


def test_more_points_than_the_bound_are_rejected_naming_the_parameter(validator, joints):
    points = [PointData(0.01 * (i + 1), [0.0]) for i in range(1001)]
    error = rejected(validator.trajectory, ["rarm_joint1"], points, here(joints))
    assert error.code is ErrorCode.INVALID_GOAL and "1001 points" in str(error)
    assert "max_trajectory_points = 1000" in str(error)
    validator.trajectory(["rarm_joint1"], points[:1000], here(joints))  # exactly the bound is fine


def test_a_trajectory_longer_than_the_bound_is_rejected_naming_both_durations(validator, joints):
    """Nanoseconds typed as seconds: two points, the second at 1e6 s."""
    points = [PointData(1.0, [0.1]), PointData(1e6, [0.1])]
    error = rejected(validator.trajectory, ["rarm_joint1"], points, here(joints))
    assert error.code is ErrorCode.INVALID_GOAL
    assert "lasts 1e+06 s" in str(error) and "max_trajectory_duration = 600 s" in str(error), str(error)
    validator.trajectory(["rarm_joint1"], [PointData(1.0, [0.1]), PointData(600.0, [0.1])], here(joints))


def test_a_trajectory_ending_beyond_the_bound_from_a_later_start_is_rejected(validator, joints):
    """The robot interface holds a goal from its receipt: a header stamp far ahead counts."""
    points = [PointData(1.0, [0.1]), PointData(10.0, [0.1])]
    error = rejected(validator.trajectory, ["rarm_joint1"], points, here(joints), start_time=1e6, now=5.0)
    assert error.code is ErrorCode.INVALID_GOAL
    assert "ends 1e+06 s from now" in str(error) and "max_trajectory_duration = 600 s" in str(error), str(error)
    validator.trajectory(["rarm_joint1"], points, here(joints), start_time=595.0, now=5.0)
    # a stamp past: what is left of it counts
    late = [PointData(1.0, [0.1]), PointData(700.0, [0.1])]
    validator.trajectory(["rarm_joint1"], late, here(joints), start_time=5.0, now=200.0)
    error = rejected(validator.trajectory, ["rarm_joint1"], late, here(joints), start_time=5.0, now=50.0)
    assert "ends 655 s from now (header stamp 45 s ago, last point at 700 s)" in str(error), str(error)


def test_a_trajectory_that_ended_before_now_is_old(validator, joints):
    error = rejected(validator.trajectory, ["rarm_joint1"], [PointData(1.0, [0.1])], here(joints),
                     start_time=10.0, now=20.0)
    assert error.code is ErrorCode.OLD_HEADER_TIMESTAMP and "ended 9 s ago" in str(error)


def test_a_trajectory_ending_too_soon_to_join_is_old(validator, joints):
    """Its last point due within LATE_JOIN_MARGIN of now: no point left to head for (the
    executor's join would refuse it too)."""
    error = rejected(validator.trajectory, ["rarm_joint1"], [PointData(0.5, [0.0]), PointData(1.0, [0.0])],
                     here(joints), start_time=10.0, now=10.99)
    assert error.code is ErrorCode.OLD_HEADER_TIMESTAMP and "ends 0.01 s from now, too soon to join" in str(error)


def test_the_first_segment_of_a_trajectory_starting_later_counts_the_time_until_its_start(validator, joints):
    vmax = joints.velocity[joints.index("rarm_joint1")]
    point = [PointData(0.1, [vmax * 0.15])]  # 1.5 x the limit over 0.1 s, 0.75 x over 0.2 s
    error = rejected(validator.trajectory, ["rarm_joint1"], point, here(joints), start_time=10.0, now=10.0)
    assert "from the current position" in str(error)
    validator.trajectory(["rarm_joint1"], point, here(joints), start_time=10.1, now=10.0)


def test_streaming_setpoints_are_clamped_with_a_warning(validator, joints):
    upper = joints.upper[joints.index("rarm_joint1")]
    setpoint = validator.setpoint(["rarm_joint1"], [upper + 1.0], [99.0])
    assert setpoint.positions[0] == upper and abs(setpoint.velocities[0]) <= joints.velocity[0]
    assert len(setpoint.warnings) == 2 and "clamped to its limit" in setpoint.warnings[0]
    with pytest.raises(CommandRejectedError, match="outside its limits"):
        validator.setpoint(["rarm_joint1"], [upper + 1.0], clamp=False)
    with pytest.raises(CommandRejectedError, match="positions: 2 values for 1 joints"):
        validator.setpoint(["rarm_joint1"], [0.0, 0.0])
