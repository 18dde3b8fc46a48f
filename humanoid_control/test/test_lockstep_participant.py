"""A lockstep client held at a state acts only once every other participant has answered
that state (over real DDS): a command it sends then reaches the others after their work for
that state, so it takes effect at the same state in every run."""

import threading
import time

import pytest
from builtin_interfaces.msg import Time

from humanoid_control.ros import LOCKSTEP_QOS, LOCKSTEP_TOPIC, LockstepParticipant, SharedParticipant, poll_until
from humanoid_interfaces.msg import LockstepReady

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0


@pytest.fixture
def lockstep(spinning_nodes):
    """A lockstep client under test, a publisher of the other participants' answers, and the
    answers as the client's node receives them (both subscriptions matched)."""
    client_node, other_node = spinning_nodes("lockstep_client_under_test", "lockstep_other")
    client = LockstepParticipant(client_node, start_held=True)
    answers = other_node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
    seen = answers_seen(client_node)
    poll_until(lambda: answers.get_subscription_count() >= 2, "the client to subscribe to the answers", PATIENCE)
    return client, answers, seen


def answers_seen(client_node) -> list[LockstepReady]:
    """Every answer published, as the client's node receives them."""
    seen: list[LockstepReady] = []
    client_node.create_subscription(LockstepReady, LOCKSTEP_TOPIC, seen.append, LOCKSTEP_QOS)
    return seen


def count(seen: list[LockstepReady], participant: str) -> int:
    return sum(msg.participant == participant for msg in seen)


def pausing(client: LockstepParticipant, at: float,
            timeout: float) -> tuple[threading.Thread, threading.Event, list[TimeoutError]]:
    """``client.paused_at(at)`` in a thread: its block sets the event; a TimeoutError is kept."""
    acted = threading.Event()
    errors: list[TimeoutError] = []

    def act() -> None:
        try:
            with client.paused_at(at, timeout):
                acted.set()
        except TimeoutError as error:
            errors.append(error)

    actor = threading.Thread(target=act)
    actor.start()
    return actor, acted, errors


def stamp(t: float) -> Time:
    return Time(sec=int(t), nanosec=round((t - int(t)) * 1e9))


def test_paused_at_waits_for_every_other_participant_to_answer_the_state(lockstep):
    client, answers, seen = lockstep

    answers.publish(LockstepReady(participant="walk_controller", stamp=stamp(0.49)))
    answers.publish(LockstepReady(participant="trajectory_generator", stamp=stamp(0.49)))
    poll_until(lambda: len(seen) == 2, "the others' answers of t = 0.49 s", PATIENCE)
    client.answered(stamp(0.49))  # held from the start: withheld until paused_at lets the simulation go

    actor, acted, _ = pausing(client, 0.5, PATIENCE)
    poll_until(lambda: count(seen, client.name) == 1, "the client to let the simulation go on from t = 0.49 s",
               PATIENCE)
    client.answered(stamp(0.5))  # the simulation is at t = 0.5 s; the client holds it there
    answers.publish(LockstepReady(participant="walk_controller", stamp=stamp(0.5)))
    poll_until(lambda: count(seen, "walk_controller") == 2, "the walk controller's answer of t = 0.5 s", PATIENCE)
    assert not acted.wait(0.5), "the client acted while the trajectory generator was still at work on t = 0.5 s"
    answers.publish(LockstepReady(participant="trajectory_generator", stamp=stamp(0.5)))
    assert acted.wait(PATIENCE), "the client did not act once every participant had answered t = 0.5 s"
    actor.join(PATIENCE)


def test_a_participant_that_left_is_not_waited_for_and_one_that_does_not_answer_is_named(lockstep):
    client, answers, seen = lockstep
    answers.publish(LockstepReady(participant="gone", stamp=stamp(0.1)))
    answers.publish(LockstepReady(participant="gone", leaving=True))
    answers.publish(LockstepReady(participant="stuck", stamp=stamp(0.1)))
    poll_until(lambda: len(seen) == 3, "three answers", PATIENCE)

    actor, _, errors = pausing(client, 0.2, 3.0)
    client.answered(stamp(0.1))  # not yet the state to act at: answered as usual
    poll_until(lambda: count(seen, client.name) == 1, "the client's answer of t = 0.1 s", PATIENCE)
    client.answered(stamp(0.2))
    actor.join(PATIENCE)
    assert [str(e) for e in errors] == ["held at t = 0.2 s, stuck did not answer that state"]


