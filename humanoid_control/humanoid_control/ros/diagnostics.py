"""The ``diagnostics`` messages of the stack's loops and nodes, built in one place: one
``DiagnosticStatus`` per entry, its values as key/value pairs, the robot as hardware id."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from humanoid_control.ros.ros_time import clock_seconds, to_time
from humanoid_core.loop import Level, StatusEntry

__all__ = ["diagnostic_array", "node_status"]


def diagnostic_array(entries: list[StatusEntry], stamp: float, hardware_id: str) -> DiagnosticArray:
    """A DiagnosticArray of status entries, stamped ``stamp`` (ROS time, s)."""
    msg = DiagnosticArray()
    msg.header.stamp = to_time(stamp)
    for entry in entries:
        diagnostic = DiagnosticStatus(level=bytes([int(entry.level)]), name=entry.name, message=entry.message,
                                      hardware_id=hardware_id)
        diagnostic.values = [KeyValue(key=k, value=v) for k, v in entry.values.items()]
        msg.status.append(diagnostic)
    return msg


def node_status(node: Node, what: str, level: Level, message: str, hardware_id: str,
                values: dict[str, str]) -> DiagnosticArray:
    """A node's one status, named ``<node name>: <what>`` (as ``rqt_robot_monitor`` groups
    them), stamped now on the node's clock."""
    return diagnostic_array([StatusEntry(f"{node.get_name()}: {what}", level, message, values)],
                            clock_seconds(node), hardware_id)
