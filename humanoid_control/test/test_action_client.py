"""The goal response of humanoid_control.ros.ActionClient is never lost: the race of rclpy
9.1.2's send_goal_async (a response taken between its two registrations of the goal's
future completes the one it does not return) is forced here, by a feedback-callback table
that, as the goal's callback is registered, waits for the spinning thread to have taken and
handled every pending goal response. rclpy's own ActionClient loses the response under it
(its future is registered before the callback and replaced after); this one registers all
before the request goes out."""

from __future__ import annotations

import threading

import pytest
from rclpy.action import ActionServer

from humanoid_control.ros import ASK_AGAIN_AFTER, ASK_AGAIN_TIMES, ActionClient
from humanoid_interfaces.action import PlayMotion


class ResponsesFirst(dict):
    """A feedback-callback table whose registration lets the spinning thread handle every
    goal response already requested first (waiting up to ``timeout`` s)."""

    def __init__(self, client: ActionClient, timeout: float = 5.0) -> None:
        super().__init__()
        self._client, self._timeout = client, timeout

    def __setitem__(self, key, value) -> None:
        deadline = threading.Event()
        for _ in range(int(self._timeout / 0.01)):
            if not self._client._pending_goal_requests:
                break
            deadline.wait(0.01)
        super().__setitem__(key, value)


@pytest.fixture
def served(spinning_nodes):
    node, = spinning_nodes("action_client_test")

    def execute(goal):
        goal.succeed()
        return PlayMotion.Result()

    ActionServer(node, PlayMotion, "play", execute)
    client = ActionClient(node, PlayMotion, "play")
    assert client.wait_for_server(timeout_sec=30.0)
    return client


def accepted(client: ActionClient, timeout: float = 10.0) -> bool:
    done = threading.Event()
    future = client.send_goal_async(PlayMotion.Goal(), feedback_callback=lambda _msg: None)
    future.add_done_callback(lambda _f: done.set())
    return done.wait(timeout) and future.result().accepted


def test_a_goal_response_handled_before_send_goal_async_returns_completes_its_future(served):
    served._feedback_callbacks = ResponsesFirst(served)
    assert accepted(served)
    assert accepted(served)  # and the next one: nothing left pending
    assert not served._pending_goal_requests


def test_goals_sent_one_after_another_are_each_answered(served):
    assert all(accepted(served) for _ in range(20))


def test_a_client_has_its_lock_before_a_spinning_executor_can_see_it(spinning_nodes):
    """rclpy 9.1.2 makes a new client one of its node's waitables before it creates the lock
    the executor takes to count the client's entities: an executor spinning the node in
    another thread could meet the client without it, raise and stop spinning. Checked at the
    moment the node is handed the client."""
    node, = spinning_nodes("action_client_lock_test")
    locked_when_added = []
    add_waitable = node.add_waitable

    def watched(waitable) -> None:
        locked_when_added.append(hasattr(waitable, "_lock"))
        add_waitable(waitable)

    node.add_waitable = watched
    ActionClient(node, PlayMotion, "play")
    assert locked_when_added == [True]


def test_a_goal_sent_before_the_server_could_hear_it_is_sent_again_and_played_once(spinning_nodes):
    """A goal request reaches no server that has not matched the client yet, and neither side
    hears of it: the caller waited for ever (CI: a gait goal, 180 s). Sent before any server
    exists, the goal is sent again under its ID and answered once a server is there; it runs
    once."""
    client_node, server_node = spinning_nodes("early_goal_sender", "late_action_server")
    client = ActionClient(client_node, PlayMotion, "late_play")
    done = threading.Event()
    answer = client.send_goal_async(PlayMotion.Goal(motion_name="once"))
    answer.add_done_callback(lambda _f: done.set())
    played: list[str] = []
    ran = threading.Event()

    def execute(goal):
        played.append(goal.request.motion_name)
        ran.set()
        goal.succeed()
        return PlayMotion.Result()

    ActionServer(server_node, PlayMotion, "late_play", execute)
    assert done.wait(ASK_AGAIN_AFTER * (ASK_AGAIN_TIMES + 1)), "no answer to a goal sent before the server was up"
    assert answer.result().accepted
    assert ran.wait(30.0) and played == ["once"]
