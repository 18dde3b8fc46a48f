"""A test-support driver: :class:`~humanoid_core.loop.IdealDriver` paced like hardware."""

from __future__ import annotations

import time

from humanoid_core.loop import IdealDriver


class PacedIdealDriver(IdealDriver):
    """The ideal robot on a monotonic clock, one cycle per period of wall time (like hardware)."""

    def __init__(self, joints) -> None:
        super().__init__(joints, start_time=time.monotonic())
        self._next = time.monotonic()

    def sync(self, period: float) -> None:
        self._next += period
        time.sleep(max(0.0, self._next - time.monotonic()))
        super().sync(period)
        self.time = time.monotonic()
