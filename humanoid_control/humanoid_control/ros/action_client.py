"""rclpy's ActionClient with a goal response that cannot be lost to a race.

In the rclpy this stack runs on (9.1.2) ``ActionClient.send_goal_async`` registers the
goal's future under the client's lock together with the request, then, after releasing the
lock, registers a second future in its place and returns that one. A goal response taken by
the spinning thread in between completes the first future, which nobody holds; the second
never completes, and the caller waits for ever for its goal's acceptance (seen on CI:
``humanoid balance-poses`` waited 300 s for a goal response in a held lockstep simulation,
where the server answers within microseconds of the request). Upstream: ros2/rclpy issue
1123 and the pull requests that closed it.

:class:`ActionClient` registers the one future, the goal's ID and its feedback callback
under the lock the spinning thread takes each response under, in the same critical section
as the request: the response cannot be looked at before the client knows the goal.

Its construction has a race of the same family: rclpy 9.1.2 adds a new client to its node's
waitables before it creates the client's lock, so an executor already spinning the node in
another thread can ask the client for its entities first, raise ``AttributeError`` and stop
spinning (seen in a test: every answer of that node lost for 30 s). The lock is made first here.

A goal request sent before the server's request reader has matched this client's writer
reaches nobody (volatile, and the server's reader ignores a writer it does not know yet):
neither side learns of it, and the caller waited for ever (a suite run: a gait goal on the
emulated bus, 180 s without an answer, the gait controller never told of it). Answering the
client's earlier probe (``action_result.wait_until_answering``, a cancel request) proves
another service's path, not the goal's. A goal without an answer after ``ASK_AGAIN_AFTER``
is sent again under the same goal ID, up to ``ASK_AGAIN_TIMES`` times (both in
:mod:`~humanoid_control.ros.action_result`): a server that never had it takes it; one that
had it (its answer lost) refuses the copy as a duplicate ID, and that refusal is given to the
caller only if no acceptance comes within another such wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from rclpy.action import ActionClient as RclpyActionClient
from rclpy.task import Future

from humanoid_control.ros.action_result import ASK_AGAIN_AFTER, ASK_AGAIN_TIMES, FEEDBACK_QOS


class ActionClient(RclpyActionClient):
    """An rclpy ActionClient whose ``send_goal_async`` returns the future its response
    completes, whichever thread spins the node; its feedback reader keeps as many messages as
    the stack's servers do (:data:`~humanoid_control.ros.action_result.FEEDBACK_KEPT`)."""

    def __init__(self, *args, **kwargs) -> None:
        self._lock = threading.Lock()  # before rclpy makes the client visible to a spinning executor
        kwargs.setdefault("feedback_sub_qos_profile", FEEDBACK_QOS)
        super().__init__(*args, **kwargs)

    def send_goal_async(self, goal, feedback_callback: Callable | None = None, goal_uuid=None) -> Future:
        if not isinstance(goal, self._action_type.Goal):
            raise TypeError(f"expected a goal of type {self._action_type.Goal}, got {type(goal)}")
        request = self._action_type.Impl.SendGoalService.Request()
        request.goal_id = self._generate_random_uuid() if goal_uuid is None else goal_uuid
        request.goal = goal
        answer = Future()
        with self._lock:  # the spinning thread takes every response under this lock
            if feedback_callback is not None:
                self._feedback_callbacks[bytes(request.goal_id.uuid)] = feedback_callback
            self._send_goal(request, answer, again=False)
        self._ask_again_later(request, answer, ASK_AGAIN_TIMES)
        return answer

    def _send_goal(self, request, answer: Future, again: bool) -> None:
        """One goal request (under the lock); its response settles ``answer`` (:meth:`_settle`)."""
        future = Future()
        sequence = self._client_handle.send_goal_request(request)
        if sequence in self._pending_goal_requests:
            raise RuntimeError(f"goal request {sequence} is already pending")
        self._pending_goal_requests[sequence] = future
        self._goal_sequence_number_to_goal_id[sequence] = request.goal_id
        future.add_done_callback(self._remove_pending_goal_request)
        future.add_done_callback(lambda done: self._settle(answer, done.result(), again))
        self.add_future(future)

    def _settle(self, answer: Future, handle, again: bool) -> None:
        """An acceptance settles the goal's answer at once; a refusal of a copy sent again may
        be the server's duplicate ID for a goal it took (its first answer lost): given only when
        no acceptance came within another wait."""
        if answer.done():
            return
        if handle.accepted or not again:
            answer.set_result(handle)
            return
        timer = threading.Timer(ASK_AGAIN_AFTER, lambda: None if answer.done() else answer.set_result(handle))
        timer.daemon = True
        timer.start()

    def _ask_again_later(self, request, answer: Future, times: int) -> None:
        if times <= 0:
            return

        def again() -> None:
            if answer.done():
                return
            try:
                with self._lock:
                    self._send_goal(request, answer, again=True)
            except RuntimeError:  # InvalidHandle, RCLError: the client was destroyed meanwhile
                return
            self._ask_again_later(request, answer, times - 1)

        timer = threading.Timer(ASK_AGAIN_AFTER, again)
        timer.daemon = True
        timer.start()
        answer.add_done_callback(lambda _answer: timer.cancel())  # answered: no thread left waiting
