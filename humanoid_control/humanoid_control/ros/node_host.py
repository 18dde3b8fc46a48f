"""Where a node of the stack runs: a process of its own, or a container shared with others.

The stack's nodes (trajectory generator, balance monitor, energy monitor, self-collision
checker, walk and gait controllers) are written once against a host: they ask it for the
robot's per-state topics (``joint_states``, the IMU, the feet, the ground truth) and for
their lockstep participant, and create everything else on their node as usual.

- :class:`OwnProcess`: a node alone in its process (``ros2 run``, a launch file's node):
  one subscription per topic, its own participant.
- :class:`Shared`: the nodes of a container (:mod:`humanoid_control.nodes.container`): the
  per-state topics come out of one ``robot_state`` subscription
  (:mod:`humanoid_control.ros.state_feed`), and one participant answers a lockstep
  simulation for all of them once each has handled the state
  (:class:`~humanoid_control.ros.lockstep.SharedParticipant`). A node named a watcher
  (:meth:`Shared.watch_only`: it sends the robot nothing) takes each state after the others,
  and the answer does not wait for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile

from humanoid_control.ros import robot_state
from humanoid_control.ros.lockstep import (
    LockstepMember,
    LockstepParticipant,
    SharedParticipant,
    lockstep_requested,
    participant_of,
)
from humanoid_control.ros.state_feed import StateFeed

__all__ = ["NodeHost", "OwnProcess", "Shared"]


class NodeHost(Protocol):
    """What a node asks of the process it runs in."""

    def subscribe_state(self, node: Node, msg_type: type, topic: str, callback: Callable[[Any], None],
                        qos: QoSProfile | int, callback_group: CallbackGroup | None = None) -> None:
        """Take ``topic``, one of the robot's per-state topics (:mod:`humanoid_control.ros.robot_state`)."""

    def lockstep(self, node: Node) -> LockstepParticipant | LockstepMember | None:
        """The node's lockstep participant when its ``lockstep`` parameter is true, else None."""


class OwnProcess:
    """A node alone in its process: a subscription per topic, a participant of its own."""

    def subscribe_state(self, node: Node, msg_type: type, topic: str, callback: Callable[[Any], None],
                        qos: QoSProfile | int, callback_group: CallbackGroup | None = None) -> None:
        node.create_subscription(msg_type, topic, callback, qos, callback_group=callback_group)

    def lockstep(self, node: Node) -> LockstepParticipant | None:
        return participant_of(node)


class Shared:
    """The nodes of one container: one ``robot_state`` subscription and one lockstep answer,
    both on the container's own node."""

    def __init__(self, node: Node, stopping: Callable[[], bool] = lambda: False) -> None:
        """``stopping``: whether the process is stopping (:class:`StateFeed`)."""
        self.node = node
        self.feed = StateFeed(node, stopping=stopping)
        self.participant: SharedParticipant | None = None
        self._watchers: set[str] = set()

    def watch_only(self, name: str) -> None:
        """Hosted node ``name`` (before it is built) only watches the robot: it takes each
        state after the nodes that command the robot, and a lockstep simulation goes on
        once those have answered. Nothing of it is lost: the container hands every node a
        state before the next (:mod:`humanoid_control.ros.state_feed`), and the next comes
        only after this answer."""
        self._watchers.add(name)

    @property
    def watchers(self) -> frozenset[str]:
        """The hosted nodes named watchers so far."""
        return frozenset(self._watchers)

    def subscribe_state(self, node: Node, msg_type: type, topic: str, callback: Callable[[Any], None],
                        qos: QoSProfile | int, callback_group: CallbackGroup | None = None) -> None:
        if topic == robot_state.TOPIC or (robot_state.carries(topic) and not topic.startswith("/")):
            self.feed.subscribe(topic, callback, node.get_name(), qos, watcher=node.get_name() in self._watchers)
        else:
            node.create_subscription(msg_type, topic, callback, qos, callback_group=callback_group)

    def adopt_clock(self, node: Node) -> None:
        """A node on simulated time (``use_sim_time``) takes its time from the states' stamps
        (:meth:`StateFeed.drive_clock`) instead of ``/clock``. rclpy gives a node's time
        source no public way to drop its ``/clock`` subscription: its own time source is
        detached from the node (which removes that subscription only)."""
        if not node.get_parameter("use_sim_time").value:
            return
        node._time_source.detach_node()  # private: see the docstring
        self.feed.drive_clock(node.get_clock())

    def lockstep(self, node: Node) -> LockstepMember | None:
        if not lockstep_requested(node):
            return None
        if self.participant is None:
            self.participant = SharedParticipant(self.node)
            self.node.get_logger().info("lockstep participant: answers each state on lockstep/ready once every "
                                        "hosted node that commands the robot has handled it")
        return self.participant.member(node.get_name(), watcher=node.get_name() in self._watchers)
