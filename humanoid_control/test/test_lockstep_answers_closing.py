"""The simulator's lockstep answers while its node closes: a writer of answers going away as
the node shuts down (every node of a graph stopped at once) must not make the matched-event
callback raise. Under rclpy's EventsExecutor an exception out of an event callback ends the
process with a segfault (the simulation node died on SIGINT: 2 of 9 recording runs, and a
clean-clone suite run); here the callbacks are called as the executor would, after the
context has shut down, and must return quietly."""

from __future__ import annotations

from types import SimpleNamespace

import rclpy
from rclpy.context import Context

from humanoid_control.ros import LockstepAnswers


def test_a_writer_gone_while_the_node_closes_is_taken_quietly():
    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("closing_front", context=context)
    relayed: list[tuple[str, bool]] = []
    answers = LockstepAnswers(node, lambda name, _stamp, leaving: relayed.append((name, leaving)))
    rclpy.shutdown(context=context)  # rcl now refuses the graph calls (InvalidHandle)
    # what rmw's matched status says when the last writer went (its fields, as rclpy hands them)
    gone = SimpleNamespace(total_count=1, total_count_change=0, current_count=0, current_count_change=-1)
    answers._on_matched(gone)
    answers._on_recheck()
    assert relayed == []
    node.destroy_node()
