"""A node destroyed whole leaves nothing to the garbage collector: its action servers and
clients go with it (rclpy's ``destroy_node`` leaves them, and they hold the node)."""

from __future__ import annotations

import rclpy
from node_teardown import end_left_behind
from rclpy.action import ActionServer

from humanoid_control.ros import ActionClient, RobotClient, destroy_whole, node_alive
from humanoid_interfaces.action import PlayMotion


def _node_with_actions(name: str):
    node = rclpy.create_node(name)
    ActionServer(node, PlayMotion, f"{name}_server", lambda goal: PlayMotion.Result())
    ActionClient(node, PlayMotion, f"{name}_client")
    return node


def test_destroy_node_alone_leaves_the_actions_and_destroy_whole_does_not():
    rclpy.init()
    try:
        halfway = _node_with_actions("destroyed_halfway")
        halfway.destroy_node()
        assert len(list(halfway.waitables)) == 2
        assert end_left_behind() == ["/destroyed_halfway"]  # found, and ended now
        assert not list(halfway.waitables)

        whole = _node_with_actions("destroyed_whole")
        destroy_whole(whole)
        assert not list(whole.waitables) and not node_alive(whole)
        assert end_left_behind() == []
    finally:
        rclpy.try_shutdown()


def test_a_closed_robot_client_leaves_no_action_client_behind():
    client = RobotClient("closed_whole_client", standard_topics=True)
    client.action_client(PlayMotion, "play_motion")
    client.close()
    assert not list(client.node.waitables)
    assert end_left_behind() == []
