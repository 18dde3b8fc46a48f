"""Authoring a robot's model files: ``humanoid generate-srdf`` and ``identify-masses``.

Thin command-line wrappers around the model library (:mod:`humanoid_description`), which
knows nothing of the ``humanoid`` command (and sits below humanoid_core, where the verbs'
option types are: so its verbs are registered here). ``humanoid describe``, which only
reads the model, is the bring-up's (humanoid_bringup.describe_command).
"""

from __future__ import annotations

import argparse
import os

from humanoid_core import UsageError, integer_in, new_file, robot_name


def add_generate_srdf_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, type=robot_name)
    parser.add_argument("--samples", type=integer_in(1), default=20000, help="random configurations (20000)")
    parser.add_argument("--seed", type=integer_in(0), default=0, help="random seed (0)")
    parser.add_argument("--output", type=new_file, default=None, help="SRDF file (default: the robot's own)")


def run_generate_srdf(args: argparse.Namespace) -> int:
    from humanoid_description import main as generate
    from humanoid_description import robot_files

    output = args.output
    if output is None:  # the robot's own SRDF: checked before the sampling, as --output is
        try:
            output = new_file(os.path.realpath(robot_files(args.robot).srdf))  # where it is written
        except argparse.ArgumentTypeError as error:
            raise UsageError(str(error)) from None
    return generate(["--robot", args.robot, "--samples", str(args.samples), "--seed", str(args.seed),
                     "--output", str(output)])


def _robot_with_balanced_poses(text: str) -> str:
    """A robot whose folder holds the thesis' balanced poses (``balanced_poses.yaml``)."""
    from humanoid_description import robot_directory

    robot = robot_name(text)
    if not (robot_directory(robot) / "balanced_poses.yaml").is_file():
        raise argparse.ArgumentTypeError(f"robot {robot!r} has no balanced poses to fit its masses to "
                                         "(balanced_poses.yaml in its folder)")
    return robot


def add_identify_masses_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="bioloid", type=_robot_with_balanced_poses,
                        help="a robot with the thesis' balanced poses (bioloid)")
    parser.add_argument("--write", action="store_true", help="rewrite the robot's mass_model.yaml")


def run_identify_masses(args: argparse.Namespace) -> int:
    from humanoid_robot_bioloid.thesis.mass_identification import main as identify

    return identify(["--robot", args.robot] + (["--write"] if args.write else []))

