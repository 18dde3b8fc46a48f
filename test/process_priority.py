"""What priority a process runs at, as the kernel schedules it: the nice of each of its threads
(Linux keeps one per thread) and of its session's scheduling group (autogroup)."""

from __future__ import annotations

import os
from pathlib import Path


def priorities(pid: int) -> set[int]:
    """The nice values of every thread of process ``pid`` and of its session's scheduling group
    (where the kernel groups by session): ``{n}`` when all run at ``n``."""
    autogroup = Path(f"/proc/{pid}/autogroup")
    return ({os.getpriority(os.PRIO_PROCESS, int(task.name)) for task in Path(f"/proc/{pid}/task").iterdir()}
            | ({int(autogroup.read_text().split()[-1])} if autogroup.exists() else set()))
