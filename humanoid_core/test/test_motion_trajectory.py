"""Dense trajectories for follow_joint_trajectory: sampling, transitions from the current state, feedback."""

import math

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import (
    JointBounds,
    Motion,
    MotionError,
    load_settings,
    plan_playback,
    sample_motion,
    transition_motion,
)

JOINTS = ("rleg_joint4", "lleg_joint4", "body_joint1")


def knees(**changes):
    fields = dict(name="knees", robot="hoap2", joint_names=JOINTS, times=[0.0, 1.0, 2.5],
                  positions=[[0.2, 0.2, 0.0], [1.0, 1.0, 0.3], [0.2, 0.2, 0.0]], holds=[0.0, 0.5, 0.0],
                  labels=("start", "bent", "end"), law=Law.CUBIC)
    fields.update(changes)
    return Motion(**fields)


def test_samples_cover_the_motion_at_the_period_with_the_law():
    motion = knees()
    trajectory = sample_motion(motion, 0.02)
    assert trajectory.joint_names == JOINTS
    assert trajectory.times[0] == 0.0 and trajectory.duration == pytest.approx(motion.duration)
    np.testing.assert_allclose(np.diff(trajectory.times), 0.02, atol=1e-12)
    spline = motion.spline()
    for i in (0, 17, 60, len(trajectory.times) - 1):
        p, v, a = spline.sample(trajectory.times[i])
        np.testing.assert_allclose(trajectory.positions[i], p)
        np.testing.assert_allclose(trajectory.velocities[i], v)
        np.testing.assert_allclose(trajectory.accelerations[i], a)
    np.testing.assert_allclose(trajectory.velocities[-1], 0.0)
    # velocities are the derivative of the positions
    numeric = np.gradient(trajectory.positions[:, 0], trajectory.times)
    np.testing.assert_allclose(numeric[5:40], trajectory.velocities[5:40, 0], atol=0.02)


def test_default_period_is_the_configured_one():
    assert np.diff(sample_motion(knees()).times)[0] == pytest.approx(load_settings().sample_period)


def test_playback_starts_from_the_current_position_with_a_limited_transition():
    current = {"rleg_joint4": 1.5, "lleg_joint4": 0.0, "body_joint1": 0.5, "head_joint1": 0.2}
    playback = plan_playback(knees(), current=current, period=0.01)
    trajectory = playback.trajectory
    np.testing.assert_allclose(trajectory.positions[0], [1.5, 0.0, 0.5])
    np.testing.assert_allclose(trajectory.velocities[0], 0.0)
    assert playback.transition_duration >= load_settings().transition_min_duration
    np.testing.assert_allclose(playback.keyframe_times, playback.transition_duration + np.array([0.0, 1.0, 2.5]))
    start = int(np.argmin(np.abs(trajectory.times - playback.transition_duration)))
    np.testing.assert_allclose(trajectory.positions[start], [0.2, 0.2, 0.0], atol=1e-9)
    assert np.all(np.diff(trajectory.times) > 0)
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    fraction = load_settings().transition_limit_fraction
    moving = trajectory.times <= playback.transition_duration
    assert np.all(np.abs(trajectory.velocities[moving]) <= fraction * bounds.velocity)
    assert np.all(np.abs(trajectory.accelerations[moving]) <= fraction * bounds.acceleration)
    assert playback.duration == pytest.approx(playback.transition_duration + 2.5)


def test_a_joint_read_beyond_its_limit_starts_its_transition_from_the_limit():
    """A simulated joint rests a hair past its soft limit after a fall: the transition starts
    at the limit, since the robot interface refuses any trajectory point outside it."""
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    current = {"rleg_joint4": float(bounds.upper[0]) + 1e-4, "lleg_joint4": float(bounds.lower[1]) - 1e-4,
               "body_joint1": 0.5}
    trajectory = plan_playback(knees(), current=current, period=0.01).trajectory
    np.testing.assert_allclose(trajectory.positions[0], [bounds.upper[0], bounds.lower[1], 0.5])
    assert np.all((trajectory.positions >= bounds.lower) & (trajectory.positions <= bounds.upper))


def test_progress_feedback_knows_which_keyframe_was_reached():
    playback = plan_playback(knees(), current={"rleg_joint4": 0.0, "lleg_joint4": 0.0, "body_joint1": 0.0})
    first = playback.keyframe_times[0]
    assert playback.keyframe_reached(0.0) == -1  # still in the transition
    assert playback.keyframe_reached(first) == 0
    assert playback.keyframe_reached(first + 1.2) == 1
    assert playback.keyframe_reached(playback.duration) == 2
    assert playback.played.label(1) == "bent"


def test_no_transition_when_already_at_the_first_keyframe():
    playback = plan_playback(knees(), current={"rleg_joint4": 0.2, "lleg_joint4": 0.2, "body_joint1": 0.0})
    assert playback.transition_duration == 0.0
    assert playback.trajectory.duration == pytest.approx(2.5)
    assert transition_motion(np.array([0.2, 0.2, 0.0]), knees(), JointBounds.for_robot("hoap2", JOINTS)) is None


def test_a_long_transition_is_slowed_to_the_limit_fraction():
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    move = transition_motion(np.array([2.2, 0.2, 0.0]), knees(), bounds, limit_fraction=0.1, min_duration=0.1)
    # cubic from rest to rest over 2 rad: 1.5 * 2 / T <= 0.1 * v_max
    assert move.duration == pytest.approx(1.5 * 2.0 / (0.1 * bounds.velocity[0]), rel=0.02)
    assert move.law is Law.CUBIC and move.labels == ("current position", "start")


def test_speed_factor_and_joint_subset():
    fast = plan_playback(knees(), speed=2.0, joints=["body_joint1"])
    assert fast.trajectory.joint_names == ("body_joint1",)
    assert fast.duration == pytest.approx(1.25) and not fast.scaling.slowed
    too_fast = plan_playback(knees(), speed=100.0)
    assert too_fast.scaling.slowed and too_fast.scaling.speed == 100.0
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    assert np.all(np.abs(too_fast.trajectory.velocities) <= bounds.velocity)


def test_interpolation_that_leaves_the_joint_range_is_refused():
    # body_joint1 range is [-1, 90] deg: a fast pass through 0 deg overshoots below -1 deg
    motion = knees(positions=[[0.2, 0.2, 0.0], [1.0, 1.0, math.radians(0.5)], [0.2, 0.2, 0.0]],
                   velocities=[[0, 0, 0], [0, 0, -1.0], [0, 0, 0]], holds=None)
    with pytest.raises(MotionError, match=r"motion 'knees' between bent and the next keyframe .*body_joint1 = -"):
        plan_playback(motion)


def test_current_state_must_cover_the_played_joints():
    with pytest.raises(MotionError, match=r"no value for joint.*body_joint1"):
        plan_playback(knees(), current={"rleg_joint4": 0.0, "lleg_joint4": 0.0})


def test_keyframes_outside_the_limits_are_refused_before_playing():
    motion = knees(positions=[[0.2, 0.2, 0.0], [3.0, 1.0, 0.3], [0.2, 0.2, 0.0]])
    with pytest.raises(MotionError, match=r"motion 'knees', bent: rleg_joint4 = 171.89 deg is outside"):
        plan_playback(motion)
