"""Blocking callbacks of a node spun by rclpy's EventsExecutor, run in worker threads.

rclpy's EventsExecutor dispatches each message in C++, at a fraction of what the Python
executors spend rebuilding their wait set around every message (measured here: an idle
graph's nodes, and a lockstep simulation's front, which relays every participant's
answer; docs/simulation.md). It runs every callback in the one thread that spins, so a
callback that blocks (an action's body following the robot, a service waiting for the
control loop or checking a long path) would stall every other callback of the node.

:class:`Offload` turns such a callback into a coroutine that runs it in a worker thread and
awaits its end: the spinning thread goes on with the node's other callbacks meanwhile. One
``Offload`` per group of callbacks that must not overlap (``workers=1``: they run one at a
time, in the order called), or with several workers for bodies that may (a new goal
arriving while the last one ends).

The EventsExecutor looks again at a task awaiting something only after its next event (a
message, a timer): a task whose work ended in another thread could wait for the next
message, or for ever on a quiet node. Each node with offloaded callbacks therefore has a
one-shot timer on the steady clock that a worker starts when its work ends: the task goes
on within about a millisecond (measured), whatever the node receives. The node must be
spun with :func:`~humanoid_control.ros.node_main.spin_while`, never ``spin_once`` in a
loop, which revisits such a task at every call: a busy loop while the work runs.

A node's offloads are stopped together (:func:`stop_offloads`, called by whoever spins the
node, after its executor): the callbacks still running may finish, those not started are
dropped.
"""

from __future__ import annotations

import concurrent.futures
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.task import Future

__all__ = ["Offload", "stop_offloads"]

T = TypeVar("T")

#: s: from the end of a callback's work to the executor's next look at the task awaiting it.
KICK_DELAY = 0.001


class _NodeOffloads:
    """A node's offloads and the one timer that wakes its executor after offloaded work."""

    def __init__(self, node: Node) -> None:
        self.offloads: list[Offload] = []
        self.kick = node.create_timer(KICK_DELAY, self._kicked, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.kick.cancel()

    def _kicked(self) -> None:
        self.kick.cancel()  # one shot: the executor looks at the waiting tasks after any timer


_BY_NODE: weakref.WeakKeyDictionary[Node, _NodeOffloads] = weakref.WeakKeyDictionary()


class Offload:
    """Runs wrapped callbacks of ``node`` in a pool of ``workers`` threads named ``name``."""

    def __init__(self, node: Node, name: str, workers: int = 1) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix=name)
        self._running: set[concurrent.futures.Future] = set()
        if node not in _BY_NODE:
            _BY_NODE[node] = _NodeOffloads(node)
        group = _BY_NODE[node]
        group.offloads.append(self)
        self._kick = group.kick

    def __call__(self, callback: Callable[..., T]) -> Callable[..., Awaitable[T]]:
        """``callback`` as a coroutine function for rclpy (an action's execute callback, a
        service's callback): called with the same arguments, in a worker thread."""

        async def offloaded(*args: Any) -> T:
            done: Future = Future()

            def run() -> None:
                try:
                    done.set_result(callback(*args))
                except Exception as error:  # handed to the awaiting task, which raises it
                    done.set_exception(error)
                self._kick.reset()

            work = self._pool.submit(run)
            self._running.add(work)
            work.add_done_callback(self._running.discard)
            return await done

        return offloaded

    def shutdown(self, timeout: float | None) -> None:
        """Drop the callbacks not started, then wait up to ``timeout`` s for those running
        (they end once the node stops what they follow)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        concurrent.futures.wait(list(self._running), timeout=timeout)


def stop_offloads(node: Node, timeout: float) -> None:
    """Stop every offload of ``node``, giving the callbacks still running ``timeout`` s in all."""
    group = _BY_NODE.pop(node, None)
    if group is None:
        return
    deadline = time.monotonic() + timeout
    for offload in group.offloads:
        offload.shutdown(max(0.0, deadline - time.monotonic()))
