"""A node a container hosts as a watcher (``WATCHER = True``) sends the robot nothing.

The container answers a lockstep simulation without waiting for its watchers, and hands
them each state after the other nodes (docs/graph_cost.md): a command a watcher sent would
reach the robot a cycle later in some runs than in others. So each registered watcher is
built here, in process, by the container's own ``build_node``, and must hold no publisher on
a command topic, no service client and no action client (what it publishes is its own
outputs, diagnostics, markers and frames)."""

from __future__ import annotations

import pytest
import rclpy
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from humanoid_control.nodes import build_node, destroy_hosted, hostable, stop_hosted
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
    classes = {name: entry.load() for name, entry in hostable().items()}
    watchers = [name for name, cls in classes.items() if getattr(cls, "WATCHER", False)]
    assert watchers, "no node is registered as a watcher"
    overrides = [Parameter(f"{name}.{key}", value=value) for name in watchers
                 for key, value in (("robot", robot), ("output", str(tmp_path / name)))]
    container = rclpy.create_node("control_container", parameter_overrides=overrides,
                                  automatically_declare_parameters_from_overrides=True)
    host = Shared(container)
    hosted = []
    try:
        for name in watchers:
            hosted.append(build_node(container, host, name, classes[name]))
            node = hosted[-1][0]
            published = {publisher.topic_name.lstrip("/") for publisher in node.publishers}
            assert not published & COMMAND_TOPICS, f"{name} publishes {sorted(published & COMMAND_TOPICS)}"
            assert not list(node.clients), f"{name} calls {[client.srv_name for client in node.clients]}"
            assert not [w for w in node.waitables if isinstance(w, ActionClient)], f"{name} holds an action client"
        assert host.watchers == set(watchers)  # the container took each for a watcher
    finally:  # ended as the container ends them: a recorder left open kept its writer thread running
        executor = SingleThreadedExecutor()
        for node, _behaviour in hosted:
            executor.add_node(node)
        stop_hosted(hosted, executor)
        executor.shutdown()
        destroy_hosted(hosted)
        container.destroy_node()
