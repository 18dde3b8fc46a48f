"""The reference's own static experiments (`humanoid postures --experiments`): a starting
posture of its Table 4 is set in simulation without collision and the robot stands in it; the
postures the collision model cannot take, or takes overlapping, are said with their links; and
one candidate servo of one experiment runs through the command into the JSON the issue gives."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from humanoid_description import CollisionModel, load_model
from humanoid_experiments.postures import candidates, load_protocol, overlapping_links
from humanoid_sim import SimulatedRobot

pytestmark = pytest.mark.system

ROBOT = "bioloid_quadruped"
#: AX-12: 300 deg over 1023 units (the reference's Table 5 converts with 0.293 deg per unit)
DEGREES_PER_UNIT = 0.2932


@pytest.fixture(scope="module")
def model():
    return load_model(ROBOT)


@pytest.fixture(scope="module")
def reference(model):
    return load_protocol(model).reference


def test_experiment_8s_posture_is_set_in_simulation_without_collision(model, reference):
    """Experiment 8: the neck turned 90 deg (N2 819). Set, held 1.5 s: no link overlaps another,
    the robot stands (no fall) and its joints read the posture."""
    experiment = reference.experiments[7]
    posture = model.joints.to_array(experiment.start)
    assert experiment.start["neck_yaw"] == pytest.approx(np.radians((819 - 513) * DEGREES_PER_UNIT))
    assert not CollisionModel(model).check(posture).in_collision
    with SimulatedRobot(ROBOT, model=model) as robot:
        robot.reset(posture)
        robot.run_until(robot.now() + 1.5)
        assert robot.fell_at is None and not robot.driver.fall_state().fallen
        measured = robot.driver.read().position
    assert np.degrees(np.max(np.abs(measured - posture))) < 2.0


def test_postures_the_model_cannot_take_or_takes_overlapping_are_said_with_their_links(model, reference):
    experiments = {e.number: e for e in reference.experiments}
    assert experiments[1].beyond_limits and not any(experiments[n].beyond_limits for n in range(2, 10))
    overlapping = overlapping_links(model, experiments[3])  # the pelvis bent down 90 deg: the back legs forward
    assert overlapping and all(any(link.startswith(("bl_", "br_")) for link in pair) for pair in overlapping)
    assert overlapping_links(model, experiments[7]) == ()
    # the hinted servos, else every servo, each both ways
    assert [c.key for c in candidates(experiments[2], reference)] == ["FL1+", "FL1-"]
    assert len(candidates(experiments[5], reference)) == 2 * 16


def test_one_candidate_through_the_command_gives_the_issues_json(tmp_path):
    done = subprocess.run(["humanoid", "postures", "--robot", ROBOT, "--experiments", "8", "--servos", "PELVIS-",
                           "--workers", "0", "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (entry,) = json.loads(done.stdout)["experiments"]
    assert (entry["experiment"], entry["real"], entry["webots"]) == (8, 537, 527)
    raw = entry["simulated"]
    assert entry["candidates"] == {"PELVIS-": raw} and entry["stepped"] == "PELVIS"
    assert isinstance(raw, int) and raw < 513  # stepped down from 513 until the robot fell
    assert entry["difference_deg"] == pytest.approx(abs(raw - 537) * DEGREES_PER_UNIT, abs=1e-6)
    assert entry["within_tolerance"] == (entry["difference_deg"] < 15.0)
