"""Running a process ahead of the machine's other work: the control loop of a driver node,
and the bus emulator, which stands in for servos whose own controllers the host's load never
slows."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

#: The kernel's scheduling group of this process's session (Linux with autogroup scheduling).
AUTOGROUP = Path("/proc/self/autogroup")


def set_priority(nice: int, warn: Callable[[str], None], what: str = "this process", session: bool = True) -> None:
    """Run this process at ``nice``, every thread of it (Linux keeps a nice per thread), and,
    with ``session``, its session's scheduling group at ``nice`` too where the kernel groups
    processes by session (autogroup, on in many distributions' kernels). There a process's
    nice weighs only against its own session; a driver node's session (front and loop) shared
    the CPU equally with every other session, so a busy machine starved the loop of a node
    whose front was busy (joint_states stalled while a huge trajectory was refused). Also
    called with 0 to give a raised priority up. Not permitted: one line through ``warn``
    naming ``what``; the process goes on at the priority it had."""
    try:
        for task in Path("/proc/self/task").iterdir():
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
        if session and AUTOGROUP.exists():
            AUTOGROUP.write_text(f"{nice}\n")
    except PermissionError:
        warn(f"cannot set {what}'s priority to nice {nice} (not permitted: give the user CAP_SYS_NICE or a "
             "nice limit in /etc/security/limits.conf); it runs at the default priority")


def leads_session() -> bool:
    """Whether this process leads its session: its session's scheduling group is then its own
    to set, not that of the terminal or the program that started it."""
    return os.getsid(0) == os.getpid()
