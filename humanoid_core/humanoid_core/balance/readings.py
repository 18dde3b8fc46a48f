"""Recent readings of a sensor, looked up by the stamp of the joint state they go with.

The robot publishes joint_states, foot wrenches and ground truth from the same control
cycle with the same stamp (ground truth at a lower rate), but they arrive on separate
topics: while the monitor works through a backlog of joint_states, the newest wrench
may already be a few cycles ahead. Pairing each joint state with the reading nearest
to its stamp (not simply the latest one) keeps them from the same instant.
"""

from __future__ import annotations

import collections
import math
from typing import Generic, TypeVar

T = TypeVar("T")

#: Readings whose gaps give a sensor's period (three gaps).
PERIOD_READINGS = 4


class RecentReadings(Generic[T]):
    """The last ``size`` readings of one sensor with their stamps (s, robot clock). The
    default keeps 2.5 s of a 100 Hz sensor: a monitor that falls behind the joint_states
    stream by as much (a busy machine) still finds the readings of the same instant."""

    def __init__(self, size: int = 256) -> None:
        self._items: collections.deque[tuple[float, T]] = collections.deque(maxlen=size)

    def add(self, stamp: float, value: T) -> None:
        """A reading; one of the newest's instant replaces it. A lockstep simulation sends a
        state again while it waits for an answer: kept as readings of their own, three copies
        made the sensor's period zero, every state between two readings of a slower sensor
        then waited the patience out for a reading of its instant that never comes, and the
        resends during that wait kept the period at zero (a two-robot world went at 0.02 ×
        real time for whole runs)."""
        if self._items and self._items[-1][0] == stamp:
            self._items[-1] = (stamp, value)
            return
        self._items.append((stamp, value))

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def newest_stamp(self) -> float:
        """Stamp of the last reading added (-inf before any)."""
        return self._items[-1][0] if self._items else -math.inf

    @property
    def interval(self) -> float:
        """The sensor's period: the longest stamp difference among its last ``PERIOD_READINGS``
        readings (inf before two). A rate the physics step does not divide comes out as
        alternating gaps (100 Hz on 4 ms steps: 8 and 12 ms); the last gap alone would make a
        reading 12 ms old look overdue after an 8 ms gap."""
        items = self._items
        if len(items) < 2:
            return math.inf
        count = min(len(items), PERIOD_READINGS)
        return max(items[-k][0] - items[-k - 1][0] for k in range(1, count))

    def nearest(self, stamp: float, timeout: float) -> T | None:
        """The reading whose stamp is nearest ``stamp``, if within ``timeout`` of it."""
        best: tuple[float, T] | None = None
        best_gap = timeout
        for item_stamp, value in reversed(self._items):
            gap = abs(item_stamp - stamp)
            if gap <= best_gap:
                best, best_gap = (item_stamp, value), gap
            elif item_stamp < stamp - timeout:
                break  # older still: farther away
        return None if best is None else best[1]
