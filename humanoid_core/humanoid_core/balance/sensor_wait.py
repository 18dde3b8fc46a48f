"""Holding a joint state until the sensor readings of its instant have arrived.

Joint states and the sensors' readings (ground truth, IMU, foot wrenches and contacts)
travel on separate topics. On a busy machine, or with the simulator running faster than
real time, the readings of an instant can reach the monitor well after its joint state
(seen: ground truth bursting in 0.5 s late under two CPU hogs). Answered at once, the
joint state would be paired with an older reading (one from before a reset, say) or,
beyond ``sensor_timeout``, with none: the ground frame would switch from ``world`` to a
sole and back and the CoM filter restart.

A sensor is therefore *late* for a joint state stamped ``t`` when its newest reading is
older than ``t`` by more than the sensor's own period (the longest gap among its last
few readings, :attr:`RecentReadings.interval`; at most ``sensor_timeout``): its reading
nearest ``t`` is still to come. The joint state waits for it, in order with those after
it, up to ``sensor_patience`` seconds of wall time. A sensor given up on is not awaited
again until it delivers a new reading, so a sensor that stops delays the answers once, by
the patience.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from humanoid_core.balance.readings import RecentReadings

M = TypeVar("M")

#: Stamps are sums of physics steps: allow for their rounding when comparing periods.
EPSILON = 1e-6


class SensorWait(Generic[M]):
    """Joint states in arrival order, each released once no sensor is late for it.

    ``feeds()`` gives the sensors' recent readings; ``release(message)`` answers one state.
    The caller calls :meth:`offer` for each joint state, and :meth:`drain` whenever a sensor
    reading arrives and periodically (the patience runs on ``clock``, in seconds)."""

    def __init__(self, feeds: Callable[[], Iterable[RecentReadings]], release: Callable[[M], None],
                 timeout: float, patience: float, depth: int, clock: Callable[[], float]) -> None:
        self._feeds = feeds
        self._release = release
        self._timeout = timeout
        self._patience = patience
        self._depth = depth
        self._clock = clock
        self._pending: collections.deque[tuple[float, float, M]] = collections.deque()
        self._abandoned: dict[int, float] = {}  # id of a feed given up on -> its newest stamp then
        #: joint states held back (waiting for a late sensor, or behind one that waits)
        self.waited = 0
        #: states released while a sensor was still late (patience or queue depth exhausted)
        self.gave_up = 0

    def __len__(self) -> int:
        return len(self._pending)

    def late(self, stamp: float) -> list[RecentReadings]:
        """The feeds late for a joint state stamped ``stamp``."""
        late = []
        for feed in self._feeds():
            if not feed:
                continue
            newest = feed.newest_stamp
            if self._abandoned.get(id(feed)) == newest:
                continue
            behind, period = stamp - newest, feed.interval
            # beyond the timeout exactly as RecentReadings.nearest counts it, no rounding allowance
            if behind > self._timeout or (period < self._timeout and behind > period + EPSILON):
                late.append(feed)
        return late

    def offer(self, stamp: float, message: M) -> None:
        """A joint state arrived: answered now unless it, or one before it, waits."""
        if not self._pending and not self.late(stamp):
            self._release(message)
            return
        self.waited += 1
        self._pending.append((stamp, self._clock(), message))
        self.drain()

    def drain(self) -> None:
        """Release, in order, the waiting states whose sensors have caught up, whose
        patience ran out, or that overflow the queue depth."""
        if not self._pending:  # the usual case, at every sensor reading
            return
        now = self._clock()
        while self._pending:
            stamp, since, message = self._pending[0]
            late = self.late(stamp)
            if late:
                if now - since < self._patience and len(self._pending) <= self._depth:
                    return
                self.gave_up += 1
                for feed in late:
                    self._abandoned[id(feed)] = feed.newest_stamp
            self._pending.popleft()
            self._release(message)
