"""MatchedPublisher over real DDS: its ``subscribed`` flag follows subscriptions coming and
going (the middleware's matched events, run by the executor), and what it publishes while
subscribed arrives."""

import pytest
from std_msgs.msg import Int32

from humanoid_control.ros import MatchedPublisher, poll_until

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0


@pytest.fixture
def nodes(spinning_nodes):
    return spinning_nodes("matched_publisher_under_test", "matched_publisher_listener")


def test_the_flag_follows_subscriptions_and_messages_arrive_while_subscribed(nodes):
    publishing, listening = nodes
    publisher = MatchedPublisher(publishing, Int32, "matched_publisher_test", 10)
    assert not publisher.subscribed

    received: list[int] = []
    subscription = listening.create_subscription(Int32, "matched_publisher_test",
                                                 lambda msg: received.append(msg.data), 10)
    poll_until(lambda: publisher.subscribed, "the subscription to be matched", PATIENCE)
    for value in range(5):
        publisher.publish(Int32(data=value))
    poll_until(lambda: len(received) == 5, "five messages", PATIENCE)
    assert received == [0, 1, 2, 3, 4]

    listening.destroy_subscription(subscription)
    poll_until(lambda: not publisher.subscribed, "the subscription to be gone", PATIENCE)
