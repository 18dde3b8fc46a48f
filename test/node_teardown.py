"""Ending what a test made in this process: an rclpy node, all of it, and the thread that
spins an executor; and finding the nodes a module's tests left undestroyed."""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rclpy.executors import Executor
    from rclpy.node import Node


#: s the callbacks still running in a node's offloads are given to end.
STOP_TIMEOUT = 10.0


def destroy_whole(node: Node) -> None:
    """The stack's ``destroy_whole`` (offloads, waitables, node), giving the callbacks still
    running STOP_TIMEOUT: rclpy's ``destroy_node`` alone left a robot interface's
    ``follow_joint_trajectory`` served in the worker's domain beside the next module's robot
    (a hardware test's client once saw seven servers, none ready)."""
    from humanoid_control.ros import destroy_whole as destroy

    destroy(node, STOP_TIMEOUT)


#: every rclpy node made in this process since :func:`follow_nodes`, held weakly, with the
#: order it was made in and its name
_MADE: weakref.WeakKeyDictionary[Node, tuple[int, str]] = weakref.WeakKeyDictionary()
_ORDER = itertools.count()


def follow_nodes() -> None:
    """From now on every rclpy node this process makes is followed (weakly: following keeps
    none alive), for :func:`end_left_behind`."""
    from rclpy.node import Node

    if getattr(Node.__init__, "followed", False):
        return
    made = Node.__init__

    @functools.wraps(made)
    def init(self: Node, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)
        _MADE[self] = (next(_ORDER), self.get_fully_qualified_name())

    init.followed = True  # type: ignore[attr-defined]
    Node.__init__ = init  # type: ignore[method-assign]


def _handle_alive(node: Node) -> bool:
    from rclpy.exceptions import InvalidHandle

    try:
        with node.handle:
            return True
    except InvalidHandle:
        return False


def end_left_behind() -> list[str]:
    """The names of the followed nodes still alive and not destroyed whole (the node, or a
    waitable of it: an action server or client outlives ``destroy_node`` and holds the node);
    each is destroyed whole now. Left to the garbage collector, such a node is torn down in
    whichever later test collects it: a clean-clone run hung 11 min so in a ``gc.collect()``
    (a DDS entity's teardown waiting for ever, the family of eProsima/Fast-DDS#6513)."""
    left = {node: name for node, (_order, name) in list(_MADE.items())
            if list(node.waitables) or _handle_alive(node)}
    for node in left:
        _end(node)
    return sorted(left.values())


def _end(node: Node) -> None:
    if _handle_alive(node):
        destroy_whole(node)
    else:  # the node is destroyed (by its context's shutdown, say); its waitables were not
        for waitable in list(node.waitables):
            waitable.destroy()


@contextlib.contextmanager
def ros_context(args: Sequence[str] | None = None) -> Iterator[None]:
    """rclpy's default context for a block (``rclpy.init(args=args)``); at its end every node
    made in the block is destroyed whole, the last made first, then the context shut down
    (rclpy's shutdown destroys only every other node of the context, and none of their action
    servers and clients, which then hold them for the garbage collector)."""
    import rclpy

    first = next(_ORDER)
    rclpy.init(args=args)
    try:
        yield
    finally:
        made = sorted(((order, node) for node, (order, _name) in list(_MADE.items()) if order > first),
                      key=lambda made: made[0], reverse=True)
        for _order, node in made:
            _end(node)
        rclpy.try_shutdown()


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
        self._turns = threading.Condition()
        self._held = 0  # callers holding the spinning between two turns
        self._between = False  # the thread waits between two turns
        self._thread = threading.Thread(target=spin_while, args=(executor, self._next_turn), name=name,
                                        daemon=True)

    def start(self) -> SpinningThread:
        self._thread.start()
        return self

    def _next_turn(self) -> bool:
        """Asked by ``spin_while`` between two turns: whether to go on, once nobody holds it."""
        with self._turns:
            self._between = True
            self._turns.notify_all()
            self._turns.wait_for(lambda: self._held == 0 or not self._going.is_set())
            self._between = False
        return self._going.is_set()

    @contextlib.contextmanager
    def between_turns(self) -> Iterator[None]:
        """Hold the spinning between two turns, to destroy a subscription or a client of a node
        it spins: destroyed under a turn, whose wait set is being built from the node's
        entities, rclpy raised InvalidHandle in the spinning thread, which then died (clean-clone
        run 335). The next turn builds its wait set without the destroyed entity."""
        with self._turns:
            self._held += 1
            if not self._turns.wait_for(lambda: self._between or not self._thread.is_alive(), timeout=STOP_TIMEOUT):
                self._held -= 1
                raise TimeoutError(f"{self._thread.name}: no end of a turn within {STOP_TIMEOUT:g} s")
        try:
            yield
        finally:
            with self._turns:
                self._held -= 1
                self._turns.notify_all()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """The spinning ended (if it ever started), then the executor shut down; the nodes are
        the caller's to destroy after this (a turn still uses them)."""
        self._going.clear()
        with self._turns:
            self._turns.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.executor.shutdown()
