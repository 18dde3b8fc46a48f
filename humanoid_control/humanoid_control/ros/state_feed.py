"""The robot's per-state topics for the nodes of one process, from one ``robot_state`` subscription.

A driver publishes each state once as ``robot_state`` (:mod:`humanoid_control.ros.robot_state`).
The nodes a container hosts ask for ``joint_states``, ``imu/data``, the feet and the ground
truth as if they subscribed to those topics; the feed subscribes to ``robot_state`` once and
hands each part to the callbacks of the topic it stands for, in the driver's order (sensors
first, ``joint_states`` last), in this process: one wake-up per state for every node of the
process instead of one per topic and node. A node gets the very message object the others
get: nodes do not modify the messages they receive. A node may also take the whole
``robot_state`` message (the recorder), and a node on simulated time may take its time from
the states' stamps (:meth:`StateFeed.drive_clock`) instead of from ``/clock``: the
simulator's time advances by its states, so the node's clock reads the latest state's
stamp, as it read the latest ``/clock`` (one message less per state to every process that
hosts such nodes).

An IMU need not be the driver's: a robot without one in its driver (the Bioloid on its bus)
may carry an IMU whose own node publishes ``imu/data``. The feed takes ``imu/data`` from
that topic too until a state carries an IMU reading, then from the states only (so a
hosted node hears an outside IMU as a node in a process of its own would, and a driver's
IMU once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.clock import ROSClock
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.time import Time
from sensor_msgs.msg import Imu

from humanoid_control.ros import robot_state
from humanoid_control.ros.matched_publisher import STREAM_HISTORY
from humanoid_control.ros.robot_state import RobotState

__all__ = ["StateFeed"]

#: Every state reaches the feed (a lockstep simulation waits for answers to each), a
#: second of them queued at the usual 100 Hz.
FEED_QOS = QoSProfile(depth=STREAM_HISTORY, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


class StateFeed:
    """``robot_state`` taken once on ``node``, its parts handed to the callbacks of their topics."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._callbacks: dict[str, list[tuple[str, Callable[[Any], None]]]] = {}
        self._clocks: list[ROSClock] = []
        self._subscription = None
        self._outside_imu = None  # imu/data from its own topic, until the states carry it

    def subscribe(self, topic: str, callback: Callable[[Any], None], subscriber: str) -> None:
        """Call ``callback`` with each part of ``robot_state`` that stands for ``topic`` (a
        relative name :func:`~humanoid_control.ros.robot_state.carries`); ``subscriber`` names
        the node (a callback that raises is reported with it)."""
        if topic != robot_state.TOPIC and (not robot_state.carries(topic) or topic.startswith("/")):
            raise ValueError(f"robot_state does not carry {topic!r} (only relative names of the per-state topics)")
        self._callbacks.setdefault(topic, []).append((subscriber, callback))
        self._subscribe()
        if topic == robot_state.IMU and self._outside_imu is None:
            # best effort matches a sensor driver's publisher of either reliability
            self._outside_imu = self._node.create_subscription(Imu, robot_state.IMU, self._on_outside_imu,
                                                               qos_profile_sensor_data)

    def drive_clock(self, clock: ROSClock) -> None:
        """Set ``clock`` (a node's, on ROS time) to each state's stamp before its parts go out."""
        self._clocks.append(clock)
        self._subscribe()

    def _subscribe(self) -> None:
        if self._subscription is None:
            self._subscription = self._node.create_subscription(RobotState, robot_state.TOPIC, self._on_state,
                                                                FEED_QOS)

    def _on_outside_imu(self, msg: Imu) -> None:
        if self._outside_imu is None:  # a message already taken when the states began to carry the IMU
            return
        for subscriber, callback in self._callbacks.get(robot_state.IMU, ()):
            self._deliver(subscriber, robot_state.IMU, callback, msg)

    def _on_state(self, msg: RobotState) -> None:
        if msg.imu and self._outside_imu is not None:
            self._node.destroy_subscription(self._outside_imu)
            self._outside_imu = None
        if self._clocks:
            now = Time.from_msg(msg.header.stamp)
            for clock in self._clocks:
                clock.set_ros_time_override(now)
        for subscriber, callback in self._callbacks.get(robot_state.TOPIC, ()):
            self._deliver(subscriber, robot_state.TOPIC, callback, msg)
        for topic, part in robot_state.parts(msg):
            for subscriber, callback in self._callbacks.get(topic, ()):
                self._deliver(subscriber, topic, callback, part)

    def _deliver(self, subscriber: str, topic: str, callback: Callable[[Any], None], message: Any) -> None:
        try:
            callback(message)
        except Exception:
            self._node.get_logger().fatal(f"{subscriber}: its {topic} callback raised (the process ends; its "
                                          "graph restarts it with every node it hosts)")
            raise
