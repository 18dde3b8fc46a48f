"""Fixtures of humanoid_control's tests."""

import threading

import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor


@pytest.fixture
def spinning_nodes():
    """``make(*names)``: rclpy nodes in this process, spun by one multi-threaded executor in a
    thread, for tests of small ROS pieces over real DDS; destroyed after the test."""
    rclpy.init()
    executor = MultiThreadedExecutor()
    made = []

    def make(*names: str) -> list:
        nodes = [rclpy.create_node(name) for name in names]
        for node in nodes:
            executor.add_node(node)
        made.extend(nodes)
        return nodes

    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield make
    finally:
        executor.shutdown()
        for node in made:
            node.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=10.0)
