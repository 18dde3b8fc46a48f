"""``humanoid plot BAG [--out DIR]``: PNG figures of a recorded experiment."""

from __future__ import annotations

import argparse
from pathlib import Path

from humanoid_control.command_line import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", type=Path, help="bag directory (rosbag2, as written by humanoid record)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the PNG files (default: BAG/plots)")


def run(args: argparse.Namespace) -> int:
    from rosbags.rosbag2 import ReaderError

    from humanoid_tools.plots.figures import all_figures
    from humanoid_tools.plots.series import load

    if not (args.bag / "metadata.yaml").is_file():
        hint = (f"; if its recording was interrupted, repair it with humanoid record --reindex {args.bag}"
                if args.bag.is_dir() and any(args.bag.glob("*.mcap")) else "")
        raise UsageError(f"{args.bag} is not a bag (no metadata.yaml){hint}")
    try:
        experiment = load(args.bag)
    except ReaderError as error:
        raise UsageError(f"cannot read {args.bag}: {error}") from None
    out = args.out if args.out is not None else args.bag / "plots"
    files, notes = all_figures(experiment, out)
    for note in notes:
        print(f"note: {note}")
    for path in files:
        print(path)
    return 0
