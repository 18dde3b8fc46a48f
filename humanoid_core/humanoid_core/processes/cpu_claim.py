"""Running a process on one CPU that no other such process on this machine runs on.

A control loop whose threads take turns at the interpreter lock runs faster on one CPU than
spread over several: a thread handed the lock is woken where the last holder left, on warm
caches, instead of on the other core while this one goes idle (docs/graph_cost.md, "One CPU
for a world"). Two such processes on one CPU would share it while another CPU had room, so
each claims its CPU: an exclusive ``flock`` on a file per CPU in the temporary directory,
held as long as the process lives (the kernel lets go of it when the process ends, however it
ends). Nothing here knows of ROS.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

__all__ = ["CPU_CLAIMS", "claim_cpu", "current_cpu", "run_on_cpu"]

#: Where the claims are: one lock file per CPU, shared by every user's processes on the machine.
CPU_CLAIMS = Path(tempfile.gettempdir())

#: The claims this process holds (their descriptors stay open while it lives).
_HELD: list[int] = []


def current_cpu() -> int:
    """The CPU the calling thread runs on (field 39 of its ``/proc`` stat line, after the
    parenthesised name, which may hold spaces)."""
    fields = Path("/proc/thread-self/stat").read_text().rpartition(")")[2].split()
    return int(fields[36])


def claim_cpu(claims: Path = CPU_CLAIMS) -> int | None:
    """Claim a CPU this process may run on for as long as it lives: the one the calling thread
    runs on if no other process holds it, else the next free one; None when the process may use
    only one CPU, or every CPU it may use is claimed."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        return None
    here = current_cpu()
    for cpu in sorted(allowed, key=lambda c: (c < here, c)):  # from here on, then those before
        try:
            descriptor = os.open(claims / f"humanoid-loop-cpu-{cpu}.lock", os.O_RDONLY | os.O_CREAT, 0o644)
        except OSError:  # another user's file that this one may not read: taken as claimed
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        _HELD.append(descriptor)
        return cpu
    return None


def run_on_cpu(cpu: int) -> None:
    """Run every thread of this process, and every thread they start, on ``cpu``."""
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task.name), {cpu})
