"""``humanoid compare BAG_A BAG_B [--offset S] [--out DIR | --no-figures] [--json]``: two recordings of the same
experiment (simulation and robot, or two simulations) compared from their bags alone."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from humanoid_core import UsageError, finite_number

if TYPE_CHECKING:
    from humanoid_tools.plots.comparison import Comparison


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag_a", type=Path, metavar="BAG_A", help="the first bag (rosbag2, as written by "
                                                                  "humanoid record), e.g. the simulation")
    parser.add_argument("bag_b", type=Path, metavar="BAG_B", help="the second bag, e.g. the robot")
    parser.add_argument("--offset", type=finite_number, default=None, metavar="SECONDS",
                        help="align by hand: B's time SECONDS after its first joint_states is A's first "
                             "joint_states (default: align both on the start of the experiment: the start of "
                             "the first follow_joint_trajectory goal's trajectory or the first joint_trajectory/"
                             "joint_commands message, else the first play_motion goal's acceptance)")
    figures = parser.add_mutually_exclusive_group()
    figures.add_argument("--out", type=Path, default=None,
                         help="folder for the PNG files (default: BAG_A/compare_<BAG_B's name>)")
    parser.add_argument("--json", action="store_true",
                        help="print the comparison as JSON on stdout (rad, m, s) instead of text")
    figures.add_argument("--no-figures", action="store_true",
                         help="the numbers alone (text or --json), no PNG files: several times quicker")


def run(args: argparse.Namespace) -> int:
    from humanoid_description import ROBOTS, load_config
    from humanoid_tools.plots.comparison import (
        ComparisonError,
        compare,
        missing_notes,
        report,
        robot_of_both,
        summary_lines,
    )
    from humanoid_tools.plots.series import extract, identity
    from humanoid_tools.recording import Bag, read_bag

    with contextlib.ExitStack() as opened:
        # both bags opened, and their robot checked from their first messages, before the long reading:
        # a refusal is one line, said before any progress
        bags = [opened.enter_context(read_bag(path, Bag)) for path in (args.bag_a, args.bag_b)]
        known = {robot: load_config(robot).joints for robot in ROBOTS}
        try:
            robot = robot_of_both(bags[0].path, read_bag(bags[0].path, lambda _p: identity(bags[0])),
                                  bags[1].path, read_bag(bags[1].path, lambda _p: identity(bags[1])), known)
        except ComparisonError as error:
            raise UsageError(str(error)) from None
        experiments = []
        for label, bag in zip("AB", bags, strict=True):
            _progress(f"reading {label}: {bag.path}")
            experiments.append(read_bag(bag.path, lambda _path, bag=bag: extract(bag)))
    try:
        comparison = compare(*experiments, robot, args.offset)
    except ComparisonError as error:
        raise UsageError(str(error)) from None
    out = args.out if args.out is not None else args.bag_a / f"compare_{args.bag_b.resolve().name}"
    _progress(f"{len(comparison.joints)} joints, {len(comparison.times)} samples compared"
              + ("" if args.no_figures else f"; figures into {out}"))
    files, notes = [] if args.no_figures else _figures(comparison, out), missing_notes(comparison)
    if args.json:
        data = report(comparison)
        data["figures"] = [str(path) for path in files]
        data["notes"] = notes
        print(json.dumps(_json_safe(data), indent=2))
        return 0
    print(_table(comparison))
    for line in [*summary_lines(comparison), *(f"note: {note}" for note in notes), *map(str, files)]:
        print(line)
    return 0


def _figures(comparison: Comparison, out: Path) -> list[Path]:
    """The PNG files (matplotlib imported only here: ``--no-figures`` runs without it)."""
    from humanoid_tools.plots.comparison_figures import all_figures

    return all_figures(comparison, out)


def _table(comparison: Comparison) -> str:
    rows = [f"{'joint':18} {'RMS diff':>9} {'max diff':>9} {'end diff':>9} {'track A':>8} {'track B':>8}  (deg)"]
    for joint in comparison.joints:
        s = joint.stats(comparison.times)
        rows.append(f"{joint.name:18} " + " ".join(_deg(s[k], 9) for k in ("rms_difference_rad", "max_difference_rad",
                                                                           "end_difference_rad"))
                    + " " + " ".join(_deg(s[k], 8) for k in ("tracking_rms_rad_a", "tracking_rms_rad_b")))
    total = comparison.total()
    rows.append(f"{'all joints':18} " + " ".join(_deg(total[k], 9) for k in ("rms_difference_rad",
                                                                              "max_difference_rad",
                                                                              "end_rms_difference_rad")))
    return "\n".join(rows)


def _deg(value: float | None, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{math.degrees(value):{width}.3f}"


def _json_safe(value: Any) -> Any:
    """NaN and infinities as null (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _progress(message: str) -> None:
    print(f"humanoid compare: {message}", file=sys.stderr, flush=True)