def test_a_client_that_left_says_so_answers_no_more_and_stops_following_the_others(lockstep):
    client, answers, seen = lockstep
    client.answered(stamp(0.1))  # held from the start: withheld
    client.leave()
    poll_until(lambda: any(msg.participant == client.name and msg.leaving for msg in seen),
               "the client's leaving message", PATIENCE)
    poll_until(lambda: answers.get_subscription_count() == 1,
               "the client to stop subscribing to the others' answers", PATIENCE)
    client.answered(stamp(0.2))
    client.release()  # a hold ending after the leave sends nothing either
    with pytest.raises(RuntimeError, match="has left the lockstep"):
        client.run_to(0.3, PATIENCE)
    with pytest.raises(RuntimeError, match="has left the lockstep"), client.paused_at(0.3, PATIENCE):
        pass
    client.leave()  # once only
    assert not waits_for(lambda: count(seen, client.name) > 1, 1.0), \
        f"the client sent after leaving: {[m for m in seen if m.participant == client.name]}"


def test_a_container_answers_once_per_state_and_again_when_the_state_is_sent_again(spinning_nodes):
    """The container's nodes answer through one participant: once each state is answered by
    all of them, and again when the simulator sends that state again (it does while it waits:
    an answer sent before its subscription was matched is lost, and the simulation would stay
    paused for good)."""
    container_node, watcher = spinning_nodes("lockstep_container_under_test", "lockstep_watcher")
    shared = SharedParticipant(container_node, "control_container")
    monitor, checker = shared.member("balance_monitor"), shared.member("self_collision_checker")
    seen = answers_seen(watcher)
    poll_until(lambda: shared._participant._publisher.get_subscription_count() >= 1,
               "the watcher to subscribe to the answers", PATIENCE)

    def answers() -> list[float]:
        return [msg.stamp.sec + msg.stamp.nanosec * 1e-9 for msg in seen if msg.participant == "control_container"]

    monitor.answered(stamp(0.01))
    checker.answered(stamp(0.01))
    poll_until(lambda: answers() == [0.01], "the container's answer of t = 0.01 s", PATIENCE)
    monitor.answered(stamp(0.01))  # the state sent again: every node handles it again, and
    checker.answered(stamp(0.01))  # each one's answer again is passed on (one node's would do)
    poll_until(lambda: len(answers()) >= 3, "the container's answers of t = 0.01 s sent again", PATIENCE)
    assert answers() == [0.01] * 3
    again = len(answers())
    monitor.answered(stamp(0.02))  # one node ahead: the state is not answered yet, nor the old one again
    checker.answered(stamp(0.02))
    poll_until(lambda: answers()[-1] == 0.02, "the container's answer of t = 0.02 s", PATIENCE)
    assert len(answers()) == again + 1, answers()


def test_a_container_answers_once_its_commanding_nodes_have_not_waiting_for_its_watchers(spinning_nodes):
    """A watcher (a node that sends the robot nothing: a monitor, the recorder) is not waited
    for while a node that commands the robot is: the container's thread hands it the state
    before the next one anyway. A container of watchers only waits for all of them."""
    container_node, listener = spinning_nodes("lockstep_container_under_test", "lockstep_listener")
    shared = SharedParticipant(container_node, "control_container")
    walk, monitor = shared.member("walk_controller"), shared.member("balance_monitor", watcher=True)
    only_watchers = SharedParticipant(container_node, "watchers_container")
    energy, recorder = only_watchers.member("energy_monitor", True), only_watchers.member("recorder", True)
    seen = answers_seen(listener)
    poll_until(lambda: shared._participant._publisher.get_subscription_count() >= 1
               and only_watchers._participant._publisher.get_subscription_count() >= 1,
               "the listener to subscribe to the answers", PATIENCE)

    def answers(participant: str) -> list[float]:
        return [msg.stamp.sec + msg.stamp.nanosec * 1e-9 for msg in seen if msg.participant == participant]

    walk.answered(stamp(0.01))
    poll_until(lambda: answers("control_container") == [0.01], "the answer of t = 0.01 s without the watcher's",
               PATIENCE)
    monitor.answered(stamp(0.01))  # the watcher's own answer comes later and sends nothing more
    walk.answered(stamp(0.02))
    poll_until(lambda: answers("control_container")[-1:] == [0.02], "the answer of t = 0.02 s", PATIENCE)
    assert answers("control_container") == [0.01, 0.02]

    energy.answered(stamp(0.01))  # one of two watchers: not answered yet
    recorder.answered(stamp(0.01))
    energy.answered(stamp(0.02))
    recorder.answered(stamp(0.02))
    poll_until(lambda: answers("watchers_container")[-1:] == [0.02], "the watchers' answer of t = 0.02 s", PATIENCE)
    assert answers("watchers_container") == [0.01, 0.02]


def waits_for(condition, seconds: float) -> bool:
    """Whether ``condition`` holds within ``seconds`` (for what must not happen)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())
