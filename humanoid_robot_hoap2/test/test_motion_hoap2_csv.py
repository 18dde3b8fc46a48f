"""HOAP-2 csv motion files: the column map and signs from the robot config, line checks, writing."""

import math

import numpy as np
import pytest

from humanoid_core.loop import Law
from humanoid_core.motion import Motion, MotionError
from humanoid_robot_hoap2 import CsvLayout, hoap2_csv_text, read_hoap2_csv, write_hoap2_csv

# The example line of the reference (27 fields; "60,R,R,R" are ignored).
EXAMPLE = ("1,2,-2,-3,4178,8357,-4598,-3,18807,-2091,-2090,5222,-2,-3,-4180,-8360,4595,0,"
           "-18811,2087,2087,-5228,3,60,R,R,R")


def write(tmp_path, text, name="walk.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def degrees(motion, joint, index=0):
    return math.degrees(motion.keyframe(index)[joint])


def test_layout_comes_from_the_robot_config():
    layout = CsvLayout.for_robot("hoap2")
    assert layout.period == 0.002
    assert layout.field_count == 23
    assert layout.columns[:3] == ("rleg_joint1", "rleg_joint2", "rleg_joint3")
    assert dict(zip(layout.columns, layout.signs, strict=True))["lleg_joint4"] == -1


def test_example_line_is_a_symmetric_crouch_with_arms_lowered(tmp_path):
    motion = read_hoap2_csv(write(tmp_path, EXAMPLE + "\n"))
    assert motion.robot == "hoap2" and motion.law is Law.LINEAR
    assert motion.keyframe_count == 1 and motion.duration == pytest.approx(0.002)
    for side in ("rleg", "lleg"):
        assert degrees(motion, f"{side}_joint4") == pytest.approx(40.0, abs=0.02)  # knees
        assert degrees(motion, f"{side}_joint3") == pytest.approx(-20.0, abs=0.02)  # hip pitch
        assert degrees(motion, f"{side}_joint5") == pytest.approx(-22.0, abs=0.02)  # ankle pitch
    for side in ("rarm", "larm"):
        assert degrees(motion, f"{side}_joint1") == pytest.approx(90.0, abs=0.02)  # shoulder pitch
        assert degrees(motion, f"{side}_joint4") == pytest.approx(-25.0, abs=0.02)  # elbows alike
    # left and right mirror each other: roll and yaw opposite, pitch equal
    assert degrees(motion, "rarm_joint2") == pytest.approx(-degrees(motion, "larm_joint2"), abs=0.03)
    assert degrees(motion, "body_joint1") == pytest.approx(0.0, abs=0.02)


def test_sampling_multipliers_set_the_sample_times(tmp_path):
    rest = "0," * 21
    text = "\n".join([f"1,0,{rest}", f"3,0,{rest}", f"2,0,{rest}"]).replace(",\n", "\n").rstrip(",")
    motion = read_hoap2_csv(write(tmp_path, text + "\n"))
    np.testing.assert_allclose(motion.times, [0.0, 0.002, 0.008])
    assert motion.duration == pytest.approx(0.012)


def test_round_trip_reproduces_the_lines(tmp_path):
    lines = [EXAMPLE,
             "2,0," + ",".join(["0"] * 21),
             "5,0,100,-50,-2090,4180,-2090,50,9000,-1000,1000,2000,-100,50,2090,-4180,2090,-50,"
             "-9000,1000,1000,-2000,500"]
    source = write(tmp_path, "\n".join(lines) + "\n")
    motion = read_hoap2_csv(source)
    copy = tmp_path / "copy.csv"
    write_hoap2_csv(motion, copy)
    written = copy.read_text().splitlines()
    for original, line in zip(lines, written, strict=True):
        fields, again = original.split(","), line.split(",")
        assert again[0] == fields[0] and again[2:] == fields[2:23]
    reread = read_hoap2_csv(copy)
    np.testing.assert_array_equal(reread.times, motion.times)
    np.testing.assert_allclose(reread.positions, motion.positions, atol=1e-12)


def test_any_motion_can_be_written_by_sampling(tmp_path):
    layout = CsvLayout.for_robot("hoap2")
    knee = [layout.columns.index("rleg_joint4"), layout.columns.index("lleg_joint4")]
    positions = np.zeros((2, len(layout.columns)))
    positions[1, knee] = math.radians(60.0)
    smooth = Motion(name="bend", robot="hoap2", joint_names=layout.columns, times=[0.0, 0.5],
                    positions=positions, law=Law.CUBIC)
    with pytest.raises(MotionError, match="sampling multiplier"):
        hoap2_csv_text(smooth)
    path = tmp_path / "bend.csv"
    write_hoap2_csv(smooth, path, multiplier=5)
    played = read_hoap2_csv(path)
    np.testing.assert_allclose(np.diff(played.times), 0.01)
    spline = smooth.spline()
    for t, row in zip(played.times, played.positions, strict=True):
        np.testing.assert_allclose(row, spline.sample(t)[0], atol=math.radians(0.5 / 209))
    assert degrees(played, "rleg_joint4", -1) == pytest.approx(60.0, abs=0.01)


def test_writer_refuses_joints_the_format_cannot_hold():
    motion = Motion(name="head", robot="hoap2", joint_names=("head_joint1",), times=[0.0], positions=[[0.0]])
    with pytest.raises(MotionError, match=r"missing .*rleg_joint1.*not representable \['head_joint1'\]"):
        hoap2_csv_text(motion)


@pytest.mark.parametrize(("line", "problem"), [
    ("1,2,3", "expected at least 23 fields"),
    ("x," + ",".join(["0"] * 22), "field 0 (sampling multiplier) is not an integer: 'x'"),
    ("0," + ",".join(["0"] * 22), "field 0 (sampling multiplier) must be > 0, got 0"),
    ("1,0,0,0,0,1.5," + ",".join(["0"] * 17), "field 5 (rleg_joint4) is not an integer pulse count: '1.5'"),
    ("1,0,0,0,0,27300," + ",".join(["0"] * 17),
     "field 5: 27300 pulses: rleg_joint4 = 130.62 deg is outside its limits [-1.00, 130.00] deg"),
    ("1,0," + ",".join(["0"] * 13) + ",9000," + ",".join(["0"] * 7),
     "field 15: 9000 pulses: lleg_joint4 = -43.06 deg is outside its limits"),
])
def test_malformed_lines_name_file_line_and_problem(tmp_path, line, problem):
    good = "1,0," + ",".join(["0"] * 21)
    path = write(tmp_path, f"{good}\n\n{line}\n{good}\n")
    with pytest.raises(MotionError) as error:
        read_hoap2_csv(path)
    assert str(error.value).startswith(f"{path}:3: ")
    assert problem in str(error.value)
    assert error.value.line == 3


def test_empty_and_missing_files_are_errors(tmp_path):
    with pytest.raises(MotionError, match="no samples"):
        read_hoap2_csv(write(tmp_path, "# nothing\n\n"))
    with pytest.raises(MotionError, match="cannot read"):
        read_hoap2_csv(tmp_path / "absent.csv")
