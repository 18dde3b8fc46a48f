"""What ``humanoid view`` does with a slider's command (its ROS side, in process over real DDS):
with no robot listening it sends nothing and says why, which the page shows; once a robot
listens the command reaches it."""

from __future__ import annotations

import threading

import pytest
from sensor_msgs.msg import JointState

from humanoid_control.ros import RobotClientError, poll_until
from humanoid_tools.view import MATCH_WAIT, LiveSource


def test_a_command_no_robot_hears_is_not_sent_and_says_why(spinning_nodes):
    (node,) = spinning_nodes("view_without_robot")
    source = LiveSource(node, on_description=lambda _xml: None)
    with pytest.raises(RobotClientError, match=r"not sent, the robot does not hear the view yet.*robot running"):
        source.command("head_joint1", 0.5)


def test_a_command_reaches_the_robot_once_it_listens(spinning_nodes):
    view_node, robot = spinning_nodes("view_with_robot", "robot_standin")
    heard: list[JointState] = []
    arrived = threading.Event()
    robot.create_subscription(JointState, "joint_commands", lambda msg: (heard.append(msg), arrived.set()), 10)
    source = LiveSource(view_node, on_description=lambda _xml: None)
    source.command("head_joint1", 0.5)
    poll_until(arrived.is_set, "the command at the subscriber", 10 * MATCH_WAIT)
    assert (list(heard[0].name), list(heard[0].position)) == (["head_joint1"], [0.5])
