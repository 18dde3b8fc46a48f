"""Bioloid pose files (thesis convention, raw by motor ID) and the thesis' demo played from them."""

import math

import numpy as np
import pytest

from humanoid_core.motion import JointPose, MotionError, pose_demo_motion, read_motion_file
from humanoid_description import convex_hull, load_model, signed_margin
from humanoid_robot_bioloid import (
    RawPose,
    is_raw_pose_file,
    raw_to_joint_poses,
    read_raw_poses,
    read_thesis_poses,
    write_raw_poses,
)
from humanoid_robot_bioloid.thesis import ThesisFrame, ThesisPose, write_pose_csv

# Balanced poses P3 and P12 of the thesis (J1..J18, degrees).
P3 = (12.89, 17.00, -27.55, 10.26, -1.47, -0.29, -120.44, -44.84, -18.46, 43.66, 75.61, 0.00,
      -1.47, 8.79, 52.46, 5.57, -12.31, -0.59)
P12 = (8.21, 2.34, -22.56, -38.39, -14.36, 4.40, 51.28, -54.51, 2.34, -54.51, 33.70, -0.59,
       1.17, -9.08, 23.44, 22.27, -12.02, -0.88)
HOME_RAW = {1: 206, 2: 818, 3: 252, 4: 772, 5: 512, 6: 512, 7: 512, 8: 512, 9: 512, 10: 512,
            11: 463, 12: 560, 13: 440, 14: 585, 15: 554, 16: 470, 17: 509, 18: 510}


def test_thesis_poses_round_trip_and_convert_through_the_thesis_frame(tmp_path):
    path = tmp_path / "poses.csv"
    write_pose_csv([ThesisPose(0, "P3", P3), ThesisPose(0, "P12", P12)], path)
    poses = read_thesis_poses(path)
    assert [p.label for p in poses] == ["P3", "P12"] and [p.line for p in poses] == [2, 3]
    model = load_model("bioloid")
    expected = ThesisFrame(model).joint_positions(P12)
    np.testing.assert_allclose(model.joints.to_array(poses[1].positions), expected)
    assert poses[0].support == "right"  # the thesis' poses stand on the right foot


def test_raw_poses_round_trip_and_match_the_configured_home(tmp_path):
    path = tmp_path / "raw.csv"
    lifted = {**HOME_RAW, 1: 512, 3: 512}
    write_raw_poses([RawPose("home", HOME_RAW), RawPose("arm_out", lifted)], path)
    assert is_raw_pose_file(path)
    poses = read_raw_poses(path)
    assert poses == [RawPose("home", HOME_RAW), RawPose("arm_out", lifted)]
    joints = raw_to_joint_poses(poses)
    home = load_model("bioloid").config.home
    for joint, value in joints[0].positions.items():
        assert value == pytest.approx(home[joint])
    assert math.degrees(joints[1].positions["r_shoulder_pitch"]) == pytest.approx(0.0)


def test_a_pose_file_plays_as_the_thesis_demo(tmp_path):
    path = tmp_path / "two.csv"
    write_pose_csv([ThesisPose(0, "P3", P3), ThesisPose(0, "P12", P12)], path)
    motion = read_motion_file(path, "bioloid")
    into = ["weight on the right foot", "left foot raised"]
    one_pose = [*into, "P", *reversed(into), "home"]
    labels = ["home"] + [label.replace("P", name) if label == "P" else label
                         for name in ("P3", "P12") for label in one_pose]
    assert [motion.label(i) for i in range(motion.keyframe_count)] == labels
    supports = ["both"] + ["both", "right", "right", "right", "both", "both"] * 2
    assert [motion.support(i) for i in range(motion.keyframe_count)] == supports
    # every step takes 1.5 s; the pose is held 2 s
    np.testing.assert_allclose(np.diff(motion.times)[:6], [1.5, 1.5, 1.5, 3.5, 1.5, 1.5])
    np.testing.assert_allclose(motion.holds, [2.0 if label in ("P3", "P12") else 0.0 for label in labels])
    model = load_model("bioloid")
    home = model.config.home
    np.testing.assert_allclose(motion.positions[6], [home[j] for j in motion.joint_names])


