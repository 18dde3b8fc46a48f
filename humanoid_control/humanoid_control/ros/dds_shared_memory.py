"""Fast DDS's shared-memory files that processes killed outright leave behind.

Fast DDS's shared-memory transport keeps each participant's segment and the port queues as
files in ``/dev/shm``: memory, not disk. A participant that ends removes its own; one killed
outright (SIGKILL: a test's crash cases, a process killed after its stop's grace) leaves them,
and they hold their memory until something removes them. Fast DDS ships the remover,
``fastdds shm clean``: a file is in use while its owner holds the lock on its ``_el``
companion, so the unlocked ones are removed, whoever left them. Its command line loads the
discovery tool first, which needs ``psutil`` (not a dependency of this stack), so the tool's
``Clean`` is loaded from its own file, beside the ``fastdds`` command (the virtualenv's
``tools/fastdds``, or a ROS installation's).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SHARED_MEMORY", "Cleaned", "clean_left_behind", "fastdds_tools"]

#: Where Fast DDS keeps its shared-memory files on Linux.
SHARED_MEMORY = Path("/dev/shm")


@dataclass(frozen=True)
class Cleaned:
    """What a clean removed."""

    files: int
    megabytes: float

    def describe(self) -> str:
        return (f"Fast DDS shared memory left by processes that are gone: {self.files} files removed "
                f"({self.megabytes:.1f} MB)")


def fastdds_tools() -> Path | None:
    """Fast DDS's Python tools beside its ``fastdds`` command (None: no such command)."""
    command = shutil.which("fastdds")
    if command is None:
        return None
    tools = Path(command).resolve().parent.parent / "tools" / "fastdds"
    return tools if (tools / "shm" / "clean.py").is_file() else None


def clean_left_behind() -> Cleaned | None:
    """Remove the shared-memory files no living participant holds (Fast DDS's own clean);
    None when Fast DDS's tools are not found."""
    tools = fastdds_tools()
    if tools is None:
        return None
    spec = importlib.util.spec_from_file_location("fastdds_shm_clean", tools / "shm" / "clean.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    before = _sizes()
    with contextlib.redirect_stdout(io.StringIO()):  # the tool prints its own counts
        module.Clean().run(force=False)
    gone = before.keys() - _sizes().keys()
    return Cleaned(len(gone), sum(before[name] for name in gone) / 1e6)


def _sizes() -> dict[str, int]:
    """Bytes each file in the shared-memory directory holds."""
    sizes = {}
    for path in SHARED_MEMORY.glob("*"):
        with contextlib.suppress(OSError):  # removed meanwhile
            sizes[path.name] = path.stat().st_blocks * 512
    return sizes
