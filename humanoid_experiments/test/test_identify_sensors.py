"""``humanoid identify`` from more than joint positions: the IMU's tilt and the feet's wrenches
in the cost, shown where the truth is known. A simulated Bioloid whose trunk's centre of mass
is 8 mm forward of the model's and whose gears bend records a squat with its IMU and feet;
with the joints alone the cost barely changes along the trunk's offset (stiff position servos
hide it), with the new terms it has its minimum at the truth, sharply (the short subset of
``humanoid identify --demo DIR --demo-sensors``, whose full fit docs/identification.md reports).
Bags without the readings, and weights of 0, keep the joints' cost; bad weights are one line
and exit 2."""

from __future__ import annotations

import numpy as np
import pytest
from cli_entry import entry_point

from humanoid_description import load_model
from humanoid_experiments.identify import (
    SENSED_ROBOT,
    SENSED_TRUTH,
    Problem,
    cost_profile,
    motion_terms,
    motions_cost,
    plan_commands,
    read_bag,
    record,
    record_squat,
    replay,
    rms,
)
from humanoid_sim import REFERENCE, SimulatedRobot

OFFSET = 0.008  # m: the trunk's centre of mass moved by the whole truth's offset, each way


@pytest.fixture(scope="module")
def squat(tmp_path_factory):
    bag = record_squat(tmp_path_factory.mktemp("squat"))
    return read_bag(bag, load_model(SENSED_ROBOT).joints)


@pytest.fixture(scope="module")
def profile(squat):
    return cost_profile(squat, (-OFFSET, 0.0, OFFSET))


def test_the_bag_gives_the_imu_and_the_feet_on_the_joints_clock(squat):
    assert squat.imu is not None and squat.wrenches is not None
    np.testing.assert_allclose(squat.imu.times, squat.times, atol=1e-6)  # read with each joint state
    np.testing.assert_allclose(squat.wrenches.times, squat.times, atol=1e-6)
    assert set(squat.wrenches.sides) == {"left", "right"}
    np.testing.assert_allclose(np.linalg.norm(squat.imu.orientation, axis=1), 1.0, atol=1e-6)
    # standing still at the end, the feet carry the robot's weight (1.70 kg) between them (the
    # contacts chatter by a newton or two from one reading to the next: the mean of the last 0.2 s)
    weight = sum(inertia.mass for inertia in load_model(SENSED_ROBOT).model.inertias) * 9.81
    assert squat.wrenches.force[-20:, :, 2].sum(axis=1).mean() == pytest.approx(weight, rel=0.03)


def test_joints_alone_barely_see_the_trunks_offset_the_imu_and_feet_put_the_minimum_at_the_truth(profile):
    below, truth, above = profile
    # with the terms: the minimum at the truth, the cost a good part higher 8 mm off either way
    assert below["cost"] > 1.2 * truth["cost"] and above["cost"] > 1.2 * truth["cost"], profile
    # the joints alone: a change along the offset ten times smaller than the terms' rise, whichever way
    for side in (below, above):
        assert abs(side["joints"] - truth["joints"]) < 0.1 * (side["cost"] - truth["cost"]), profile
    curvature = below["cost"] + above["cost"] - 2.0 * truth["cost"]
    joints_curvature = below["joints"] + above["joints"] - 2.0 * truth["joints"]
    assert curvature > 10.0 * abs(joints_curvature), profile


def test_the_gears_stiffness_shows_in_the_tilt(squat):
    problem = Problem(SENSED_ROBOT, REFERENCE, None, (), 1.0, 0.0)
    tilt = {stiffness: motion_terms(problem, (squat,), {**SENSED_TRUTH, "transmission.stiffness": stiffness})["imu"]
            for stiffness in (150.0, SENSED_TRUTH["transmission.stiffness"], 300.0)}
    truth = tilt[SENSED_TRUTH["transmission.stiffness"]]
    assert tilt[150.0] > 1.5 * truth and tilt[300.0] > 1.5 * truth, tilt


