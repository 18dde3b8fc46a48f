"""A recorded simulation run: ``humanoid sim``'s graph with the recorder in a process of its
own (as ``--record --no-shared-process``), in lockstep (as ``--lockstep``: the simulation waits
for the recorder, the control container and this test's client at every state, so the bag
holds what the graph did whatever the machine's load), the Bioloid waving its hand through
``play_motion`` and a few streaming commands. The bag is read back by rosbags with every
topic the graph publishes, and ``humanoid plot`` turns it into figures that are not blank."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import yaml
from bag_messages import read_bag, topic_messages
from cli_entry import entry_point
from matplotlib.image import imread
from rosbags.rosbag2 import Reader
from sensor_msgs.msg import JointState

from humanoid_bringup import RECORDER_NODE, recorder_node
from humanoid_control.ros import DEFAULT_TOPICS, RobotClient, absolute
from humanoid_core.processes import Graph
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: What the simulation graph publishes whatever other nodes run (the rest of the defaults
#: appear when their nodes are up: balance, self-collision, a walking controller).
ALWAYS = {"/joint_states": "sensor_msgs/msg/JointState", "/robot_description": "std_msgs/msg/String",
          "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray", "/imu/data": "sensor_msgs/msg/Imu",
          "/left_foot/wrench": "geometry_msgs/msg/WrenchStamped", "/right_foot/contact": "std_msgs/msg/Bool",
          "/ground_truth/base_pose": "geometry_msgs/msg/PoseStamped",
          "/fallen": "std_msgs/msg/Bool", "/joint_commands": "sensor_msgs/msg/JointState",
          "/follow_joint_trajectory/_action/feedback":
              "humanoid_interfaces/action/FollowJointTrajectory_FeedbackMessage",
          "/play_motion/_action/status": "action_msgs/msg/GoalStatusArray"}


#: The test's client, a lockstep participant.
CLIENT = "record_sim_client"


@pytest.fixture(scope="module")
def recorded_bag(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim_recording")
    bag = folder / "wave"
    nodes = [recorder_node(bag, lockstep=True),
             *sim_nodes("bioloid", lockstep=True, participants=(CLIENT, RECORDER_NODE))]
    with Graph(nodes, log_dir=folder / "logs") as graph:
        try:
            with RobotClient(CLIENT, lockstep=True) as client:
                client.wait_for_joint_states(60.0)
                # the recorder takes the robot's state before the wave starts (it subscribes to
                # each topic as its publishers appear; the state topics through robot_state)
                client.wait_for_subscriber("robot_state", RECORDER_NODE, 120.0)
                client.lockstep.go()
                assert client.play_motion(name="wave").result.error_code == 0
                # the recorder subscribes to joint_commands once it sees this client's publisher:
                # the set-points below go out once it (and the robot) hear them (send_command)
                client.wait_for_subscriber("joint_commands", RECORDER_NODE, 120.0)
                for i in range(20):  # streaming set-points, as a joystick would send them
                    client.send_command(JointState(name=["r_elbow"], position=[-0.3 * math.sin(i / 6)]))
                    client.wait_until(client.now() + 0.02)
        finally:
            codes = graph.stop()
        # every node of the graph stops cleanly on SIGINT (a node that needs SIGKILL leaves its work undone)
        unclean = {name: code for name, code in codes.items() if code != 0}
        assert not unclean, "\n".join(f"{name} exited {code}:\n{graph.log_text(name)[-3000:]}"
                                       for name, code in unclean.items())
    return bag, graph.log_text("humanoid_recorder")


def test_rosbags_reads_every_topic_with_its_count_and_type(recorded_bag):
    bag, log = recorded_bag
    topics, messages = read_bag(bag)  # every message decodes
    counts = {topic: len(decoded) for topic, decoded in messages.items()}
    stamps, energy_stamps = ([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in messages[topic]]
                             for topic in ("/joint_states", "/energy_state"))
    assert set(topics) <= {absolute(topic) for topic in DEFAULT_TOPICS}
    for topic, kind in ALWAYS.items():
        assert topic in topics, f"{topic} not recorded"
        assert topics[topic].msgtype == kind
        assert counts[topic] == topics[topic].msgcount > 0, topic
    assert counts["/robot_description"] == 1
    # the monitors the graph starts by default: the energy estimate answers the joint_states
    # from its start, each with its state's stamp, in order; the fall estimate is recorded
    assert topics["/energy_state"].msgtype == "humanoid_interfaces/msg/EnergyState"
    # where both topics were recorded (the recorder's subscriptions match one by one)
    first, last = max(energy_stamps[0], stamps[0]), min(energy_stamps[-1], stamps[-1])
    states = [s for s in stamps if first <= s <= last]
    answers = [s for s in energy_stamps if first <= s <= last]
    assert len(states) > 0.5 * len(stamps)
    assert set(answers) <= set(states) and answers == sorted(answers)
    # in lockstep the simulator waits for the container's answer to each state (in real time a
    # process more than its queue, a second of states, behind the simulator loses the oldest:
    # on a loaded 2-core machine the container lost 21 states in a row once, 111 of 838 another time)
    # (a held lockstep simulation sends its state again while it waits: a state, not a new one)
    unanswered = sorted(set(states) - set(answers))
    assert not unanswered, f"{len(unanswered)} of {len(set(states))} states unanswered, from t = {unanswered[0]:.2f} s"
    assert topics["/fall_state"].msgtype == "humanoid_interfaces/msg/FallState" and counts["/fall_state"] > 0
    assert counts["/joint_commands"] == 20
    # nothing lost: joint_states come every 10 ms of robot time, from the first recorded to the
    # last (a held lockstep simulation sends its state again while it waits, at the start)
    assert stamps == sorted(stamps)
    intervals = np.diff(np.unique(stamps))
    assert np.allclose(intervals, 0.01, atol=1e-6), f"gaps at {np.nonzero(~np.isclose(intervals, 0.01))[0][:5]}"
    assert stamps[-1] - stamps[0] > 6.0  # the whole wave
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    received = json.loads(info["custom_data"]["received_messages"])
    written = json.loads(info["custom_data"]["written_messages"])
    assert {t: n for t, n in written.items() if n} == received
    assert all(received.get(t, 0) == counts[t] for t in counts)
    assert "/joint_states" in log and "bag written" in log


def colours(image: np.ndarray) -> int:
    """How many distinct RGB colours an image (floats of 8-bit channels) has: each pixel packed
    into one integer, counted by a flat ``np.unique`` (``np.unique(axis=0)`` over the rows sorts
    them as structured records: seconds per figure)."""
    channels = np.round(image * 255.0).astype(np.uint32)
    return len(np.unique((channels[..., 0] << 16) | (channels[..., 1] << 8) | channels[..., 2]))


def test_plot_makes_figures_that_are_not_blank(recorded_bag, tmp_path):
    bag, _log = recorded_bag
    out = tmp_path / "figures"
    result = entry_point("plot", bag, "--out", out)  # in this process: the figures are the property
    assert result.returncode == 0, result.stderr
    names = {p.name for p in out.glob("*.png")}
    expected = {"summary.png", "rates.png", "joints_r1.png", "joints_r2.png", "joints_l1.png", "joints_l2.png",
                "energy.png"}
    assert expected <= names, names
    with Reader(bag) as reader:
        has_balance = any(c.topic == "/balance_state" for c in reader.connections)
    assert ("balance.png" in names) == has_balance
    if not has_balance:
        assert "no balance_state in the bag" in result.stdout
    for name in names:
        image = imread(out / name)[:, :, :3]
        ink = np.any(image < 0.9, axis=2).mean()  # share of pixels that are not (near) white
        assert ink > 0.02, f"{name} is nearly blank ({ink:.3f})"
        assert colours(image) > 50, f"{name} has hardly any colours"


def test_view_replays_the_bag(recorded_bag):
    from humanoid_tools.view import BagReplay

    bag, _log = recorded_bag
    replay = BagReplay(bag)
    states = topic_messages(bag, "/joint_states")
    middle = states[len(states) // 2]
    t = middle.header.stamp.sec + 1e-9 * middle.header.stamp.nanosec
    frame = replay.frame(t + 0.001)  # between two readings: the last one before
    assert frame.positions == dict(zip(middle.name, middle.position, strict=True))
    assert frame.base is not None and replay.description is not None

    view = subprocess.Popen([sys.executable, "-m", "humanoid_bringup.cli", "view", "--bag", str(bag), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = view.stdout.readline()
        assert first.startswith("http://127.0.0.1:"), first + view.stderr.read()
        assert view.stdout.readline().startswith("robot loaded: bioloid (18 joints)")
    finally:
        view.terminate()
        assert view.wait(60) == 0
