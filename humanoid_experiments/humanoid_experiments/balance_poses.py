"""``humanoid balance-poses``: static balance of Bioloid poses, each pose judged on its own.

For every pose of a thesis pose file (J1..J18 in degrees): the whole-body and link CoMs
and the static margin in the thesis frame, and ``outside_limits``: the joints beyond the
thesis' joint-limit table, with their values (documented data, not the model's limits,
which are the servo's range: the real robot took some such poses). With ``--simulate``
each pose is also played in the simulator (:mod:`humanoid_experiments.balance_simulation`),
beyond the thesis' table too: ``held`` is true or false, or null when the pose was not
simulated (``not_simulated`` says why: a joint beyond the servo's range, or the robot's
refusal, e.g. the self-collision veto's).

Batches of any length: the file is read twice, line by line (once to check every line
and count the poses, once to analyse them), so memory stays bounded; each pose's result
is written as soon as it is known, into a temporary file beside the output that
replaces it at the end (an interrupted run leaves the previous output untouched);
progress goes to stderr every ``--progress`` seconds (:data:`PROGRESS_PERIOD`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

#: Default seconds between progress lines on stderr (the first comes after this long: a
#: short batch prints none).
PROGRESS_PERIOD = 2.0


class BatchError(Exception):
    """The batch cannot run (a malformed pose file, a robot without the thesis' numbering):
    one line for the user."""



def _thesis_robot(text: str) -> str:
    """A robot whose own pose files are the thesis' (robot.yaml motion_formats: bioloid_thesis_poses)."""
    from humanoid_core import robot_name
    from humanoid_description import load_config

    robot = robot_name(text)
    if "bioloid_thesis_poses" not in load_config(robot).motion_formats.values():
        raise argparse.ArgumentTypeError(f"robot {robot!r} has no thesis pose format (J1..J18): bioloid has")
    return robot


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_core import file_or_stdout, positive_number

    parser.add_argument("--robot", required=True, type=_thesis_robot, help="bioloid")
    parser.add_argument("--poses", required=True, type=Path,
                        help="csv file, one pose per line: J1..J18 in degrees (thesis convention), optionally "
                             "after a label; any length (read line by line, progress on stderr)")
    parser.add_argument("--json", required=True, metavar="OUT", type=file_or_stdout,
                        help="JSON file to write (a list, one entry per pose, with outside_limits: the joints "
                             "beyond the thesis' limit table); - for stdout")
    parser.add_argument("--simulate", action="store_true",
                        help="also play each pose in the simulator and report whether it is held")
    parser.add_argument("--hold", type=positive_number, default=2.0, help="seconds each pose must be held (2)")
    parser.add_argument("--progress", type=positive_number, default=PROGRESS_PERIOD, metavar="SECONDS",
                        help=f"seconds between progress lines on stderr for long batches ({PROGRESS_PERIOD:g})")
    add_own_robot_namespace(parser, "with --simulate: run the simulated robot and this command's client under NAME "
                                    "(refused where a robot runs)")


def run(args: argparse.Namespace) -> int:
    """Judge every pose of the file; a malformed file is a usage error (one line, exit 2)."""
    from humanoid_bringup import free_namespace
    from humanoid_core import UsageError

    if args.namespace != "/" and not args.simulate:
        raise UsageError("--namespace: only with --simulate (without it no robot runs)")
    args.namespace = free_namespace(args.namespace)
    try:
        return _run(args)
    except BatchError as error:
        raise UsageError(str(error)) from None


def _run(args: argparse.Namespace) -> int:
    from humanoid_description import DataFileError, load_model
    from humanoid_robot_bioloid.thesis import ThesisFrame, iter_pose_csv

    try:
        frame = ThesisFrame(load_model(args.robot))
        count = sum(1 for _pose in iter_pose_csv(args.poses))  # every line checked before any work
    except (ValueError, DataFileError) as error:
        raise BatchError(str(error)) from None
    if count == 0:
        raise BatchError(f"{args.poses}: no poses found")
    progress = Progress(count, "simulated" if args.simulate else "analysed", args.progress)
    outside = 0
    with json_list(args.json) as write, contextlib.ExitStack() as stack:
        simulator = None
        if args.simulate:
            from humanoid_experiments.balance_simulation import PoseSimulator

            simulator = stack.enter_context(PoseSimulator(args.robot, args.hold, args.namespace))
        for index, pose in enumerate(iter_pose_csv(args.poses), start=1):
            entry = analyse(frame, pose)
            outside += bool(entry["outside_limits"])
            if simulator is not None:
                entry |= simulate(simulator, pose.label, pose.angles_deg, entry["outside_limits"], index, count)
            write(entry)
            progress.done(index)
    where = "" if args.json == "-" else f"; written to {args.json}"
    print(f"{count} poses {progress.verb} ({outside} outside the thesis' limit table){where}", file=sys.stderr)
    return 0


def analyse(frame, pose) -> dict:
    """The static analysis of one pose, as a JSON entry."""
    analysis = frame.analyse(pose.angles_deg)
    return {
        "pose": pose.label, "line": pose.line,
        "com_mm": [round(float(v), 4) for v in analysis.com_mm],
        "links_mm": {k: [round(float(x), 4) for x in v] for k, v in analysis.links_mm.items()},
        "margin_mm": round(float(analysis.margin_mm), 4),
        "left_foot_contact": analysis.left_foot_contact,
        "outside_limits": [{"joint": f"J{v.thesis_joint}", "urdf_joint": v.joint, "value_deg": v.value_deg,
                            "limits_deg": [round(v.limits_deg[0], 4), round(v.limits_deg[1], 4)],
                            "within_servo_range": v.within_servo_range}
                           for v in frame.outside_limits(pose.angles_deg)],
    }


def simulate(simulator, label: str, angles_deg, outside_limits: list[dict], index: int, count: int) -> dict:
    """``held`` (and ``not_simulated`` when it could not be played) for one pose."""
    from humanoid_experiments.balance_simulation import PoseRefusedError

    unreachable = [v for v in outside_limits if not v["within_servo_range"]]
    try:
        if unreachable:
            joints = ", ".join(f"{v['joint']} = {v['value_deg']:.2f} deg" for v in unreachable)
            raise PoseRefusedError(f"beyond the servo's range ({joints}): the simulated robot refuses such goals")
        result = simulator.play(label, angles_deg)
    except PoseRefusedError as refused:
        print(f"[{index}/{count}] {label}: not simulated: {refused}", file=sys.stderr, flush=True)
        return {"held": None, "not_simulated": str(refused)}
    print(f"[{index}/{count}] {result.describe()}", file=sys.stderr, flush=True)
    return {"held": result.held}


class Progress:
    """Progress lines on stderr for a long batch: done/total, rate, time left."""

    def __init__(self, total: int, verb: str, period: float = PROGRESS_PERIOD) -> None:
        self.total = total
        self.verb = verb
        self.period = period
        self.started = time.monotonic()
        self._last = self.started

    def done(self, count: int) -> None:
        now = time.monotonic()
        if now - self._last < self.period or count == self.total:
            return
        self._last = now
        rate = count / (now - self.started)
        left = (self.total - count) / rate
        print(f"balance-poses: {count}/{self.total} poses {self.verb} ({100.0 * count / self.total:.0f} %), "
              f"{rate:.0f} poses/s, about {_duration(left)} left", file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


@contextlib.contextmanager
def json_list(target: str | Path) -> Iterator:
    """``write(entry)`` appends one entry to a JSON list in ``target`` (``-``: stdout), one
    entry per line; a file is written beside its final name and renamed at the end, so an
    error or interruption leaves what was there before."""
    if str(target) == "-":
        with _list_writer(sys.stdout) as write:
            yield write
        return
    path = Path(target)
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".partial",  # noqa: SIM115
                                         delete=False)
    try:
        with handle, _list_writer(handle) as write:
            yield write
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        raise


@contextlib.contextmanager
def _list_writer(stream: TextIO) -> Iterator:
    first = True

    def write(entry: dict) -> None:
        nonlocal first
        stream.write(("[\n" if first else ",\n") + json.dumps(entry))
        stream.flush()
        first = False

    yield write
    stream.write("[]\n" if first else "\n]\n")
    stream.flush()
