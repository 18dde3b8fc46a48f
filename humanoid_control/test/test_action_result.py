"""ResultWaiter: an action result whose answer was lost is asked again once the goal's status
says it ended. The goal handle here is a stand-in with rclpy's Futures (losing a real service
response on demand is not possible); the waiter itself is the real one. And
wait_until_answering against a real in-process action server, and against none."""

from __future__ import annotations

from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer
from rclpy.task import Future

from humanoid_control.ros import ActionClient, ResultWaiter, wait_until_answering
from humanoid_interfaces.action import PlayMotion


class GoalHandle:
    """What the waiter uses of rclpy's ClientGoalHandle: ``status`` and ``get_result_async``;
    each request's future is kept so that the test decides which answers arrive."""

    def __init__(self) -> None:
        self.status = GoalStatus.STATUS_EXECUTING
        self.requests: list[Future] = []

    def get_result_async(self) -> Future:
        self.requests.append(Future())
        return self.requests[-1]


def test_the_answer_to_the_first_request_is_the_result():
    goal = GoalHandle()
    waiter = ResultWaiter(goal, ask_again_after=0.05)
    assert not waiter.wait(0.1) and len(goal.requests) == 1  # still executing: nothing asked again
    goal.requests[0].set_result("done")
    assert waiter.wait(1.0) and waiter.response == "done" and waiter.requests == 1


def test_a_lost_answer_is_asked_again_once_the_goal_has_ended():
    goal = GoalHandle()
    waiter = ResultWaiter(goal, ask_again_after=0.05)
    goal.status = GoalStatus.STATUS_SUCCEEDED  # the first request's answer never comes
    assert not waiter.wait(0.3)
    assert len(goal.requests) >= 2
    goal.requests[-1].set_result("done")
    assert waiter.wait(1.0) and waiter.response == "done"


def test_a_goal_that_never_ends_times_out_without_asking_again():
    goal = GoalHandle()
    waiter = ResultWaiter(goal, ask_again_after=0.01)
    assert not waiter.wait(0.2) and waiter.response is None and len(goal.requests) == 1


def test_a_server_answers_the_unknown_goal_question_and_no_server_does_not(spinning_nodes):
    node, = spinning_nodes("action_result_test")
    ActionServer(node, PlayMotion, "answering", lambda goal: PlayMotion.Result())
    answering = ActionClient(node, PlayMotion, "answering")
    silent = ActionClient(node, PlayMotion, "nobody_serves_this")
    assert answering.wait_for_server(timeout_sec=30.0)
    assert wait_until_answering(answering, timeout=30.0)
    assert not wait_until_answering(silent, timeout=0.5, attempt=0.2)
