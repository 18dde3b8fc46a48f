"""A publisher that knows whether any subscription listens, without asking per message.

A driver node publishes several topics from its control thread at the control or publish
rate (``/clock``, the IMU, foot wrenches and contacts, ground truth). A message for a
topic no subscription is matched to reaches nobody: the topics are volatile, so no later
subscriber receives it either. Skipping such messages is exact, but asking the
middleware each time (``get_subscription_count``) costs about 5 us per call in a control
thread whose caches the physics has just flushed, several times per cycle. Here the
middleware's *matched* events keep a flag instead: the executor runs the event callback
when a subscription connects or disconnects, and the control thread reads a bool.

The flag follows discovery like the middleware's own matching does: a subscription gets
the messages published after it was matched, as from a plain publisher; only its first
message may come one event dispatch later (the executor's turn, milliseconds).
"""

from __future__ import annotations

from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.event_handler import PublisherEventCallbacks, QoSPublisherMatchedInfo
from rclpy.node import Node
from rclpy.qos import QoSProfile

from humanoid_control.ros.namespaces import UNKNOWN_NODE

#: History (samples) each per-cycle stream keeps for its reliable subscriptions. A
#: subscriber starved of CPU misses samples at the transport, and the middleware can resend
#: only what the publisher still holds: with ROS's usual 10, the balance monitor lost 0.76 s
#: of ground truth (50 Hz, the simulator faster than real time) under two CPU hogs; with 100,
#: a client watching a lockstep simulation run at several times real time lost a state in 4 of
#: 16 runs beside four (docs/ros_and_dds.md). 500 samples are 5 s at the usual 100 Hz.
STREAM_HISTORY = 500


class MatchedPublisher:
    """``publisher`` plus :attr:`subscribed`, kept by the middleware's matched events."""

    def __init__(self, node: Node, msg_type: Any, topic: str, qos: QoSProfile | int,
                 callback_group: CallbackGroup | None = None) -> None:
        self.publisher = node.create_publisher(
            msg_type, topic, qos, callback_group=callback_group,
            event_callbacks=PublisherEventCallbacks(matched=self._on_matched))
        #: True while at least one subscription is matched (read from any thread).
        self.subscribed = self.publisher.get_subscription_count() > 0

    def _on_matched(self, info: QoSPublisherMatchedInfo) -> None:
        self.subscribed = info.current_count > 0

    @property
    def heard(self) -> bool:
        """Whether a message published now reaches a subscription: the flag, or, when it says
        none, the middleware itself (about 5 us: a subscription matched whose event the executor
        has not dispatched yet gets its message, as from a plain publisher). For a message
        built per state that some subscriber expects from the moment it is matched."""
        return self.subscribed or self.publisher.get_subscription_count() > 0

    def publish(self, msg: Any) -> None:
        self.publisher.publish(msg)


def heard_by_all(node: Node, publisher: Any) -> bool:
    """True when ``publisher`` (an rclpy publisher of ``node``) is matched with every
    subscription the graph shows on its topic, and there is at least one. A message published
    before a subscription has matched its publisher never reaches that subscription, and
    neither side hears of it (volatile topics): a command sent the moment the robot came up
    could be lost so, with no error anywhere."""
    subscriptions = node.count_subscribers(publisher.topic_name)
    return subscriptions > 0 and publisher.get_subscription_count() >= subscriptions


def robot_unheard(node: Node, publisher: Any, interface_topic: str) -> str | None:
    """Why a command ``publisher`` (of ``node``) sends now could reach no robot, or None when
    it reaches it: a robot interface in the node's namespace (a node publishing
    ``interface_topic``, a topic only the interface publishes) must subscribe to the command's
    topic, and the publisher be matched with every subscription the graph shows there
    (:func:`heard_by_all`). A controller started with the robot hears the robot's readings
    before its own publisher has necessarily matched the robot's subscription: what it sent
    then would be lost. One interface listening is enough: the graph may still list one that
    died without a word (until its lease ends)."""
    topic = publisher.topic_name
    robots = {(i.node_namespace, i.node_name)
              for i in node.get_publishers_info_by_topic(node.resolve_topic_name(interface_topic))
              if i.node_name != UNKNOWN_NODE}
    if not robots:
        return "no robot interface found yet"
    listening = {(i.node_namespace, i.node_name) for i in node.get_subscriptions_info_by_topic(topic)}
    if not robots & listening:
        names = ", ".join(sorted(f"{namespace.rstrip('/')}/{name}" for namespace, name in robots))
        return f"the robot interface ({names}) does not subscribe to {topic} yet"
    if not heard_by_all(node, publisher):
        return f"{node.get_name()}'s publisher on {topic} is not yet matched with every subscription"
    return None
