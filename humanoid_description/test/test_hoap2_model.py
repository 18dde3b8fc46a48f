"""The HOAP-2 URDF against the published parameters."""

import math

import numpy as np
import pytest

from humanoid_description import convex_hull, load_model, signed_margin, units

# Joint limits in degrees, transcribed from the reference table.
LIMITS_DEG = {
    "rleg_joint1": (-91, 31), "rleg_joint2": (-31, 21), "rleg_joint3": (-82, 71),
    "rleg_joint4": (-1, 130), "rleg_joint5": (-61, 61), "rleg_joint6": (-25, 25),
    "lleg_joint1": (-31, 91), "lleg_joint2": (-21, 31), "lleg_joint3": (-82, 71),
    "lleg_joint4": (-1, 130), "lleg_joint5": (-61, 61), "lleg_joint6": (-25, 25),
    "rarm_joint1": (-91, 151), "rarm_joint2": (-96, 1), "rarm_joint3": (-91, 91),
    "rarm_joint4": (-115, 1), "rarm_joint5": (-60, 60),
    "larm_joint1": (-91, 151), "larm_joint2": (-1, 96), "larm_joint3": (-91, 91),
    "larm_joint4": (-115, 1), "larm_joint5": (-60, 60),
    "body_joint1": (-1, 90), "head_joint1": (-60, 60), "head_joint2": (-15, 60),
}
HAND_MASS = 0.0472


@pytest.fixture(scope="module")
def model():
    return load_model("hoap2")


def test_joint_count_and_limits(model):
    assert len(model.joints) == 25
    assert set(model.joints.names) == set(LIMITS_DEG)
    for joint in model.joints:
        lower, upper = LIMITS_DEG[joint.name]
        assert math.degrees(joint.limits.lower) == pytest.approx(lower), joint.name
        assert math.degrees(joint.limits.upper) == pytest.approx(upper), joint.name
        assert joint.limits.velocity == pytest.approx(units.hoap2_pulse_rate_to_rad_s(57), abs=0.01)


def test_total_mass_with_and_without_hands(model):
    assert model.total_mass == pytest.approx(7.1200448, abs=1e-6)
    masses = model.link_masses()
    assert model.total_mass - masses["rarm_hand"] - masses["larm_hand"] == pytest.approx(7.0256448, abs=1e-6)
    assert masses["rarm_hand"] == masses["larm_hand"] == HAND_MASS


def test_leg_geometry(model):
    q = np.zeros(len(model.joints))
    right, left = model.frame_placement("r_sole", q), model.frame_placement("l_sole", q)
    # hips +-0.039 lateral, 0.055 below the waist; thigh + shank 0.2; ankle to sole 0.037;
    # the sole's centre 0.0112 in front of the ankle (the Webots model's foot)
    assert right.translation == pytest.approx([-0.034 + 0.0112, -0.039, -0.292])
    assert left.translation == pytest.approx([-0.034 + 0.0112, 0.039, -0.292])
    assert model.frame_placement("rleg_ankle_link", q).translation == pytest.approx([-0.034, -0.039, -0.255])
    knee = model.frame_placement("rleg_shank", q).translation
    assert knee == pytest.approx([-0.034, -0.039, -0.155])


def test_zero_pose_com_lies_over_the_feet(model):
    q = np.zeros(len(model.joints))
    base = model.standing_base(q)
    com = model.com(q, base)
    corners = np.vstack([model.sole_corners(s, q, base) for s in ("right", "left")])
    assert np.all(np.abs(corners[:, 2]) < 1e-9)
    margin = signed_margin(com[:2], convex_hull(corners[:, :2]))
    assert margin > 0.02
    assert 0.22 < com[2] < 0.32  # about waist height on a 0.5 m robot
    # the arms are stretched forward: the CoM is ahead of the ankles (the robot sags forward)
    assert com[0] > model.frame_placement("rleg_ankle_link", q, base).translation[0]


def test_arms_lowered_pose_hangs_the_hands_by_the_hips(model):
    # shoulder pitch +18810 pulses (sign +1 right, -1 left in the motion files) = arms down
    signs = model.config.sections["pulses"]["signs"]
    q = model.joints.to_array({
        "rarm_joint1": units.hoap2_pulses_to_radians(18807, signs["rarm_joint1"]),
        "larm_joint1": units.hoap2_pulses_to_radians(-18811, signs["larm_joint1"])})
    for side in ("rarm", "larm"):
        shoulder = model.frame_placement(f"{side}_shoulder_link", q).translation
        hand = model.frame_placement(f"{side}_hand", q).translation
        assert hand[2] < shoulder[2] - 0.2
        assert abs(hand[0] - shoulder[0]) < 0.02


def test_motion_file_crouch_is_mirror_symmetric(model):
    # the reference csv line: a crouch with arms lowered
    line = ("1,2,-2,-3,4178,8357,-4598,-3,18807,-2091,-2090,5222,"
            "-2,-3,-4180,-8360,4595,0,-18811,2087,2087,-5228,3,60,R,R,R")
    fields = line.split(",")
    columns = model.config.sections["csv_motion"]["columns"]
    signs = model.config.sections["pulses"]["signs"]
    deg = {name: math.degrees(units.hoap2_pulses_to_radians(float(fields[2 + i]), signs[name]))
           for i, name in enumerate(columns)}
    for right, left in [("rleg_joint3", "lleg_joint3"), ("rleg_joint4", "lleg_joint4"),
                        ("rleg_joint5", "lleg_joint5"), ("rarm_joint1", "larm_joint1"),
                        ("rarm_joint4", "larm_joint4")]:
        assert deg[right] == pytest.approx(deg[left], abs=0.1), (right, left)
    for right, left in [("rarm_joint2", "larm_joint2"), ("rarm_joint3", "larm_joint3")]:
        assert deg[right] == pytest.approx(-deg[left], abs=0.1), (right, left)
    assert deg["rleg_joint4"] == pytest.approx(40.0, abs=0.1)  # knees flexed: positive
    assert deg["rleg_joint3"] == pytest.approx(-20.0, abs=0.1)  # hips flexed forward: negative
    # knee flexion keeps the feet flat under the body: soles level and parallel
    q = model.joints.to_array({n: math.radians(v) for n, v in deg.items()})
    right, left = model.frame_placement("r_sole", q), model.frame_placement("l_sole", q)
    assert right.translation[2] == pytest.approx(left.translation[2], abs=1e-4)
    assert right.translation[2] > -0.292  # crouched


def test_left_and_right_links_mirror_each_other(model):
    q = np.zeros(len(model.joints))
    coms = model.link_coms(q)
    mirror = np.array([1.0, -1.0, 1.0])
    for link, com in coms.items():
        for right, left in (("rleg", "lleg"), ("rarm", "larm")):
            if link.startswith(right):
                assert coms[left + link[4:]] == pytest.approx(mirror * com, abs=1.5e-3), link
