"""Ending what a test made in this process: an rclpy node, all of it, and the thread that
spins an executor."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rclpy.executors import Executor
    from rclpy.node import Node


#: s the callbacks still running in a node's offloads are given to end.
STOP_TIMEOUT = 10.0


def destroy_whole(node: Node) -> None:
    """``node.destroy_node()``, its waitables first: rclpy's ``destroy_node`` leaves a node's
    action servers, and with them the node, alive; a robot interface's
    ``follow_joint_trajectory`` stayed served in the worker's domain beside the next module's
    robot (a hardware test's client once saw seven servers, none ready). Its offloads' worker
    threads end first, as a container ends them."""
    from humanoid_control.ros import stop_offloads

    stop_offloads(node, STOP_TIMEOUT)
    for waitable in list(node.waitables):
        waitable.destroy()
    node.destroy_node()


class SpinningThread:
    """``executor`` spun by a thread of its own (``spin_while``) from :meth:`start` until
    :meth:`stop`, which ends the spinning before it shuts the executor down: shut down under a
    turn in flight (a backlog of messages after the test process was stopped), rclpy raised in
    the thread (a guard condition gone: InvalidHandle, or no ``trigger`` on ``None``)."""

    def __init__(self, executor: Executor, name: str = "spinning") -> None:
        from humanoid_control.ros import spin_while

        self.executor = executor
        self._going = threading.Event()
        self._going.set()
        self._thread = threading.Thread(target=spin_while, args=(executor, self._going.is_set), name=name,
                                        daemon=True)

    def start(self) -> SpinningThread:
        self._thread.start()
        return self

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """The spinning ended (if it ever started), then the executor shut down; the nodes are
        the caller's to destroy after this (a turn still uses them)."""
        self._going.clear()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.executor.shutdown()
