"""The ``humanoid`` command: one entry point for the stack outside ``ros2 launch``.

Each subcommand imports what it needs when it runs, so that a robot computer without
PyBullet can still use the hardware and model commands.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from humanoid_description.robots import ROBOTS  # light: names only, no model loaded


class UsageError(Exception):
    """Invalid input from the user: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (exit code 2) instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _robot(value: str) -> str:
    if value not in ROBOTS:
        raise argparse.ArgumentTypeError(
            f"unknown robot {value!r} (known robots: {', '.join(ROBOTS)})")
    return value


# -- model commands --------------------------------------------------------------------
def cmd_describe(args: argparse.Namespace) -> int:
    from humanoid_description.describe import describe, format_text
    from humanoid_description.model import load_model

    info = describe(load_model(args.robot))
    print(json.dumps(info, indent=2) if args.json else format_text(info))
    return 0


def cmd_balance_poses(args: argparse.Namespace) -> int:
    from humanoid_description.model import load_model
    from humanoid_description.thesis_poses import PoseFileError, ThesisFrame, read_pose_csv

    if args.simulate and not args.hold > 0.0:
        raise UsageError(f"--hold must be a positive number of seconds, got {args.hold}")
    try:
        poses = read_pose_csv(args.poses)
    except PoseFileError as error:
        raise UsageError(str(error)) from None
    try:
        frame = ThesisFrame(load_model(args.robot))
    except ValueError as error:
        raise UsageError(str(error)) from None
    results = []
    for pose in poses:
        analysis = frame.analyse(pose.angles_deg)
        results.append({
            "pose": pose.label, "line": pose.line,
            "com_mm": [round(float(v), 4) for v in analysis.com_mm],
            "links_mm": {k: [round(float(x), 4) for x in v] for k, v in analysis.links_mm.items()},
            "margin_mm": round(float(analysis.margin_mm), 4),
            "left_foot_contact": analysis.left_foot_contact,
        })
    if args.simulate:
        from humanoid_bringup.balance_simulation import hold_poses

        held_flags = hold_poses(args.robot, [p.angles_deg for p in poses], hold_seconds=args.hold)
        for entry, held in zip(results, held_flags, strict=True):
            entry["held"] = held
    text = json.dumps(results, indent=2)
    if args.json == "-":
        print(text)
    else:
        Path(args.json).write_text(text + "\n")
        print(f"{len(results)} poses analysed; written to {args.json}")
    return 0


def cmd_identify_masses(args: argparse.Namespace) -> int:
    from humanoid_description.mass_identification import main as identify

    return identify(["--robot", args.robot] + (["--write"] if args.write else []))


def cmd_generate_srdf(args: argparse.Namespace) -> int:
    from humanoid_description.srdf_generator import main as generate

    extra = ["--output", str(args.output)] if args.output else []
    return generate(["--robot", args.robot, "--samples", str(args.samples),
                     "--seed", str(args.seed), *extra])


