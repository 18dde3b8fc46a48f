"""``humanoid pose``: pose a running robot by hand, one joint at a time, and save the poses.

The interactive posing the HOAP-2 tooling offered, for any robot of the stack: the
command connects to a running robot (the simulation or the hardware alike: it uses
only the shared interface) and reads commands on stdin, one per line. Every move is a
smooth rest-to-rest trajectory through ``follow_joint_trajectory``, planned by the
motion package like the transition before any motion (within the joints' rate
limits), and every target is kept within the joint's position limits. A move is over once
the moved joints have come to rest (see below), so what it reports and what ``save`` stores
next is the pose the robot rests in. Angles are in degrees, joints are the URDF names (case
does not matter)::

    help                 list the commands
    show [JOINT]         current position of every joint (or of one), with its limits
    move JOINT DELTA     move JOINT by DELTA degrees (beyond a limit: clamped, and said so)
    set JOINT ANGLE      move JOINT to ANGLE degrees (beyond a limit: clamped, and said so)
    reset [JOINT]        JOINT, or every joint, back to the robot's home pose
    save FILE [LABEL]    append the current pose to FILE (created if missing):
                           .yaml/.yml  a keyframe of a keyframe motion file, the pose demo's
                                       move time (config/motion.yaml: 1.5 s) after the last one
                           .csv        the robot's own format (robot.yaml motion_formats),
                                       by its pose writer: on the HOAP-2 a line of the csv
                                       motion format lasting that long, on the Bioloid a
                                       thesis pose LABEL,J1..J18 in degrees
    quit                 end the session (also: exit, or the end of the input)

Blank lines and lines starting with ``#`` are ignored, so a script of commands can be
piped in. A command that fails (unknown command or joint, malformed number, a move
the robot did not complete, a file that cannot be written, which is then left as it was)
prints one line ``error: ...`` on stderr and the session goes on; the exit status is 1
when any command failed, 0 otherwise.

Coming to rest: the trajectory's goal succeeds once the joints are within the interface's
goal tolerance (0.05 rad on the simulated robots), while the servo still closes the rest of
the gap; the move then waits until the moved joints have stayed slower than 1 deg/s
(``SETTLED_SPEED``) for 0.05 robot seconds (``SETTLED_SPAN``; one slow reading is not
enough: the simulated Bioloid's elbow once read 0.3 deg short of where it came to rest, at
-0.06 deg/s, and 0.3 deg further 10 ms later), or 1 robot second (``SETTLE_LIMIT``) after the
trajectory's end for a joint that never comes to rest. Only readings stamped from the
trajectory's end on count, that end taken from the goal's feedback (robot time): the command
takes the robot's readings in order and can be behind it (a loaded machine, a simulation
faster than real time), so when the goal's result comes, readings from during the move, and
from before it, where the joint stood still, may not be taken yet; the latest reading taken
is not the robot's time then.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import numpy as np

from humanoid_core import positive_number
from humanoid_description import ROBOTS

if TYPE_CHECKING:
    from trajectory_msgs.msg import JointTrajectory

    from humanoid_control.ros import GoalOutcome, RobotClient
    from humanoid_core.motion import JointBounds

# rclpy and the motion package are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.

PROMPT = "pose> "
#: Wall-clock seconds one move may take (moves last a few robot seconds at most).
MOVE_TIMEOUT = 120.0
#: A move is over when the moved joints have been slower than this (rad/s: 1 deg/s) ...
SETTLED_SPEED = math.radians(1.0)
#: ... for this long (robot seconds; readings from the first slow one on) ...
SETTLED_SPAN = 0.05
#: ... or this long (robot seconds) after the trajectory ended (a joint pushing against
#: something may never come to rest).
SETTLE_LIMIT = 1.0


class CommandError(ValueError):
    """A command that cannot be carried out; the message is the one line the user sees."""


@dataclass(frozen=True)
class Command:
    """One command of the session: how to call it, what it does, and the handler."""

    usage: str
    summary: str
    handler: Callable[[PosingSession, list[str]], None]
    fewest: int  # words after the command name
    most: int | None = None  # None: any number (a label may have spaces)


@dataclass
class PosingSession:
    """The commands, carried out on a connected robot; answers go to ``out``."""

    robot: str
    client: RobotClient
    bounds: JointBounds
    home: Mapping[str, float]
    out: TextIO

    @property
    def motion_formats(self) -> Mapping[str, str]:
        """The robot's own motion file formats by suffix (its robot.yaml)."""
        from humanoid_description import load_config

        return load_config(self.robot).motion_formats

    def execute(self, line: str) -> bool:
        """Carry out one command line; False when the session ends. Raises CommandError."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return True
        name, args = words[0].lower(), words[1:]
        if name in ("quit", "exit"):
            return False
        command = COMMANDS.get(name)
        if command is None:
            raise CommandError(f"unknown command {words[0]!r} (commands: {', '.join(COMMANDS)}, quit)")
        if len(args) < command.fewest or (command.most is not None and len(args) > command.most):
            raise CommandError(f"usage: {command.usage}")
        command.handler(self, args)
        return True

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # -- arguments ----------------------------------------------------------------------
    def joint(self, text: str) -> str:
        """The URDF joint named ``text`` (any case)."""
        by_lower = {name.lower(): name for name in self.bounds.joint_names}
        if text.lower() not in by_lower:
            raise CommandError(f"unknown joint {text!r} (joints: {', '.join(self.bounds.joint_names)})")
        return by_lower[text.lower()]

    def limits_deg(self, joint: str) -> tuple[float, float]:
        column = self.bounds.joint_names.index(joint)
        return math.degrees(self.bounds.lower[column]), math.degrees(self.bounds.upper[column])

    def measured(self) -> dict[str, float]:
        """Measured positions (rad) clamped into the limits: a reading a hair beyond a limit
        (servo overshoot, sag) would otherwise be an out-of-limit start point or saved pose."""
        positions = self.client.current_positions()
        values = np.clip([positions[j] for j in self.bounds.joint_names], self.bounds.lower, self.bounds.upper)
        return dict(zip(self.bounds.joint_names, map(float, values), strict=True))

    # -- commands -------------------------------------------------------------------------
    def help(self, _args: list[str]) -> None:
        width = max(len(c.usage) for c in COMMANDS.values())
        for command in COMMANDS.values():
            self.say(f"{command.usage:{width}}  {command.summary}")
        self.say(f"{'quit':{width}}  end the session (also: exit, or the end of the input)")

    def show(self, args: list[str]) -> None:
        joints = [self.joint(args[0])] if args else list(self.bounds.joint_names)
        positions = self.client.current_positions()
        width = max(len(j) for j in joints)
        for joint in joints:
            low, high = self.limits_deg(joint)
            self.say(f"{joint:{width}} {math.degrees(positions[joint]):9.2f} deg   limits [{low:.2f}, {high:.2f}]")

    def move(self, args: list[str]) -> None:
        joint = self.joint(args[0])
        self.go({joint: self.client.current_positions()[joint] + math.radians(degrees(args[1]))})

    def set(self, args: list[str]) -> None:
        self.go({self.joint(args[0]): math.radians(degrees(args[1]))})

    def reset(self, args: list[str]) -> None:
        joints = [self.joint(args[0])] if args else list(self.bounds.joint_names)
        self.go({j: self.home[j] for j in joints})

    def save(self, args: list[str]) -> None:
        from humanoid_core.motion import MotionError, UnknownMotionFormatError, pose_file_format

        path, label = Path(args[0]), " ".join(args[1:])
        try:
            chosen = pose_file_format(self.robot, path.suffix)
            if chosen is None:
                own = "".join(f" or a {s} file" for s in self.motion_formats)
                raise CommandError(f"cannot save to {path.name!r}: give a .yaml/.yml keyframe file{own}")
            saved = chosen.append_pose(path, self.robot, self.measured(), label)
            self.say(f"saved {saved.what} to {path}{saved.note}")
        except (MotionError, UnknownMotionFormatError) as error:
            raise CommandError(f"not saved: {error}") from None
        except OSError as error:  # the file is left as it was (written all or nothing)
            raise CommandError(f"not saved: cannot write {path}: {error.strerror or error}") from None

    # -- moving -------------------------------------------------------------------------
    def go(self, targets: Mapping[str, float]) -> None:
        """Move the joints to ``targets`` (rad), clamped into their limits, smoothly, and
        report where each joint was and is."""
        from humanoid_control.ros import playback_trajectory
        from humanoid_core.motion import Motion, plan_playback

        goal = {}
        for joint, value in targets.items():
            column = self.bounds.joint_names.index(joint)
            goal[joint] = float(np.clip(value, self.bounds.lower[column], self.bounds.upper[column]))
            if goal[joint] != value:
                low, high = self.limits_deg(joint)
                self.say(f"{joint}: {math.degrees(value):.2f} deg is outside its limits [{low:.2f}, {high:.2f}]: "
                         f"clamped to {math.degrees(goal[joint]):.2f} deg")
        before = self.measured()
        joints = tuple(goal)
        motion = Motion(name="pose", robot=self.robot, joint_names=joints, times=[0.0],
                        positions=[[goal[j] for j in joints]])
        playback = plan_playback(motion, current=before)
        ended = None
        if playback.transition_duration > 0.0:
            trajectory = playback_trajectory(playback)
            outcome = self.client.follow(trajectory, timeout=MOVE_TIMEOUT)
            if not outcome.succeeded:
                raise CommandError(f"the robot did not complete the move: {outcome.error_string}")
            ended = trajectory_end(outcome, trajectory)
        after = self.settle(joints, ended)
        if len(joints) == 1:
            (joint,) = joints
            self.say(f"{joint}: {math.degrees(before[joint]):.2f} -> {math.degrees(after[joint]):.2f} deg")
        else:
            moved = max(joints, key=lambda j: abs(after[j] - before[j]))
            self.say(f"{len(joints)} joints moved; the most: {moved}: "
                     f"{math.degrees(before[moved]):.2f} -> {math.degrees(after[moved]):.2f} deg")

    def settle(self, joints: tuple[str, ...], ended: float | None = None) -> dict[str, float]:
        """Positions once the moved joints have come to rest (module docstring): a trajectory
        ends when the joints are within the interface's goal tolerance, while the servo still
        closes the gap (up to 0.05 rad), which a saved pose would otherwise miss. ``ended``:
        robot time by which the trajectory had ended (:func:`trajectory_end`); None (no move,
        or not known): the latest reading taken."""
        from humanoid_control.ros import seconds

        start = self.client.now()
        if ended is not None:  # this client's latest reading may be from during the move, or before it
            start = max(start, ended)
        rest = Rest()
        while True:
            msg = self.client.wait_for_joint_states()
            stamp = seconds(msg.header.stamp)
            if stamp < start:  # a reading from before the end of the move, still queued
                continue
            speeds = dict(zip(msg.name, msg.velocity, strict=True)) if msg.velocity else {}
            if not speeds or stamp >= start + SETTLE_LIMIT or rest.reached(stamp, [speeds[j] for j in joints]):
                return dict(zip(msg.name, msg.position, strict=True))


@dataclass
class Rest:
    """Have joints come to rest? Slower than ``SETTLED_SPEED`` in every reading of the last
    ``SETTLED_SPAN`` robot seconds (a single slow reading may be one taken mid-way)."""

    slow_since: float | None = None  # stamp of the first of the slow readings in a row

    def reached(self, stamp: float, speeds: Sequence[float]) -> bool:
        """Take the reading at ``stamp`` (robot s) with these joints' ``speeds`` (rad/s)."""
        if any(abs(speed) >= SETTLED_SPEED for speed in speeds):
            self.slow_since = None
            return False
        if self.slow_since is None:
            self.slow_since = stamp
        return stamp - self.slow_since >= SETTLED_SPAN