@pytest.fixture(scope="module")
def small_bags(tmp_path_factory):
    """A short HOAP-2 arm move recorded with its sensors and without."""
    directory = tmp_path_factory.mktemp("small")
    commands = plan_commands([(0.05, {"rarm_joint1": 0.6}, 0.2)])
    for name, sensors in (("sensed", True), ("joints", False)):
        with SimulatedRobot("hoap2", "fast") as robot:
            record(robot, commands, 0.4, directory / name, sensors=sensors)
    return directory


def test_weights_of_zero_and_a_bag_without_the_readings_keep_the_joints_cost(small_bags):
    joints = load_model("hoap2").joints
    sensed, joints_only = (read_bag(small_bags / name, joints) for name in ("sensed", "joints"))
    assert sensed.imu is not None and sensed.wrenches is not None
    assert joints_only.imu is None and joints_only.wrenches is None
    values = {"servo.max_velocity": 3.0}
    with SimulatedRobot("hoap2", "fast", values) as robot:
        expected = rms(replay(robot, sensed), sensed, sensed.commanded_joints(joints.names))
    off = Problem("hoap2", "fast", None, (), 0.0, 0.0)
    assert motions_cost(off, (sensed,), values) == pytest.approx(expected, rel=1e-12)
    assert motion_terms(off, (sensed,), values)["imu"] is None
    on = Problem("hoap2", "fast", None, (), 1.0, 1.0)
    assert motions_cost(on, (joints_only,), values) == pytest.approx(expected, rel=1e-12)
    terms = motion_terms(on, (sensed,), values)
    assert terms["imu"] is not None and terms["wrench"] is not None
    assert motions_cost(on, (sensed,), values) == pytest.approx(expected + terms["imu"] + terms["wrench"])


def test_a_bag_without_the_readings_fits_on_the_joints_and_says_so(small_bags, tmp_path):
    result = entry_point("identify", "--robot", "hoap2", "--bag", small_bags / "joints", "--fit", "servo.max_velocity",
                         "--output", tmp_path / "fit.yaml", "--workers", "0", "--physics", "fast", "--population", "2",
                         "--generations", "1", "--polish", "0", "--no-sensitivity")
    assert result.returncode == 0, result.stderr
    assert f"IMU (trunk tilt) term off: {small_bags / 'joints'} holds no /imu/data" in result.stdout
    assert "wrench (ground reaction) term off: " in result.stdout
    result = entry_point("identify", "--robot", "hoap2", "--bag", small_bags / "sensed", "--fit", "servo.max_velocity",
                         "--output", tmp_path / "fit2.yaml", "--workers", "0", "--physics", "fast", "--population",
                         "2", "--generations", "1", "--polish", "0", "--no-sensitivity", "--imu-weight", "0")
    assert result.returncode == 0, result.stderr
    assert "IMU (trunk tilt) term off (weight 0)" in result.stdout
    assert "wrench (ground reaction) term on, weight 1" in result.stdout


@pytest.mark.parametrize(("extra", "message"), [
    (["--imu-weight", "-0.5"], "must be a finite number >= 0, got '-0.5'"),
    (["--wrench-weight", "nan"], "argument --wrench-weight: must be a finite number, got 'nan'"),
    (["--imu-weight", "inf"], "argument --imu-weight: must be a finite number, got 'inf'"),
    (["--wrench-weight", "heavy"], "heavy"),
])
def test_a_bad_weight_is_one_line_and_exit_2(extra, message, tmp_path):
    result = entry_point("identify", "--robot", "hoap2", "--bag", tmp_path, "--fit", "servo.max_velocity",
                         "--output", tmp_path / "out.yaml", "--workers", "0", *extra)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert message in result.stderr, result.stderr


def test_weights_go_with_a_bag(tmp_path):
    result = entry_point("identify", "--robot", "hoap2", "--postures", "reference", "--fit", "servo.max_velocity",
                         "--output", tmp_path / "out.yaml", "--workers", "0", "--imu-weight", "1")
    assert result.returncode == 2
    assert "--imu-weight and --wrench-weight weigh a bag's readings: they go with --bag" in result.stderr

