"""A vanished serial port (USB adapter unplugged): closed, then reopened with exponential back-off.

The first reopen attempt comes ``reopen_backoff_initial`` after the loss; each failed
attempt doubles the wait up to ``reopen_backoff_max``, so that an absent adapter costs
the control loop an ``open()`` now and then, not every cycle. Counters feed the bus
diagnostics.
"""

from __future__ import annotations

from humanoid_hw.bus import BusError, DynamixelBus
from humanoid_hw.hardware_config import DynamixelConfig


class PortRecovery:
    """Lost / reopening state of one bus's port."""

    def __init__(self, bus: DynamixelBus, config: DynamixelConfig) -> None:
        self.bus = bus
        self.config = config
        #: Why the port is lost (None while it is open and well).
        self.error: str | None = None
        self.losses = 0
        self.attempts = 0
        self.reopens = 0
        self._reopen_at = 0.0
        self._backoff = config.reopen_backoff_initial

    @property
    def lost(self) -> bool:
        return self.error is not None

    def lose(self, reason: str, now: float) -> None:
        """The port failed: close it and schedule the first reopen attempt."""
        if self.error is None:
            self.losses += 1
            self._backoff = self.config.reopen_backoff_initial
        self.bus.close()
        self.error = reason
        self._reopen_at = now + self._backoff

    def try_reopen(self, now: float, force: bool = False) -> bool:
        """Reopen when the back-off allows (or ``force``); True when the port is open again."""
        if not self.lost:
            return self.bus.is_open
        if now < self._reopen_at and not force:
            return False
        self.attempts += 1
        try:
            self.bus.open()
        except BusError as error:
            self._backoff = min(2.0 * self._backoff, self.config.reopen_backoff_max)
            self.error = f"{error}; next attempt in {self._backoff:.2f} s"
            self._reopen_at = now + self._backoff
            return False
        self.reopens += 1
        self.error = None
        return True

    def wait_time(self, now: float) -> float:
        """Seconds until the next reopen attempt is due (0 when due or not lost)."""
        return max(0.0, self._reopen_at - now) if self.lost else 0.0
