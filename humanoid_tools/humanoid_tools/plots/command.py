"""``humanoid plot BAG [--out DIR]``: PNG figures of a recorded experiment."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from humanoid_tools.recording import read_bag

#: Exit status when the bag is damaged: the figures are written from what could be read.
DAMAGED = 1

EPILOG = (f"exit status: 0 when every message was read; {DAMAGED} when the bag is damaged (chunks or messages "
          "that cannot be read, listed on stderr): the figures are written from what could be read, and the "
          "status says they do not show all of the recording; 2 for bad arguments or a folder that is not a "
          "readable bag")

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.add_argument("bag", type=Path, help="bag directory (rosbag2, as written by humanoid record)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the PNG files (default: BAG/plots)")


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
    if not experiment.damage:
        return 0
    for line in experiment.damage:
        print(f"humanoid plot: not read: {line}", file=sys.stderr)
    print(f"humanoid plot: error: {args.bag} is damaged: the figures show only what could be read "
          f"(exit status {DAMAGED})", file=sys.stderr)
    return DAMAGED
