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
from types import ModuleType
from typing import NoReturn

from humanoid_control.command_line import integer_in, new_file, non_negative_number, positive_number
from humanoid_description.robots import ROBOTS  # light: names only, no model loaded


class UsageError(Exception):
    """Invalid input from the user: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors on one line (exit code 2) instead of usage + error."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _json_output(text: str) -> str:
    """``-`` (stdout) or a file that can be written."""
    return text if text == "-" else str(new_file(text))


def _thesis_robot(value: str) -> str:
    """A robot with the thesis' joint numbering (the Bioloid)."""
    if _robot(value) != "bioloid":
        raise argparse.ArgumentTypeError(f"{value!r} is not the robot of the thesis (bioloid)")
    return value


def _physics(robot: str, name: str | None) -> str | None:
    """``--physics``: None (the node's default), or a profile ``robot``'s parameter file names."""
    if name is None:
        return None
    from humanoid_sim.physics_profiles import UnknownProfileError, check_name

    try:
        return check_name(robot, name)
    except UnknownProfileError as error:
        raise UsageError(str(error)) from None


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
    from humanoid_bringup.balance_poses import BatchError, run

    try:
        return run(args)
    except BatchError as error:
        raise UsageError(str(error)) from None


def cmd_identify_masses(args: argparse.Namespace) -> int:
    from humanoid_description.bioloid_thesis.mass_identification import main as identify

    return identify(["--robot", args.robot] + (["--write"] if args.write else []))


def cmd_generate_srdf(args: argparse.Namespace) -> int:
    from humanoid_description.srdf_generator import main as generate

    extra = ["--output", str(args.output)] if args.output else []
    return generate(["--robot", args.robot, "--samples", str(args.samples),
                     "--seed", str(args.seed), *extra])


# -- simulation ------------------------------------------------------------------------
def _serve(graph) -> int:
    """Run a node graph in the foreground until one of its nodes exits (the robot node at the
    end of --duration, or a node that failed) or SIGINT/SIGTERM/SIGHUP arrives; then stop them
    all. Killed outright, the launcher still takes its nodes with it (parent-death signal)."""
    import signal

    def terminate(_signum, _frame):
        raise KeyboardInterrupt

    stop_signals = (signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.signal(number, terminate) for number in stop_signals}
    try:
        graph.start()
        codes = graph.wait_any()
    except KeyboardInterrupt:
        codes = {}
    finally:
        codes = {**codes, **graph.stop()}
        for number, handler in previous.items():
            signal.signal(number, handler)
    failed = {name: code for name, code in codes.items() if code not in (0, -2, 130)}
    for name, code in failed.items():
        print(f"humanoid: node {name} exited with status {code}", file=sys.stderr)
    return 1 if failed else 0


def _recorded(nodes: list, bag: Path | None) -> list:
    """The graph plus, with ``--record DIR``, the recorder (started first, so that it is
    listening when the robot's first messages go out)."""
    if bag is None:
        return nodes
    from humanoid_bringup.graphs import recorder_node
    from humanoid_bringup.recording.recorder import RecordingError, prepare_output

    try:
        prepare_output(bag.expanduser(), overwrite=False)
    except RecordingError as error:
        raise UsageError(str(error)) from None
    return [recorder_node(bag.expanduser()), *nodes]


def cmd_sim(args: argparse.Namespace) -> int:
    from humanoid_bringup.graphs import sim_nodes
    from humanoid_control.node_graph import Graph

    physics = _physics(args.robot, args.physics)
    nodes = sim_nodes(args.robot, gui=args.gui, real_time_factor=args.real_time_factor,
                      control_rate=args.control_rate, publish_rate=args.publish_rate, duration=args.duration,
                      balance_monitor=args.balance_monitor, self_collision_checker=args.self_collision_checker,
                      self_collision_veto=args.self_collision_veto, physics_profile=physics)
    return _serve(Graph(_recorded(nodes, args.record), echo=True))


