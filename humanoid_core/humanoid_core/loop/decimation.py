"""Doing something at a lower rate than the control loop, on the robot's clock."""

from __future__ import annotations

import math

#: Stamps are sums of physics steps: allow for their rounding when comparing to a deadline.
EPSILON = 1e-9


class Decimator:
    """``due(stamp)`` is true at most once per ``period`` of robot time.

    Deadlines advance by whole periods, so the average rate is the configured one even
    when the loop's period does not divide it; deadlines already missed are skipped
    (no burst to catch up after a pause or a slow cycle).
    """

    def __init__(self, rate: float, name: str = "rate") -> None:
        if not rate > 0.0:
            raise ValueError(f"{name} must be > 0 Hz, got {rate}")
        self.period = 1.0 / rate
        self._next = -math.inf

    def due(self, stamp: float) -> bool:
        if stamp + EPSILON < self._next:
            return False
        self._next = stamp + self.period if not math.isfinite(self._next) else self._next + self.period
        if self._next <= stamp + EPSILON:
            self._next = stamp + self.period
        return True
