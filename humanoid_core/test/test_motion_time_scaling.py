"""Time scaling to the joint limits: never exceeded on dense samples, factor close to minimal, reported."""

import math
from dataclasses import replace

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import JointBounds, Motion, peak_rates, scale_to_limits
from humanoid_description import load_config, load_model

JOINTS = ("rleg_joint4", "lleg_joint4", "rarm_joint1")
DENSE = 5e-4  # s: much finer than the check points and the playback samples


def fast_motion(law, velocities=False):
    """A motion far too fast for the HOAP-2, with uneven intervals and (optionally) passing velocities."""
    times = [0.0, 0.05, 0.12, 0.3, 0.33]
    positions = [[0.0, 0.1, 0.0], [1.0, 0.8, 1.5], [0.4, 1.2, -0.5], [2.0, 0.3, 0.2], [1.9, 0.3, 0.25]]
    v = [[0, 0, 0], [3.0, 5.0, -20.0], [4.0, -10.0, 8.0], [-1.0, 2.0, 3.0], [0, 0, 0]] if velocities else None
    return Motion(name="fast", robot="hoap2", joint_names=JOINTS, times=times, positions=positions,
                  velocities=v, law=law)


def dense_rates(motion):
    times = np.arange(0.0, motion.duration + DENSE, DENSE)
    _, velocity, acceleration = motion.spline().sample_many(times)
    return np.max(np.abs(velocity), axis=0), np.max(np.abs(acceleration), axis=0)


def linear_knot_accelerations(motion):
    """Velocity jumps at keyframes over the mean adjacent half-interval, rest before and after."""
    velocity = np.diff(motion.positions, axis=0) / np.diff(motion.times)[:, None]
    rest = np.zeros((1, len(motion.joint_names)))
    jumps = np.abs(np.diff(np.vstack([rest, velocity, rest]), axis=0))
    widths = np.diff(motion.times)
    spans = 0.5 * (np.append(0.0, widths) + np.append(widths, 0.0))
    return np.max(jumps / spans[:, None], axis=0)


@pytest.mark.parametrize(("law", "velocities"), [
    (Law.LINEAR, False), (Law.CUBIC, False), (Law.CUBIC, True), (Law.QUINTIC, False), (Law.QUINTIC, True),
    (Law.TWO_SEGMENT, False), (Law.TWO_SEGMENT, True)])
def test_scaled_motion_never_exceeds_the_limits_on_dense_samples(law, velocities):
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    motion = fast_motion(law, velocities)
    scaled, scaling = scale_to_limits(motion, bounds)
    assert scaling.slowed and scaling.limit_factor > 2.0
    np.testing.assert_allclose(scaled.duration, motion.duration * scaling.limit_factor)
    peak_v, peak_a = dense_rates(scaled)
    assert np.all(peak_v <= bounds.velocity), peak_v / bounds.velocity
    assert np.all(peak_a <= bounds.acceleration), peak_a / bounds.acceleration
    if law is Law.LINEAR:
        assert np.all(linear_knot_accelerations(scaled) <= bounds.acceleration)
    # and it is not slowed much more than needed: some joint comes close to a limit
    assert max(np.max(peak_v / bounds.velocity), np.max(np.sqrt(peak_a / bounds.acceleration)),
               np.max(np.sqrt(linear_knot_accelerations(scaled) / bounds.acceleration))
               if law is Law.LINEAR else 0.0) > 0.98


