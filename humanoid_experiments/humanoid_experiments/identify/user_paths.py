"""A robot driven the ways a user drives it, and what the replay of its recording reproduces.

Identification is only as good as the bags users record: a trajectory on ``joint_trajectory``,
a step on ``joint_commands``, a ``follow_joint_trajectory`` goal, ``play_motion``, a ``walk``,
each recorded by the recorder of ``--record`` (``joint_setpoints`` among its topics). This
module drives a running robot through each path in turn and measures, path by path, how far an
in-process replay of the bag is from the recording (``humanoid bench replay``,
``test/test_identify_user_bags.py``).

The paths move the joints the robot's own ``wave`` motion moves (every humanoid has it), in the
direction it moves them: no joint is named here, and every move stays inside the joints' range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from humanoid_experiments.identify.motion import Motion, rms

#: The paths, in the order :func:`drive` takes them.
PATHS = ("joint_trajectory", "joint_commands", "follow_joint_trajectory", "play_motion", "walk")
#: The motion whose joints the arm's paths move, and that the play_motion path plays.
MOTION = "wave"
#: rad: the trajectory's move and the step on joint_commands (at most the wave's own reach).
MOVE = 0.8
STEP = 1.0
#: s: the trajectory's duration (the servo's speed shows in a fast one), the step's wait,
#: the rest after each path.
MOVE_TIME = 0.4
STEP_WAIT = 1.0
REST = 0.5
#: m walked on the walk path (within every walking robot's goal bounds).
WALK = 0.04
#: rad: how close each move must end to its target.
REACHED = 0.05


@dataclass(frozen=True)
class PathJoints:
    """The arm joints the paths move, and by how much (rad, signed)."""

    moved: str  # joint_trajectory takes it out, follow_joint_trajectory back
    stepped: str  # the step on joint_commands
    move: float
    step: float


def path_joints(robot: str) -> PathJoints:
    """The first two joints the robot's ``wave`` moves, each by its move's size at most and in
    the wave's direction."""
    from humanoid_core.motion import load_motion

    motion = load_motion(robot, MOTION)
    change = motion.positions - motion.positions[0]
    moves = np.abs(change) > 1e-6
    moving = sorted((int(np.argmax(moves[:, j])), j) for j in range(change.shape[1]) if moves[:, j].any())
    if len(moving) < 2:
        raise ValueError(f"{robot}'s {MOTION} moves {len(moving)} joint(s): the paths need two")

    def reach(j: int, most: float) -> float:
        extreme = change[np.argmax(np.abs(change[:, j])), j]
        return math.copysign(min(abs(extreme), most), extreme)

    (_, first), (_, second) = moving[:2]
    return PathJoints(moved=motion.joint_names[first], stepped=motion.joint_names[second],
                      move=reach(first, MOVE), step=reach(second, STEP))


def recorded_first() -> tuple[tuple[str, str], ...]:
    """The (topic, node) subscriptions to wait for before the robot is driven: the recorder's
    container hears the robot's state, the recorder the actions' status (topic names relative
    to the robot's namespace)."""
    from humanoid_bringup import RECORDER_NODE
    from humanoid_control.nodes import CONTROL_CONTAINER
    from humanoid_control.ros import topics

    actions = (topics.FOLLOW_JOINT_TRAJECTORY, topics.PLAY_MOTION, topics.WALK)
    return ((topics.ROBOT_STATE, CONTROL_CONTAINER),
            *((topics.action_topics(action)[1], RECORDER_NODE) for action in actions))


def wait_until_recorded(client, patience: float) -> None:
    """Wait until the recorder hears what :func:`drive` makes the robot do, and the robot
    interface takes commands (a message goes to the subscriptions matched when it is published:
    the robot's, and the recorder's, before the first command)."""
    from humanoid_control.ros import poll_until

    for topic, node in recorded_first():
        client.wait_for_subscriber(client.node.resolve_topic_name(topic), node, patience)
    poll_until(lambda: client.trajectories.get_subscription_count() >= 2
               and client.commands.get_subscription_count() >= 2, "the robot's command subscriptions", patience)


