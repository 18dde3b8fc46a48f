"""IK gaits of the quadruped (ROS-free): the planar leg IK inverts the model's own
kinematics, respects the 90 deg knee limit, and the gait patterns phase the legs as named."""

import math

import numpy as np
import pytest

from humanoid_control.quadruped_gaits.foot_path import EllipticPath
from humanoid_control.quadruped_gaits.leg_ik import solve
from humanoid_control.quadruped_gaits.patterns import GaitError, IKGait, default_parameters, robot_legs
from humanoid_description.model import load_model

ROBOT = "bioloid_quadruped"


@pytest.fixture(scope="module")
def model():
    return load_model(ROBOT)


def test_leg_ik_puts_the_models_foot_where_asked(model):
    """Solved angles, applied to the Pinocchio model, put each foot point at the target."""
    legs = robot_legs(model)
    for name, leg in legs.items():
        foot = model.config.feet[name].sole
        for x, z in [(0.0, -0.12), (0.03, -0.11), (-0.025, -0.13), (0.01, -0.102)]:
            angles = solve(leg.geometry, leg.joints.knee_points, x, z, math.radians(90))
            assert angles.reached
            q = np.zeros(len(model.joints))
            q[model.joints.index(leg.joints.hip)] = angles.hip
            q[model.joints.index(leg.joints.knee)] = angles.knee
            hip = model.frame_placement(model.joints[leg.joints.hip].child_link, q).translation
            point = model.frame_placement(foot, q).translation - hip
            assert point[[0, 2]] == pytest.approx([x, z], abs=1e-6), (name, x, z)


def test_leg_ik_reproduces_the_home_pose_and_limits_the_knee(model):
    leg = robot_legs(model)["front_left"]
    home = solve(leg.geometry, "backward", 0.0, -leg.home_height, math.radians(90))
    assert math.degrees(home.hip) == pytest.approx(27.66, abs=0.01)  # robot.yaml home
    assert math.degrees(home.knee) == pytest.approx(-60.0, abs=0.01)
    too_close = solve(leg.geometry, "backward", 0.0, -0.05, math.radians(90))
    assert not too_close.reached and math.degrees(too_close.knee) == pytest.approx(-90.0)
    forward = solve(leg.geometry, "forward", 0.0, -leg.home_height, math.radians(90))
    assert (forward.hip, forward.knee) == pytest.approx((-home.hip, -home.knee))


def test_elliptic_path_swings_forward_up_and_pushes_back_on_the_ground():
    path = EllipticPath(centre_x=0.0, centre_z=-0.12, half_stride=0.02, lift=0.015, stance_depth=0.0)
    assert path.point(0.0) == pytest.approx((-0.02, -0.12))
    assert path.point(math.pi / 2) == pytest.approx((0.0, -0.105))  # top of the swing
    assert path.point(math.pi) == pytest.approx((0.02, -0.12))
    assert path.point(1.5 * math.pi) == pytest.approx((0.0, -0.12))  # flat stance
    full = EllipticPath(0.0, -0.12, 0.02, 0.015, stance_depth=1.0)
    assert full.point(1.5 * math.pi) == pytest.approx((0.0, -0.135))  # the reference's full ellipse


@pytest.mark.parametrize(("gait", "together", "opposed"), [
    ("trot", [("front_left", "back_right"), ("front_right", "back_left")], [("front_left", "front_right")]),
    ("pace", [("front_left", "back_left"), ("front_right", "back_right")], [("front_left", "front_right")]),
    ("bound", [("front_left", "front_right"), ("back_left", "back_right")], [("front_left", "back_left")]),
])
def test_gait_patterns_move_the_named_legs_together(model, gait, together, opposed):
    g = IKGait(model, gait, default_parameters(model, frequency=1.0))
    legs = g.legs
    for t in np.linspace(0.0, 1.0, 23):
        q = g.positions(t)
        angle = {name: q[model.joints.index(leg.joints.hip)] for name, leg in legs.items()}
        for a, b in together:
            assert angle[a] == pytest.approx(angle[b])
        later = g.positions(t + 0.5)
        for a, b in opposed:  # b does half a cycle later what a does now
            assert later[model.joints.index(legs[b].joints.hip)] == pytest.approx(angle[a])
    assert g.unreached == 0
    times, positions = g.samples(cycles=2)
    assert len(times) == 2 * 28 + 1 and times[-1] == pytest.approx(2.0)
    assert np.all(positions >= model.joints.lower) and np.all(positions <= model.joints.upper)


def test_bad_gait_requests_are_refused_with_the_reason(model):
    with pytest.raises(GaitError, match=r"unknown gait 'canter'.*trot"):
        IKGait(model, "canter", default_parameters(model))
    with pytest.raises(GaitError, match=r"3 Hz is outside 0\.5-2 Hz"):
        default_parameters(model, frequency=3.0)
    with pytest.raises(GaitError, match="hoap2 has no legs section"):
        robot_legs(load_model("hoap2"))
