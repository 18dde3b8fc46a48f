"""A node's log as its ``/rosout`` messages: the lines a test waits for, read without loss.

pytest's ``capfd`` reads the captured file and then empties it; a line another thread writes
between the two is lost (an in-process robot interface's "joint_commands refused while the fall
manager: falling" went missing in about one run of twelve beside four CPU hogs: the callback
had run, the line was never read). Every rclpy node also publishes its log lines on
``/rosout`` (``rcl_interfaces/Log``) from the logging call itself; a subscription keeps them all.
"""

from __future__ import annotations

import itertools

from rcl_interfaces.msg import Log
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

#: As rcl publishes /rosout: reliable, and kept for subscriptions made after a line was logged.
ROSOUT_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class RosoutLog:
    """The lines logged by ``logger`` (a node's logger name, e.g. ``node.get_logger().name``) as
    ``listener``'s executor takes them from ``/rosout``. Give the logged node a name no node of
    the process had before: rcl finds a node's /rosout publisher by its logger name, and with one
    name for every test's node 4 of 42 runs of test_lockstep_went_away.py missed lines (with a
    name per node, none of 100, 40 of them beside four CPU hogs)."""

    def __init__(self, listener: Node, logger: str) -> None:
        self._logger = logger
        self._lines: list[str] = []
        listener.create_subscription(Log, "/rosout", self._on_line, ROSOUT_QOS)

    def _on_line(self, msg: Log) -> None:
        if msg.name == self._logger:
            self._lines.append(msg.msg)

    def find(self, text: str) -> str | None:
        """The first line holding ``text`` taken so far, or None (lines come asynchronously:
        wait for one with ``poll_until``; for a line's absence, :meth:`taken_up_to_now` first)."""
        return next((line for line in list(self._lines) if text in line), None)

    def taken_up_to_now(self, node: Node, timeout: float) -> None:
        """Wait until every line logged before this call is taken: a marker logged now through
        ``node`` (the node whose logger this log follows) comes after them on ``/rosout``."""
        from humanoid_control.ros import poll_until

        marker = f"rosout_log marker {next(_MARKERS)}"
        node.get_logger().info(marker)
        poll_until(lambda: self.find(marker), f"{self._logger}'s log line '{marker}' on /rosout", timeout)


_MARKERS = itertools.count()
