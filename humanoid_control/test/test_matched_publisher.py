"""MatchedPublisher over real DDS: its ``subscribed`` flag follows subscriptions coming and
going (the middleware's matched events, run by the executor), and what it publishes while
subscribed arrives."""

import threading
import time

import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor
from std_msgs.msg import Int32

from humanoid_control.ros.matched_publisher import MatchedPublisher

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def nodes():
    rclpy.init()
    publishing = rclpy.create_node("matched_publisher_under_test")
    listening = rclpy.create_node("matched_publisher_listener")
    executor = MultiThreadedExecutor()
    executor.add_node(publishing)
    executor.add_node(listening)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield publishing, listening
    finally:
        executor.shutdown()
        publishing.destroy_node()
        listening.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=10.0)


def test_the_flag_follows_subscriptions_and_messages_arrive_while_subscribed(nodes):
    publishing, listening = nodes
    publisher = MatchedPublisher(publishing, Int32, "matched_publisher_test", 10)
    assert not publisher.subscribed

    received: list[int] = []
    subscription = listening.create_subscription(Int32, "matched_publisher_test",
                                                 lambda msg: received.append(msg.data), 10)
    wait_until(lambda: publisher.subscribed, "the subscription to be matched")
    for value in range(5):
        publisher.publish(Int32(data=value))
    wait_until(lambda: len(received) == 5, "five messages")
    assert received == [0, 1, 2, 3, 4]

    listening.destroy_subscription(subscription)
    wait_until(lambda: not publisher.subscribed, "the subscription to be gone")
