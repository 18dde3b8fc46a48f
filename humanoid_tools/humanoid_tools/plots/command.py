"""``humanoid plot BAG [--out DIR]``: PNG figures of a recorded experiment."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from humanoid_control.command_line import UsageError

T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", type=Path, help="bag directory (rosbag2, as written by humanoid record)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the PNG files (default: BAG/plots)")


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
    except ReaderError as error:
        raise UsageError(f"cannot read {bag}: {error}") from None


def run(args: argparse.Namespace) -> int:
    from humanoid_tools.plots.figures import all_figures
    from humanoid_tools.plots.series import load

    experiment = read_bag(args.bag, load)
    out = args.out if args.out is not None else args.bag / "plots"
    files, notes = all_figures(experiment, out)
    for note in notes:
        print(f"note: {note}")
    for path in files:
        print(path)
    return 0
