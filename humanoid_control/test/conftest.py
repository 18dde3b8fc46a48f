"""Fixtures of the ROS layer's in-process tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node


@pytest.fixture
def private_node() -> Iterator[tuple[Node, Callable[[], None]]]:
    """A node in an rclpy context of its own and the call that starts spinning it in a thread
    of its own (made after the node's servers and clients: rclpy does not promise that
    entities added under a spinning executor are seen); all shut down at the end."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("in_process_test", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    try:
        yield node, spinner.start
    finally:
        executor.shutdown()
        if spinner.is_alive():
            spinner.join(timeout=30.0)
        rclpy.shutdown(context=context)
