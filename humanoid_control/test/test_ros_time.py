"""Seconds <-> ROS time messages, and the driver-clock to ROS-time mapping."""

import pytest

from humanoid_control.ros import DriverClock, seconds, to_duration, to_time


def test_seconds_round_trip_including_the_carry_into_the_next_second():
    assert seconds(to_time(12.25)) == 12.25
    assert to_time(0.9999999999).sec == 1 and to_time(0.9999999999).nanosec == 0
    assert seconds(to_duration(3.5)) == 3.5


class Clocks:
    """A monotonic driver clock and a ROS clock 1000 s ahead; the ROS clock can step, and a
    thread switch can be simulated between two readings."""

    def __init__(self) -> None:
        self.driver = 5.0
        self.ros_offset = 1000.0
        self.delays: list[float] = []

    def driver_now(self) -> float:
        self.driver += self.delays.pop(0) if self.delays else 0.0
        return self.driver

    def ros_now(self) -> float:
        return self.driver + self.ros_offset


def test_the_simulators_clock_is_ros_time():
    clock = DriverClock(lambda: 3.0)
    assert clock.to_ros(2.5) == 2.5 and clock.from_ros(2.5) == 2.5


def test_a_monotonic_clock_is_mapped_to_ros_time_and_back():
    clocks = Clocks()
    clock = DriverClock(clocks.driver_now, clocks.ros_now)
    assert clock.to_ros(7.0) == pytest.approx(1007.0)
    assert clock.from_ros(1007.0) == pytest.approx(7.0)


def test_a_thread_switch_between_readings_does_not_pass_for_an_offset():
    clocks = Clocks()
    clocks.delays = [0.0, 0.2, 0.0, 0.0]  # the first try is interrupted for 0.2 s, the second is not
    clock = DriverClock(clocks.driver_now, clocks.ros_now)
    assert clock.offset() == pytest.approx(1000.0)


def test_a_step_of_the_ros_clock_is_followed_after_the_refresh_period():
    clocks = Clocks()
    clock = DriverClock(clocks.driver_now, clocks.ros_now, refresh=1.0)
    assert clock.offset() == pytest.approx(1000.0)
    clocks.ros_offset = 1060.0  # the system clock was set a minute ahead
    clocks.driver += 0.5
    assert clock.offset() == pytest.approx(1000.0)  # within the refresh period: the measured offset
    clocks.driver += 0.6
    assert clock.offset() == pytest.approx(1060.0)