def cmd_real(args: argparse.Namespace) -> int:
    import contextlib

    from humanoid_bringup.graphs import real_nodes
    from humanoid_control.node_graph import Graph
    from humanoid_description.config import load_config

    if args.emulate == (args.port is not None):
        raise UsageError("give either --port DEVICE (the real bus) or --emulate (the bus emulator)")
    if load_config(args.robot).joint_map is None:
        raise UsageError(f"robot {args.robot} has no Dynamixel joint map (config/{args.robot}/joint_map.yaml): "
                         "it cannot run on a Dynamixel bus")
    if args.port is not None and not Path(args.port).exists():
        raise UsageError(f"no such serial device: {args.port}")
    with contextlib.ExitStack() as stack:
        port = args.port
        if args.emulate:
            from humanoid_hw.emulator.process import emulator_process

            port = stack.enter_context(emulator_process(args.robot, 1, args.baud or 1_000_000, timing=False))
            print(f"humanoid: emulated Dynamixel bus on {port}", file=sys.stderr)
        nodes = real_nodes(args.robot, port=port, baud=args.baud, control_rate=args.control_rate,
                           publish_rate=args.publish_rate, duration=args.duration,
                           balance_monitor=args.balance_monitor, self_collision_checker=args.self_collision_checker,
                           self_collision_veto=args.self_collision_veto)
        return _serve(Graph(_recorded(nodes, args.record), echo=True))


def cmd_demo(args: argparse.Namespace) -> int:
    from humanoid_bringup import demo

    _physics("hoap2", args.physics)
    return demo.run(args)


def cmd_walk(args: argparse.Namespace) -> int:
    from humanoid_bringup import walk_experiment

    _physics(args.robot, args.physics)
    return walk_experiment.run(args)


def cmd_pose(args: argparse.Namespace) -> int:
    from humanoid_bringup import posing

    return posing.run(args)


def cmd_postures(args: argparse.Namespace) -> int:
    from humanoid_bringup.postures import command

    if args.robot in ROBOTS:  # an unknown robot is the command's to report
        _physics(args.robot, args.physics)
    try:
        return command.run(args)
    except command.UsageError as error:
        raise UsageError(str(error)) from None


def cmd_emulate(args: argparse.Namespace) -> int:
    from humanoid_hw.emulator import cli as emulator_cli

    return emulator_cli.run(args)


def cmd_record(args: argparse.Namespace) -> int:
    from humanoid_bringup.recording import command

    return command.run(args, UsageError)


def cmd_plot(args: argparse.Namespace) -> int:
    from humanoid_bringup.plots import command

    return command.run(args, UsageError)


def cmd_view(args: argparse.Namespace) -> int:
    from humanoid_bringup.view import command

    return command.run(args, UsageError)


def cmd_gaits(args: argparse.Namespace) -> int:
    from humanoid_bringup import gaits_command

    return gaits_command.run(args, UsageError)


def cmd_optimize_gait(args: argparse.Namespace) -> int:
    from humanoid_bringup import gait_search_command

    return gait_search_command.run(args, UsageError)


def cmd_bench(args: argparse.Namespace) -> int:
    return args.bench_run(args)


# -- parser ----------------------------------------------------------------------------
Command = Callable[[argparse.Namespace], int]


def _balance_monitor_switch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-balance-monitor", dest="balance_monitor", action="store_false",
                        help="do not start the balance monitor (balance_state, balance_markers)")


def _self_collision_switches(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-self-collision-checker", dest="self_collision_checker", action="store_false",
                        help="do not start the self-collision checker (self_collision_state, markers, services)")
    parser.add_argument("--no-self-collision-veto", dest="self_collision_veto", action="store_false",
                        help="let commands that bring two links within the safety distance through "
                             "(the robot interface's self_collision_veto parameter)")


