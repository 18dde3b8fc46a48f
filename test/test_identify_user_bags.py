"""``humanoid identify`` replays the bags users record: the default simulation graph of a
Bioloid whose servo values are hidden in a parameter file (standing in for a real robot),
recorded by ``--record``'s recorder, driven the ways a user drives it: a trajectory on
``joint_trajectory``, a set-point on ``joint_commands``, a ``follow_joint_trajectory`` goal, a
``play_motion``, a ``walk``. The bag holds what the robot executed (``joint_setpoints``)
whatever the path; replayed in-process with the hidden values, it reproduces the recording on
each path's stretch to the proof's level (at most 1 mrad RMS), and with the robot's own values
it does not (the recording says something about the values: shown on the arm's moves at the
servos' speed, the first two paths, the replay's first seconds). In lockstep (at real time on a
loaded machine the recording once began after the first command: docs/identification.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from system_support import recording_graph
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_bringup import RECORDER_NODE
from humanoid_control.nodes import CONTROL_CONTAINER
from humanoid_control.ros import RobotClient, poll_until, to_duration, topics
from humanoid_experiments.identify import Motion, read_bag, replay, rms
from humanoid_experiments.walk import walk
from humanoid_interfaces.action import PlayMotion
from humanoid_sim import SimulatedRobot, params_file, sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: The hidden values (the robot's own: 5.34 rad/s, 200 rad/s^2).
TRUTH = {"servo.max_velocity": 3.5, "servo.max_acceleration": 90.0}
PATIENCE = 120.0
#: The fit error at the hidden values allowed on each path (rad RMS): the proof's level.
AT_TRUTH = 1e-3
#: What the robot's own values must be off by at least, on the arm's moves (the bag up to the step
#: on joint_commands), for the check to mean anything (times the error at the truth there).
SEPARATION = 5.0
#: What the recorder must hear before the robot is driven (topic, subscribing node).
RECORDED_FIRST = (("/robot_state", CONTROL_CONTAINER), ("/follow_joint_trajectory/_action/status", RECORDER_NODE),
                  ("/play_motion/_action/status", RECORDER_NODE), ("/walk/_action/status", RECORDER_NODE))


def arm_trajectory(joint: str, position: float, seconds: float) -> JointTrajectory:
    return JointTrajectory(joint_names=[joint], points=[
        JointTrajectoryPoint(positions=[position], velocities=[0.0], time_from_start=to_duration(seconds))])


def drive(client: RobotClient) -> dict[str, tuple[float, float]]:
    """Each path in turn; the robot-time stretch of each."""
    stretches = {}
    home = client.current_positions()
    start = client.now()
    client.send_trajectory(arm_trajectory("r_shoulder_pitch", home["r_shoulder_pitch"] + 0.8, 0.4))
    client.wait_until(start + 1.0, timeout=PATIENCE)
    assert abs(client.current_positions()["r_shoulder_pitch"] - home["r_shoulder_pitch"] - 0.8) < 0.05
    stretches["joint_trajectory"] = (start, client.now())
    start = client.now()  # a step: the servo runs at its own speed, which the recording then tells
    client.send_command(JointState(name=["r_elbow"], position=[home["r_elbow"] + 1.0]))
    client.wait_until(start + 1.0, timeout=PATIENCE)
    assert abs(client.current_positions()["r_elbow"] - home["r_elbow"] - 1.0) < 0.05
    stretches["joint_commands"] = (start, client.now())
    start = client.now()
    outcome = client.follow(arm_trajectory("l_shoulder_pitch", home["l_shoulder_pitch"] - 0.8, 0.4),
                            timeout=PATIENCE)
    assert outcome.error_code == 0, outcome
    client.wait_until(client.now() + 0.5, timeout=PATIENCE)
    stretches["follow_joint_trajectory"] = (start, client.now())
    start = client.now()
    result = client.play_motion(name="wave", timeout=PATIENCE).result
    assert result.error_code == PlayMotion.Result.SUCCESSFUL, result.error_string
    client.wait_until(client.now() + 0.5, timeout=PATIENCE)
    stretches["play_motion"] = (start, client.now())
    start = client.now()
    report = walk(client, ROBOT, 0.04, timeout=PATIENCE)
    assert report.error_code == 0 and not report.fell, report.text()
    client.wait_until(client.now() + 0.5, timeout=PATIENCE)
    stretches["walk"] = (start, client.now())
    return stretches


@dataclass
class Recording:
    truth: Path  # the hidden values' parameter file
    bag: Path
    stretches: dict[str, tuple[float, float]]  # path -> its robot-time stretch
    setpoints: list[JointState]  # joint_setpoints, as a subscriber of the topic took them
    joints: list[str]  # the robot's joints, in joint_states' order


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    """The bag, as ``humanoid sim --params truth.yaml --record bag --lockstep`` records it."""
    folder = tmp_path_factory.mktemp("identify_user_bags")
    truth, bag = folder / "truth.yaml", folder / "bag"
    params_file.write(truth, TRUTH, "the stand-in robot's hidden values")
    nodes = sim_nodes(ROBOT, params_file=truth, lockstep=True)
    with recording_graph(nodes, bag, folder, "identify_bag_test", RECORDED_FIRST, lockstep=True) as client:
        # a message on a topic goes to the subscriptions matched when it is published: the
        # robot's, before the first command (README, "The robot interface")
        poll_until(lambda: client.trajectories.get_subscription_count() >= 2
                   and client.commands.get_subscription_count() >= 2, "the robot's command subscriptions",
                   PATIENCE)
        setpoints: list[JointState] = []  # the standard topic, as any subscriber takes it
        client.node.create_subscription(JointState, topics.JOINT_SETPOINTS, setpoints.append, 1000)
        poll_until(lambda: len(setpoints) > 0, "joint_setpoints", PATIENCE)
        stretches = drive(client)
        names = list(client.current_positions())
    return Recording(truth, bag, stretches, setpoints, names)


def stretch_rms(simulated: np.ndarray, motion: Motion, joints: list[int], stretch: tuple[float, float]) -> float:
    inside = (motion.times + motion.origin >= stretch[0]) & (motion.times + motion.origin <= stretch[1])
    difference = simulated[inside][:, joints] - motion.positions[inside][:, joints]
    return math.sqrt(float(np.nanmean(difference**2)))


def own_values_part(motion: Motion, until: float) -> Motion:
    """The motion's measurements up to robot time ``until`` (its set-points all kept)."""
    count = int(np.searchsorted(motion.times + motion.origin, until, side="right"))
    return replace(motion, times=motion.times[:count], positions=motion.positions[:count])


