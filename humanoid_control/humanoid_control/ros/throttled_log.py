"""Log lines a node may repeat for every message it takes, printed at most once per period.

rclpy's own ``throttle_duration_sec`` decides whether to print only after it found the calling
line with :mod:`inspect`, which looks the source file up on disk: 0.45 ms for each call,
printed or not (a debug line that is off costs 0.002 ms). A node that logs a throttled error
for each bad message spends most of its time there: a control container flooded with
malformed states queued them faster than it took them and stopped 8-18 s after SIGTERM
(humanoid_control/test/test_node_stop_under_flood.py). Here the caller's line is read from
its frame, and rclpy's logger is called only for the lines that are printed.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rclpy.impl.rcutils_logger import RcutilsLogger

__all__ = ["ThrottledLog"]


class ThrottledLog:
    """``logger``'s error and warning lines, each calling line printed at most once per its
    ``period`` (seconds of ``clock``, monotonic by default: as rclpy's throttle, steady time)."""

    def __init__(self, logger: RcutilsLogger, clock: Callable[[], float] = time.monotonic) -> None:
        self._logger = logger
        self._clock = clock
        self._printed: dict[tuple[object, int], float] = {}

    def error(self, message: str, period: float) -> None:
        if self._due(period):
            self._logger.error(message)

    def warning(self, message: str, period: float) -> None:
        if self._due(period):
            self._logger.warning(message)

    def _due(self, period: float) -> bool:
        """Whether the line that called :meth:`error` or :meth:`warning` prints now."""
        caller = sys._getframe(2)
        line = (caller.f_code, caller.f_lineno)
        now = self._clock()
        last = self._printed.get(line)
        if last is not None and now - last < period:
            return False
        self._printed[line] = now
        return True
