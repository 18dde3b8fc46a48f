"""MatchedPublisher over real DDS: its ``subscribed`` flag follows subscriptions coming and
going (the middleware's matched events, run by the executor), and what it publishes while
subscribed arrives."""

import pytest
from std_msgs.msg import Int32

from humanoid_control.ros import MatchedPublisher, heard_by_all, poll_until

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0


@pytest.fixture
def nodes(spinning_nodes):
    return spinning_nodes("matched_publisher_under_test", "matched_publisher_listener")


def test_the_flag_follows_subscriptions_and_messages_arrive_while_subscribed(nodes, spinning_nodes):
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

    with spinning_nodes.between_turns():
        listening.destroy_subscription(subscription)
    poll_until(lambda: not publisher.subscribed, "the subscription to be gone", PATIENCE)


def test_heard_by_all_waits_for_every_subscription_the_graph_shows(nodes, spinning_nodes):
    publishing, listening = nodes
    publisher = publishing.create_publisher(Int32, "heard_by_all_test", 10)
    assert not heard_by_all(publishing, publisher)  # nobody subscribes: nothing would be heard

    received: list[int] = []
    listening.create_subscription(Int32, "heard_by_all_test", lambda msg: received.append(msg.data), 10)
    poll_until(lambda: heard_by_all(publishing, publisher), "the subscription matched", PATIENCE)
    publisher.publish(Int32(data=1))
    poll_until(lambda: received == [1], "the message", PATIENCE)

    # a second subscription seen in the graph but not yet matched with the publisher is not heard
    (late,) = spinning_nodes("heard_by_all_late")
    heard_late: list[int] = []
    late.create_subscription(Int32, "heard_by_all_test", lambda msg: heard_late.append(msg.data), 10)
    poll_until(lambda: heard_by_all(publishing, publisher), "both subscriptions matched", PATIENCE)
    assert publisher.get_subscription_count() == 2
    publisher.publish(Int32(data=2))
    poll_until(lambda: heard_late == [2] and received == [1, 2], "the message to both", PATIENCE)
