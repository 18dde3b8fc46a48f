"""``humanoid identify`` replays the bags users record: the default simulation graph of a
Bioloid whose servo values are hidden in a parameter file (standing in for a real robot),
recorded by ``--record``'s recorder, driven the ways a user drives it
(``humanoid_experiments.identify.user_paths``, which ``humanoid bench replay`` drives too): a
trajectory on ``joint_trajectory``, a set-point on ``joint_commands``, a
``follow_joint_trajectory`` goal, a ``play_motion``, a ``walk``. The bag holds what the robot
executed (``joint_setpoints``) whatever the path; replayed in-process with the hidden values,
it reproduces the recording on each path's stretch to the proof's level (at most 1 mrad RMS),
and with the robot's own values it does not (the recording says something about the values:
shown on the step on joint_commands, which the servo runs at its own speed). In lockstep (at
real time on a loaded machine the recording once began after the first command:
docs/identification.md; ``humanoid bench replay`` measures both).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from system_support import recording_graph

from humanoid_control.ros import poll_until, topics
from humanoid_experiments.identify import PATHS, drive, path_joints, replay_paths, wait_until_recorded
from humanoid_sim import params_file, sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: The hidden values (the robot's own: 5.34 rad/s, 200 rad/s^2).
TRUTH = {"servo.max_velocity": 3.5, "servo.max_acceleration": 90.0}
PATIENCE = 120.0
#: The fit error at the hidden values allowed on each path (rad RMS): the proof's level.
AT_TRUTH = 1e-3
#: What the robot's own values must be off by at least on the step on joint_commands, for the check
#: to mean anything (times the error allowed at the truth: 25 mrad measured).
SEPARATION = 5.0


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
    with recording_graph(nodes, bag, folder, "identify_bag_test", (), lockstep=True) as client:
        wait_until_recorded(client, PATIENCE)
        setpoints: list[JointState] = []  # the standard topic, as any subscriber takes it
        client.node.create_subscription(JointState, topics.JOINT_SETPOINTS, setpoints.append, 1000)
        poll_until(lambda: len(setpoints) > 0, "joint_setpoints", PATIENCE)
        stretches = drive(client, ROBOT, PATIENCE)
        names = list(client.current_positions())
    return Recording(truth, bag, stretches, setpoints, names)


def test_the_bag_holds_what_the_robot_executed_on_every_path_and_replays_it_at_the_truth(recorded) -> None:
    replayed = replay_paths(ROBOT, recorded.truth, recorded.bag, recorded.stretches)
    assert replayed.setpoints_recorded, "no joint_setpoints in the bag"
    paths = path_joints(ROBOT)
    assert {paths.moved, paths.stepped, "r_knee", "l_knee"} <= set(replayed.moved)  # the paths' joints
    assert set(replayed.hidden) == set(PATHS)
    errors = {path: f"{error * 1000:.3f} mrad" for path, error in replayed.hidden.items()}
    assert all(error <= AT_TRUTH for error in replayed.hidden.values()), errors
    # the step on joint_commands runs at the servo's own speed: there the values show
    truth_error, own_error = replayed.hidden["joint_commands"], replayed.own["joint_commands"]
    assert own_error >= SEPARATION * max(truth_error, AT_TRUTH), \
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
    step = path_joints(ROBOT)
    stepped = recorded.joints.index(step.stepped)
    start, end = recorded.stretches["joint_commands"]
    during = [msg.position[stepped] for msg, t in zip(messages, stamps, strict=True) if start <= t <= end]
    assert during and during[-1] - during[0] == pytest.approx(step.step, abs=0.02)
