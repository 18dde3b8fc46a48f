"""A lockstep client held at a state acts only once every other participant has answered
that state (over real DDS): a command it sends then reaches the others after their work for
that state, so it takes effect at the same state in every run."""

import threading
import time

import pytest
import rclpy
from builtin_interfaces.msg import Time
from rclpy.executors import MultiThreadedExecutor

from humanoid_control.ros.lockstep import LOCKSTEP_QOS, LOCKSTEP_TOPIC, LockstepParticipant
from humanoid_interfaces.msg import LockstepReady

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
    client = rclpy.create_node("lockstep_client_under_test")
    other = rclpy.create_node("lockstep_other")
    executor = MultiThreadedExecutor()
    executor.add_node(client)
    executor.add_node(other)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield client, other
    finally:
        executor.shutdown()
        client.destroy_node()
        other.destroy_node()
        rclpy.try_shutdown()
        spinner.join(timeout=10.0)


def answers_seen(client_node) -> list[LockstepReady]:
    """Every answer published, as the client's node receives them."""
    seen: list[LockstepReady] = []
    client_node.create_subscription(LockstepReady, LOCKSTEP_TOPIC, seen.append, LOCKSTEP_QOS)
    return seen


def count(seen: list[LockstepReady], participant: str) -> int:
    return sum(msg.participant == participant for msg in seen)


def pausing(client: LockstepParticipant, at: float, timeout: float) -> tuple[threading.Thread, threading.Event]:
    """``client.paused_at(at)`` in a thread, its block setting the event returned."""
    acted = threading.Event()

    def act() -> None:
        with client.paused_at(at, timeout):
            acted.set()

    actor = threading.Thread(target=act)
    actor.start()
    return actor, acted


def stamp(t: float) -> Time:
    return Time(sec=int(t), nanosec=round((t - int(t)) * 1e9))


def test_paused_at_waits_for_every_other_participant_to_answer_the_state(nodes):
    client_node, other_node = nodes
    client = LockstepParticipant(client_node, start_held=True)
    answers = other_node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
    seen = answers_seen(client_node)
    wait_until(lambda: answers.get_subscription_count() >= 2, "the client to subscribe to the answers")

    answers.publish(LockstepReady(participant="walk_controller", stamp=stamp(0.49)))
    answers.publish(LockstepReady(participant="trajectory_generator", stamp=stamp(0.49)))
    wait_until(lambda: len(seen) == 2, "the others' answers of t = 0.49 s")
    client.answered(stamp(0.49))  # held from the start: withheld until paused_at lets the simulation go

    actor, acted = pausing(client, 0.5, PATIENCE)
    wait_until(lambda: count(seen, client.name) == 1, "the client to let the simulation go on from t = 0.49 s")
    client.answered(stamp(0.5))  # the simulation is at t = 0.5 s; the client holds it there
    answers.publish(LockstepReady(participant="walk_controller", stamp=stamp(0.5)))
    wait_until(lambda: count(seen, "walk_controller") == 2, "the walk controller's answer of t = 0.5 s")
    assert not acted.wait(0.5), "the client acted while the trajectory generator was still at work on t = 0.5 s"
    answers.publish(LockstepReady(participant="trajectory_generator", stamp=stamp(0.5)))
    assert acted.wait(PATIENCE), "the client did not act once every participant had answered t = 0.5 s"
    actor.join(PATIENCE)


def test_a_participant_that_left_is_not_waited_for_and_one_that_does_not_answer_is_named(nodes):
    client_node, other_node = nodes
    client = LockstepParticipant(client_node, start_held=True)
    answers = other_node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
    seen = answers_seen(client_node)
    wait_until(lambda: answers.get_subscription_count() >= 2, "the client to subscribe to the answers")
    answers.publish(LockstepReady(participant="gone", stamp=stamp(0.1)))
    answers.publish(LockstepReady(participant="gone", leaving=True))
    answers.publish(LockstepReady(participant="stuck", stamp=stamp(0.1)))
    wait_until(lambda: len(seen) == 3, "three answers")

    errors: list[BaseException] = []

    def act() -> None:
        try:
            with client.paused_at(0.2, 3.0):
                pass
        except TimeoutError as error:
            errors.append(error)

    actor = threading.Thread(target=act)
    actor.start()
    client.answered(stamp(0.1))  # not yet the state to act at: answered as usual
    wait_until(lambda: count(seen, client.name) == 1, "the client's answer of t = 0.1 s")
    client.answered(stamp(0.2))
    actor.join(PATIENCE)
    assert [str(e) for e in errors] == ["held at t = 0.2 s, stuck did not answer that state"]
