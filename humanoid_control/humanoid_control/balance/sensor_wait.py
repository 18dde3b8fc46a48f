"""Holding a joint state until the sensor readings of its instant have arrived.

Joint states and the sensors' readings (ground truth, IMU, foot wrenches and contacts)
travel on separate topics. On a busy machine, or with the simulator running faster than
real time, a joint state can reach the monitor before the readings stamped with the same
instant: answered at once, it would find no reading within ``sensor_timeout`` and fall
back (the ground frame switching from ``world`` to a sole and back, the CoM filter
restarting). A sensor that served the previous joint state but has no reading within
``sensor_timeout`` of this one is therefore *late*, and the joint state waits for it, in
order with those after it, up to ``sensor_patience`` seconds of wall time: a sensor that
stopped delays the answers once, by that much, and is then no longer awaited.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from humanoid_control.balance.readings import RecentReadings

M = TypeVar("M")


def late_sensors(feeds: Iterator[RecentReadings], previous: float, stamp: float, timeout: float) -> bool:
    """Is any feed late for ``stamp``: it had a reading within ``timeout`` of the previous
    answered stamp ``previous``, and has none yet that reaches ``stamp - timeout``?"""
    for feed in feeds:
        newest = feed.newest_stamp
        if feed and previous - timeout <= newest < stamp - timeout:
            return True
    return False


class SensorWait(Generic[M]):
    """Joint states in arrival order, released when their sensors are not late.

    ``late(stamp, previous)`` tells whether a state stamped ``stamp`` must wait (the
    previous released stamp given); ``release(message)`` is called for each state in turn.
    The caller calls :meth:`offer` for each joint state and :meth:`drain` whenever a sensor
    reading arrives and periodically (the patience runs on ``clock``, in seconds)."""

    def __init__(self, late: Callable[[float, float], bool], release: Callable[[M], None],
                 patience: float, depth: int, clock: Callable[[], float]) -> None:
        self._late = late
        self._release = release
        self._patience = patience
        self._depth = depth
        self._clock = clock
        self._pending: collections.deque[tuple[float, float, M]] = collections.deque()
        self._previous = -math.inf
        #: joint states held back (waiting for a late sensor, or behind one that waits)
        self.waited = 0
        #: states released while a sensor was still late (patience or queue depth exhausted)
        self.gave_up = 0

    def __len__(self) -> int:
        return len(self._pending)

    def offer(self, stamp: float, message: M) -> None:
        """A joint state arrived: answered now unless it, or one before it, waits."""
        if not self._pending and not self._late(stamp, self._previous):
            self._answer(stamp, message)
            return
        self.waited += 1
        self._pending.append((stamp, self._clock(), message))
        self.drain()

    def drain(self) -> None:
        """Release, in order, the waiting states whose sensors have caught up, whose
        patience ran out, or that overflow the queue depth."""
        now = self._clock()
        while self._pending:
            stamp, since, message = self._pending[0]
            if self._late(stamp, self._previous):
                if now - since < self._patience and len(self._pending) <= self._depth:
                    return
                self.gave_up += 1
            self._pending.popleft()
            self._answer(stamp, message)

    def _answer(self, stamp: float, message: M) -> None:
        self._previous = stamp
        self._release(message)