@pytest.mark.parametrize(("distance", "duration", "rate"), [(1.0, 0.1, "velocity"), (0.01, 0.01, "acceleration")])
def test_factor_is_within_two_percent_of_the_analytic_minimum(distance, duration, rate):
    """Rest-to-rest cubic: peak velocity 1.5 d / T, peak acceleration 6 d / T^2."""
    bounds = JointBounds.for_robot("hoap2", ("rleg_joint4",))
    v_max, a_max = bounds.velocity[0], bounds.acceleration[0]
    analytic = max(1.5 * distance / duration / v_max, math.sqrt(6.0 * distance / duration**2 / a_max))
    motion = Motion(name="step", robot="hoap2", joint_names=("rleg_joint4",), times=[0.0, duration],
                    positions=[[0.0], [distance]], law=Law.CUBIC)
    _, scaling = scale_to_limits(motion, bounds)
    assert analytic > 1.1
    assert analytic <= scaling.limit_factor <= 1.02 * analytic
    assert scaling.limiting_joint == "rleg_joint4" and scaling.limiting_rate == rate
    assert f"slowed by {scaling.limit_factor:.3f}x" in scaling.describe()


def test_two_segment_factor_matches_its_bang_bang_profile():
    """Rest-to-rest two-segment law: peak velocity 2 d / T, accelerations +-4 d / T^2."""
    bounds = JointBounds.for_robot("bioloid", ("r_knee",))
    motion = Motion(name="step", robot="bioloid", joint_names=("r_knee",), times=[0.0, 0.2],
                    positions=[[0.0], [1.5]], law=Law.TWO_SEGMENT)
    analytic = max(2 * 1.5 / 0.2 / bounds.velocity[0], math.sqrt(4 * 1.5 / 0.04 / bounds.acceleration[0]))
    _, scaling = scale_to_limits(motion, bounds)
    assert analytic <= scaling.limit_factor <= 1.02 * analytic


def test_speed_factor_applies_first_then_the_limits():
    bounds = JointBounds.for_robot("hoap2", JOINTS)
    slow = fast_motion(Law.CUBIC).stretched(20.0)  # comfortably within the limits
    same, nominal = scale_to_limits(slow, bounds)
    assert not nominal.slowed and nominal.limit_factor == 1.0 and same.duration == slow.duration
    assert "within the joint limits" in nominal.describe()
    double, scaling = scale_to_limits(slow, bounds, speed=2.0)
    assert not scaling.slowed and double.duration == pytest.approx(slow.duration / 2)
    fastest = [scale_to_limits(slow, bounds, speed=s) for s in (50.0, 500.0)]
    for _, scaling in fastest:
        assert scaling.slowed and scaling.stretch == pytest.approx(scaling.limit_factor / scaling.speed)
    # asked for more than the limits allow, both play at the same, fastest admissible pace
    assert fastest[0][0].duration == pytest.approx(fastest[1][0].duration, rel=1e-3)
    with pytest.raises(ValueError, match="speed factor"):
        scale_to_limits(slow, bounds, speed=0.0)


def test_limits_are_the_actuators_and_never_above_the_urdf():
    bounds = JointBounds.for_robot("hoap2")
    table = load_model("hoap2").joints
    actuators = load_config("hoap2").actuators
    assert np.all(bounds.velocity <= table.velocity) and np.all(bounds.velocity <= actuators.max_velocity)
    assert bounds.velocity[0] == pytest.approx(57 * 1000 / 209 * math.pi / 180)  # 57 pulse/ms
    assert bounds.acceleration[0] == pytest.approx(5 * 1e6 / 209 * math.pi / 180)  # 5 pulse/ms^2
    # a joint with a lower limit sets the factor
    tight = bounds.select(JOINTS)
    tight = replace(tight, velocity=tight.velocity * np.array([1.0, 1.0, 0.1]))
    _, scaling = scale_to_limits(fast_motion(Law.CUBIC), tight)
    assert scaling.limiting_joint == "rarm_joint1" and scaling.limiting_rate == "velocity"


def test_peak_rates_of_a_single_pose_are_zero():
    pose = Motion(name="pose", robot="hoap2", joint_names=JOINTS, times=[0.0], positions=[[0.1, 0.2, 0.3]])
    peaks = peak_rates(pose, JointBounds.for_robot("hoap2"))
    assert np.all(peaks.velocity == 0) and np.all(peaks.acceleration == 0)
    assert scale_to_limits(pose, JointBounds.for_robot("hoap2"))[1].limit_factor == 1.0
