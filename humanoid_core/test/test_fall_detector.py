"""The fall estimate's rules (no ROS): the IMU's trunk tilt with its hysteresis, the lying
posture from the axis nearest the vertical, and the support rule without an IMU."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_core.balance import FallDetector, FallSource, Posture


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


def test_without_an_imu_the_com_held_far_outside_the_reach_is_a_fall():
    detector = FallDetector(45.0, 10.0, 0.05, hold=0.1)
    assert not detector.from_support(-0.04, 0.0).fallen  # a little outside: a step, not a fall
    assert not detector.from_support(-0.06, 1.0).fallen  # far outside, not yet for the hold
    assert not detector.from_support(-0.06, 1.05).fallen
    fallen = detector.from_support(-0.06, 1.1)
    assert fallen.fallen and fallen.posture is Posture.UNKNOWN and math.isnan(fallen.tilt)
    assert detector.from_support(math.nan, 1.2).fallen  # no support known: the state is kept
    assert detector.from_support(-0.01, 1.3).fallen  # still outside: still down
    assert not detector.from_support(0.01, 1.4).fallen


def test_a_short_excursion_beyond_the_margin_is_not_a_fall():
    detector = FallDetector(45.0, 10.0, 0.05, hold=0.1)
    assert not detector.from_support(-0.06, 0.0).fallen
    assert not detector.from_support(-0.03, 0.05).fallen  # back within the margin: the hold restarts
    assert not detector.from_support(-0.06, 0.1).fallen
    assert not detector.from_support(-0.06, 0.15).fallen
    assert detector.from_support(-0.06, 0.2).fallen
