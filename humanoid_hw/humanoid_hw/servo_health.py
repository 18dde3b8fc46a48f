"""What the driver knows about one servo's health while it runs: the stale/probe state machine.

A servo is *in the cycle* (read every cycle) once it is configured, unless it is
disabled (wrong model: never driven) or stale (it stopped answering). A stale servo
is asked again every ``stale_probe_period`` (one attempt, so that it cannot stall the
cycle) until it answers; then it is counted as recovered. Error bits are kept by name;
an overload or overheating shutdown is remembered (``tripped``) after the bit clears,
because the servo's torque stays off until it is re-armed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Servo errors after which the servo switches its own torque off (AX-12: Torque Limit 0).
SHUTDOWN_ERRORS = frozenset({"overload", "overheating"})


@dataclass
class ServoHealth:
    """Life-cycle and fault state of one servo (no I/O: the driver feeds it what happened)."""

    #: Start-up configuration done (return delay, limits, torque); never before it answered.
    configured: bool = False
    #: Set for a servo of the wrong model: it is never written to.
    disabled: str | None = None
    stale_since: float | None = None
    stale_reason: str = ""
    next_probe: float = 0.0
    recoveries: int = 0
    errors: tuple[str, ...] = ()
    #: Something to know that is not a fault (e.g. found outside its limits at start-up).
    warning: str | None = None
    #: The servo protected itself (overload, overheating): its torque is off until it is
    #: re-armed, even after the error bit clears. Kept until the driver restarts.
    tripped: str | None = None
    #: Last Hardware Error Status read (protocol 2.0), and when.
    hardware_error: int = 0
    hardware_error_read_at: float = -math.inf
    #: The servo's last present-state block as read (position, speed, load, voltage,
    #: temperature): kept raw, decoded only for diagnostics (see driver_status).
    state_block: bytes = b""

    @property
    def in_cycle(self) -> bool:
        """Read every cycle: configured, enabled and answering."""
        return self.configured and self.disabled is None and self.stale_since is None

    @property
    def stale(self) -> bool:
        return self.stale_since is not None or not self.configured

    def probe_due(self, now: float) -> bool:
        """A servo out of the cycle (stale, or not configured yet) that may be asked again now."""
        return self.disabled is None and not self.in_cycle and now >= self.next_probe

    def mark_stale(self, reason: str, now: float, probe_period: float) -> None:
        """It did not answer (or answered nonsense): out of the cycle, asked again after ``probe_period``."""
        if self.stale_since is None:
            self.stale_since = now
        self.stale_reason = reason
        self.next_probe = now + probe_period

    def probe_now(self, reason: str, now: float) -> None:
        """Out of the cycle, to be asked once at the next opportunity (after a port reopen)."""
        self.mark_stale(reason, now, 0.0)

    def mark_configured(self) -> None:
        self.configured = True
        self.stale_since = None

    def answered(self) -> None:
        """An answer came: back in the cycle, a recovery if it had been stale."""
        if self.stale_since is not None:
            self.recoveries += 1
            self.stale_since = None

    def disable(self, reason: str) -> None:
        self.disabled = reason

    def note_errors(self, names: list[str]) -> None:
        """The error names of its latest status; a shutdown error trips it until restart."""
        self.errors = tuple(names)
        shutdowns = [n for n in names if n in SHUTDOWN_ERRORS]
        if shutdowns and self.tripped is None:
            self.tripped = ", ".join(shutdowns)

    def clear_warning_within(self, raw_position: int, raw_min: int, raw_max: int) -> None:
        """An out-of-limits warning ends once the servo is measured inside its limits."""
        if self.warning and raw_min <= raw_position <= raw_max:
            self.warning = None