def test_one_foot_poses_are_entered_with_the_weight_over_the_support_foot(tmp_path):
    """Before the free foot leaves the ground the CoM is over the support sole, both soles
    flat; then the free foot rises straight up while the support sole stays put."""
    path = tmp_path / "one.csv"
    write_pose_csv([ThesisPose(0, "P3", P3)], path)
    motion = read_motion_file(path, "bioloid")
    model = load_model("bioloid")
    shifted, raised, pose = (model.joints.to_array(dict(zip(motion.joint_names, motion.positions[i], strict=True)))
                             for i in (1, 2, 3))
    pose_com = model.frame_placement("r_sole", pose).actInv(model.com(pose))
    for posture in (shifted, raised):
        sole = model.frame_placement("r_sole", posture)
        com = sole.actInv(model.com(posture))
        assert com[:2] == pytest.approx(pose_com[:2], abs=1e-4)  # where the pose will have it
        polygon = convex_hull(model.sole_corners("right", posture, sole.inverse())[:, :2])
        assert signed_margin(com[:2], polygon) > 0.01
    home = model.home_positions()
    start, flat = (model.frame_placement("r_sole", q).actInv(model.frame_placement("l_sole", q))
                   for q in (home, shifted))
    assert flat.translation == pytest.approx(start.translation, abs=1e-4)  # both feet planted
    up = model.frame_placement("r_sole", raised).actInv(model.frame_placement("l_sole", raised))
    assert up.translation - start.translation == pytest.approx([0.0, 0.0, 0.03], abs=1e-4)
    assert np.allclose(up.rotation, start.rotation, atol=1e-4)


def test_demo_of_partial_poses_drives_only_their_joints():
    pose = JointPose("elbows", {"r_elbow": 0.3, "l_elbow": -0.3}, line=1)
    motion = pose_demo_motion("bioloid", "elbows", [pose], move_time=1.0, hold_time=0.5)
    assert motion.joint_names == ("r_elbow", "l_elbow")
    np.testing.assert_allclose(motion.times, [0.0, 1.0, 2.5])
    # without the way back (balance-poses --simulate judges only the pose): the motion ends
    # with the pose's hold
    cut = pose_demo_motion("bioloid", "elbows", [pose], move_time=1.0, hold_time=0.5, back_home=False)
    assert cut.labels == ("home", "elbows") and cut.duration == pytest.approx(1.5)
    np.testing.assert_allclose(cut.positions[-1], [0.3, -0.3])
    with pytest.raises(MotionError, match="other joints"):
        pose_demo_motion("bioloid", "mixed", [pose, JointPose("knee", {"r_knee": 0.1}, line=4)])


@pytest.mark.parametrize(("line", "problem"), [
    ("P9,1,2,3", "expected 18 angles J1..J18, got 4 fields"),
    ("P9," + ",".join(["0"] * 17) + ",x", "J18 is not a finite number: 'x'"),
    ("P9,160," + ",".join(["0"] * 17), "P9: J1: r_ankle_roll = -160.00 deg is outside its limits"),
])
def test_malformed_thesis_poses_name_file_line_and_problem(tmp_path, line, problem):
    path = tmp_path / "poses.csv"
    path.write_text("# poses\n" + "P3," + ",".join(map(str, P3)) + "\n" + line + "\n")
    with pytest.raises(MotionError) as error:
        read_thesis_poses(path)
    assert str(error.value).startswith(f"{path}:3: ") and problem in str(error.value)
    assert error.value.line == 3


@pytest.mark.parametrize(("header", "row", "line", "problem"), [
    ("id,1,2", "a,512,512", 1, "the first line must be the header 'pose,<motor id>,...'"),
    ("pose,1,99", "a,512,512", 1, "header: '99' is not a motor ID of robot bioloid"),
    ("pose,1,1", "a,512,512", 1, "header: motor ID 1 is listed twice"),
    ("pose,1,2", "a,512", 2, "expected a label and 2 raw values"),
    ("pose,1,2", ",512,512", 2, "the pose label (field 0) is empty"),
    ("pose,1,2", "a,512,5.5", 2, "a: motor 2 (l_shoulder_pitch): '5.5' is not an integer"),
    ("pose,1,2", "a,512,1024", 2, "a: motor 2 (l_shoulder_pitch): 1024 is outside the AX-12 register range 0..1023"),
])
def test_malformed_raw_poses_name_file_line_and_problem(tmp_path, header, row, line, problem):
    path = tmp_path / "raw.csv"
    path.write_text(f"{header}\n{row}\n")
    with pytest.raises(MotionError) as error:
        read_raw_poses(path)
    assert str(error.value).startswith(f"{path}:{line}: ") and problem in str(error.value)


def test_raw_pose_file_without_poses(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text("# only a header\npose,1,2\n")
    with pytest.raises(MotionError, match="no poses found"):
        read_raw_poses(path)
