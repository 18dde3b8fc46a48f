"""The ``humanoid`` command: one entry point for the stack outside ``ros2 launch``.

Each subcommand lives in the package that does the work (the model commands and the
graphs here, the tools in humanoid_tools, the experiments and benchmarks in
humanoid_experiments, the bus emulator in humanoid_hw) and is a module with
``add_arguments(parser)`` and ``run(args) -> int``. A subcommand whose package is not
installed (a robot's computer has no humanoid_tools or humanoid_experiments) stays
listed and says what it needs when run. Bad input is one line on stderr and exit status 2
(:class:`~humanoid_core.command_line.UsageError`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from humanoid_core.command_line import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (exit code 2) instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


@dataclass(frozen=True)
class Subcommand:
    """One ``humanoid`` subcommand: the module (and its functions) that implement it."""

    name: str
    module: str
    help: str
    add: str = "add_arguments"
    run: str = "run"

    @property
    def package(self) -> str:
        return self.module.split(".")[0]


COMMANDS: tuple[Subcommand, ...] = (
    Subcommand("describe", "humanoid_bringup.model_commands",
               "print a robot's joints and limits, total mass, and CoM and soles in the home pose",
               "add_describe_arguments", "run_describe"),
    Subcommand("sim", "humanoid_bringup.sim_command", "bring up the simulated robot (the same graph as "
                                                      "sim.launch.py) until interrupted or --duration ends"),
    Subcommand("real", "humanoid_bringup.real_command", "bring up the real robot on its Dynamixel bus (the same "
                                                        "graph as real.launch.py), or on the bus emulator"),
    Subcommand("emulate", "humanoid_hw.emulator.cli", "emulate a robot's chain of Dynamixel servos on a "
                                                      "pseudo-terminal; prints its path first, serves until "
                                                      "interrupted"),
    Subcommand("record", "humanoid_tools.recording.command", "record topics of the running robot into a rosbag2 "
                                                             "bag (MCAP) until Ctrl-C or --duration; prints "
                                                             "messages received vs written per topic"),
    Subcommand("plot", "humanoid_tools.plots.command", "PNG figures of a recorded bag: commanded vs measured joints, "
                                                       "CoM/ZMP over the support polygon, rates, a summary page"),
    Subcommand("compare", "humanoid_tools.plots.compare_command",
               "compare two recordings of the same experiment (sim vs robot, or two simulations): measured "
               "joints aligned on the experiment's start, their difference, tracking, CoM/ZMP, rates; PNG and --json"),
    Subcommand("view", "humanoid_tools.view.command", "the robot in a browser page (viser), live with joint sliders "
                                                      "and keyframe saving, or replaying a bag; prints its address "
                                                      "(with this run's token) first"),
    Subcommand("pose", "humanoid_tools.posing", "pose a running robot (sim or real) joint by joint from commands "
                                                "on stdin, and save the poses"),
    Subcommand("demo", "humanoid_experiments.demo", "headless HOAP-2 simulation: stand, lower the arms, slow squat "
                                                    "and back up through follow_joint_trajectory; print tracking "
                                                    "errors, fall, CoM height and real-time factor"),
    Subcommand("walk", "humanoid_experiments.walk", "walk the simulated robot through the walk action and measure "
                                                    "it: distance, mean speed, lateral drift, heading error, share "
                                                    "of time the measured ZMP stayed in the support polygon, fall"),
    Subcommand("push", "humanoid_experiments.push", "push the simulated robot at the trunk (apply_push): the "
                                                    "largest impulse it survives standing and walking, per "
                                                    "direction, by bisection; the balance monitor's warning "
                                                    "before each fall"),
    Subcommand("postures", "humanoid_experiments.postures.command",
               "the postures protocol: quasi-static balance limits, one joint (pair) at a time until the robot "
               "loses its balance; in simulation or with --real on the robot"),
    Subcommand("balance-poses", "humanoid_experiments.balance_poses",
               "whole-body and link CoMs and static margin of Bioloid poses, in the thesis frame"),
    Subcommand("gaits", "humanoid_experiments.gaits", "IK gaits of the quadruped in a headless simulation: "
                                                      "distance, heading and fall per gait and frequency"),
    Subcommand("play-gait", "humanoid_tools.play_gait", "play a gait on the running quadruped (sim or real) through "
                                                        "the play_gait action; print what was played and, in "
                                                        "simulation, how far the robot went"),
    Subcommand("optimize-gait", "humanoid_experiments.gait_search.command",
               "particle-swarm search of CPG gait parameters, each evaluation a headless simulation on Ray "
               "(local, or a cluster with --address)"),
    Subcommand("bench", "humanoid_experiments.bench.command",
               "benchmarks: each prints its figure next to its baseline from the same run"),
    Subcommand("identify", "humanoid_experiments.identify.command",
               "fit simulation parameters (servo, transmission, contact, link masses and CoMs) to a recorded bag or "
               "postures results; evaluations on Ray; writes a parameter file and reports fit and held-out errors"),
    Subcommand("identify-masses", "humanoid_bringup.model_commands",
               "fit a robot's structure masses to the thesis' balanced poses (the Bioloid)",
               "add_identify_masses_arguments", "run_identify_masses"),
    Subcommand("generate-srdf", "humanoid_bringup.model_commands",
               "sample random configurations and write the robot's SRDF (disabled collision pairs)",
               "add_generate_srdf_arguments", "run_generate_srdf"),
)


def _missing(command: Subcommand, error: ModuleNotFoundError) -> Callable[[argparse.Namespace], int]:
    """What a subcommand does when its package (or a library it needs) is not installed."""
    what = (f"the {command.package} package" if error.name and error.name.split(".")[0] == command.package
            else f"{error.name} (used by {command.package})")

    def run(_args: argparse.Namespace) -> int:
        raise UsageError(f"humanoid {command.name} needs {what}, which is not installed here")

    return run


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``chosen``, only that subcommand's module is imported (the others
    are listed with their help but not loaded), so that a command starts, and a bad argument is
    refused, without importing every package of the stack (a second or more, once per process)."""
    parser = _Parser(prog="humanoid", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.help, description=command.help)
        if chosen is not None and command.name != chosen:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            continue
        try:
            module = importlib.import_module(command.module)
        except ModuleNotFoundError as error:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(func=_missing(command, error))
            continue
        getattr(module, command.add)(p)
        p.set_defaults(func=getattr(module, command.run))
    return parser


def _chosen(argv: Sequence[str]) -> str:
    """The subcommand ``argv`` names (its first word that is not an option; "" for none): the
    top-level parser has no option that takes a value."""
    return next((word for word in argv if not word.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_chosen(argv))
    try:
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as error:
        print(f"humanoid: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
