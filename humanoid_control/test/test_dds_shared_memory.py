"""Fast DDS's shared memory (``humanoid_control.ros.dds_shared_memory``): what a participant
killed outright leaves in /dev/shm is removed, what a living one holds is kept. Real
participants (rclpy over Fast DDS in processes of their own), real files; a file's owner is
told by its lock in /proc/locks, as Fast DDS tells it.

A participant's port files (``fastdds_port<N>``) are named for the machine, not for the
participant or its domain: a participant started anywhere (another test worker's graph) takes
a port whose lock nobody holds, so a killed participant's port may be taken again between the
kill and the clean; it then belongs to a living participant and is kept."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from humanoid_control.ros import SHARED_MEMORY, clean_left_behind

PARTICIPANT = ("import sys, rclpy; from std_msgs.msg import String; rclpy.init(); "
               "node = rclpy.create_node('shared_memory_test'); "
               "node.create_publisher(String, 'shared_memory_test', 1); print('up', flush=True); sys.stdin.read()")


@contextmanager
def participant() -> Iterator[subprocess.Popen]:
    """A process with a DDS participant, up (its files made) until its standard input closes."""
    process = subprocess.Popen([sys.executable, "-c", PARTICIPANT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout.readline().strip() == "up", "the participant did not start"
        yield process
    finally:
        process.stdin.close()
        process.wait(30.0)  # one that hangs is killed and named by the session's left-behind check


def locked(pid: int | None = None) -> set[int]:
    """The inodes of the files ``pid`` (None: any process) holds a lock on."""
    return {int(fields[5].split(":")[2]) for fields in map(str.split, Path("/proc/locks").read_text().splitlines())
            if len(fields) > 5 and (pid is None or fields[4] == str(pid))}


def owned(pid: int) -> list[Path]:
    """The shared-memory files ``pid`` holds: each lock file it has locked, and its segment."""
    inodes = locked(pid)
    locks = [path for path in SHARED_MEMORY.iterdir() if path.name.endswith("_el") and path.stat().st_ino in inodes]
    return [file for lock in locks for file in (lock, lock.with_name(lock.name.removesuffix("_el")))]


def unheld(files: list[Path]) -> list[str]:
    """The names of ``files`` that still exist with nobody holding their lock file."""
    inodes = locked()

    def held(file: Path) -> bool:
        lock = file if file.name.endswith("_el") else file.with_name(f"{file.name}_el")
        try:
            return lock.stat().st_ino in inodes
        except FileNotFoundError:
            return False

    return [file.name for file in files if file.exists() and not held(file)]


def test_a_killed_participants_shared_memory_is_removed_and_a_living_ones_kept():
    with participant() as living, participant() as killed:
        kept, left = owned(living.pid), owned(killed.pid)
        assert kept and left, f"no shared-memory file held: {kept}, {left}"
        killed.kill()
        killed.wait()
        assert all(file.exists() for file in left), "a killed participant's files went by themselves"
        cleaned = clean_left_behind()
        assert cleaned is not None, "Fast DDS's tools not found beside the fastdds command"
        assert not unheld(left), "files of the killed participant that nobody holds were kept"
        taken_again = [file.name for file in left if file.exists()]
        assert all(name.startswith("fastdds_port") for name in taken_again), taken_again
        assert all(file.exists() for file in kept), [file.name for file in kept if not file.exists()]
        assert cleaned.files >= len(left) and cleaned.megabytes > 0.0
        assert f"{cleaned.files} files removed" in cleaned.describe()
