"""A bag named on a command line (``plot``, ``compare``, ``view``): checked and read, or refused
in one line (a :class:`~humanoid_core.command_line.UsageError`, exit status 2) saying why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from humanoid_core import UsageError

__all__ = ["check_bag", "read_bag"]

T = TypeVar("T")


def check_bag(bag: Path) -> None:
    """A UsageError saying why ``bag`` is not a bag (and how to repair an interrupted recording)."""
    if not (bag / "metadata.yaml").is_file():
        hint = (f"; if its recording was interrupted, repair it with humanoid record --reindex {bag}"
                if bag.is_dir() and any(bag.glob("*.mcap")) else "")
        raise UsageError(f"{bag} is not a bag (no metadata.yaml){hint}")


def read_bag(bag: Path, read: Callable[[Path], T]) -> T:
    """``read(bag)`` of a checked bag, a UsageError when rosbags cannot read it."""
    from rosbags.rosbag2 import ReaderError

    check_bag(bag)
    try:
        return read(bag)
    except ReaderError as error:  # a YAML parser's message spans lines: one line is said
        said = " ".join(part.strip() for part in str(error).splitlines() if part.strip().strip("^"))
        raise UsageError(f"cannot read {bag}: {said}") from None
