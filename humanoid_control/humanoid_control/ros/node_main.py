"""The ``main()`` of a control-layer node: one node in its own process, spun until a signal.

Every control-layer node (balance monitor, self-collision checker, trajectory generator,
...) starts and stops the same way, so that `humanoid sim`, `humanoid real` and the launch
files can rely on it: exit 1 with one fatal log line when its parameters or robot are
wrong, exit 0 on SIGINT/SIGTERM (and SIGHUP, made a SIGTERM), quietly. A signal does not
shut the ROS context down under the node (rclpy's own handlers do, and a callback then
running fails to publish: the executor logs it as a fatal exception with its traceback;
Python's SIGINT handler would raise KeyboardInterrupt inside a callback likewise, and a
Ctrl-C reaches every process of a ``ros2 launch``): it ends the spinning at the next turn,
the callbacks still running may finish (offloaded ones within ``STOP_TIMEOUT``:
:func:`~humanoid_control.ros.offload.stop_offloads`), then the node and the context are
shut down. A signal while the node is still being built stops it once built.
(Before its handlers are in place, while its modules load, a node started by the
launchers ignores SIGINT: :mod:`humanoid_core.processes.run_tethered`.)

Every node is spun by rclpy's EventsExecutor (its blocking callbacks offloaded:
:mod:`humanoid_control.ros.offload`), through :func:`spin_while`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable

import rclpy
import rclpy.logging
from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from humanoid_control.ros.node_host import NodeHost, OwnProcess
from humanoid_control.ros.offload import stop_offloads
from humanoid_control.ros.restart_report import report_restart
from humanoid_core.processes import StopRequest, hang_up_like_terminate, stop_on_signals
from humanoid_description import UnknownRobotError

#: s: longest a stopping node waits for its running callbacks before it is destroyed
STOP_TIMEOUT = 2.0
#: s: how often the spinning thread looks whether to stop (a signal's handler runs then).
SPIN_TURN = 0.1


def spin_while(executor: Executor, going: Callable[[], bool], ended: Future | None = None,
               turn: float = SPIN_TURN, stop: StopRequest | None = None) -> None:
    """Spin ``executor`` while ``going()`` (looked at every ``turn`` s, and at once when the
    future ``ended`` completes, or the ``stop`` request is set). Not ``spin_once`` in a loop:
    rclpy's EventsExecutor revisits every task awaiting something at each call, a busy loop
    while one waits (an offloaded goal's body); not ``spin()``: it returns only when the
    context shuts down.

    rclpy's EventsExecutor ends a turn at its timeout only once its queue is empty: a node
    that takes messages more slowly than they come would never look at ``going()`` again. A
    completed future ends the turn at once, so a thread completes ``ended`` when ``stop`` is
    set (a signal handler cannot: it runs in the spinning thread, which may hold the
    future's lock)."""
    ended = ended if ended is not None else Future()
    spinning = threading.Event()
    spinning.set()
    watcher = None
    if stop is not None:
        watcher = threading.Thread(target=_end_on_stop, args=(stop, ended, spinning, turn), name="stop watcher",
                                   daemon=True)
        watcher.start()
    try:
        while going() and not ended.done():
            executor.spin_until_future_complete(ended, timeout_sec=turn)
    finally:
        spinning.clear()
        if watcher is not None:
            watcher.join(timeout=2 * turn)


def _end_on_stop(stop: StopRequest, ended: Future, spinning: threading.Event, turn: float) -> None:
    """Complete ``ended`` once ``stop`` is set, while the executor spins."""
    while spinning.is_set() and not ended.done():
        if stop.wait(turn):
            with contextlib.suppress(Exception):  # completed meanwhile
                if not ended.done():
                    ended.set_result(None)
            return


def run_node(name: str, build: Callable[[Node, NodeHost], object], args: list[str] | None = None) -> int:
    """Create node ``name`` alone in this process, let ``build`` give it its behaviour, spin it;
    the exit code."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    with stop_on_signals(signal.SIGINT, signal.SIGTERM) as stop:
        hang_up_like_terminate()
        node: Node | None = None
        executor: Executor | None = None
        try:
            node = Node(name)
            build(node, OwnProcess())
            report_restart(node)
            executor = EventsExecutor()
            executor.add_node(node)
            spin_while(executor, lambda: not stop.is_set() and rclpy.ok(), stop=stop)
            return 0
        except (ValueError, UnknownRobotError) as error:
            (node.get_logger() if node is not None else rclpy.logging.get_logger(name)).fatal(f"cannot start: {error}")
            return 1
        except ExternalShutdownException:
            return 0
        finally:
            if executor is not None:
                executor.shutdown(timeout_sec=STOP_TIMEOUT)
            if node is not None:
                destroy_whole(node)
            rclpy.try_shutdown()


def destroy_whole(node: Node, timeout: float = STOP_TIMEOUT) -> None:
    """The node's offloaded work ended (within ``timeout`` s), its waitables destroyed, then
    the node. rclpy's ``destroy_node`` leaves a node's action servers and clients, and they
    hold the node's handle: both are torn down only when the garbage collector finds them,
    in whatever code runs then (a test process hung 11 min so in a ``gc.collect()``: a DDS
    entity's teardown waiting for ever, the family of eProsima/Fast-DDS#6513); a server left
    so stays served to the other nodes of the domain meanwhile."""
    stop_offloads(node, timeout)
    for waitable in list(node.waitables):
        waitable.destroy()
    node.destroy_node()


def node_alive(node: Node) -> bool:
    """Whether ``node`` may still be used: its context not shut down and the node not
    destroyed (a thread of its own that outlives it then has nobody left to tell)."""
    if not node.context.ok():
        return False
    try:
        with node.handle:
            return True
    except InvalidHandle:
        return False
