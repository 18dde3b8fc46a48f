"""IK gaits of the quadruped (ROS-free): the planar leg IK inverts the model's own
kinematics, respects the 90 deg knee limit, and the gait patterns phase the legs as named."""

import math

import numpy as np
import pytest

from humanoid_core.quadruped_gaits import (
    EllipticPath,
    GaitError,
    IKGait,
    default_parameters,
    gait_phases,
    robot_legs,
    solve,
)
from humanoid_description import load_model

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


#: The nine gaits of the report's Fig 29: each leg's lag behind the front left's (fraction of a
#: cycle; front left, front right, back left, back right). Walk, trot, pace, bound and pronk: the
#: standard values the reference notes; the gallops, canter and amble: the footfall orders
#: docs/quadruped.md gives (RH LH LF RF, RH LH RF LF, RH then LH with RF then LF, hind a tenth
#: before fore on each side).
LAGS = {"walk": (0.0, 0.5, 0.75, 0.25), "trot": (0.0, 0.5, 0.5, 0.0), "transverse_gallop": (0.0, 0.1, 0.6, 0.5),
        "rotary_gallop": (0.0, 0.9, 0.5, 0.4), "canter": (0.0, 0.7, 0.7, 0.4), "amble": (0.0, 0.5, 0.9, 0.4),
        "pace": (0.0, 0.5, 0.0, 0.5), "bound": (0.0, 0.0, 0.5, 0.5), "pronk": (0.0, 0.0, 0.0, 0.0)}
LEGS = ("front_left", "front_right", "back_left", "back_right")


def test_the_robot_has_the_nine_gaits_of_the_reports_figure_29(model):
    assert set(gait_phases(model)) == set(LAGS)


@pytest.mark.parametrize("gait", list(LAGS))
@pytest.mark.parametrize("frequency", [0.5, 1.5])
def test_each_leg_does_what_the_front_left_did_its_lag_earlier(model, gait, frequency):
    g = IKGait(model, gait, default_parameters(model, frequency=frequency))
    index = model.joints.index
    joints = {name: (index(leg.joints.hip), index(leg.joints.knee)) for name, leg in g.legs.items()}
    period = 1.0 / frequency
    for t in np.linspace(0.0, 2.0 * period, 37):
        q = g.positions(t)
        for leg, lag in zip(LEGS, LAGS[gait], strict=True):
            earlier = g.positions(t - lag * period)
            assert q[list(joints[leg])] == pytest.approx(earlier[list(joints["front_left"])], abs=1e-12), (leg, t)
    assert g.unreached == 0
    times, positions = g.samples(cycles=2)
    assert len(times) == 2 * 28 + 1 and times[-1] == pytest.approx(2.0 * period)
    assert np.all(positions >= model.joints.lower) and np.all(positions <= model.joints.upper)


def test_the_rules_of_thumb_ellipse_reaches_from_a_90_deg_knee_to_a_straight_leg(model):
    """The default foot path: its nearest point where the knee is bent to its 90 deg limit (the
    corrected radius), its farthest where the leg is straight, a = 0.95 b, the whole ellipse."""
    g = IKGait(model, "trot", default_parameters(model))
    leg = g.legs["front_left"]
    knee = g._tables["front_left"][:, 1]
    assert math.degrees(knee.min()) == pytest.approx(-90.0, abs=1e-6)
    assert math.degrees(knee.max()) == pytest.approx(0.0, abs=1e-4)  # acos near 1: a few ulps -> 1e-6 deg
    path = g.path(leg)
    assert path.half_stride == pytest.approx(0.95 * path.lift) and path.stance_depth == 1.0
    reach = leg.geometry.thigh + leg.geometry.shank
    assert -path.centre_z + path.lift == pytest.approx(reach)
    assert -path.centre_z - path.lift == pytest.approx(math.hypot(leg.geometry.thigh, leg.geometry.shank))
    flat = IKGait(model, "trot", default_parameters(model, foot_path="flat"))
    assert flat.path(leg).stance_depth == 0.0 and flat.path(leg).half_stride == 0.02


def test_bad_gait_requests_are_refused_with_the_reason(model):
    with pytest.raises(GaitError, match=r"unknown gait 'tolt'.*trot"):
        IKGait(model, "tolt", default_parameters(model))
    with pytest.raises(GaitError, match=r"3 Hz is outside 0\.5-2 Hz"):
        default_parameters(model, frequency=3.0)
    with pytest.raises(GaitError, match="hoap2 has no legs section"):
        robot_legs(load_model("hoap2"))
