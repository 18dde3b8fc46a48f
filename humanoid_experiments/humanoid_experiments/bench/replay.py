"""``humanoid bench replay``: does the replay of a bag a user records reproduce the recording?

A simulated robot whose servo values are hidden in a parameter file (standing in for a real
robot: its speed and acceleration at ``--speed-share`` and ``--acceleration-share`` of the
robot's own) is brought up as ``humanoid sim --params hidden.yaml --record bag`` brings it up
(the default graph, the recorder in it), in lockstep or at real time, and driven on every path
a user has (:mod:`humanoid_experiments.identify.user_paths`: a trajectory on
``joint_trajectory``, a step on ``joint_commands``, a ``follow_joint_trajectory`` goal,
``play_motion wave``, a short ``walk``). The bag is then replayed in-process as ``humanoid
identify`` replays it, with the hidden values and with the robot's own: the RMS difference
from the recording (mrad, over the joints the robot was made to move) on each path's stretch.
The hidden values' figure is what a fit can reach (the proof's level: 1 mrad); the own values'
figure, the baseline, is what the recording says about the values.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from humanoid_core import positive_number
from humanoid_experiments.bench.cpu_time import load_average

# rclpy, PyBullet and the graph are imported where they are used: the `humanoid` command
# builds its parser from this module and must start fast.

#: The benchmark's client.
CLIENT = "humanoid_bench_replay"
#: s: the longest wait for the graph, a path, a replay.
PATIENCE = 300.0
#: The fit error the proof reaches (rad RMS).
PROOF_LEVEL = 1e-3
MODES = ("lockstep", "real-time")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_description import ROBOTS

    parser.add_argument("--robot", required=True, choices=ROBOTS,
                        help="the simulated robot (one that walks: the last path is a walk)")
    add_own_robot_namespace(parser)
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both",
                        help="record in lockstep, at real time, or both in turn (both)")
    parser.add_argument("--speed-share", type=positive_number, default=0.8,
                        help="the hidden servo speed, as a share of the robot's own (0.8)")
    parser.add_argument("--acceleration-share", type=positive_number, default=0.6,
                        help="the hidden servo acceleration, as a share of the robot's own (0.6)")
    parser.add_argument("--output", type=Path, default=None,
                        help="keep the bags, the hidden values' file and the node logs in this new folder "
                             "(default: a temporary one, removed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def hidden_values(robot: str, speed_share: float, acceleration_share: float) -> dict[str, float]:
    from humanoid_description import load_model
    from humanoid_sim import simulation_settings

    own = simulation_settings(load_model(robot)).servo
    return {"servo.max_velocity": round(own.max_velocity * speed_share, 4),
            "servo.max_acceleration": round(own.max_acceleration * acceleration_share, 2)}


def record(robot: str, hidden: Path, bag: Path, lockstep: bool, logs: Path,
           namespace: str = "/") -> dict[str, tuple[float, float]]:
    """The robot with the hidden values, recorded while driven on every path; each path's
    robot-time stretch. The graph and the client in ``namespace``."""
    from humanoid_bringup import with_recorder
    from humanoid_control.nodes import CONTROL_CONTAINER
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph
    from humanoid_experiments.identify import drive, wait_until_recorded
    from humanoid_sim import sim_nodes

    nodes = with_recorder(sim_nodes(robot, params_file=hidden, lockstep=lockstep, namespace=namespace), bag,
                          lockstep=lockstep)
    with Graph(nodes, log_dir=logs) as graph:
        with RobotClient(CLIENT, namespace=namespace) as client:
            client.wait_for_joint_states(PATIENCE)
            wait_until_recorded(client, PATIENCE)
            stretches = drive(client, robot, PATIENCE)
        codes = graph.stop()
    if codes.get(CONTROL_CONTAINER) != 0:
        raise RuntimeError(f"the recorder's container ended {codes.get(CONTROL_CONTAINER)}: the bag may be "
                           f"incomplete (logs in {logs})")
    return stretches


def replayed(robot: str, hidden: Path, bag: Path, stretches: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """Per path and over the whole bag: the replay's RMS difference (mrad) with the hidden values
    and with the robot's own."""
    from humanoid_experiments.identify import replay_paths

    paths = replay_paths(robot, hidden, bag, stretches)
    return {"setpoints_recorded": paths.setpoints_recorded, "states": paths.states, "seconds": round(paths.seconds, 2),
            "paths": {path: {"hidden_mrad": round(1e3 * paths.hidden[path], 4),
                             "own_mrad": round(1e3 * paths.own[path], 4)} for path in stretches},
            "whole_bag": {"hidden_mrad": round(1e3 * paths.whole[0], 4), "own_mrad": round(1e3 * paths.whole[1], 4)}}


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import free_namespace
    from humanoid_core import UsageError
    from humanoid_core.biped_walking import walking_robot
    from humanoid_description import resolve_robot
    from humanoid_sim import params_file

    robot = resolve_robot(args.robot).name
    if not walking_robot(robot):
        raise UsageError(f"--robot {robot}: its paths end with a walk, and the walk controller does not walk it")
    if args.output is not None and args.output.exists():
        raise UsageError(f"--output {args.output}: it exists (the bags go into a new folder)")
    namespace = free_namespace(args.namespace)  # each graph below, one after the other, runs there
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if not args.json else (lambda _text: None)
    hidden = hidden_values(robot, args.speed_share, args.acceleration_share)
    modes = MODES if args.mode == "both" else (args.mode,)
    result: dict[str, Any] = {"robot": robot, "hidden": hidden, "proof_level_mrad": PROOF_LEVEL * 1e3}
    with (tempfile.TemporaryDirectory(prefix="humanoid_bench_replay_") if args.output is None
          else _made(args.output)) as folder:
        hidden_file = Path(folder) / "hidden.yaml"
        params_file.write(hidden_file, hidden, "the stand-in robot's hidden servo values")
        for mode in modes:
            say(f"{robot}: recording every path ({mode}) ...")
            (Path(folder) / mode).mkdir()
            bag = Path(folder) / mode / "bag"
            try:
                stretches = record(robot, hidden_file, bag, mode == "lockstep", Path(folder) / mode / "logs",
                                   namespace)
            except RuntimeError as error:  # a path that did not do what it asked: nothing to replay
                print(f"humanoid bench replay: {robot}, {mode}: {error}", file=sys.stderr)
                return 1
            say(f"{robot}: replaying the bag in-process, with the hidden values and the robot's own ...")
            result[mode] = replayed(robot, hidden_file, bag, stretches)
    result["load"] = load_average()
    print(json.dumps(result) if args.json else text(result))
    return 0 if all(within_proof(result[mode]) for mode in modes) else 1


