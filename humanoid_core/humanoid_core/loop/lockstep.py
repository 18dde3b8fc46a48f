"""Lockstep: a simulation that waits for its controllers, so that a run gives the same
result twice and goes as fast as the CPU allows.

After each state it publishes (``joint_states`` at stamp t), the simulator's control loop
runs its next cycle only when every *participant* has answered t: a participant is a node
that, for each joint_states message, sends what that message makes it send (a trajectory,
a set-point, a goal) and then answers (``lockstep/ready``, humanoid_interfaces/LockstepReady).
What a participant sends before its answer reaches the loop before the loop goes on (the
front hands commands and answers to the loop in the order it received them), so the robot
sees each command at the same simulated time in every run, whatever else the machine does.

A participant joins with its first answer, or is expected from the start (named in the
simulator's ``lockstep_participants``: the simulation then does not start before it
answers), and leaves with an answer whose ``leaving`` is true. One that stops answering is
reported by name every ``timeout`` seconds of waiting, and the simulation stays paused
meanwhile: it never runs on without a participant.

:class:`LockstepGate` is the loop's side, free of ROS: the control loop calls
:meth:`LockstepGate.wait` in each cycle after the driver's sync (the physics step runs while
the participants work) and before it reads; the state publisher tells it which stamp went
out (:meth:`LockstepGate.published`); the front's relay calls :meth:`LockstepGate.answer`.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from humanoid_core.loop.driver import Level, StatusEntry

__all__ = ["LockstepGate", "LockstepStatus"]

#: s of wall time between two looks at whether the loop is stopping, while it waits.
POLL = 0.1
#: s of wall time between two sendings of the state the loop waits at: a participant whose
#: subscription was not matched yet when it went out (a node still starting) gets it then.
RESEND_PERIOD = 0.25
#: s: an answer's stamp went through ROS time (integer nanoseconds): it matches the published
#: stamp within this.
STAMP_TOLERANCE = 1e-6
#: Answers of each participant its answer time is the median of (the latest ones).
ANSWER_TIMES_KEPT = 200


@dataclass(frozen=True)
class LockstepStatus:
    """What the gate has seen, for diagnostics."""

    participants: tuple[str, ...]
    waiting_for: tuple[str, ...]  # silent participants, while the loop waits
    waits: int  # states the loop waited at
    wait_seconds: float  # wall time spent waiting, in all
    longest_wait: float  # s, the longest single wait
    reports: int  # times a silent participant was reported
    #: Each participant's answer time: the median, over its latest answers, of the wall time
    #: from a state's publication to the answer's arrival in the loop (s); what a slow
    #: participant costs every state, where a silent one is named after ``timeout``.
    answer_times: dict[str, float] = field(default_factory=dict)


class LockstepGate:
    """Holds the control loop at each published state until every participant answered it."""

    def __init__(self, expected: Sequence[str] = (), timeout: float = 5.0,
                 report: Callable[[str], None] = lambda _text: None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``expected``: participants waited for from the start; ``report`` gets the text that
        names the participants the loop has waited for ``timeout`` seconds (wall)."""
        if not timeout > 0.0:
            raise ValueError(f"lockstep timeout must be > 0, got {timeout}")
        self.timeout, self._report, self._clock = timeout, report, clock
        self._answered: dict[str, float] = dict.fromkeys(expected, -math.inf)  # participant -> latest stamp
        self._due: float | None = None  # the stamp to be answered before the next cycle
        self._published_at = 0.0  # wall time the state stamped _due went out
        self._answer_times: dict[str, deque[float]] = {}  # participant -> its latest answer times (s)
        self._changed = threading.Condition()
        self._waits = self._reports = 0
        self._wait_seconds = self._longest = 0.0
        self._silent: tuple[str, ...] = ()

    # -- the front's relay ------------------------------------------------------------------
    def answer(self, participant: str, stamp: float, leaving: bool = False) -> None:
        """``participant`` answered the state stamped ``stamp`` (or leaves)."""
        with self._changed:
            if leaving:
                self._answered.pop(participant, None)
                self._answer_times.pop(participant, None)
            else:
                previous = self._answered.get(participant, -math.inf)
                self._answered[participant] = max(stamp, previous)
                due = self._due
                if due is not None and abs(stamp - due) <= STAMP_TOLERANCE and previous < due - STAMP_TOLERANCE:
                    times = self._answer_times.setdefault(participant, deque(maxlen=ANSWER_TIMES_KEPT))
                    times.append(self._clock() - self._published_at)
            self._changed.notify_all()

    # -- the control thread -------------------------------------------------------------------
    def published(self, stamp: float) -> None:
        """The state stamped ``stamp`` went out: the loop waits for its answers next."""
        with self._changed:
            self._due, self._published_at = stamp, self._clock()

    def wait(self, stopping: Callable[[], bool], resend: Callable[[], None] = lambda: None) -> None:
        """Return when every participant has answered the last published state (at once when
        none is due), or when ``stopping()`` turns true; ``resend()`` publishes that state
        again every ``RESEND_PERIOD`` meanwhile."""
        with self._changed:
            due = self._due
            if due is None or self._all_answered(due):
                self._due = None
                return
            started = self._clock()
            next_report, next_resend = started + self.timeout, started + RESEND_PERIOD
            while not self._all_answered(due) and not stopping():
                now = self._clock()
                if now >= next_resend:
                    self._changed.release()  # the publisher may take its time: answers still come in
                    try:
                        resend()
                    finally:
                        self._changed.acquire()
                    next_resend = now + RESEND_PERIOD
                if now >= next_report:
                    self._silent = self._missing(due)
                    self._reports += 1
                    self._report(f"lockstep: the simulation has waited {now - started:.1f} s at t = {due:.3f} s "
                                 f"for {', '.join(self._silent)} to answer: paused until every participant "
                                 "answers (or leaves)")
                    next_report = now + self.timeout
                self._changed.wait(min(POLL, max(0.0, next_report - now), max(0.0, next_resend - now)))
            waited = self._clock() - started
            self._due, self._silent = None, ()
            self._waits += 1
            self._wait_seconds += waited
            self._longest = max(self._longest, waited)

    def _all_answered(self, stamp: float) -> bool:
        return all(answered >= stamp - STAMP_TOLERANCE for answered in self._answered.values())

    def _missing(self, stamp: float) -> tuple[str, ...]:
        return tuple(sorted(name for name, answered in self._answered.items()
                            if answered < stamp - STAMP_TOLERANCE))

    # -- diagnostics ------------------------------------------------------------------------
    def status(self) -> LockstepStatus:
        with self._changed:
            answer_times = {name: statistics.median(times) for name, times in sorted(self._answer_times.items())}
            return LockstepStatus(tuple(sorted(self._answered)), self._silent, self._waits, self._wait_seconds,
                                  self._longest, self._reports, answer_times)

    def status_entry(self, name: str) -> StatusEntry:
        """The gate's diagnostics line: WARN while a participant is silent past the timeout."""
        status = self.status()
        values = {"participants": ",".join(status.participants) or "none", "waits": str(status.waits),
                  "wait_s": f"{status.wait_seconds:.3f}", "longest_wait_s": f"{status.longest_wait:.3f}",
                  "silent_reports": str(status.reports),
                  "answer_ms": ",".join(f"{participant}={seconds * 1000:.2f}"
                                        for participant, seconds in status.answer_times.items())}
        if status.waiting_for:
            return StatusEntry(f"{name}: lockstep", Level.WARN,
                               f"paused, waiting for {', '.join(status.waiting_for)}", values)
        return StatusEntry(f"{name}: lockstep", Level.OK, f"{len(status.participants)} participants", values)
