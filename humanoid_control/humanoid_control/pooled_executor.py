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
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
)

#: s: longest the spinning thread waits at a time for a queued callback to be run.
QUEUED_WAIT = 0.005


class PooledExecutor(MultiThreadedExecutor):
    """``MultiThreadedExecutor`` without the busy loop over callbacks queued in its pool."""

    def __init__(self, num_threads: int, *, context=None) -> None:
        super().__init__(num_threads=num_threads, context=context)
        self._pool = concurrent.futures.ThreadPoolExecutor(num_threads, thread_name_prefix="callbacks")
        self._submitted: dict[object, concurrent.futures.Future] = {}  # task -> its run in the pool

    def _spin_once_impl(self, timeout_sec=None, wait_condition: Callable[[], bool] = lambda: False) -> None:
        try:
            task, _entity, _node = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
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
                earlier.result()  # a callback's exception surfaces here, as with rclpy's executor

    def shutdown(self, timeout_sec: float | None = None, **kwargs) -> bool:
        """Stop: wait up to ``timeout_sec`` for the callbacks running in the pool. What a
        callback raised once the node was stopping (its context shut down under it) is the
        stop's doing, not an error: taken, not reported."""
        done = super().shutdown(timeout_sec, **kwargs)
        concurrent.futures.wait(self._submitted.values(), timeout=timeout_sec)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for task, run in self._submitted.items():
            if run.done() and task.done():
                task.exception()
        return done
