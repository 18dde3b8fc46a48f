"""CPU time a process has used (Linux): what the benchmarks count, and what a test of a
stopping node counts instead of wall time on a machine short of CPU."""

from __future__ import annotations

import time

from humanoid_core.processes.process_lifetime import process_tree

__all__ = ["own_cpu_seconds", "process_cpu_seconds"]


#: The kernel's per-process scheduler CPU clock (include/linux/posix-timers.h: CPUCLOCK_SCHED).
_CPUCLOCK_SCHED = 2


def own_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of one process (all its threads, ended ones included); None once
    it has ended. Read from the process's CPU-time clock (``clock_getcpuclockid``: Linux names
    it ``(~pid << 3) | 2``), in nanoseconds: ``/proc/<pid>/stat`` counts in 10 ms ticks, and a
    node that took 200 messages in a short benchmark could read 0."""
    try:
        return time.clock_gettime(((~pid) << 3) | _CPUCLOCK_SCHED)
    except OSError:  # the process has ended (or is not ours to read)
        return None


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) and of the processes it started
    (a driver node's control loop runs in a child process), from /proc."""
    return sum(seconds for member in process_tree(pid) if (seconds := own_cpu_seconds(member)) is not None)
