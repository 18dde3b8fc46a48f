"""`humanoid walk`'s ZMP share counts the balance monitor's readings of the walk's span by
their stamps, however late they reach the client.

It used to count what had come between the goal and the result: a client behind the robot
(a loaded machine) counted a part of the walk that shrank with the load (242 readings beside
four CPU hogs, 555-592 quiet, of a walk whose span holds about 390). Here the readings of the
walk's end come after the result: they count; those stamped outside the span do not, and a
state read twice counts once."""

from __future__ import annotations

import threading

import pytest
import rclpy

from humanoid_control.ros import RobotClient, poll_until, to_time
from humanoid_experiments import WalkWitness
from humanoid_interfaces.msg import BalanceState

NAMESPACE = "walk_witness_test"
#: s of robot time: the walk's span.
BEGIN, END = 1.0, 2.0


def reading(stamp: float, margin: float, valid: bool = True) -> BalanceState:
    msg = BalanceState()
    msg.header.stamp = to_time(stamp)
    msg.zmp_measured_valid, msg.zmp_margin = valid, margin
    return msg


@pytest.fixture
def witness_and_monitor():
    with RobotClient("walk_witness_client", namespace=NAMESPACE, standard_topics=True) as client:
        witness = WalkWitness(client, "bioloid")
        monitor = rclpy.create_node("balance_monitor", namespace=NAMESPACE)
        try:
            publisher = monitor.create_publisher(BalanceState, "balance_state", 100)
            poll_until(lambda: publisher.get_subscription_count() > 0, "the witness's subscription matched", 30.0)
            yield witness, publisher
        finally:
            monitor.destroy_node()


def test_readings_of_the_walk_that_come_after_its_result_are_counted_and_no_others(witness_and_monitor):
    witness, publisher = witness_and_monitor
    publisher.publish(reading(0.5, 0.01))
    poll_until(lambda: witness.balance_states == 1, "the reading before the walk", 30.0)
    witness.start(BEGIN)
    early = [reading(1.0, 0.01), reading(1.25, -0.01), reading(1.5, 0.02, valid=False)]
    late = [reading(1.75, 0.01), reading(2.0, 0.01), reading(2.25, -0.02)]
    for msg in early:
        publisher.publish(msg)
    poll_until(lambda: witness.balance_states == 4, "the walk's first readings", 30.0)

    stopped: list[bool] = []
    stopping = threading.Thread(target=lambda: stopped.append(witness.stop(END, late=30.0)))
    stopping.start()
    for msg in late:  # the walk's end, reaching the client after its result
        publisher.publish(msg)
    stopping.join()
    assert stopped == [True]
    # 1.0 and 1.25 s, 1.75 and 2.0 s: 1.5 s has no measured ZMP, 0.5 and 2.25 s are outside
    assert (witness.samples, witness.inside) == (4, 3)
    assert witness.ratio == pytest.approx(0.75)


def test_a_state_read_twice_counts_once_and_one_after_the_walk_not_at_all(witness_and_monitor):
    witness, publisher = witness_and_monitor
    witness.start(BEGIN)
    # a state read twice (sent again while the simulation waited), then a client that caught up
    # past the walk's end
    for msg in (reading(1.5, 0.01), reading(1.5, 0.01), reading(2.5, -0.01)):
        publisher.publish(msg)
    poll_until(lambda: witness.balance_states == 3, "readings of the walk and one after it", 30.0)
    assert witness.stop(END, late=30.0) is True
    assert (witness.samples, witness.inside) == (1, 1)


def test_a_stop_whose_readings_never_come_says_so_after_waiting(witness_and_monitor):
    witness, publisher = witness_and_monitor
    witness.start(BEGIN)
    publisher.publish(reading(1.5, 0.01))
    poll_until(lambda: witness.balance_states == 1, "a reading of the walk", 30.0)
    assert witness.stop(END, late=0.2) is False
    assert witness.samples == 1


def test_without_a_balance_monitor_the_stop_does_not_wait(witness_and_monitor):
    witness, _ = witness_and_monitor
    witness.start(BEGIN)
    assert witness.stop(END, late=600.0) is True
    assert witness.samples == 0
