"""The control loop's process of a driver node a test started, and where its threads may run."""

from __future__ import annotations

import os
from pathlib import Path

from humanoid_core.processes import child_processes


def loop_process(front: int) -> int:
    """The loop's process of the driver node whose front is ``front``: its one child started by
    multiprocessing's spawn (the assertion names the children when there is not exactly one)."""
    children = child_processes(front)
    loops = [pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(loops) == 1, f"the driver node's front {front} has the children {children}"
    return loops[0]


def thread_cpus(pid: int) -> set[frozenset[int]]:
    """The sets of CPUs the threads of process ``pid`` may run on."""
    return {frozenset(os.sched_getaffinity(int(task.name))) for task in Path(f"/proc/{pid}/task").iterdir()}
