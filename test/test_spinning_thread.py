"""The test harness's spinning thread lets a test destroy a subscription of a node it spins.

Destroyed while a turn of the executor builds its wait set from the node's entities, rclpy
raised InvalidHandle in the spinning thread, which died, and the test then waited in vain
for messages (clean-clone run 335). Held between two turns, the next turn no longer sees
the destroyed subscription."""

from __future__ import annotations

import threading
import time

from std_msgs.msg import Int32

from humanoid_control.ros import poll_until

PATIENCE = 30.0
#: Without the hold, the spinning thread died in five runs of six.
ROUNDS = 60
#: Subscriptions kept on the listener: a longer wait set to build at each turn.
KEPT = 30


def test_subscriptions_destroyed_between_turns_leave_the_spinning_thread_alive(spinning_nodes):
    raised: list[threading.ExceptHookArgs] = []
    previous_hook, threading.excepthook = threading.excepthook, raised.append
    try:
        talker, listener = spinning_nodes("spinning_thread_talker", "spinning_thread_listener")
        publisher = talker.create_publisher(Int32, "spinning_thread_test", 10)
        heard: list[int] = []
        talk = talker.create_timer(0.0005, lambda: publisher.publish(Int32(data=1)))
        kept = [listener.create_subscription(Int32, "spinning_thread_test", lambda _msg: None, 10)
                for _ in range(KEPT)]
        for k in range(ROUNDS):  # a subscription made and destroyed while messages flow
            subscription = listener.create_subscription(Int32, "spinning_thread_test", heard.append, 10)
            time.sleep(0.0005 * (k % 7))  # not a wait: the destruction falls at varied points of a turn
            with spinning_nodes.between_turns():
                listener.destroy_subscription(subscription)
        assert not raised, [f"{args.thread.name}: {args.exc_type.__name__}: {args.exc_value}" for args in raised]
        # the thread still spins: a last subscription hears the talker
        heard.clear()
        listener.create_subscription(Int32, "spinning_thread_test", heard.append, 10)
        poll_until(lambda: heard, "a message after the destroyed subscriptions", PATIENCE)
        with spinning_nodes.between_turns():
            talker.destroy_timer(talk)
            for subscription in kept:
                listener.destroy_subscription(subscription)
    finally:
        threading.excepthook = previous_hook
