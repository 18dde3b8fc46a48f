"""The Bioloid URDF against the thesis' forward-kinematics equations and data."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from humanoid_description import convex_hull, load_model, robot_files, signed_margin
from humanoid_robot_bioloid.thesis import equations, kinematics_generator, shapes_generator

# The thesis' zero-pose check (mm, thesis frame), transcribed from the reference.
ZERO_POSE_TABLE = {
    "r_ankle": (-0.96, -4.64, 37.60), "r_knee": (-15.80, -4.70, 85.17),
    "r_thigh": (-15.24, -4.01, 131.73), "r_hip": (-1.21, -4.64, 162.66),
    "r_hip_support": (-1.10, -4.38, 193.35), "torso": (4.35, -36.53, 270.64),
    "r_hand": (-29.77, 132.10, 289.80), "l_hand": (-30.02, -205.85, 291.87),
    "l_hip_support": (-1.10, -70.38, 193.35), "l_hip": (-1.21, -70.11, 162.66),
    "l_thigh": (-15.25, -70.74, 131.74), "l_knee": (-15.80, -70.04, 85.18),
    "l_ankle": (-0.96, -70.10, 37.61), "l_foot": (-0.01, -74.68, 0.02),
}


@pytest.fixture(scope="module")
def model():
    return load_model("bioloid")


def thesis_frame_link_coms(model, angles_deg):
    """URDF link CoMs (via Pinocchio) expressed in the thesis frame, in mm.

    Written here independently of the library's ThesisFrame: the joint map gives
    J number -> joint and direction; the thesis frame is the right-foot CoM frame.
    """
    joint_map = model.config.joint_map
    positions = {s.joint: s.direction * np.radians(angles_deg[s.thesis - 1]) for s in joint_map.values()}
    q = model.joints.to_array(positions)
    coms = model.link_coms(q)
    foot = model.frame_placement("r_foot", q)
    flip = np.diag([-1.0, -1.0, 1.0])
    return {name: flip @ (foot.rotation.T @ (coms[urdf] - coms["r_foot"])) * 1000.0
            for name, urdf in equations.URDF_LINK.items()}


def test_thesis_equations_reproduce_the_printed_zero_pose():
    positions = equations.link_positions([0.0] * 18)
    for link, expected in ZERO_POSE_TABLE.items():
        assert positions[link] == pytest.approx(expected, abs=0.011), link


def test_each_printed_translation_is_a_rigid_rotation_about_its_axis():
    for joint in equations.JOINTS:
        assert equations.split_residual(joint) < 1e-3, f"J{joint.number}"


def test_urdf_link_coms_equal_the_thesis_equations_for_random_angles(model):
    rng = np.random.default_rng(2008)
    worst = 0.0
    for _ in range(60):
        angles = rng.uniform(-150.0, 150.0, 18)
        expected = equations.link_positions(angles)
        measured = thesis_frame_link_coms(model, angles)
        for link in equations.LINKS:
            worst = max(worst, float(np.max(np.abs(measured[link] - expected[link]))))
    assert worst < 0.5


def test_zero_pose_loop_closure(model):
    coms = thesis_frame_link_coms(model, [0.0] * 18)
    assert coms["l_foot"] == pytest.approx(ZERO_POSE_TABLE["l_foot"], abs=0.05)
    q = np.zeros(len(model.joints))
    right, left = model.frame_placement("r_sole", q), model.frame_placement("l_sole", q)
    assert np.allclose(right.rotation, left.rotation, atol=1e-9)
    assert left.translation[2] == pytest.approx(right.translation[2], abs=1e-4)


def test_committed_kinematics_file_is_what_the_generator_produces():
    path = robot_files("bioloid").config_file("kinematics.yaml")
    assert Path(path).read_text() == kinematics_generator.render()


def test_committed_shapes_file_is_what_the_generator_produces():
    path = robot_files("bioloid").config_file("collision.yaml")
    assert Path(path).read_text() == shapes_generator.render()


def test_joint_map_agrees_with_the_thesis_kinematics(model):
    kinematics = kinematics_generator.document()["joints"]
    for servo in model.config.joint_map.values():
        assert kinematics[servo.joint]["direction"] == servo.direction, servo.joint
        assert kinematics[servo.joint]["motor_id"] == servo.servo_id, servo.joint
        assert equations.joint(servo.thesis).motor_id == servo.servo_id


def test_home_pose_is_the_initial_position_table(model):
    # ID 11 (right hip pitch) raw 463 -> thesis -14.37 deg; direction +1 -> flexion (negative)
    home = model.config.home
    assert np.degrees(home["r_hip_pitch"]) == pytest.approx((463 - 512) * 0.2932)
    # both knees flexed by the same amount (mirror-mounted servos 440 / 585)
    assert np.degrees(home["r_knee"]) == pytest.approx(72 * 0.2932)
    assert np.degrees(home["l_knee"]) == pytest.approx(73 * 0.2932)
    # arms hang down: the forearms are below the shoulders
    base = model.standing_base(model.home_positions())
    coms = model.link_coms(model.home_positions(), base)
    assert coms["r_forearm"][2] < coms["r_shoulder"][2] - 0.05
    assert coms["l_forearm"][2] < coms["l_shoulder"][2] - 0.05


def test_home_pose_com_lies_over_the_feet(model):
    q = model.home_positions()
    base = model.standing_base(q)
    corners = np.vstack([model.sole_corners(s, q, base) for s in ("right", "left")])
    assert np.all(np.abs(corners[:, 2]) < 0.002)  # both soles on the ground
    margin = signed_margin(model.com(q, base)[:2], convex_hull(corners[:, :2]))
    assert margin > 0.02


def test_mass_model_is_physical(model):
    masses = model.link_masses()
    data = yaml.safe_load(robot_files("bioloid").config_file("mass_model.yaml").read_text())
    assert sum(link["servos"] for link in data["links"].values()) == 18
    assert model.total_mass == pytest.approx(1.7, abs=0.01)
    for link, entry in data["links"].items():
        assert masses[link] >= entry["servos"] * data["servo_mass"] > -1
        assert 0.4 * entry["prior"] - 1e-6 <= entry["structure"] <= 2.5 * entry["prior"] + 1e-6, link
        mirror = {"r_": "l_", "l_": "r_"}.get(link[:2])
        if mirror:
            assert masses[link] == pytest.approx(masses[mirror + link[2:]]), link


def test_balanced_poses_are_reproduced(model):
    """The thesis' CoMs for P1-P13 (its own model on measured poses), within a few mm.

    P5 and P7 (the two poses with large hip-yaw angles) disagree with the printed
    equations by 25-50 mm whatever the masses (no mass distribution reproduces them);
    they are reported, not hidden, and excluded from the bound.
    """
    poses = yaml.safe_load(robot_files("bioloid").config_file("balanced_poses.yaml").read_text())["poses"]
    masses = model.link_masses()
    errors = {}
    for name, spec in poses.items():
        coms = thesis_frame_link_coms(model, spec["angles"])
        com = sum(masses[urdf] * coms[link] for link, urdf in equations.URDF_LINK.items())
        errors[name] = float(np.linalg.norm(com / model.total_mass - spec["com_mm"]))
    consistent = [e for name, e in errors.items() if name not in ("P5", "P7")]
    assert max(consistent) < 8.0, errors
    assert np.median(list(errors.values())) < 5.0, errors


def test_mass_identification_is_honest_and_gives_the_committed_masses(model):
    """The fit is judged on poses it did not see (leave one out), stays within its bounds,
    keeps mirror links equal and the total at 1.7 kg, and is what mass_model.yaml holds."""
    from humanoid_robot_bioloid.thesis import BOUNDS, MassModel, identify

    files = robot_files("bioloid")
    mass_model = MassModel(files.config_file("mass_model.yaml"))
    poses = yaml.safe_load(files.config_file("balanced_poses.yaml").read_text())["poses"]
    result = identify(model, mass_model, poses)
    assert result.accepted == (np.mean(result.fit_loo) < np.mean(result.prior_errors))
    assert np.all(result.structure >= BOUNDS[0] * result.prior - 1e-9)
    assert np.all(result.structure <= BOUNDS[1] * result.prior + 1e-9)
    assert mass_model.servos.sum() + result.structure.sum() == pytest.approx(1.7, abs=1e-3)
    structure = dict(zip(result.links, result.structure, strict=True))
    for link, value in structure.items():
        if link.startswith("r_"):
            assert value == pytest.approx(structure["l_" + link[2:]])
    committed = yaml.safe_load(files.config_file("mass_model.yaml").read_text())["links"]
    for link, value in structure.items():
        assert committed[link]["structure"] == pytest.approx(value, abs=1e-4), link


def test_the_model_limits_are_the_servo_range_and_the_thesis_table_is_data(model):
    """The real robot stood beyond the thesis' limit table (J14 = 84.40 deg, J17 = -59.5 deg in
    balanced poses): the model's limits are the mechanism's, each servo's whole range; the
    table stays data in the joint map."""
    for servo in model.config.joint_map.values():
        limits = model.joints[servo.joint].limits
        ends = sorted(servo.raw_to_radians(raw) for raw in (0, 1023))
        assert (limits.lower, limits.upper) == pytest.approx(ends, abs=1e-6), servo.joint
    l_hip_roll, l_ankle_pitch = model.config.joint_map["l_hip_roll"], model.config.joint_map["l_ankle_pitch"]
    assert np.degrees(l_hip_roll.thesis_limits_radians()) == pytest.approx([-39.58, 66.26], abs=0.01)
    assert np.degrees(l_ankle_pitch.thesis_limits_radians()) == pytest.approx([-58.64, 51.02], abs=0.01)
    for servo, angle in ((l_hip_roll, 84.40), (l_ankle_pitch, -59.5)):
        assert model.joints[servo.joint].limits.contains(servo.direction * np.radians(angle), 0.0)
