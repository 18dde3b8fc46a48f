"""The fall estimate's rules (no ROS): the IMU's trunk tilt with its hysteresis, the lying
posture from the axis nearest the vertical, and the support rule without an IMU."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_control.balance.fall import FallDetector, FallSource, Posture


def rotation(roll_deg: float = 0.0, pitch_deg: float = 0.0) -> np.ndarray:
    """The IMU frame's rotation in the world (REP-103: a positive pitch leans forward, a positive
    roll lifts the left side)."""
    return pin.rpy.rpyToMatrix(math.radians(roll_deg), math.radians(pitch_deg), 0.0)


@pytest.mark.parametrize(("roll", "pitch", "posture"), [
    (0.0, 90.0, Posture.ON_BELLY),   # pitched forward: x axis down
    (0.0, -90.0, Posture.ON_BACK),   # pitched backward: x axis up
    (90.0, 0.0, Posture.ON_RIGHT),   # rolled onto the right side: y (left) axis up
    (-90.0, 0.0, Posture.ON_LEFT),   # rolled onto the left side: y axis down
    (0.0, 180.0, Posture.UNKNOWN),   # upside down: neither axis vertical
])
def test_lying_postures_from_the_imu(roll, pitch, posture):
    estimate = FallDetector(45.0, 10.0, 0.05).from_imu(rotation(roll, pitch))
    assert estimate.fallen and estimate.posture is posture and estimate.source is FallSource.IMU


def test_tilt_threshold_and_hysteresis():
    detector = FallDetector(45.0, 10.0, 0.05)
    assert not detector.from_imu(rotation(pitch_deg=44.0)).fallen
    fallen = detector.from_imu(rotation(pitch_deg=46.0))
    assert fallen.fallen and fallen.tilt == pytest.approx(math.radians(46.0))
    assert detector.from_imu(rotation(pitch_deg=40.0)).fallen  # within the hysteresis: still down
    up = detector.from_imu(rotation(pitch_deg=30.0))
    assert not up.fallen and up.posture is Posture.UPRIGHT


def test_without_an_imu_the_com_far_outside_the_support_is_a_fall():
    detector = FallDetector(45.0, 10.0, 0.05)
    assert not detector.from_support(-0.04).fallen  # a little outside: a step, not a fall
    fallen = detector.from_support(-0.06)
    assert fallen.fallen and fallen.posture is Posture.UNKNOWN and math.isnan(fallen.tilt)
    assert detector.from_support(math.nan).fallen  # no support known: the state is kept
    assert not detector.from_support(0.01).fallen
