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


class MarginAlarm:
    """Raised when the margin falls under ``min_margin`` (or there is no support polygon);
    cleared when it is back above ``min_margin + hysteresis``. :meth:`update` returns an
    event only on these two changes, so each is logged once."""

    def __init__(self, min_margin: float, hysteresis: float) -> None:
        self.min_margin = min_margin
        self.hysteresis = hysteresis
        #: robot time the current warning was raised (None while there is none)
        self.raised_at: float | None = None
        #: robot time of the last warning raised (kept after it clears)
        self.last_raised_at: float | None = None
        self.warnings = 0

    def update(self, stamp: float, margin: float) -> AlarmEvent | None:
        if self.raised_at is None:
            if math.isnan(margin) or margin < self.min_margin:
                self.raised_at = self.last_raised_at = stamp
                self.warnings += 1
                return AlarmEvent(AlarmChange.WARNING, stamp, margin)
        elif margin >= self.min_margin + self.hysteresis:
            self.raised_at = None
            return AlarmEvent(AlarmChange.RECOVERED, stamp, margin)
        return None