def trajectory_end(outcome: GoalOutcome, trajectory: JointTrajectory) -> float | None:
    """Robot time by which a followed trajectory had ended: its start, from its goal's
    feedback (:attr:`GoalOutcome.start_time`, the robot's clock), plus its duration; None
    without feedback."""
    from humanoid_control.ros import seconds

    start = outcome.start_time
    if start is None or not trajectory.points:
        return None
    return start + seconds(trajectory.points[-1].time_from_start)


def degrees(text: str) -> float:
    """A finite angle in degrees, or CommandError."""
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"not a number of degrees: {text!r}") from None
    if not math.isfinite(value):
        raise CommandError(f"not a finite number of degrees: {text!r}")
    return value


COMMANDS: dict[str, Command] = {
    "help": Command("help", "list the commands", PosingSession.help, 0, 0),
    "show": Command("show [JOINT]", "current position of every joint (or of JOINT) in degrees, with its limits",
                    PosingSession.show, 0, 1),
    "move": Command("move JOINT DELTA", "move JOINT by DELTA degrees (clamped to its limits)",
                    PosingSession.move, 2, 2),
    "set": Command("set JOINT ANGLE", "move JOINT to ANGLE degrees (clamped to its limits)",
                   PosingSession.set, 2, 2),
    "reset": Command("reset [JOINT]", "JOINT, or every joint, back to the home pose", PosingSession.reset, 0, 1),
    "save": Command("save FILE [LABEL]", "append the current pose to FILE: .yaml/.yml keyframe file, or a file "
                    "of the robot's own format (robot.yaml motion_formats)", PosingSession.save, 1),
}


