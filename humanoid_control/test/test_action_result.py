"""ResultWaiter: an action result whose answer was lost is asked again once the goal's status
says it ended. The goal handle here is a stand-in with rclpy's Futures (losing a real service
response on demand is not possible); the waiter itself is the real one. And
wait_until_answering against a real in-process action server, and against none; a
result asked late, from this stack's server and from rclpy's default one; and bursts of
feedback and of goals that wait for a node that does not spin."""

from __future__ import annotations

import gc
import threading
import time

import pytest
from action_msgs.msg import GoalStatus
from node_teardown import destroy_whole
from rclpy.action import ActionServer
from rclpy.task import Future

from humanoid_control.ros import ActionClient, ResultWaiter, action_server, first_answer, wait_until_answering
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


def _answer(future, timeout: float = 30.0):
    """The result of an rclpy future, waited for at most ``timeout`` s."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    assert done.wait(timeout), "no answer"
    return future.result()


def _succeed(goal_handle) -> PlayMotion.Result:
    goal_handle.succeed()
    return PlayMotion.Result(error_code=PlayMotion.Result.SUCCESSFUL, error_string="kept")


# rclpy's own server answers for a goal it forgot through its deprecated `logger.warn`: what this
# test makes it do, not a call of this stack's
@pytest.mark.filterwarnings("ignore:Deprecated in favor of :DeprecationWarning:rclpy.action.server")
def test_a_result_asked_after_rclpys_default_keeping_is_still_there(spinning_nodes):
    """A client asks for a result late when its first answer was lost or its machine is
    loaded; rclpy's ActionServer forgets a finished goal after 10 s and then answers
    STATUS_UNKNOWN with an empty result (seen under load: a refused goal read as UNKNOWN).
    The servers of this stack (:func:`action_server`) keep it: asked once rclpy's default
    server has forgotten the same kind of goal, the result is still the goal's own."""
    node, = spinning_nodes("result_keeping_test")
    action_server(node, PlayMotion, "keeping", _succeed)
    ActionServer(node, PlayMotion, "forgetting", _succeed)
    handles = {}
    for name in ("keeping", "forgetting"):
        client = ActionClient(node, PlayMotion, name)
        assert client.wait_for_server(timeout_sec=30.0)
        handles[name] = _answer(client.send_goal_async(PlayMotion.Goal(motion_name="any")))
        assert _answer(handles[name].get_result_async()).status == GoalStatus.STATUS_SUCCEEDED
    deadline = time.monotonic() + 60.0
    while _answer(handles["forgetting"].get_result_async()).status != GoalStatus.STATUS_UNKNOWN:
        assert time.monotonic() < deadline, "rclpy's default server kept its result for a minute"
        time.sleep(0.5)  # rclpy's server forgets 10 s after the goal ended: asked every 0.5 s till then
    late = _answer(handles["keeping"].get_result_async())
    assert late.status == GoalStatus.STATUS_SUCCEEDED and late.result.error_string == "kept"


def test_a_request_whose_client_went_is_no_answer_and_its_exception_is_looked_at(capfd):
    """A repeated request still pending when its client's node is destroyed ends with an
    exception: not an answer, and not printed later as an exception nobody retrieved."""
    from rclpy.exceptions import InvalidHandle

    # what earlier tests of the worker left to the collector is said before this test's own: a
    # clean-clone run printed such an exception here (which test left it was not found)
    gc.collect()
    capfd.readouterr()
    went = "cannot use Destroyable because destruction was requested (this test's client)"

    def ask() -> Future:
        future = Future()
        future.set_exception(InvalidHandle(went))
        return future

    assert first_answer(ask, timeout=0.3, attempt=0.1) is None
    gc.collect()
    assert f"never retrieved: {went}" not in capfd.readouterr().err


def test_feedback_sent_while_the_client_does_not_spin_reaches_it_all(spinning_nodes):
    """A client process busy elsewhere takes its feedback late (``humanoid play-gait`` in a
    process that follows a lockstep simulation's every state). Every message of a burst sent
    while the client does not spin reaches its callback once it spins again, in order: this
    stack's servers and clients keep FEEDBACK_KEPT of them, where rclpy's default queues of 10
    kept the last ten (a gait's "playing" stage was lost so)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from humanoid_control.ros import FEEDBACK_KEPT

    burst = FEEDBACK_KEPT // 2
    server_node, = spinning_nodes("feedback_server_test")
    release, sent = threading.Event(), threading.Event()

    def execute(goal_handle) -> PlayMotion.Result:
        while not release.wait(0.05):  # until the client has heard one: its reader is matched
            goal_handle.publish_feedback(PlayMotion.Feedback(elapsed=-1.0))
        for n in range(burst):
            goal_handle.publish_feedback(PlayMotion.Feedback(elapsed=float(n)))
        sent.set()
        goal_handle.succeed()
        return PlayMotion.Result()

    action_server(server_node, PlayMotion, "feedback_burst", execute)
    client_node = rclpy.create_node("feedback_client_test")
    executor = SingleThreadedExecutor()
    executor.add_node(client_node)
    try:
        client = ActionClient(client_node, PlayMotion, "feedback_burst")
        assert client.wait_for_server(timeout_sec=30.0)
        received: list[float] = []
        client.send_goal_async(PlayMotion.Goal(motion_name="any"),
                               feedback_callback=lambda message: received.append(message.feedback.elapsed))
        deadline = time.monotonic() + 30.0
        while -1.0 not in received:
            assert time.monotonic() < deadline, "no feedback within 30 s"
            executor.spin_once(timeout_sec=0.05)
        release.set()  # the client spins no more until the whole burst is sent
        assert sent.wait(30.0)
        deadline = time.monotonic() + 30.0
        while len([e for e in received if e >= 0.0]) < burst and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert [e for e in received if e >= 0.0] == [float(n) for n in range(burst)]
    finally:
        executor.shutdown()
        destroy_whole(client_node)
