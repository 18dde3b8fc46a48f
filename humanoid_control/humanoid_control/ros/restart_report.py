"""A restarted node says so on ``/diagnostics``: its launcher (``humanoid sim``/``real``,
:meth:`~humanoid_core.processes.node_graph.Graph.serve`) restarts an observer or a
controller that died, while the driver holds the robot, and hands the new process the
reason (how the previous one ended) in the environment; the node then reports it as a
WARN entry for :data:`REPORT_SECONDS`, so that a monitoring tool sees the death, not only
the launcher's log."""

from __future__ import annotations

import os
import time

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.node import Node

from humanoid_control.ros import topics
from humanoid_control.ros.diagnostics import node_status
from humanoid_core.loop import Level
from humanoid_core.processes import RESTART_VARIABLE

#: s (wall): how long the restart is reported, once a second.
REPORT_SECONDS = 30.0


def report_restart(node: Node) -> None:
    """When this process is a restart, report it on diagnostics (a timer of ``node``'s)."""
    reason = os.environ.get(RESTART_VARIABLE)
    if not reason:
        return
    node.get_logger().warning(f"restarted: {reason}")
    publisher = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
    until = time.monotonic() + REPORT_SECONDS
    def publish() -> None:
        if time.monotonic() > until:
            timer.cancel()
            return
        publisher.publish(node_status(node, "process", Level.WARN, f"restarted: {reason}", node.get_name(),
                                      {"pid": str(os.getpid())}))

    # on the steady clock: a node on simulated time would report nothing while the simulation
    # is paused or held, its timers waiting for robot time that does not pass
    timer = node.create_timer(1.0, publish, clock=Clock(clock_type=ClockType.STEADY_TIME))
    publish()
