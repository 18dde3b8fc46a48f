"""Waiting for an action goal's result, asking again if the answer was lost; and, before a
first goal, for the server to answer this client at all.

An action client gets its result through a service call. On a busy machine the answer
can be lost: rmw_fastrtps drops a service response whose reader it has not matched yet
("failed to send response (timeout): client will not receive response"), and the client
then waits forever for a goal the server finished long ago (under heavy load: a play_motion
that never returns). The goal's status topic still says the
goal ended, so a waiter that sees a terminal status without a result asks again; the
server keeps results for a while after the goal ends (the action's result timeout:
:data:`RESULT_KEPT` for this stack's servers, made by :func:`action_server`).

A lost *goal* response cannot be asked again (sending the goal twice could start it
twice). It happens right after start-up, when the server has not yet matched this
client's response readers (the client then waits in vain for its goal's acceptance).
:func:`wait_until_answering` therefore asks the server to cancel a goal that does not
exist, an idempotent question, until one answer comes back: the server then knows this
client's endpoints (the goal service's reader is created before the cancel service's).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from action_msgs.msg import GoalStatus
from rclpy.action import ActionServer
from rclpy.action.client import ClientGoalHandle
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from unique_identifier_msgs.msg import UUID

#: Statuses after which the server has the result.
TERMINAL = frozenset({GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED})
#: s a server of this stack waits for a client's response reader to be discovered before it
#: drops the answer: the "service" writer profile's max_blocking_time in
#: humanoid_bringup/config/dds/fastdds_loopback.xml (docs/ros_and_dds.md, "Service answers").
SERVER_ANSWER_WAIT = 5.0
#: Seconds of wall time a goal may have ended without its result before the result is asked
#: again; longer than the server's wait, so that repeated questions do not queue up behind a
#: server still waiting to answer the first (an action server's lock is held meanwhile).
ASK_AGAIN_AFTER = SERVER_ANSWER_WAIT + 1.0
#: Times a request whose answer may have been lost is sent again, ``ASK_AGAIN_AFTER`` s apart:
#: an idempotent service request (``RobotClient._call``), a goal no server answered
#: (:class:`~humanoid_control.ros.action_client.ActionClient`).
ASK_AGAIN_TIMES = 2
#: Seconds a server of this stack keeps a finished goal's result: rcl's own default (15
#: minutes). rclpy's is 10 s, after which a client asking (again, its first answer lost, or
#: late, behind a loaded machine) is told STATUS_UNKNOWN with an empty result.
RESULT_KEPT = 900
#: Feedback messages a server's writer and a client's reader keep (rclpy's default: 10). A
#: client process busy elsewhere (the robot's states of a lockstep simulation racing ahead)
#: takes its feedback late, and a queue of 10 then lost the oldest: a gait's whole "playing"
#: stage never reached ``humanoid play-gait`` (a quiet clean-clone run on a slow host). At
#: about 5 messages a second, 100 keep 20 s of them.
FEEDBACK_KEPT = 100
FEEDBACK_QOS = QoSProfile(depth=FEEDBACK_KEPT, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.RELIABLE)
#: Requests (goals, cancels, result questions) an action server's readers keep for it until
#: its node's executor takes them (rclpy's default, the middleware's services profile: 10). A
#: server whose executor was busy for half a second while 20 goals came answered 10 of them
#: (an EventsExecutor) or none of 12 (a wait-set executor; 8 were all answered), and their
#: clients waited for an acceptance that never came. That 100 is enough is not shown
#: (docs/ros_and_dds.md: a server not spun through a burst of 20 answered none, at times).
#: Clients keep rclpy's default: their request writers would keep as many goals (a trajectory
#: each), and this stack's client asks again for an answer that did not come.
REQUESTS_KEPT = 100
REQUESTS_QOS = QoSProfile(depth=REQUESTS_KEPT, history=HistoryPolicy.KEEP_LAST,
                          reliability=ReliabilityPolicy.RELIABLE)
#: The keyword arguments of rclpy's ActionServer for its three services.
SERVICES_QOS = {f"{service}_service_qos_profile": REQUESTS_QOS for service in ("goal", "cancel", "result")}


def action_server(node, action_type, name: str, execute_callback, **options) -> ActionServer:
    """An rclpy ActionServer that keeps each finished goal's result :data:`RESULT_KEPT` s,
    :data:`FEEDBACK_KEPT` feedback messages for a client that takes them late, and
    :data:`REQUESTS_KEPT` requests while its executor is busy."""
    return ActionServer(node, action_type, name, execute_callback=execute_callback,
                        result_timeout=RESULT_KEPT, feedback_pub_qos_profile=FEEDBACK_QOS, **SERVICES_QOS, **options)


class ResultWaiter:
    """The result of one accepted goal (an rclpy ClientGoalHandle), asked once at
    construction and again whenever the goal has ended ``ask_again_after`` seconds ago
    and no answer came. Given ``server`` (the goal's action client) and ``gone_after``, a
    wait also ends, :attr:`server_gone` set, once the action's server has been missing from
    the graph that long (its process ended: no result can come)."""

    def __init__(self, goal_handle, ask_again_after: float = ASK_AGAIN_AFTER, server=None,
                 gone_after: float | None = None) -> None:
        self._goal = goal_handle
        self._ask_again_after = ask_again_after
        self._server, self._gone_after = server, gone_after
        self._seen_at = time.monotonic()  # the server, last seen
        #: set by the wait that found the server missing ``gone_after`` seconds (it returned False)
        self.server_gone = False
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._response = None
        self._ended_at: float | None = None
        #: get_result requests sent (more than one: an answer was lost)
        self.requests = 0
        self._ask()

    def _ask(self) -> None:
        self.requests += 1
        self._goal.get_result_async().add_done_callback(self._on_answer)

    def _on_answer(self, future) -> None:
        with self._lock:
            if self._response is None:
                self._response = future.result()
        self._done.set()

    @property
    def response(self):
        """The GetResult response (``.status``, ``.result``), None until it came."""
        return self._response

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s of wall time; True once the result is there."""
        deadline = time.monotonic() + timeout
        slice_ = min(0.5, self._ask_again_after / 2.0)  # the status is looked at this often
        while True:
            now = time.monotonic()
            if self._done.wait(max(0.0, min(slice_, deadline - now))):
                return True
            now = time.monotonic()
            if self._server is not None and self._gone_after is not None:
                if self._server.server_is_ready():
                    self._seen_at = now
                elif now - self._seen_at >= self._gone_after:
                    self.server_gone = True
                    return False
            if self._goal.status in TERMINAL:
                if self._ended_at is None:
                    self._ended_at = now
                elif now - self._ended_at >= self._ask_again_after:
                    self._ask()
                    self._ended_at = now
            if now >= deadline:
                return False


def first_answer(ask: Callable[[], Future], timeout: float, attempt: float = ASK_AGAIN_AFTER,
                 again: int | None = None) -> Future | None:
    """Send a request (``ask()``: its future), and again every ``attempt`` s while no answer
    came, at most ``again`` times more (None: until ``timeout``); the future of the first
    answer, or None when none came within ``timeout`` s. For questions that do the same when
    asked twice: an answer may be lost (see above)."""
    deadline = time.monotonic() + timeout
    answers: list[Future] = []
    answered = threading.Event()  # by any of the attempts

    def take(future: Future) -> None:
        # a request whose client went (its node destroyed, a repeated request still pending):
        # no answer; its exception is looked at, or rclpy prints it as never retrieved when the
        # future is collected, into whatever the process writes then
        if future.exception() is not None:
            return
        answers.append(future)
        answered.set()

    sent = 0
    while True:
        ask().add_done_callback(take)
        sent += 1
        last = again is not None and sent > again
        left = max(0.0, deadline - time.monotonic())
        if answered.wait(left if last else min(attempt, left)):
            return answers[0]
        if last or time.monotonic() >= deadline:
            return None


def wait_until_answering(action_client, timeout: float, attempt: float = ASK_AGAIN_AFTER) -> bool:
    """Ask ``action_client``'s server to cancel an unknown goal, again every ``attempt`` s,
    until it answers (True) or ``timeout`` s have passed (False)."""
    nobody = ClientGoalHandle(action_client, UUID(uuid=list(os.urandom(16))), None)
    return first_answer(nobody.cancel_goal_async, timeout, attempt) is not None
