"""Conversions between seconds (float) and ROS time messages, written once."""

from __future__ import annotations

import math
from collections.abc import Callable

from builtin_interfaces.msg import Duration, Time

NANOSECONDS = 1_000_000_000


def _split(seconds: float) -> tuple[int, int]:
    whole = math.floor(seconds)
    nanoseconds = round((seconds - whole) * NANOSECONDS)
    if nanoseconds >= NANOSECONDS:  # rounding up to the next second
        whole, nanoseconds = whole + 1, nanoseconds - NANOSECONDS
    return whole, nanoseconds


def to_time(seconds: float) -> Time:
    sec, nanosec = _split(seconds)
    return Time(sec=sec, nanosec=nanosec)


def to_duration(seconds: float) -> Duration:
    sec, nanosec = _split(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def seconds(stamp: Time | Duration) -> float:
    """Seconds of a builtin_interfaces Time or Duration."""
    return stamp.sec + stamp.nanosec * 1e-9


def clock_seconds(node) -> float:
    """Now on ``node``'s clock (simulated time when it uses it), in seconds."""
    return node.get_clock().now().nanoseconds * 1e-9


class DriverClock:
    """Converts between a driver's clock and ROS time.

    A simulator's clock *is* the graph's ROS time (it publishes it on /clock): the
    mapping is the identity. A hardware driver schedules on a monotonic clock, which
    never steps; its stamps are mapped to ROS time (the system clock of a real robot)
    by the offset between the two clocks. The offset is measured by reading the driver
    clock on both sides of a ROS clock reading (the tightest of a few tries, so that a
    thread switch between two readings does not pass for an offset) and measured again
    every ``refresh`` seconds, so that a step of the system clock moves the stamps with
    ROS time within that period but never the loop's deadlines.
    """

    TRIES = 5

    def __init__(self, driver_now: Callable[[], float], ros_now: Callable[[], float] | None = None,
                 refresh: float = 1.0) -> None:
        """``ros_now`` is None when the driver's clock is ROS time."""
        self._driver_now = driver_now
        self._ros_now = ros_now
        self._refresh = refresh
        self._measured: tuple[float, float] | None = None  # (driver time of the measurement, offset)

    def offset(self) -> float:
        """ROS time minus driver time (seconds)."""
        if self._ros_now is None:
            return 0.0
        measured = self._measured
        if measured is not None and 0.0 <= self._driver_now() - measured[0] < self._refresh:
            return measured[1]
        best = None
        for _ in range(self.TRIES):
            before = self._driver_now()
            ros = self._ros_now()
            after = self._driver_now()
            if best is None or after - before < best[0]:
                best = (after - before, 0.5 * (before + after), ros - 0.5 * (before + after))
        assert best is not None
        self._measured = (best[1], best[2])
        return best[2]

    def to_ros(self, stamp: float) -> float:
        """A driver-clock time as ROS time (seconds)."""
        return stamp + self.offset()

    def from_ros(self, stamp: float) -> float:
        """A ROS time (e.g. a trajectory's header stamp) on the driver's clock (seconds)."""
        return stamp - self.offset()
