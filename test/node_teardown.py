"""Destroying an rclpy node a test made in this process, all of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rclpy.node import Node


#: s the callbacks still running in a node's offloads are given to end.
STOP_TIMEOUT = 10.0


def destroy_whole(node: Node) -> None:
    """``node.destroy_node()``, its waitables first: rclpy's ``destroy_node`` leaves a node's
    action servers, and with them the node, alive; a robot interface's
    ``follow_joint_trajectory`` stayed served in the worker's domain beside the next module's
    robot (a hardware test's client once saw seven servers, none ready). Its offloads' worker
    threads end first, as a container ends them."""
    from humanoid_control.ros import stop_offloads

    stop_offloads(node, STOP_TIMEOUT)
    for waitable in list(node.waitables):
        waitable.destroy()
    node.destroy_node()
