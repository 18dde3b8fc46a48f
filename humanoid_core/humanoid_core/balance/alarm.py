"""Telling the user once when the balance margin gets too small, and once when it recovers."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass


class AlarmChange(enum.Enum):
    WARNING = "warning"
    RECOVERED = "recovered"


@dataclass(frozen=True)
class AlarmEvent:
    change: AlarmChange
    stamp: float  # robot time of the update that changed the state
    margin: float  # m (NaN: no support at all)
    #: On a recovery: times the margin went under the minimum since the warning (the first included).
    dips: int = 1
    #: On a recovery: the lowest margin since the warning (m; NaN: a reading had no support at all).
    lowest: float = math.nan
    #: On a recovery: robot time since which the margin has stayed back above the minimum plus the hysteresis.
    above_since: float = math.nan

    def describe(self, min_margin: float) -> str:
        """The log line of this change."""
        if self.change is AlarmChange.WARNING:
            return (f"balance margin {describe_margin(self.margin)} below the minimum {min_margin * 1000:.1f} mm "
                    f"at t = {self.stamp:.3f} s")
        dips = "once" if self.dips == 1 else f"{self.dips} times"
        return (f"balance margin back to {describe_margin(self.margin)} at t = {self.stamp:.3f} s (back since "
                f"t = {self.above_since:.3f} s; under {min_margin * 1000:.1f} mm {dips} since the warning, "
                f"lowest {describe_margin(self.lowest)})")


def describe_margin(margin: float) -> str:
    """A margin for a person: millimetres, or no support at all."""
    return "undefined (no support)" if math.isnan(margin) else f"{margin * 1000:.1f} mm"


class MarginAlarm:
    """Raised when the margin falls under ``min_margin`` (or there is no support polygon);
    cleared once it has stayed above ``min_margin + hysteresis`` for ``clear_after`` seconds of
    robot time. :meth:`update` returns an event only on these two changes, so each is logged
    once: a gait whose support comes and goes every step (a quadruped's trot stands on a line
    half the time) raises one warning while it plays, not one per step."""

    def __init__(self, min_margin: float, hysteresis: float, clear_after: float = 0.0) -> None:
        self.min_margin = min_margin
        self.hysteresis = hysteresis
        self.clear_after = clear_after
        #: robot time the current warning was raised (None while there is none)
        self.raised_at: float | None = None
        #: robot time the margin last went under the minimum (kept after the warning clears)
        self.last_raised_at: float | None = None
        #: warnings raised
        self.warnings = 0
        self._under = False  # under the minimum, and not yet back above it plus the hysteresis
        self._above_since = math.nan
        self._dips = 0
        self._lowest = math.inf

    def update(self, stamp: float, margin: float) -> AlarmEvent | None:
        if math.isnan(margin) or margin < self.min_margin:
            self._lowest = min(self._lowest, margin) if not math.isnan(margin) else -math.inf
            if not self._under:
                self._under = True
                self.last_raised_at = stamp
                self._dips += 1
            if self.raised_at is None:
                self.raised_at = stamp
                self.warnings += 1
                return AlarmEvent(AlarmChange.WARNING, stamp, margin)
            return None
        if self._under and margin >= self.min_margin + self.hysteresis:
            self._under = False
            self._above_since = stamp
        if self.raised_at is None or self._under or stamp - self._above_since < self.clear_after:
            return None
        event = AlarmEvent(AlarmChange.RECOVERED, stamp, margin, self._dips,
                           math.nan if self._lowest == -math.inf else self._lowest, self._above_since)
        self.raised_at = None
        self._dips, self._lowest = 0, math.inf
        return event