# -- simulation ------------------------------------------------------------------------
def _serve(graph) -> int:
    """Run a node graph in the foreground until one of its nodes exits (the robot node at the
    end of --duration, or a node that failed) or SIGINT/SIGTERM arrives; then stop them all."""
    import signal

    def terminate(_signum, _frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        graph.start()
        codes = graph.wait_any()
    except KeyboardInterrupt:
        codes = {}
    finally:
        codes = {**codes, **graph.stop()}
        signal.signal(signal.SIGTERM, previous)
    failed = {name: code for name, code in codes.items() if code not in (0, -2, 130)}
    for name, code in failed.items():
        print(f"humanoid: node {name} exited with status {code}", file=sys.stderr)
    return 1 if failed else 0


def cmd_sim(args: argparse.Namespace) -> int:
    from humanoid_bringup.graph import Graph
    from humanoid_bringup.graphs import sim_nodes

    nodes = sim_nodes(args.robot, gui=args.gui, real_time_factor=args.real_time_factor,
                      control_rate=args.control_rate, publish_rate=args.publish_rate, duration=args.duration)
    return _serve(Graph(nodes, echo=True))


def cmd_real(args: argparse.Namespace) -> int:
    import contextlib

    from humanoid_bringup.graph import Graph
    from humanoid_bringup.graphs import real_nodes

    if args.emulate == (args.port is not None):
        raise UsageError("give either --port DEVICE (the real bus) or --emulate (the bus emulator)")
    with contextlib.ExitStack() as stack:
        port = args.port
        if args.emulate:
            from humanoid_hw.emulator.process import emulator_process

            port = stack.enter_context(emulator_process(args.robot, 1, args.baud or 1_000_000, timing=False))
            print(f"humanoid: emulated Dynamixel bus on {port}", file=sys.stderr)
        nodes = real_nodes(args.robot, port=port, baud=args.baud, control_rate=args.control_rate,
                           publish_rate=args.publish_rate, duration=args.duration)
        return _serve(Graph(nodes, echo=True))


def cmd_demo(args: argparse.Namespace) -> int:
    from humanoid_bringup import demo

    return demo.run(args)


def cmd_pose(args: argparse.Namespace) -> int:
    from humanoid_bringup import posing

    return posing.run(args)


def cmd_emulate(args: argparse.Namespace) -> int:
    from humanoid_hw.emulator import cli as emulator_cli

    return emulator_cli.run(args)


def cmd_bench(args: argparse.Namespace) -> int:
    return args.bench_run(args)


# -- parser ----------------------------------------------------------------------------
Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="humanoid", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    def add(name: str, func: Command, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add("describe", cmd_describe,
            "print a robot's joints and limits, total mass, and CoM and soles in the home pose")
    p.add_argument("--robot", required=True, type=_robot, help="hoap2 or bioloid")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = add("balance-poses", cmd_balance_poses,
            "whole-body and link CoMs and static margin of Bioloid poses, in the thesis frame")
    p.add_argument("--robot", required=True, type=_robot, help="bioloid")
    p.add_argument("--poses", required=True, type=Path,
                   help="csv file, one pose per line: J1..J18 in degrees (thesis convention)")
    p.add_argument("--json", required=True, metavar="OUT",
                   help="JSON file to write (a list, one entry per pose); - for stdout")
    p.add_argument("--simulate", action="store_true",
                   help="also play each pose in the simulator and report whether it is held")
    p.add_argument("--hold", type=float, default=2.0, help="seconds each pose must be held (2)")

    p = add("sim", cmd_sim, "bring up the simulated robot (the same graph as sim.launch.py) until "
                            "interrupted or --duration ends")
    p.add_argument("--robot", required=True, type=_robot, help="hoap2 or bioloid")
    p.add_argument("--duration", type=float, default=None,
                   help="stop after this many seconds of simulated time (default: run until interrupted)")
    p.add_argument("--gui", action="store_true", help="show the PyBullet window (needs a display)")
    p.add_argument("--real-time-factor", type=float, default=None,
                   help="1 = real time (default), 2 = twice as fast, 0 = as fast as possible")
    p.add_argument("--control-rate", type=float, default=None, help="control loop rate, Hz")
    p.add_argument("--publish-rate", type=float, default=None, help="joint_states rate, Hz")

    p = add("real", cmd_real, "bring up the real robot on its Dynamixel bus (the same graph as real.launch.py), "
                              "or on the bus emulator")
    p.add_argument("--robot", required=True, type=_robot, help="bioloid (a robot with a Dynamixel joint map)")
    p.add_argument("--port", default=None, help="serial device of the bus, e.g. /dev/ttyUSB0")
    p.add_argument("--emulate", action="store_true", help="serve an emulated bus on a pseudo-terminal instead")
    p.add_argument("--baud", type=int, default=None, help="bus speed (default from the robot's hw config)")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--control-rate", type=float, default=None, help="control loop rate, Hz")
    p.add_argument("--publish-rate", type=float, default=None, help="joint_states rate, Hz")

    from humanoid_hw.emulator import cli as emulator_cli

    p = add("emulate", cmd_emulate, "emulate a robot's chain of Dynamixel servos on a pseudo-terminal; "
                                    "prints its path first, serves until interrupted")
    emulator_cli.add_arguments(p)

    from humanoid_bringup import posing

    posing.add_arguments(add("pose", cmd_pose, "pose a running robot (sim or real) joint by joint from commands on "
                                               "stdin, and save the poses"))

    from humanoid_bringup.demo import add_arguments as demo_arguments

    demo_arguments(add("demo", cmd_demo, "headless HOAP-2 simulation: stand, lower the arms, slow squat and back "
                                         "up through follow_joint_trajectory; print tracking errors, fall, CoM "
                                         "height and real-time factor"))

    bench = add("bench", cmd_bench, "benchmarks: each prints its figure next to its baseline from the same run")
    targets = bench.add_subparsers(dest="target", required=True, metavar="TARGET", parser_class=_Parser)
    from humanoid_bringup import bench_sim

    p = targets.add_parser("sim", help="real-time factor of the simulation node vs raw PyBullet",
                           description=bench_sim.__doc__.split("\n\n")[0])
    bench_sim.add_arguments(p)
    p.set_defaults(bench_run=bench_sim.run)
    from humanoid_hw import bench as bench_bus

    p = targets.add_parser("bus", help="Dynamixel bus bytes and loop rate vs the protocol's minimum",
                           description=bench_bus.__doc__.split("\n\n")[0])
    bench_bus.add_arguments(p)
    p.set_defaults(bench_run=bench_bus.run)

    p = add("identify-masses", cmd_identify_masses,
            "fit the Bioloid structure masses to the thesis' balanced poses")
    p.add_argument("--robot", default="bioloid", type=_robot)
    p.add_argument("--write", action="store_true", help="rewrite the robot's mass_model.yaml")

    p = add("generate-srdf", cmd_generate_srdf,
            "sample random configurations and write the robot's SRDF (disabled collision pairs)")
    p.add_argument("--robot", required=True, type=_robot)
    p.add_argument("--samples", type=int, default=20000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", type=Path, default=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
