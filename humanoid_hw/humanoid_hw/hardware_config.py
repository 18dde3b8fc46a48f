"""Parameters of a Dynamixel bus and of the driver's policies, with documented defaults.

Per-robot values live in ``robots/<robot>/bus.yaml`` of this package; every key is a
field of :class:`DynamixelConfig` (unknown keys are refused, so a typo never passes
silently). Command-line tools and nodes override single fields on top of the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from humanoid_description import HW_BUS_CONFIGURATION

PACKAGE = "humanoid_hw"


@dataclass(frozen=True)
class DynamixelConfig:
    """How to reach the servos and what to do when something goes wrong."""

    #: Serial device of the USB adapter (a stable /dev/serial/by-id/... link is better).
    port: str = "/dev/ttyUSB0"
    #: Bus speed in bit/s; the servos must already be set to it.
    baud: int = 1_000_000
    #: Dynamixel protocol of the bus (1 for AX servos, 2 for X servos); one per port.
    protocol: int = 1
    #: Return Delay Time written to every servo at start-up (2 us per unit; factory 250).
    return_delay: int = 0
    #: Status Return Level written at start-up: 2 = answer every instruction, 1 = only
    #: PING and READ (saves the status packets of WRITEs). 0 is refused: the driver reads.
    status_return_level: int = 2
    #: Enable torque at the end of start-up (goals first set to the present positions).
    torque_on_start: bool = True
    #: Extra attempts after a timed-out or corrupted transaction, before giving up on it.
    retries: int = 3
    #: Latency timer of the USB adapter (ms). Sizes the packet timeout like the maker's
    #: SDK does: 2 x latency + 2 ms + transmission time. FTDI adapters default to 16 ms;
    #: set the adapter to 1 ms (/sys/bus/usb-serial/devices/ttyUSB0/latency_timer) and
    #: this to 1 for a fast bus.
    latency_timer_ms: float = 16.0
    #: Half-width (us) of the window around an answer's due time (request and answer at
    #: the baud rate, plus the return delay) in which the driver polls the line instead
    #: of sleeping. A thread asleep in select() is woken late by an idle computer (an
    #: idle virtual CPU halts, a physical one enters a sleep state): tens of microseconds
    #: per answer, 18 answers a Bioloid cycle. The wait sleeps until the window opens, so
    #: polling costs at most twice this per answer; an answer that comes over 1 ms after
    #: the window (an adapter whose latency timer holds it back) pauses polling for the
    #: next 100 waits. 0: never poll (least CPU).
    answer_poll_us: float = 100.0
    #: Polling buys a cycle a little time (a wake-up per answer) for CPU: a control loop
    #: polls in a cycle only when the cycle before it left less than this share of the
    #: control period free, and sleeps through its waits while it has time to spare
    #: (1: poll whatever the spare time; a driver run without a deadline always polls).
    answer_poll_slack: float = 0.2
    #: A configured servo missing (or of the wrong model) at start-up: "refuse" to start,
    #: or start "degraded" with that joint marked stale.
    on_missing: str = "refuse"
    #: On close: "limp" (torque off) or "hold" (leave torque on at the last goal).
    on_shutdown: str = "limp"
    #: How often a stale servo is asked again (s), so that it can recover without
    #: slowing every cycle by a timeout.
    stale_probe_period: float = 0.5
    #: Back-off before reopening a vanished port: first delay, doubling up to the maximum (s).
    reopen_backoff_initial: float = 0.1
    reopen_backoff_max: float = 2.0

    def __post_init__(self) -> None:
        problems = []
        if self.protocol not in (1, 2):
            problems.append(f"protocol must be 1 or 2, not {self.protocol!r}")
        if self.baud <= 0:
            problems.append(f"baud must be positive, not {self.baud!r}")
        if not 0 <= self.return_delay <= 254:
            problems.append(f"return_delay must be 0..254 (2 us units), not {self.return_delay!r}")
        if self.status_return_level not in (1, 2):
            problems.append(f"status_return_level must be 1 or 2, not {self.status_return_level!r}")
        if self.retries < 0:
            problems.append(f"retries must be >= 0, not {self.retries!r}")
        if self.latency_timer_ms < 0:
            problems.append(f"latency_timer_ms must be >= 0, not {self.latency_timer_ms!r}")
        if self.answer_poll_us < 0:
            problems.append(f"answer_poll_us must be >= 0, not {self.answer_poll_us!r}")
        if not 0.0 <= self.answer_poll_slack <= 1.0:
            problems.append(f"answer_poll_slack must be within [0, 1], not {self.answer_poll_slack!r}")
        if self.on_missing not in ("refuse", "degraded"):
            problems.append(f"on_missing must be 'refuse' or 'degraded', not {self.on_missing!r}")
        if self.on_shutdown not in ("limp", "hold"):
            problems.append(f"on_shutdown must be 'limp' or 'hold', not {self.on_shutdown!r}")
        if self.stale_probe_period <= 0:
            problems.append(f"stale_probe_period must be positive, not {self.stale_probe_period!r}")
        if not 0 < self.reopen_backoff_initial <= self.reopen_backoff_max:
            problems.append("reopen back-off must satisfy 0 < reopen_backoff_initial <= reopen_backoff_max")
        if problems:
            raise ValueError("invalid Dynamixel configuration: " + "; ".join(problems))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "configuration") -> DynamixelConfig:
        """Build from a mapping (a YAML file's content); unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{where}: unknown Dynamixel parameter(s) {', '.join(unknown)} "
                             f"(known: {', '.join(sorted(known))})")
        return cls(**dict(data))

    def replace(self, **changes: Any) -> DynamixelConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def hardware_config_path(robot: str) -> Path:
    """The robot's ``bus.yaml`` (``humanoid_description/robots/<robot>/``)."""
    return HW_BUS_CONFIGURATION.path(robot)


def load_hardware_config(robot: str, **overrides: Any) -> DynamixelConfig:
    """The robot's bus parameters from its ``bus.yaml``, with overrides applied."""
    path = hardware_config_path(robot)
    if not path.exists():
        raise FileNotFoundError(f"robot {robot!r} has no Dynamixel hardware configuration ({path} is missing)")
    data = yaml.safe_load(path.read_text()) or {}
    base = DynamixelConfig.from_mapping(data.get("dynamixel", {}), where=str(path))
    return base.replace(**overrides) if overrides else base