def drive(client, robot: str, patience: float) -> dict[str, tuple[float, float]]:
    """Drive the running ``robot`` through each path of :data:`PATHS` in turn (``client``: a
    :class:`~humanoid_control.ros.RobotClient`); the robot-time stretch of each."""
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import make_trajectory
    from humanoid_experiments.walk import walk
    from humanoid_interfaces.action import PlayMotion

    def trajectory(joint: str, position: float):
        return make_trajectory([joint], [MOVE_TIME], [[position]], velocities=[[0.0]])

    def reached(joint: str, target: float) -> None:
        now = client.current_positions()[joint]
        if abs(now - target) > REACHED:
            raise RuntimeError(f"{joint} at {now:.3f} rad, not at its target {target:.3f}")

    joints = path_joints(robot)
    home = client.current_positions()
    stretches = {}
    start = client.now()
    client.send_trajectory(trajectory(joints.moved, home[joints.moved] + joints.move))
    client.wait_until(start + 2 * MOVE_TIME + REST, timeout=patience)
    reached(joints.moved, home[joints.moved] + joints.move)
    stretches["joint_trajectory"] = (start, client.now())
    start = client.now()  # a step: the servo runs at its own speed, which the recording then tells
    client.send_command(JointState(name=[joints.stepped], position=[home[joints.stepped] + joints.step]))
    client.wait_until(start + STEP_WAIT, timeout=patience)
    reached(joints.stepped, home[joints.stepped] + joints.step)
    stretches["joint_commands"] = (start, client.now())
    start = client.now()
    outcome = client.follow(trajectory(joints.moved, home[joints.moved]), timeout=patience)
    if outcome.error_code != 0:
        raise RuntimeError(f"follow_joint_trajectory ended {outcome.error_code}: {outcome.error_string}")
    client.wait_until(client.now() + REST, timeout=patience)
    stretches["follow_joint_trajectory"] = (start, client.now())
    start = client.now()
    result = client.play_motion(name=MOTION, timeout=patience).result
    if result.error_code != PlayMotion.Result.SUCCESSFUL:
        raise RuntimeError(f"play_motion {MOTION}: {result.error_string}")
    client.wait_until(client.now() + REST, timeout=patience)
    stretches["play_motion"] = (start, client.now())
    start = client.now()
    report = walk(client, robot, WALK, timeout=patience)
    if report.error_code != 0 or report.fell:
        raise RuntimeError(f"walk: {report.text()}")
    client.wait_until(client.now() + REST, timeout=patience)
    stretches["walk"] = (start, client.now())
    return stretches


def stretch_rms(simulated: np.ndarray, motion: Motion, joints: Sequence[int], stretch: tuple[float, float]) -> float:
    """RMS (rad) of simulated minus recorded positions of ``joints`` within a robot-time stretch."""
    inside = (motion.times + motion.origin >= stretch[0]) & (motion.times + motion.origin <= stretch[1])
    return rms(simulated[inside], replace(motion, times=motion.times[inside], positions=motion.positions[inside]),
               joints)


def path_errors(simulated: np.ndarray, motion: Motion, joints: Sequence[int],
                stretches: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """:func:`stretch_rms` of each path's stretch."""
    return {path: stretch_rms(simulated, motion, joints, stretch) for path, stretch in stretches.items()}


@dataclass(frozen=True)
class PathReplay:
    """A recording replayed in-process with two sets of values: per path and over the whole
    bag, the RMS difference (rad) from the recording with the hidden values and with the
    robot's own."""

    setpoints_recorded: bool  # the bag holds joint_setpoints (else its commands were replayed)
    states: int
    seconds: float
    moved: tuple[str, ...]  # the joints the robot was made to move: those compared
    hidden: dict[str, float]  # path -> rad
    own: dict[str, float]
    whole: tuple[float, float]  # (hidden, own) rad


def replay_paths(robot: str, hidden: Path, bag: Path, stretches: Mapping[str, tuple[float, float]]) -> PathReplay:
    """The bag replayed as ``humanoid identify`` replays it, with the values of the parameter
    file ``hidden`` and with the robot's own."""
    from humanoid_experiments.identify.motion import read_bag, replay
    from humanoid_sim import SimulatedRobot

    with SimulatedRobot(robot, params_file=hidden) as simulated:
        names = list(simulated.model.joints.names)
        motion = read_bag(bag, simulated.model.joints)
        at_hidden = replay(simulated, motion)
    with SimulatedRobot(robot) as simulated:
        at_own = replay(simulated, motion)
    joints = motion.commanded_joints(names)
    return PathReplay(setpoints_recorded=motion.setpoints is not None, states=len(motion.times),
                      seconds=motion.duration, moved=tuple(names[j] for j in joints),
                      hidden=path_errors(at_hidden, motion, joints, stretches),
                      own=path_errors(at_own, motion, joints, stretches),
                      whole=(rms(at_hidden, motion, joints), rms(at_own, motion, joints)))
