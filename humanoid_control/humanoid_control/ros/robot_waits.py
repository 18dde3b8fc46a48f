"""How long the control nodes that drive the robot wait for it (the trajectory generator, the
walk and gait controllers): one patience for all, so that a graph slow to come up on a loaded
machine is waited for alike by every node, and one measure of a robot gone silent."""

from __future__ import annotations

import time
from collections.abc import Callable

#: Wall seconds a node waits for the robot's first joint_states, and for its trajectory action
#: to answer, before it gives up on a request (and says so in the request's result).
CONNECT_TIMEOUT = 30.0
#: Wall seconds without joint_states after which a walk or gait under way counts the robot as
#: gone and is abandoned (the robot interface holds the last set-point it was sent). Wall time,
#: not robot time: a simulation slowed by a busy machine still publishes every few tens of
#: milliseconds, and a paused one stops the controller's clock too.
STATE_TIMEOUT = 1.0
#: Wall seconds between a controller's looks at the robot's silence (its watchdog timer).
WATCH_PERIOD = 0.5
#: A look this much later than the one before means this process itself was stalled meanwhile.
STALL_GAP = 1.5 * WATCH_PERIOD


class RobotSilence:
    """How long the robot has sent no joint_states, counted over the time this process could
    hear it. A process that gets no CPU for a while (a busy machine, a stopped process) finds,
    when it runs again, its latest reading as old as its stall while the readings sent meanwhile
    still wait in its queue: taken for the robot's silence, that stall ended walks and gaits the
    robot was following. So the watchdog's looks (:meth:`look`, every :data:`WATCH_PERIOD`)
    note when they come late (:data:`STALL_GAP`), silence counts again from the late look, and
    while the looks are overdue nobody calls the robot silent. A robot that did stop is still
    found silent ``timeout`` s after this process runs again; a process starved so much that
    every look comes late never calls it silent (it could not control it either)."""

    def __init__(self, timeout: float = STATE_TIMEOUT, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._heard = 0.0  # the latest reading's arrival (none yet: silent since the clock's zero)
        self._resumed = 0.0  # when this process last ran again after a stall
        self._looked: float | None = None  # the watchdog's latest look

    def heard(self) -> None:
        """A reading came (its arrival, by this process's clock)."""
        self._heard = self._clock()

    def look(self) -> float:
        """The watchdog's periodic look: the silence now, s (0 after a stall of this process)."""
        now = self._clock()
        if self._overdue(now):
            self._resumed = now
        self._looked = now
        return self._silence(now)

    def silent_for(self) -> float:
        """The silence now, s (0 while the watchdog's look is overdue: this process may have
        been stalled, and its queued readings not yet taken)."""
        now = self._clock()
        return 0.0 if self._overdue(now) else self._silence(now)

    def gone(self) -> bool:
        """Silent beyond ``timeout``: the robot counts as gone."""
        return self.silent_for() > self.timeout

    def _overdue(self, now: float) -> bool:
        """The watchdog's look is late enough that this process was stalled since the last."""
        return self._looked is not None and now - self._looked > STALL_GAP

    def _silence(self, now: float) -> float:
        return now - max(self._heard, self._resumed)
