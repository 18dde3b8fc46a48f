"""A node stops on SIGTERM while messages come faster than it takes them.

rclpy's EventsExecutor ends a turn at its timeout only once its queue is empty; a node that
looked at its stop request between turns only never looked again while three processes
published to it flat out (a node alone in its process and the control container alike: not
stopped 30 s after the signal). The stop request now ends the turn.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.system

FLOOD = """
import sys, time
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from humanoid_interfaces.msg import RobotState
rclpy.init()
node = Node("flood_publisher", namespace=sys.argv[1])
kind = {"joint_states": JointState, "robot_state": RobotState}[sys.argv[2]]
publisher = node.create_publisher(kind, sys.argv[2], 10)
while publisher.get_subscription_count() == 0:
    time.sleep(0.05)
k = 0
while True:  # as fast as this process can: faster than a Python node takes them
    msg = kind()
    joints = msg if kind is JointState else msg.joint_states
    joints.name, joints.position = ["a"], [float(k)]
    publisher.publish(msg)
    k += 1
    if k == 20_000:
        print("flooding", flush=True)
"""

#: The node under flood: its command line (in the test's namespace) and the topic flooded.
NODES = {
    "a node alone in its process": (["-m", "humanoid_control.nodes.balance_monitor", "--ros-args",
                                     "-p", "robot:=bioloid"], "joint_states"),
    "the control container": (["-m", "humanoid_control.nodes.container", "--ros-args",
                               "-p", "nodes:=balance_monitor", "-p", "balance_monitor.robot:=bioloid"], "robot_state"),
}


@pytest.mark.parametrize("which", list(NODES))
def test_a_flooded_node_stops_on_sigterm(which, tmp_path):
    arguments, topic = NODES[which]
    namespace = "stop_under_flood"
    with open(tmp_path / "node.log", "w") as log:
        node = subprocess.Popen([sys.executable, *arguments, "-r", f"__ns:=/{namespace}"], stdout=log,
                                stderr=subprocess.STDOUT)
    floods = [subprocess.Popen([sys.executable, "-c", FLOOD, namespace, topic], stdout=subprocess.PIPE, text=True)
              for _ in range(3)]
    try:
        for flood in floods:  # each matched the node and sent 20 000 messages: its queue is full
            assert flood.stdout.readline().strip() == "flooding", (tmp_path / "node.log").read_text()[-2000:]
        assert node.poll() is None, (tmp_path / "node.log").read_text()[-2000:]
        node.send_signal(signal.SIGTERM)
        try:  # 0.7 s measured; before the fix not within 30 s
            code = node.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{which} still ran 10 s after SIGTERM under the flood")
        assert all(flood.poll() is None for flood in floods), "the flood ended first: the test proved nothing"
        assert code == 0, (tmp_path / "node.log").read_text()[-2000:]
    finally:
        for process in (*floods, node):
            process.kill()
            process.wait(10.0)