# -- the command ----------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_control.ros import add_namespace_option

    parser.add_argument("--robot", required=True, choices=ROBOTS, help="the robot that is running")
    parser.add_argument("--timeout", type=positive_number, default=30.0,
                        help="seconds to wait for the robot's joint_states (30)")
    add_namespace_option(parser)


def run(args: argparse.Namespace) -> int:
    from humanoid_control.ros import RobotClient, RobotClientError
    from humanoid_core.motion import JointBounds
    from humanoid_description import load_config

    interactive = sys.stdin.isatty()
    with RobotClient("humanoid_pose", namespace=args.namespace) as client:
        try:
            state = client.wait_for_joint_states(args.timeout)
        except RobotClientError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        bounds = JointBounds.for_robot(args.robot)
        if set(state.name) != set(bounds.joint_names):
            print(f"error: the running robot is not a {args.robot}: its joints are {', '.join(state.name)}",
                  file=sys.stderr)
            return 1
        session = PosingSession(args.robot, client, bounds, load_config(args.robot).home, sys.stdout)
        print(f"connected to the {args.robot} ({len(bounds.joint_names)} joints); 'help' lists the commands",
              flush=True)
        return serve(session, sys.stdin, interactive)


def serve(session: PosingSession, commands: TextIO, interactive: bool) -> int:
    """Read and carry out commands until quit or the end of the input; 1 if any failed."""
    from humanoid_control.ros import RobotClientError
    from humanoid_core.motion import MotionError

    failed = False
    while True:
        if interactive:
            print(PROMPT, end="", flush=True)
        line = commands.readline()
        if not line:
            break
        try:
            if not session.execute(line):
                break
        except (CommandError, MotionError, RobotClientError) as error:
            failed = True
            print(f"error: {error}", file=sys.stderr, flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m humanoid_tools.posing``: the same as ``humanoid pose``."""
    parser = argparse.ArgumentParser(prog="humanoid pose", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