def test_the_bag_holds_what_the_robot_executed_on_every_path_and_replays_it_at_the_truth(recorded) -> None:
    truth, bag, stretches = recorded.truth, recorded.bag, recorded.stretches
    with SimulatedRobot(ROBOT, params_file=truth) as robot:
        names = list(robot.model.joints.names)
        motion = read_bag(bag, names)
        assert motion.setpoints is not None, "no joint_setpoints in the bag"
        at_truth = replay(robot, motion)
    # with the robot's own values, the bag's first seconds, to the end of the step on
    # joint_commands: the arm's moves at the servos' speed, where the values show (the whole
    # bag, 27 s of robot time, cost 12 CPU-seconds more for the same verdict)
    own_part = own_values_part(motion, stretches["joint_commands"][1])
    with SimulatedRobot(ROBOT) as robot:
        at_own = replay(robot, own_part)
    joints = motion.commanded_joints(names)
    moved = {names[j] for j in joints}
    assert {"r_shoulder_pitch", "r_elbow", "l_shoulder_pitch", "r_knee", "l_knee"} <= moved  # the paths' joints
    errors = {path: stretch_rms(at_truth, motion, joints, stretch) for path, stretch in stretches.items()}
    assert all(error <= AT_TRUTH for error in errors.values()), {p: f"{e * 1000:.3f} mrad" for p, e in errors.items()}
    truth_error = rms(at_truth[:len(own_part.times)], own_part, joints)
    own_error = rms(at_own, own_part, joints)
    assert own_error >= SEPARATION * truth_error, \
        f"at the truth {truth_error * 1000:.3f} mrad, with the robot's own values {own_error * 1000:.3f} mrad"


def test_plot_and_compare_take_the_set_points_as_what_was_commanded(recorded) -> None:
    """The commanded line of ``humanoid plot`` and the tracking of ``humanoid compare`` are the
    robot's set-points, on every path (the step on joint_commands, the walk's knees): read here
    from the bag with rosbags alone."""
    from bag_messages import topic_messages

    from humanoid_tools.plots import load

    bag = recorded.bag
    setpoints = topic_messages(bag, "/joint_setpoints")
    expected = {name: [msg.position[list(msg.name).index(name)] for msg in setpoints] for name in ("r_elbow", "r_knee")}
    experiment = load(bag)
    commanded = {joint.name: joint.commanded.v for joint in experiment.joints}
    for name, values in expected.items():
        np.testing.assert_array_equal(commanded[name], np.array(values), err_msg=name)


def test_compare_aligns_a_later_copy_on_the_first_trajectory_message_to_no_difference(recorded, tmp_path) -> None:
    """compare's start rule with a known answer: this bag's experiment starts with its first
    joint_trajectory message (before any goal); the same recording 7 s later, aligned on
    that, differs by nothing."""
    import json

    from bag_copies import later_copy
    from cli_entry import entry_point

    bag = recorded.bag
    later = later_copy(bag, tmp_path / "later", 7)
    result = entry_point("compare", bag, later, "--json", "--no-figures")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["a"]["start"]["source"] == report["b"]["start"]["source"] == "first joint_trajectory message"
    assert report["total"]["max_difference_rad"] == pytest.approx(0.0, abs=1e-9)


def test_the_set_points_are_a_standard_topic_for_any_subscriber(recorded) -> None:
    """``joint_setpoints`` as a controller or ``ros2 topic echo`` takes it: every joint, stamped,
    following the commands (the step on joint_commands reaches its target)."""
    messages = recorded.setpoints
    assert len(messages) >= 100
    assert all(list(msg.name) == recorded.joints and len(msg.position) == len(msg.name) for msg in messages)
    stamps = [msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec for msg in messages]
    assert np.all(np.diff(stamps) >= 0.0)  # in the robot's time order
    elbow = recorded.joints.index("r_elbow")
    start, end = recorded.stretches["joint_commands"]
    during = [msg.position[elbow] for msg, t in zip(messages, stamps, strict=True) if start <= t <= end]
    assert during and during[-1] - during[0] == pytest.approx(1.0, abs=0.02)
