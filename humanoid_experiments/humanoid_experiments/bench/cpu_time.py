"""CPU time a process has used, as the benchmarks read it (:mod:`humanoid_core.processes.cpu_time`),
and the machine's load beside which they measured it."""

from __future__ import annotations

import os

from humanoid_core.processes import own_cpu_seconds, process_cpu_seconds

__all__ = ["load_average", "own_cpu_seconds", "process_cpu_seconds"]


def load_average() -> list[float]:
    """The machine's load average over 1, 5 and 15 minutes, as the benchmarks report it."""
    return [round(v, 2) for v in os.getloadavg()]
