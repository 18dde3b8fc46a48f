"""Conversions between seconds (float) and ROS time messages, written once."""

from __future__ import annotations

import math

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
