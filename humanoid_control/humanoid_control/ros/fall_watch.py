"""The controllers' view of falls: the robot's fall estimate (``fall_state``, the balance
monitor) and the fall manager's state (``fall_manager_state``).

Every controller of the stack (walk, gait, play_motion) stops on a fall: it ends its goal
with its action's ``FELL`` code and the reason, and sends nothing more. A fall is the
estimate going from upright to fallen, or the fall manager seeing one coming (its state
leaving ``CONTROLLABLE`` for ``FALLING`` or ``FALLEN``), whichever comes first: the manager
sees a fall coming before the robot lies; the estimate saying fallen while the manager gets
the robot up is not a fall (the manager judges its attempt). While the manager gets the robot up
(``GETTING_UP``) the walk, gait and motion goals of other clients are refused
(``GETTING_UP``, with the attempt in the message); the manager's own get-up motion (its
``play_motion`` goal id is in the state) is played.

:class:`FallWatch` subscribes to both topics (transient local: the latest arrives even when
it came before the controller started) and calls the controller back at each fall. Without
a balance monitor or a fall manager there is no estimate: nothing is stopped (the node logs
so once, when a goal starts).
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
from humanoid_interfaces.msg import FallManagerState, FallState

__all__ = ["DOWN", "FALL_STATE_QOS", "FallWatch", "describe_fall", "describe_manager"]

#: fall_state and fall_manager_state (publishers and subscribers): the latest for a
#: subscriber that comes later (a controller started after the fall), every change delivered.
FALL_STATE_QOS = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                            reliability=ReliabilityPolicy.RELIABLE)

#: The manager's states in which the robot is down or going down.
DOWN = (FallManagerState.FALLING, FallManagerState.FALLEN)


def describe_fall(msg: FallState) -> str:
    """``the robot fell (on_back, trunk tilt 88 deg, from imu) at t = 12.340 s``."""
    tilt = f", trunk tilt {math.degrees(msg.tilt):.0f} deg" if math.isfinite(msg.tilt) else ""
    return f"the robot fell ({msg.posture}{tilt}, from {msg.source}) at t = {seconds(msg.header.stamp):.3f} s"


def describe_manager(msg: FallManagerState) -> str:
    """``the fall manager: falling at t = 12.340 s (a fall is seen coming: trunk tilt ...)``."""
    return f"the fall manager: {msg.state_name} at t = {seconds(msg.header.stamp):.3f} s ({msg.cause})"


class FallWatch:
    """The latest ``fall_state`` and ``fall_manager_state``, and a callback at each fall
    (``on_fall(reason)``)."""

    def __init__(self, node: Node, on_fall: Callable[[str], None] | None = None,
                 callback_group: CallbackGroup | None = None) -> None:
        self._on_fall = on_fall
        self._lock = threading.Lock()
        self._latest: FallState | None = None
        self._manager: FallManagerState | None = None
        #: Falls seen (upright, or no estimate yet, to fallen; the manager leaving
        #: CONTROLLABLE for FALLING or FALLEN).
        self.count = 0
        #: Why the latest fall counted.
        self.reason: str | None = None
        self._warned = False
        self._log = node.get_logger()
        node.create_subscription(FallState, topics.FALL_STATE, self._on_state, FALL_STATE_QOS,
                                 callback_group=callback_group)
        node.create_subscription(FallManagerState, topics.FALL_MANAGER_STATE, self._on_manager, FALL_STATE_QOS,
                                 callback_group=callback_group)

    def _on_state(self, msg: FallState) -> None:
        with self._lock:
            was_fallen = self._latest is not None and self._latest.fallen
            self._latest = msg
            # while the manager gets the robot up, the trunk passing the estimate's tilt is the
            # get-up's own (a dynamic rise rocks it): the manager judges the attempt
            getting_up = self._manager is not None and self._manager.state == FallManagerState.GETTING_UP
            fell = msg.fallen and not was_fallen and not getting_up
            if fell:
                self.count += 1
                self.reason = describe_fall(msg)
        if fell and self._on_fall is not None:
            self._on_fall(describe_fall(msg))

    def _on_manager(self, msg: FallManagerState) -> None:
        with self._lock:
            previous = self._manager
            self._manager = msg
            was_down = previous is not None and previous.state in (*DOWN, FallManagerState.GETTING_UP)
            fell = msg.state in DOWN and not was_down
            if fell:
                self.count += 1
                self.reason = describe_manager(msg)
        if fell and self._on_fall is not None:
            self._on_fall(describe_manager(msg))

    @property
    def fall(self) -> str | None:
        """Why the robot is down or going down (the manager, else the estimate), or None."""
        manager, latest = self._manager, self._latest
        if manager is not None and manager.state in DOWN:
            return describe_manager(manager)
        if latest is not None and latest.fallen:
            return describe_fall(latest)
        return None

    @property
    def manager(self) -> FallManagerState | None:
        """The fall manager's latest state (None: no manager heard of)."""
        return self._manager

    def fallen_text(self) -> str | None:
        """Why nothing may start (the robot lies or is falling), or None; says once that falls
        go unseen when no estimate ever came (no balance monitor, no fall manager)."""
        if self._latest is None and self._manager is None:
            if not self._warned:
                self._warned = True
                self._log.warning("no fall_state from a balance monitor nor fall_manager_state from a fall manager: "
                                  "a fall would not stop this controller")
            return None
        return self.fall

    def falling_text(self) -> str | None:
        """Why nothing may start because a fall is coming (the manager's FALLING), or None."""
        manager = self._manager
        if manager is not None and manager.state == FallManagerState.FALLING:
            return describe_manager(manager)
        return None

    def getting_up_text(self, goal_id: bytes | None = None) -> str | None:
        """Why a goal is refused while the fall manager gets the robot up (None: it is not, or
        ``goal_id`` is the manager's own get-up motion)."""
        manager = self._manager
        if manager is None or manager.state != FallManagerState.GETTING_UP:
            return None
        if goal_id is not None and bytes(manager.getup_goal_id) == bytes(goal_id):
            return None
        return (f"the fall manager is getting the robot up (attempt {manager.attempt} of {manager.max_attempts}, "
                f"{manager.getup_motion}, lying on the {manager.side}) since t = {seconds(manager.since):.3f} s: "
                "goals of other clients are refused until it is up")
