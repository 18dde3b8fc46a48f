"""The project's keyframe YAML: writing and reading back, and every check with its line."""

import math

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import Motion, MotionError, format_number, keyframes_text, read_keyframes, write_keyframes

VALID = """\
format: keyframes
robot: hoap2
name: knees
description: Bend the knees.
units: deg
law: cubic
joints: [rleg_joint4, lleg_joint4]
keyframes:
  - time: 0.0
    positions: [0, 0]
    label: straight
  - time: 1.0
    positions: [30, 30]
    hold: 0.5
    support: both
  - time: 2.0
    positions: [0, 0]
"""


def write(tmp_path, text):
    path = tmp_path / "knees.yaml"
    path.write_text(text)
    return path


def replace_line(number, new):
    lines = VALID.splitlines()
    lines[number - 1] = new
    return "\n".join(lines) + "\n"


def test_valid_file_reads_in_radians(tmp_path):
    motion = read_keyframes(write(tmp_path, VALID), robot="hoap2")
    assert motion.name == "knees" and motion.law is Law.CUBIC
    assert motion.joint_names == ("rleg_joint4", "lleg_joint4")
    np.testing.assert_allclose(motion.times, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(motion.positions[1], [math.radians(30)] * 2)
    np.testing.assert_allclose(motion.holds, [0.0, 0.5, 0.0])
    assert motion.label(0) == "straight" and motion.velocities is None
    assert motion.duration == 2.0


@pytest.mark.parametrize("units", ["deg", "rad"])
@pytest.mark.parametrize("law", list(Law))
def test_round_trip(tmp_path, units, law):
    original = Motion(
        name="wave it", robot="bioloid", joint_names=("r_elbow", "r_shoulder_roll", "l_knee"),
        times=[0.0, 0.7, 1.9, 3.0],
        positions=[[0.0, 0.1, 0.2], [-0.5, 0.3, 1.0], [-1.2, 0.0, 0.4], [0.0, 0.1, 0.2]],
        velocities=[[0.0, 0.0, 0.0], [-1.5, 0.25, 1e-7], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        holds=[0.2, 0.0, 0.6, 1.0], law=law, labels=("a", "b: with colon", "", 'd "quoted"'),
        supports=("both", "right", "left", "both"), description="Round trip: 'quotes', colons: yes")
    path = tmp_path / "wave.yaml"
    write_keyframes(original, path, units=units)
    again = read_keyframes(path)
    assert (again.name, again.robot, again.joint_names, again.law) == (
        original.name, original.robot, original.joint_names, original.law)
    assert (again.labels, again.supports, again.description) == (
        original.labels, original.supports, original.description)
    np.testing.assert_array_equal(again.times, original.times)
    np.testing.assert_array_equal(again.holds, original.holds)
    np.testing.assert_allclose(again.positions, original.positions, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(again.velocities, original.velocities, rtol=1e-14, atol=1e-15)


def test_rounded_writing_keeps_the_requested_decimals(tmp_path):
    motion = Motion(name="r", robot="hoap2", joint_names=("body_joint1",), times=[0.0],
                    positions=[[math.radians(12.3456789)]])
    assert "positions: [12.35]" in keyframes_text(motion, decimals=2)
    assert format_number(1e-5, None) == "1.0e-05" and format_number(-0.0, 3) == "0.0"


@pytest.mark.parametrize(("line", "new", "problem"), [
    (2, "robot: asimo", "unknown robot 'asimo'"),
    (5, "units: grad", "units must be one of deg, rad, got 'grad'"),
    (6, "law: spline", "unknown interpolation law 'spline'"),
    (7, "joints: [rleg_joint4, lleg_knee]", "unknown joint 'lleg_knee'"),
    (7, "joints: [rleg_joint4, rleg_joint4]", "joint 'rleg_joint4' is listed twice"),
    (10, "    positions: [0]", "keyframe 0 positions has 1 values, expected 2"),
    (10, "    positions: [0, .nan]", "keyframe 0 positions[1] must be a finite number, got '.nan'"),
    (10, "    positions: [0, abc]", "must be a finite number, got 'abc'"),
    (13, "    positions: [30, 131]", "keyframe 1: lleg_joint4 = 131.00 deg is outside its limits [-1.00, 130.00]"),
    (12, "  - time: -1.0", "time must be >= 0"),
    (16, "  - time: 1.4", "keyframe 2: time 1.4 s must be after keyframe 1's the end of its hold (1.5 s)"),
    (12, "  - time: 0.0", "keyframe 1: time 0.0 s must be after keyframe 0's its time (0.0 s)"),
    (14, "    hold: -2", "hold must be >= 0"),
    (15, "    support: hands", "support must be one of both, right, left"),
    (15, "    speed: 3", "keyframe 1: unknown key 'speed'"),
    (3, "nmae: knees", "unknown key 'nmae'"),
    (17, "    positions: [0, 0", "malformed YAML"),
])
def test_malformed_files_name_file_line_and_problem(tmp_path, line, new, problem):
    path = write(tmp_path, replace_line(line, new))
    with pytest.raises(MotionError) as error:
        read_keyframes(path)
    message = str(error.value)
    assert problem in message
    assert error.value.line is not None
    assert message.startswith(f"{path}:{error.value.line}: ")
    assert abs(error.value.line - line) <= 1, message  # the offending line (the parser may see the next)


def test_moving_first_or_last_keyframe_is_refused_at_its_line(tmp_path):
    text = VALID.replace("    positions: [0, 0]\n", "    positions: [0, 0]\n    velocities: [0, 5]\n", 1)
    path = write(tmp_path, text)
    with pytest.raises(MotionError, match=r"knees.yaml:9: keyframe 0: velocities must be zero"):
        read_keyframes(path)


def test_missing_keys_and_robot_mismatch(tmp_path):
    with pytest.raises(MotionError, match=r"knees.yaml:1: motion file: missing units"):
        read_keyframes(write(tmp_path, VALID.replace("units: deg\n", "")))
    with pytest.raises(MotionError, match=r"knees.yaml:7: unknown joint 'rleg_joint4' for robot bioloid"):
        read_keyframes(write(tmp_path, VALID.replace("robot: hoap2", "robot: bioloid")))
    with pytest.raises(MotionError, match=r"knees.yaml:2: this motion is for robot 'hoap2', not 'bioloid'"):
        read_keyframes(write(tmp_path, VALID), robot="bioloid")
    with pytest.raises(MotionError, match=r"knees.yaml:8: keyframes: at least one keyframe"):
        read_keyframes(write(tmp_path, VALID.split("  - time: 0.0")[0].replace("keyframes:\n", "keyframes: []\n")))
    with pytest.raises(MotionError, match="empty file"):
        read_keyframes(write(tmp_path, "# nothing\n"))
