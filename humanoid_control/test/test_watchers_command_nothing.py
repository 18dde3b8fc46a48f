"""A node a container hosts as a watcher (``WATCHER = True``) sends the robot nothing.

The container answers a lockstep simulation without waiting for its watchers, and hands
them each state after the other nodes (docs/graph_cost.md): a command a watcher sent would
reach the robot a cycle later in some runs than in others. So each registered watcher is
built here, in process, as the container builds it, and must hold no publisher on a command
topic, no service client and no action client (what it publishes is its own outputs,
diagnostics, markers and frames)."""

from __future__ import annotations

import pytest
import rclpy
from rclpy.action import ActionClient
from rclpy.parameter import Parameter

from humanoid_control.nodes import hostable
from humanoid_control.ros import Shared, topics

#: What reaches the robot or a node that commands it, as a topic.
COMMAND_TOPICS = {topics.JOINT_TRAJECTORY, topics.JOINT_COMMANDS, topics.CMD_VEL}


@pytest.fixture
def ros():
    rclpy.init()
    try:
        yield
    finally:
        rclpy.try_shutdown()


@pytest.mark.parametrize("robot", ["hoap2", "bioloid_quadruped"])
def test_every_watcher_sends_the_robot_nothing(ros, robot, tmp_path):
    container = rclpy.create_node("control_container")
    host = Shared(container)
    watchers = {name: entry.load() for name, entry in hostable().items() if getattr(entry.load(), "WATCHER", False)}
    assert watchers, "no node is registered as a watcher"
    for name, cls in watchers.items():
        node = rclpy.create_node(name, parameter_overrides=[Parameter("robot", value=robot),
                                                            Parameter("output", value=str(tmp_path / name))])
        host.watch_only(name)
        cls(node, host)
        published = {publisher.topic_name.lstrip("/") for publisher in node.publishers}
        assert not published & COMMAND_TOPICS, f"{name} publishes {sorted(published & COMMAND_TOPICS)}"
        assert not list(node.clients), f"{name} calls {[client.srv_name for client in node.clients]}"
        assert not [w for w in node.waitables if isinstance(w, ActionClient)], f"{name} holds an action client"
