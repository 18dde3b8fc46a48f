"""The postures watch on any robot's feet (no robot needed): a foot's load from its wrench and
what tips, for the HOAP-2's two flat soles and the quadruped's four ball feet.

A ball foot's sole frame turns with its leg: its wrench's z is not the ground's normal, and
its orientation says nothing about the robot tipping. These tests fail if the watch reads a
ball foot like a flat sole (load = force z, tilt = the sole frame's).
"""

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_description import load_model
from humanoid_experiments.postures import BODY, support_tilts, tip_direction


@pytest.fixture(scope="module")
def quadruped():
    return load_model("bioloid_quadruped")


@pytest.fixture(scope="module")
def hoap2():
    return load_model("hoap2")


def imu_orientation(model, positions, body_in_world: np.ndarray) -> tuple[float, float, float, float]:
    """What the IMU reads (w, x, y, z) when the body has this world orientation."""
    imu = model.frame_placements([model.config.imu_frame], positions)[model.config.imu_frame]
    q = pin.Quaternion(body_in_world @ imu.rotation)
    return q.w, q.x, q.y, q.z


def test_a_ball_foot_carries_its_whole_ground_force_a_flat_sole_the_normal_part(quadruped, hoap2):
    ball = quadruped.config.feet["front_left"]
    flat = hoap2.config.feet["right"]
    assert ball.is_ball and not flat.is_ball
    # the ground pushing along a shank leaning 30 deg (the home pose's): 5 N along the normal
    # of the ground is 4.33 N along the sole frame's z
    force = (5.0 * math.sin(math.radians(30.0)), 0.0, 5.0 * math.cos(math.radians(30.0)))
    assert ball.load(force) == pytest.approx(5.0)
    assert flat.load(force) == pytest.approx(force[2])
    assert ball.load((0.0, 0.0, 0.0)) == 0.0


@pytest.mark.parametrize("pose", ["zero", "home"])
def test_on_ball_feet_the_body_is_what_tips_whatever_the_legs_do(quadruped, pose):
    positions = quadruped.config.pose(pose)
    pitch = math.radians(10.0)  # nose down
    forward = pin.utils.rpyToMatrix(0.0, pitch, 0.0)
    for legs in (positions, {**positions, "fl_knee": positions["fl_knee"] - 0.5, "br_hip_pitch": 0.4}):
        tilts = support_tilts(quadruped, imu_orientation(quadruped, legs, forward), legs)
        assert list(tilts) == [BODY]
        assert tilts[BODY] == pytest.approx((pitch, 0.0), abs=1e-9)
        assert tip_direction(tilts[BODY]) == "forward"
    # rolled onto its left side
    left = pin.utils.rpyToMatrix(math.radians(-12.0), 0.0, 0.0)
    tilts = support_tilts(quadruped, imu_orientation(quadruped, positions, left), positions)
    assert tilts[BODY][1] == pytest.approx(math.radians(12.0), abs=1e-9)
    assert tip_direction(tilts[BODY]) == "left"


def test_flat_soles_tip_each_on_its_own(hoap2):
    positions = hoap2.config.pose("zero")
    level = imu_orientation(hoap2, positions, np.eye(3))
    tilts = support_tilts(hoap2, level, positions)
    assert sorted(tilts) == ["left", "right"]
    for tilt in tilts.values():
        assert tilt == pytest.approx((0.0, 0.0), abs=1e-9)
    # the body level, one ankle pitched: only that sole leans, by the ankle's angle
    bent = {**positions, "rleg_joint5": 0.1}
    tilts = support_tilts(hoap2, imu_orientation(hoap2, bent, np.eye(3)), bent)
    assert abs(tilts["right"][0]) == pytest.approx(0.1, abs=1e-9)
    assert tilts["left"] == pytest.approx((0.0, 0.0), abs=1e-9)