def build_parser() -> argparse.ArgumentParser:
    from humanoid_sim import physics_profiles

    parser = _Parser(prog="humanoid", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    def add(name: str, func: Command, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add("describe", cmd_describe,
            "print a robot's joints and limits, total mass, and CoM and soles in the home pose")
    p.add_argument("--robot", required=True, type=_robot, help=" or ".join(ROBOTS))
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    from humanoid_bringup.balance_poses import PROGRESS_PERIOD

    p = add("balance-poses", cmd_balance_poses,
            "whole-body and link CoMs and static margin of Bioloid poses, in the thesis frame")
    p.add_argument("--robot", required=True, type=_robot, help="bioloid")
    p.add_argument("--poses", required=True, type=Path,
                   help="csv file, one pose per line: J1..J18 in degrees (thesis convention), optionally "
                        "after a label; any length (read line by line, progress on stderr)")
    p.add_argument("--json", required=True, metavar="OUT", type=_json_output,
                   help="JSON file to write (a list, one entry per pose, with outside_limits: the joints "
                        "beyond the model's limit table); - for stdout")
    p.add_argument("--simulate", action="store_true",
                   help="also play each pose in the simulator and report whether it is held")
    p.add_argument("--hold", type=positive_number, default=2.0, help="seconds each pose must be held (2)")
    p.add_argument("--progress", type=positive_number, default=PROGRESS_PERIOD, metavar="SECONDS",
                   help=f"seconds between progress lines on stderr for long batches ({PROGRESS_PERIOD:g})")

    p = add("sim", cmd_sim, "bring up the simulated robot (the same graph as sim.launch.py) until "
                            "interrupted or --duration ends")
    p.add_argument("--robot", required=True, type=_robot, help=" or ".join(ROBOTS))
    p.add_argument("--duration", type=positive_number, default=None,
                   help="stop after this many seconds of simulated time (default: run until interrupted)")
    p.add_argument("--gui", action="store_true", help="show the PyBullet window (needs a display)")
    p.add_argument("--real-time-factor", type=non_negative_number, default=None,
                   help="1 = real time (default), 2 = twice as fast, 0 = as fast as possible")
    p.add_argument("--control-rate", type=positive_number, default=None, help="control loop rate, Hz")
    p.add_argument("--publish-rate", type=positive_number, default=None, help="joint_states rate, Hz")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="also record the default topics into a new bag DIR (as humanoid record)")
    physics_profiles.add_argument(p)
    _balance_monitor_switch(p)
    _self_collision_switches(p)

    p = add("real", cmd_real, "bring up the real robot on its Dynamixel bus (the same graph as real.launch.py), "
                              "or on the bus emulator")
    p.add_argument("--robot", required=True, type=_robot,
                   help="bioloid or bioloid_quadruped (a robot with a Dynamixel joint map)")
    p.add_argument("--port", default=None, help="serial device of the bus, e.g. /dev/ttyUSB0")
    p.add_argument("--emulate", action="store_true", help="serve an emulated bus on a pseudo-terminal instead")
    p.add_argument("--baud", type=integer_in(1), default=None, help="bus speed (default from the robot's hw config)")
    p.add_argument("--duration", type=positive_number, default=None, help="stop after this many seconds")
    p.add_argument("--control-rate", type=positive_number, default=None, help="control loop rate, Hz")
    p.add_argument("--publish-rate", type=positive_number, default=None, help="joint_states rate, Hz")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="also record the default topics into a new bag DIR (as humanoid record)")
    _balance_monitor_switch(p)
    _self_collision_switches(p)

    from humanoid_bringup.recording import command as record_command

    record_command.add_arguments(add("record", cmd_record, "record topics of the running robot into a rosbag2 "
                                                           "bag (MCAP) until Ctrl-C or --duration; prints "
                                                           "messages received vs written per topic"))

    from humanoid_bringup.plots import command as plot_command

    plot_command.add_arguments(add("plot", cmd_plot, "PNG figures of a recorded bag: commanded vs measured joints, "
                                                     "CoM/ZMP over the support polygon, rates, a summary page"))

    from humanoid_bringup.view import command as view_command

    view_command.add_arguments(add("view", cmd_view, "the robot in a browser page (viser), live with joint sliders "
                                                     "and keyframe saving, or replaying a bag; prints its URL first"))

    from humanoid_hw.emulator import cli as emulator_cli

    p = add("emulate", cmd_emulate, "emulate a robot's chain of Dynamixel servos on a pseudo-terminal; "
                                    "prints its path first, serves until interrupted")
    emulator_cli.add_arguments(p)

    from humanoid_bringup import posing

    posing.add_arguments(add("pose", cmd_pose, "pose a running robot (sim or real) joint by joint from commands on "
                                               "stdin, and save the poses"))

    from humanoid_bringup.walk_experiment import add_arguments as walk_arguments

    walk_arguments(add("walk", cmd_walk, "walk the simulated robot through the walk action and measure it: distance, "
                                         "mean speed, lateral drift, heading error, share of time the measured ZMP "
                                         "stayed in the support polygon, fall"))

    from humanoid_bringup.postures import command as postures_command

    postures_command.add_arguments(add("postures", cmd_postures,
                                       "the postures protocol: quasi-static balance limits, one joint (pair) "
                                       "at a time until the robot loses its balance; in simulation or with "
                                       "--real on the robot"))

    from humanoid_bringup.demo import add_arguments as demo_arguments

    demo_arguments(add("demo", cmd_demo, "headless HOAP-2 simulation: stand, lower the arms, slow squat and back "
                                         "up through follow_joint_trajectory; print tracking errors, fall, CoM "
                                         "height and real-time factor"))

    from humanoid_bringup import gaits_command

    gaits_command.add_arguments(add("gaits", cmd_gaits, "IK gaits of the quadruped in a headless simulation: "
                                                        "distance, heading and fall per gait and frequency"))

    from humanoid_bringup import gait_search_command

    gait_search_command.add_arguments(add("optimize-gait", cmd_optimize_gait,
                                          "particle-swarm search of CPG gait parameters, each evaluation a "
                                          "headless simulation on Ray (local, or a cluster with --address)"))

    bench = add("bench", cmd_bench, "benchmarks: each prints its figure next to its baseline from the same run")
    targets = bench.add_subparsers(dest="target", required=True, metavar="TARGET", parser_class=_Parser)
    def add_bench(name: str, module: ModuleType, help_text: str) -> None:
        """A bench target: its module gives the arguments, ``run`` and the description."""
        p = targets.add_parser(name, help=help_text, description=module.__doc__.split("\n\n")[0])
        module.add_arguments(p)
        p.set_defaults(bench_run=module.run)

    from humanoid_bringup import bench_balance, bench_gait_search, bench_physics, bench_self_collision, bench_sim
    from humanoid_bringup.recording import bench as bench_record
    from humanoid_hw import bench as bench_bus

    add_bench("sim", bench_sim, "real-time factor of the simulation node vs raw PyBullet")
    add_bench("physics", bench_physics, "a physics profile's raw stepping speed vs the reference, and its "
                                        "fidelity: postures limits and the 1 m walk against the reference's")
    add_bench("balance", bench_balance, "balance monitor core vs bare Pinocchio CoM, and the node at 1 kHz input")
    add_bench("self-collision", bench_self_collision, "the per-cycle self-collision check vs bare Coal on the same "
                                                      "configurations, and collisions missed vs brute force")
    add_bench("bus", bench_bus, "Dynamixel bus bytes vs the protocol's minimum, loop rate vs a bare SDK loop")
    add_bench("record", bench_record, "messages in the bag / messages sent at 1 kHz, and the recorder's cost "
                                      "vs a bare rosbags write loop")
    add_bench("gait-search", bench_gait_search, "gait evaluations per core-hour on Ray, speed-up 1 -> 2 workers, "
                                                "projected time of the report's search on 50 cores")

    p = add("identify-masses", cmd_identify_masses,
            "fit the Bioloid structure masses to the thesis' balanced poses")
    p.add_argument("--robot", default="bioloid", type=_thesis_robot, help="bioloid (the robot of the thesis)")
    p.add_argument("--write", action="store_true", help="rewrite the robot's mass_model.yaml")

    p = add("generate-srdf", cmd_generate_srdf,
            "sample random configurations and write the robot's SRDF (disabled collision pairs)")
    p.add_argument("--robot", required=True, type=_robot)
    p.add_argument("--samples", type=integer_in(1), default=20000, help="random configurations (20000)")
    p.add_argument("--seed", type=integer_in(0), default=0, help="random seed (0)")
    p.add_argument("--output", type=new_file, default=None, help="SRDF file (default: the robot's own)")
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