@contextlib.contextmanager
def _made(folder: Path) -> Iterator[str]:
    folder.mkdir(parents=True)
    yield str(folder)


def within_proof(replay: dict[str, Any]) -> bool:
    return all(path["hidden_mrad"] <= PROOF_LEVEL * 1e3 for path in replay["paths"].values())


def text(r: dict[str, Any]) -> str:
    hidden = ", ".join(f"{name} {value:g}" for name, value in r["hidden"].items())
    lines = [f"{r['robot']}: a bag recorded as users record it (hidden values: {hidden}), replayed in-process; "
             "RMS difference from the recording, mrad"]
    for mode in MODES:
        if mode not in r:
            continue
        replay = r[mode]
        lines.append(f"  {mode} ({replay['states']} states, {replay['seconds']:g} s; set-points recorded: "
                     f"{'yes' if replay['setpoints_recorded'] else 'NO'})")
        lines.append(f"    {'path':<26}{'hidden values':>14}{'own values':>12}{'own / hidden':>14}")
        for path, errors in [*replay["paths"].items(), ("whole bag", replay["whole_bag"])]:
            ratio = errors["own_mrad"] / errors["hidden_mrad"] if errors["hidden_mrad"] > 0 else math.inf
            lines.append(f"    {path:<26}{errors['hidden_mrad']:>14.3f}{errors['own_mrad']:>12.3f}{ratio:>14.1f}")
    lines.append(f"  goal: every path at most {r['proof_level_mrad']:g} mrad with the hidden values "
                 "(the proof's level)")
    lines.append(f"  load average {', '.join(f'{v:.2f}' for v in r['load'])}")
    return "\n".join(lines)
