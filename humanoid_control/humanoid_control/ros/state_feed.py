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

Each node keeps the depth of queue it asked for, as a subscription of its own would. When
the process falls behind the robot (a machine short of CPU), states wait in the feed's
history; the feed takes every waiting state at once and gives each node the newest ones, up
to its depth: the walk controller (depth 1) the newest only, the recorder all of them. Taking
them one callback at a time would give every node every state, and the executor, which runs
its events in the order they came, would run everything else (a goal, a fall manager's
state, a service) behind all the states that came before it: a process short of CPU for a
minute delayed a walk goal's start by 43 s while the walk it had accepted went on without it
(docs/graph_cost.md). Once the process is stopping, the feed takes no state ahead: rclpy's
EventsExecutor calls a subscription's callback once for each state the middleware announced
in one event (up to the history) before it looks at a stop, so a callback that took the
waiting states itself found more each time while states came faster than it handed them out
(the container, flooded beside three busy processes, still ran 30 s after its SIGTERM).

The nodes that command the robot take each state before those that only watch it
(``watcher``: the balance and energy monitors, the odometry, the self-collision checker, the
recorder): a controller's command, and in lockstep the container's answer, go out before
the watchers' work on that state, which then overlaps the robot's next cycle. Each node still
gets its parts in the driver's order, and every node gets a state before any node gets the
next.

An IMU need not be the driver's: a robot without one in its driver (the Bioloid on its bus)
may carry an IMU whose own node publishes ``imu/data``. The feed takes ``imu/data`` from
that topic too until a state carries an IMU reading, then from the states only (so a
hosted node hears an outside IMU as a node in a process of its own would, and a driver's
IMU once).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rclpy.clock import ROSClock
from rclpy.exceptions import InvalidHandle
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


def queue_depth(qos: QoSProfile | int) -> float:
    """The number of messages a subscription of ``qos`` keeps (infinite: keep all)."""
    if not isinstance(qos, QoSProfile):
        return int(qos)
    return math.inf if qos.history == HistoryPolicy.KEEP_ALL else qos.depth


@dataclass(frozen=True)
class _Taker:
    """A node's callback for one topic, and how many of the waiting states it takes."""

    subscriber: str
    callback: Callable[[Any], None]
    depth: float
    watcher: bool


class StateFeed:
    """``robot_state`` taken once on ``node``, its parts handed to the callbacks of their topics."""

    def __init__(self, node: Node, history: int = STREAM_HISTORY, stopping: Callable[[], bool] = lambda: False) -> None:
        """``history``: how many states wait at most (the oldest are dropped beyond);
        ``stopping``: whether the process is stopping (then the feed takes no state ahead)."""
        self._node = node
        self._stopping = stopping
        self._qos = FEED_QOS if history == STREAM_HISTORY else QoSProfile(
            depth=history, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        self._callbacks: dict[str, list[_Taker]] = {}
        self._deepest: float = 0  # the largest depth asked for: older waiting states go to no one
        self._clocks: list[ROSClock] = []
        self._subscription = None
        self._outside_imu = None  # imu/data from its own topic, until the states carry it
        self._latest: RobotState | None = None  # the newest state handed out

    def subscribe(self, topic: str, callback: Callable[[Any], None], subscriber: str,
                  qos: QoSProfile | int = STREAM_HISTORY, watcher: bool = False) -> None:
        """Call ``callback`` with each part of ``robot_state`` that stands for ``topic`` (a
        relative name :func:`~humanoid_control.ros.robot_state.carries`), of the newest states
        up to ``qos``'s depth when several wait; ``subscriber`` names the node (a callback that
        raises is reported with it); a ``watcher`` takes each state after the other nodes."""
        if topic != robot_state.TOPIC and (not robot_state.carries(topic) or topic.startswith("/")):
            raise ValueError(f"robot_state does not carry {topic!r} (only relative names of the per-state topics)")
        depth = queue_depth(qos)
        self._callbacks.setdefault(topic, []).append(_Taker(subscriber, callback, depth, watcher))
        self._deepest = max(self._deepest, depth)
        self._subscribe()
        if topic == robot_state.IMU and self._outside_imu is None:
            # best effort matches a sensor driver's publisher of either reliability
            self._outside_imu = self._node.create_subscription(Imu, robot_state.IMU, self._on_outside_imu,
                                                               qos_profile_sensor_data)

    @property
    def carried(self) -> frozenset[str]:
        """The per-state topics (relative names) the newest state handed out carried: what the
        robot measures (a part it lacks is absent); empty before the first."""
        latest = self._latest
        return frozenset() if latest is None else frozenset(topic for topic, _ in robot_state.parts(latest))

    def drive_clock(self, clock: ROSClock) -> None:
        """Set ``clock`` (a node's, on ROS time) to each state's stamp before its parts go out."""
        self._clocks.append(clock)
        self._subscribe()

    def _subscribe(self) -> None:
        if self._subscription is None:
            self._subscription = self._node.create_subscription(RobotState, robot_state.TOPIC, self._on_state,
                                                                self._qos)

    def _on_outside_imu(self, msg: Imu) -> None:
        if self._outside_imu is None:  # a message already taken when the states began to carry the IMU
            return
        for taker in self._callbacks.get(robot_state.IMU, ()):
            self._deliver(taker, robot_state.IMU, msg)

    def _on_state(self, msg: RobotState) -> None:
        states = [msg] if self._stopping() else [msg, *self._waiting()]
        for age, state in zip(range(len(states) - 1, -1, -1), states, strict=True):
            self._hand_out(state, age)

    def _waiting(self) -> list[RobotState]:
        """The states waiting behind the one being handled, oldest first (taken as rclpy's own
        ``wait_for_message`` takes a message: the executor's events for them then find none)."""
        subscription, taken = self._subscription, []
        try:
            with subscription.handle:
                while len(taken) < self._qos.depth:
                    info = subscription.handle.take_message(subscription.msg_type, subscription.raw)
                    if info is None:
                        break
                    taken.append(info[0])
        except InvalidHandle:  # the node is being destroyed (a client closing): nothing more to take
            pass
        return taken

    def _hand_out(self, msg: RobotState, age: int) -> None:
        """One state to the callbacks that take it: those whose depth reaches back ``age``
        states from the newest waiting one."""
        self._latest = msg
        if msg.imu and self._outside_imu is not None:
            self._node.destroy_subscription(self._outside_imu)
            self._outside_imu = None
        if self._clocks:
            now = Time.from_msg(msg.header.stamp)
            for clock in self._clocks:
                clock.set_ros_time_override(now)
        if age >= self._deepest:
            return
        parts = [(robot_state.TOPIC, msg), *robot_state.parts(msg)]
        for watching in (False, True):  # the nodes that command the robot first
            for topic, part in parts:
                for taker in self._callbacks.get(topic, ()):
                    if taker.watcher is watching and age < taker.depth:
                        self._deliver(taker, topic, part)

    def _deliver(self, taker: _Taker, topic: str, message: Any) -> None:
        try:
            taker.callback(message)
        except Exception:
            self._node.get_logger().fatal(f"{taker.subscriber}: its {topic} callback raised (the process ends; its "
                                          "graph restarts it with every node it hosts)")
            raise
