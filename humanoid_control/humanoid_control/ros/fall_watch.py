"""The controllers' view of the robot's fall estimate (``fall_state``, the balance monitor).

Every controller of the stack (walk, gait, play_motion) stops on a fall: it ends its goal
with its action's ``FELL`` code and the estimate's description, and sends nothing more.
:class:`FallWatch` subscribes to ``fall_state`` (transient local: the latest estimate
arrives even when the fall came before the controller started) and calls the controller
back at each fall. Without a balance monitor there is no estimate: nothing is stopped
(the node logs so once, when a goal starts).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from humanoid_control.ros import topics
from humanoid_control.ros.ros_time import seconds
from humanoid_interfaces.msg import FallState

__all__ = ["FALL_STATE_QOS", "FallWatch", "describe_fall"]

#: fall_state (publisher and subscribers): the latest estimate for a subscriber that comes
#: later (a controller started after the fall), every change delivered.
FALL_STATE_QOS = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                            reliability=ReliabilityPolicy.RELIABLE)


def describe_fall(msg: FallState) -> str:
    """``the robot fell (on_back, trunk tilt 88 deg, from imu) at t = 12.340 s``."""
    tilt = f", trunk tilt {math.degrees(msg.tilt):.0f} deg" if math.isfinite(msg.tilt) else ""
    return f"the robot fell ({msg.posture}{tilt}, from {msg.source}) at t = {seconds(msg.header.stamp):.3f} s"


class FallWatch:
    """The latest ``fall_state`` and a callback at each fall (upright to fallen)."""

    def __init__(self, node: Node, on_fall: Callable[[FallState], None] | None = None,
                 callback_group: CallbackGroup | None = None) -> None:
        self._on_fall = on_fall
        self._lock = threading.Lock()
        self._latest: FallState | None = None
        #: Falls seen (upright, or no estimate yet, to fallen).
        self.count = 0
        self._warned = False
        self._log = node.get_logger()
        node.create_subscription(FallState, topics.FALL_STATE, self._on_state, FALL_STATE_QOS,
                                 callback_group=callback_group)

    def _on_state(self, msg: FallState) -> None:
        with self._lock:
            was_fallen = self._latest is not None and self._latest.fallen
            self._latest = msg
            if msg.fallen and not was_fallen:
                self.count += 1
        if msg.fallen and not was_fallen and self._on_fall is not None:
            self._on_fall(msg)

    @property
    def fall(self) -> FallState | None:
        """The latest estimate if it says fallen, else None."""
        latest = self._latest
        return latest if latest is not None and latest.fallen else None

    def fallen_text(self) -> str | None:
        """Why nothing may start (the robot lies), or None; says once that falls go unseen
        when no estimate ever came (no balance monitor)."""
        latest = self._latest
        if latest is None:
            if not self._warned:
                self._warned = True
                self._log.warning("no fall_state from a balance monitor: a fall would not stop this controller")
            return None
        return describe_fall(latest) if latest.fallen else None
