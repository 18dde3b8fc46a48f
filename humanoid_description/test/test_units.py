"""Unit conversions against the reference test vectors."""

import math

import pytest

from humanoid_description import units

# (raw, degrees) pairs printed in the Bioloid thesis.
AX12_VECTORS = [(312, -58.64), (686, 51.0168), (88, -124.3168), (513, 0.2932), (91, -123.4372),
                (600, 25.8016), (286, -66.2632), (647, 39.582), (200, -91.4784), (862, 102.62),
                (162, -102.62), (377, -39.582), (738, 66.2632)]


@pytest.mark.parametrize(("raw", "degrees"), AX12_VECTORS)
def test_ax12_raw_to_degrees_matches_the_thesis(raw, degrees):
    assert units.AX12.raw_to_degrees(raw) == pytest.approx(degrees, abs=1e-9)


@pytest.mark.parametrize(("raw", "degrees"), AX12_VECTORS)
def test_ax12_degrees_to_raw_round_trips(raw, degrees):
    assert units.AX12.degrees_to_raw(degrees) == raw


def test_ax12_centre_and_range():
    assert units.AX12.raw_to_degrees(512) == 0.0
    assert units.AX12.raw_to_degrees(0) == pytest.approx(-150.1184)
    with pytest.raises(ValueError, match="outside the AX-12 range"):
        units.AX12.degrees_to_raw(160.0)


def test_x_series_position():
    assert units.XSERIES.raw_to_degrees(2048) == 0.0
    assert units.XSERIES.raw_to_degrees(0) == pytest.approx(-180.0)
    assert units.XSERIES.raw_to_degrees(3072) == pytest.approx(90.0)
    assert units.XSERIES.degrees_to_raw(-90.0) == 1024
    assert units.XSERIES.degrees_per_unit == pytest.approx(0.088, abs=5e-4)


def test_ax12_speed_and_load_direction_bit():
    # bit 10 set = the other direction; 0.111 rpm per unit
    assert units.AX12_SPEED.raw_to_rad_s(100) == pytest.approx(100 * 0.111 * 2 * math.pi / 60)
    assert units.AX12_SPEED.raw_to_rad_s(1024 + 100) == pytest.approx(-100 * 0.111 * 2 * math.pi / 60)
    assert units.AX12_SPEED.rad_s_to_raw(1.0) == round(1.0 / (0.111 * 2 * math.pi / 60))
    assert units.AX12_LOAD.raw_to_fraction(1023) == pytest.approx(1.0)
    assert units.AX12_LOAD.raw_to_fraction(1024 + 512) == pytest.approx(-512 / 1023)


def test_x_series_velocity_is_signed():
    assert units.XSERIES_SPEED.raw_to_rad_s(-10) == pytest.approx(-10 * 0.229 * 2 * math.pi / 60)
    assert units.XSERIES_SPEED.rad_s_to_raw(-1.0) < 0


def test_hoap2_pulses():
    # 209 pulses per degree; shoulder pitch of 18810 pulses is 90 degrees
    assert math.degrees(units.hoap2_pulses_to_radians(18810, 1)) == pytest.approx(90.0)
    assert math.degrees(units.hoap2_pulses_to_radians(18810, -1)) == pytest.approx(-90.0)
    assert units.radians_to_hoap2_pulses(math.radians(-20.0), -1) == 4180
    # measured actuator limits: 57 pulse/ms = 272.7 deg/s = 4.76 rad/s; 5 pulse/ms^2 ~ 417 rad/s^2
    assert units.hoap2_pulse_rate_to_rad_s(57) == pytest.approx(4.76, abs=0.005)
    assert units.hoap2_pulse_accel_to_rad_s2(5) == pytest.approx(417.5, abs=1.0)
