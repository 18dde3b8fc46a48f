"""``humanoid describe``: a robot's joints and limits, total mass, and CoM and soles in the
home pose, from the model library (:mod:`humanoid_description`), which knows nothing of the
``humanoid`` command. It only reads the model: a robot's computer has it."""

from __future__ import annotations

import argparse
import json

from humanoid_core import robot_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, type=robot_name, help="the robot to describe")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from humanoid_description import format_text, load_model
    from humanoid_description.describe import describe

    info = describe(load_model(args.robot))
    print(json.dumps(info, indent=2) if args.json else format_text(info))
    return 0
