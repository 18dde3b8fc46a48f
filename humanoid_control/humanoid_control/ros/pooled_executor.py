"""A multi-threaded rclpy executor that waits, rather than spins, while its pool starts a callback.

rclpy's ``MultiThreadedExecutor`` (Jazzy's and Kilted's 9.1 wheels) hands each ready
callback to a thread pool and goes straight back to its wait set, which yields the same
task again until a pool thread has started it. The thread that spins holds the GIL
while it does so, so the pool starts the task late, and the loop repeats: measured here,
an idle node on ``use_sim_time`` (the simulator's ``/clock`` at 50-200 Hz) burned a full
core, yielding its clock callback ~90 times per message, and starved the other nodes of
the graph on a 2-core machine (the walk controller then missed joint_states for up to
1.5 s). Upstream: ros2/rclpy issue 1452, fixed in rclpy after these releases.

:class:`PooledExecutor` keeps the multi-threaded model (blocking action bodies in
one thread, the control cycle in another) and fixes only that: a task yielded again
while still queued in the pool is not resubmitted; the spinning thread waits (GIL
released) until the pool has run it, for at most ``QUEUED_WAIT`` at a time.

It is built on rclpy's public executor API only, the way ``rclpy.executors.Executor``
documents custom executors (``spin_once`` over ``wait_for_ready_callbacks``), so that an
rclpy release that reorganises its executors' private methods cannot break it silently.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable

from rclpy.context import Context
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    ShutdownException,
    TimeoutException,
)
from rclpy.task import Future, Task

#: s: longest the spinning thread waits at a time for a queued callback to be run.
QUEUED_WAIT = 0.005

_NO_WORK = (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException)


def _never() -> bool:
    """The wait condition of a plain spin_once (one object: rclpy reuses its wait while the
    arguments are equal)."""
    return False


class PooledExecutor(Executor):
    """Runs callbacks in a pool of ``num_threads`` threads, like rclpy's
    ``MultiThreadedExecutor``, without its busy loop over callbacks queued in the pool."""

    def __init__(self, num_threads: int, *, context: Context | None = None) -> None:
        super().__init__(context=context)
        self._pool = concurrent.futures.ThreadPoolExecutor(num_threads, thread_name_prefix="callbacks")
        self._submitted: dict[Task, concurrent.futures.Future] = {}  # task -> its run in the pool
        self._stopped = False

    def spin_once(self, timeout_sec: float | None = None) -> None:
        self._hand_over_next(timeout_sec, _never)

    def spin_once_until_future_complete(self, future: Future, timeout_sec: float | None = None) -> None:
        future.add_done_callback(lambda _: self.wake())
        self._hand_over_next(timeout_sec, future.done)

    def spin_until_future_complete(self, future: Future, timeout_sec: float | None = None) -> None:
        """Run callbacks until ``future`` is done, or for ``timeout_sec`` (None or < 0: no limit)."""
        future.add_done_callback(lambda _: self.wake())
        deadline = None if timeout_sec is None or timeout_sec < 0 else time.monotonic() + timeout_sec
        while self.context.ok() and not self._stopped and not future.done():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0.0:
                return
            self._hand_over_next(remaining, future.done)

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        """Stop: wait up to ``timeout_sec`` for the callbacks running in the pool. What a
        callback raised once the node was stopping (its context shut down under it) is the
        stop's doing, not an error: taken, not reported."""
        self._stopped = True
        done = super().shutdown(timeout_sec)
        concurrent.futures.wait(self._submitted.values(), timeout=timeout_sec)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for task, run in self._submitted.items():
            if run.done() and task.done():
                task.exception()
        return done

    def _hand_over_next(self, timeout_sec: float | None, condition: Callable[[], bool]) -> None:
        """Wait for the next ready callback and submit it to the pool, unless it is still
        queued there from an earlier wait: then wait (briefly) for the pool to run it."""
        try:
            task, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, condition)
        except _NO_WORK:
            return
        queued = self._submitted.get(task)
        if queued is not None and not queued.done():
            concurrent.futures.wait([queued], timeout=QUEUED_WAIT)
            return
        self._submitted[task] = self._pool.submit(task)
        for earlier, run in list(self._submitted.items()):
            if run.done():
                del self._submitted[earlier]
                run.result()
                earlier.result()  # a callback's exception surfaces here, as with rclpy's executors
