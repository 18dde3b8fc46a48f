"""``humanoid record``: record topics of the running graph into a rosbag2 bag (MCAP), or
repair one (``--reindex``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from humanoid_control.ros import DEFAULT_TOPICS, add_namespace_option
from humanoid_core import UsageError, new_folder, non_negative_number


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", type=new_folder, default=None,
                        help="bag directory to create (rosbag2: metadata.yaml + one .mcap file)")
    parser.add_argument("--topics", nargs="+", default=None, metavar="TOPIC",
                        help="topics to record (default: the robot interface, balance and self-collision "
                             "outputs, diagnostics, clock and ground truth: " + " ".join(DEFAULT_TOPICS) + ")")
    add_namespace_option(parser, "the namespace of the robot to record (humanoid sim|real --namespace NAME): "
                                 "relative topics are its (/NAME/joint_states); the bag reads back as the robot's")
    parser.add_argument("--duration", type=non_negative_number, default=0.0,
                        help="stop after this many (wall-clock) seconds (default: until Ctrl-C or SIGTERM)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the bag already in --output (a directory holding anything else is refused)")
    parser.add_argument("--reindex", type=Path, default=None, metavar="DIR",
                        help="instead of recording: repair the bag in DIR after its recorder was killed or its "
                             "disk filled up (rewrites its MCAP index and metadata.yaml from the data written)")


def run(args: argparse.Namespace) -> int:
    if args.reindex is not None:
        if args.output is not None:
            raise UsageError("give either --output (record) or --reindex DIR (repair), not both")
        from humanoid_tools.recording.reindex import ReindexError, reindex

        try:
            report = reindex(args.reindex)
        except ReindexError as error:
            raise UsageError(str(error)) from None
        print(report.text())
        return 0
    if args.output is None:
        raise UsageError("give --output DIR (the bag to create), or --reindex DIR")
    from humanoid_tools.recording.recorder import RecorderParameters, RecordingError, record

    params = RecorderParameters(output=str(args.output), duration=args.duration, overwrite=args.overwrite,
                                **({"topics": tuple(args.topics)} if args.topics else {}))
    try:
        summary = record(params, namespace=args.namespace)
    except RecordingError as error:
        raise UsageError(str(error)) from None
    sys.stdout.flush()
    return 0 if summary.complete else 1
