"""One emulated servo on a hand-driven clock: motion at the speed limit, limits, faults."""

import math

import pytest

from humanoid_description import AX12_SPEED, RPM_TO_RAD_S
from humanoid_hw import control_table
from humanoid_hw.emulator import EmulatedServo


def ax_servo() -> EmulatedServo:
    servo = EmulatedServo(1, control_table("AX-12"), 1_000_000, now=0.0)
    servo.set("torque_enable", 1)
    return servo


def test_factory_defaults():
    ax = EmulatedServo(3, control_table("AX-12"), 1_000_000, now=0.0)
    assert [ax.get(n) for n in ("model_number", "id", "baud_rate", "return_delay_time", "status_return_level",
                                "min_position_limit", "max_position_limit", "torque_enable", "present_position")] == [
        12, 3, 1, 250, 2, 0, 1023, 0, 512]
    xl = EmulatedServo(4, control_table("XL430"), 1_000_000, now=0.0)
    assert [xl.get(n) for n in ("model_number", "id", "baud_rate", "return_delay_time", "operating_mode",
                                "velocity_limit", "present_position")] == [1060, 4, 3, 250, 3, 265, 2048]


def test_goal_is_reached_at_the_moving_speed():
    servo = ax_servo()
    servo.write(30, (712).to_bytes(2, "little") + (100).to_bytes(2, "little"))  # goal + 100 x 0.111 rpm
    units_per_second = 100 * 0.111 * RPM_TO_RAD_S / math.radians(0.2932)
    servo.advance(0.5)
    assert servo.get("present_position") == round(512 + 0.5 * units_per_second)
    assert servo.get("moving") == 1
    assert AX12_SPEED.raw_to_rad_s(servo.get("present_speed")) == pytest.approx(100 * 0.111 * RPM_TO_RAD_S)
    servo.advance(5.0)
    assert (servo.get("present_position"), servo.get("moving"), servo.get("present_speed")) == (712, 0, 0)


def test_moving_speed_zero_is_the_maximum_and_direction_bit_when_turning_clockwise():
    servo = ax_servo()
    servo.write(30, (112).to_bytes(2, "little") + (0).to_bytes(2, "little"))
    servo.advance(0.1)
    expected = 1023 * 0.111 * RPM_TO_RAD_S / math.radians(0.2932) * 0.1  # ~114 rpm for 0.1 s
    assert servo.get("present_position") == round(512 - expected)
    assert servo.get("present_speed") == 1023 | 1024  # bit 10: clockwise (decreasing raw)


def test_no_motion_without_torque():
    servo = EmulatedServo(1, control_table("AX-12"), 1_000_000, now=0.0)
    servo.write(30, (700).to_bytes(2, "little"))
    servo.advance(10.0)
    assert servo.get("present_position") == 512


def test_goal_outside_the_angle_limits():
    ax = ax_servo()
    ax.write(6, (300).to_bytes(2, "little") + (700).to_bytes(2, "little"))
    assert ax.write(30, (900).to_bytes(2, "little")).errors == ("angle limit",)
    assert ax.get("goal_position") == 700  # clamped
    assert ax.status_error(()) & 0b10  # reported until a valid goal comes
    ax.write(30, (600).to_bytes(2, "little"))
    assert ax.status_error(()) == 0
    xl = EmulatedServo(1, control_table("XL430"), 1_000_000, now=0.0)
    xl.write(48, (3000).to_bytes(4, "little") + (1000).to_bytes(4, "little"))
    assert xl.write(116, (3500).to_bytes(4, "little")).errors == ("data limit",)
    assert xl.get("goal_position") == 2048  # refused


def test_x_series_eeprom_is_locked_while_torque_is_on():
    xl = EmulatedServo(1, control_table("XL430"), 1_000_000, now=0.0)
    xl.set("torque_enable", 1)
    assert xl.write(9, b"\x00").errors == ("access",)
    xl.set("torque_enable", 0)
    assert xl.write(9, b"\x00").errors == ()


def test_injected_errors_and_shutdown():
    ax = ax_servo()
    ax.inject_errors("overheating")
    assert ax.status_error(()) == 0b100
    assert not ax.torque_on  # Alarm Shutdown 36 includes overheating: output 0
    with pytest.raises(ValueError, match="cannot report"):
        ax.inject_errors("motor encoder")
    xl = EmulatedServo(1, control_table("XL430"), 1_000_000, now=0.0)
    xl.set("torque_enable", 1)
    xl.inject_errors("input voltage")  # not in the default Shutdown mask (52)
    assert xl.status_error(()) == 0x80 and xl.get("hardware_error_status") == 1 and xl.torque_on
    xl.inject_errors("overload")
    assert not xl.torque_on
    xl.reboot()
    assert xl.status_error(()) == 0
