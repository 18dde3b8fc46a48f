"""The control loop of a driver node, in a process of its own.

A driver node (sim or hardware) is two processes: the front
(:class:`~humanoid_control.ros.driver_node.DriverNode`: parameters, commands, the action,
services) and this one, which the front starts: the driver, the
:class:`~humanoid_core.loop.control_loop.ControlLoop` with its guards, and what is
published every cycle (``joint_states``, sensors, diagnostics, a simulator's clock and
ground truth) from a node of its own, ``<driver node>_loop``. They talk through a pipe
(:mod:`humanoid_core.loop.remote`). Why: no message the front receives, however large,
can delay the loop (see that module).

The loop's process dies with the front: the kernel sends it SIGTERM when the front dies
(even killed outright), and it then releases the robot as configured (a hardware driver
goes limp or holds) before it exits; a process whose main thread is stuck in native code
(and so never runs the handler) ends EXIT_TIMEOUT later all the same, printing its threads'
stacks (:func:`~humanoid_core.processes.end_when_orphaned`). It ignores SIGINT: a Ctrl-C is
the front's to handle, which then asks it to stop.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from humanoid_core.guards import SelfCollisionGuardParameters
from humanoid_core.loop import (
    ControlLoop,
    Finished,
    InterfaceParameters,
    JointState,
    LoopClient,
    LoopServer,
    RobotDriver,
)
from humanoid_core.processes import set_priority

if TYPE_CHECKING:
    from humanoid_core.guards import CompositeGuard

__all__ = ["DriverSpec", "LoopHost", "LoopProcess", "LoopSpec", "LoopThread", "build_guard", "load"]

#: s: how long the front waits for the loop's process to release the robot and exit.
EXIT_TIMEOUT = 10.0
#: s the loop's process may take to tear ROS down once the robot is released (or its start
#: failed) before the kernel ends it: shorter than EXIT_TIMEOUT, so the front never has to.
TEARDOWN_LIMIT = 5


@dataclass(frozen=True)
class DriverSpec:
    """How the loop's process builds the driver: ``factory`` (``"module:function"``) called
    with the robot model and ``config`` (picklable: the front declared it from its parameters)."""

    factory: str
    config: Any
    #: The driver's clock is the graph's ROS time (a simulator) rather than a monotonic clock.
    clock_is_ros_time: bool
    #: ``"module:function"`` called with (node, host, extension_config) to add to the loop's
    #: side what only this kind of driver has (a simulator's clock, ground truth and
    #: operations), or None.
    extension: str | None = None
    extension_config: Any = None
    #: The loop keeps to the wall clock (a robot; a simulation at a real-time factor): it runs
    #: at ``loop_nice``. A simulation as fast as possible has no deadline: raised, it only took
    #: the CPU from the nodes it waits for and from other graphs' deadlines.
    paced: bool = True


@dataclass(frozen=True)
class LoopSpec:
    """Everything the loop's process needs, from the front's parameters."""

    node_name: str  # the front's; the loop's node is "<node_name>_loop"
    robot: str
    driver: DriverSpec
    interface: InterfaceParameters
    guard: SelfCollisionGuardParameters
    duration: float = 0.0  # s of robot time after which the loop ends (0: never)
    namespace: str = "/"  # the front's: the loop's node publishes the robot's topics in it


def load(reference: str) -> Callable[..., Any]:
    """The function named ``"module:function"``."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def build_guard(robot: str, params: SelfCollisionGuardParameters, log) -> CompositeGuard:
    """The guards of every driver node (sim and hw alike): the one place that decides which
    checks stand between accepted commands and the driver. Today the self-collision veto
    (:mod:`humanoid_core.guards.self_collision_guard`), on unless ``params.veto`` is false.
    Imported here, in the loop's process: the collision model (Coal, Pinocchio) is no
    business of the front's."""
    from humanoid_core.guards import CompositeGuard, SelfCollisionGuard

    guard = SelfCollisionGuard(robot, params, warn=log.warning, inform=log.info)
    if params.veto:
        log.info(f"self-collision veto on (safety distance {guard.safety_distance * 1000:g} mm)")
    else:
        log.warning("self-collision veto off (self_collision_veto false): commands are not checked")
    return CompositeGuard([guard])


class LoopHost:
    """The loop's side of a driver node: driver, control loop, server and per-cycle topics,
    on ``node`` (its own process's node, or the front's own in an in-process run)."""

    def __init__(self, node, driver: RobotDriver, model, connection: Connection, name: str,
                 interface: InterfaceParameters, guard: SelfCollisionGuardParameters, duration: float = 0.0,
                 extension: str | None = None, extension_config: Any = None) -> None:
        """``name`` is the driver node's (diagnostics are named after it); ``duration`` > 0
        ends the loop after that long on the robot's clock; ``extension`` as in :class:`DriverSpec`."""
        from humanoid_control.ros.ros_time import DriverClock, clock_seconds
        from humanoid_control.ros.state_publisher import StatePublisher

        self.node, self.driver, self.model, self.duration = node, driver, model, duration
        log = node.get_logger()
        self.loop = ControlLoop(driver, model.joints, interface, build_guard(model.name, guard, log),
                                on_exception=self._on_exception)
        self.server = LoopServer(self.loop, connection)
        self.clock = DriverClock(driver.now, None if driver.clock_is_ros_time
                                 else lambda: clock_seconds(node))
        self.publisher = StatePublisher(node, self.loop, self.clock, name, model.name)
        self._started_at: float | None = None
        if duration > 0.0:
            self.loop.add_cycle_hook(self._check_duration)
        if extension is not None:
            load(extension)(node, self, extension_config)
        # after the extension's hooks: what it measures at a cycle (a simulator's ground truth)
        # goes out in that cycle's robot_state
        self.loop.add_cycle_hook(self.publisher.on_cycle)

    @classmethod
    def from_spec(cls, node, driver: RobotDriver, model, connection: Connection, spec: LoopSpec) -> LoopHost:
        return cls(node, driver, model, connection, spec.node_name, spec.interface, spec.guard, spec.duration,
                   spec.driver.extension, spec.driver.extension_config)

    def serve(self) -> Finished:
        """Bring the robot up and run until shut down (see ``LoopServer.serve``)."""
        return self.server.serve(on_started=self.publisher.on_started)

    def _check_duration(self, state: JointState) -> None:
        if self._started_at is None:
            self._started_at = state.stamp
        if state.stamp - self._started_at >= self.duration:
            self.node.get_logger().info(f"duration of {self.duration:g} s reached, shutting down")
            self.server.finish(f"duration of {self.duration:g} s reached")

    def _on_exception(self, error: BaseException) -> None:
        self.node.get_logger().fatal(f"control loop failed: {type(error).__name__}: {error}")
        self.server.finish(f"the control loop failed: {error}", failed=True)


class LoopThread:
    """The loop's side in a thread of this process, on the same pipe protocol: for in-process
    runs (tests of the front) where the driver is an object at hand rather than a factory."""

    def __init__(self, node, driver: RobotDriver, model, interface: InterfaceParameters,
                 guard: SelfCollisionGuardParameters | None = None, name: str = "robot") -> None:
        front_end, loop_end = multiprocessing.Pipe(duplex=True)
        self.host = LoopHost(node, driver, model, loop_end, name, interface,
                             guard or SelfCollisionGuardParameters(veto=False))
        self.client = LoopClient(front_end, model.joints.names)
        self._thread = threading.Thread(target=self.host.serve, name="loop-host", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = EXIT_TIMEOUT) -> None:
        """Stop the loop (the driver is released) and wait for it."""
        with contextlib.suppress(Exception):
            self.client.shutdown()
        self._thread.join(timeout)


def _loop_process_main(specs: tuple[LoopSpec, ...], connections: tuple[Connection, ...], front: int) -> None:
    """The loop's process: a node and a host per robot (one, or the robots of one simulated
    world), each served in a thread of its own until the front asks it to stop or dies."""
    from humanoid_core.processes import die_with_parent, end_when_orphaned, exit_within

    if not die_with_parent(front):
        return
    end_when_orphaned(front, EXIT_TIMEOUT)  # also when its main thread is stuck in native code
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from humanoid_description import RobotModel

    rclpy.init(args=[], signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    nodes = [Node(f"{spec.node_name}_loop", namespace=spec.namespace, start_parameter_services=False)
             for spec in specs]
    if any(spec.driver.paced for spec in specs):
        set_priority(specs[0].interface.loop_nice, nodes[0].get_logger().warning, "the control loop")
    _choose_cpu(specs, nodes[0].get_logger())
    hosts: list[LoopHost] = []
    finished = [Finished("not started", failed=True)] * len(specs)
    try:
        for node, spec, connection in zip(nodes, specs, connections, strict=True):
            try:
                _claim(node, spec)
                model = RobotModel(spec.robot)
                driver = load(spec.driver.factory)(model, spec.driver.config)
                hosts.append(LoopHost.from_spec(node, driver, model, connection, spec))
            except Exception as error:
                from humanoid_core.loop import StartFailed

                for unserved in connections[len(hosts):]:
                    unserved.send(StartFailed(f"{type(error).__name__}: {error}"))
                raise
        signal.signal(signal.SIGTERM, lambda _signum, _frame: [host.server.finish("terminated") for host in hosts])
        executor = SingleThreadedExecutor()
        for node in nodes:
            executor.add_node(node)
        spinner = _spin_in_thread(executor)
        finished = _serve_all(hosts)
        executor.shutdown(timeout_sec=1.0)
        spinner.join(timeout=2.0)
    finally:
        exit_within(TEARDOWN_LIMIT)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
    sys.exit(1 if any(end.failed for end in finished) else 0)


def _serve_all(hosts: list[LoopHost]) -> list[Finished]:
    """Serve every host (the first in this thread, the others in threads of their own) until
    each has finished; one that finishes ends the others (robots in one world stand or stop
    together)."""
    if len(hosts) == 1:
        return [hosts[0].serve()]
    finished: list[Finished | None] = [None] * len(hosts)

    def serve(index: int) -> None:
        try:
            finished[index] = hosts[index].serve()
        finally:
            for host in hosts:
                host.server.finish(f"robot {index + 1} of the world stopped")

    threads = [threading.Thread(target=serve, args=(index,), name=f"loop-{index + 1}") for index in range(len(hosts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [end or Finished("not served", failed=True) for end in finished]


def _claim(node, spec: LoopSpec) -> None:
    """Claim the robot's namespace on this machine (``namespace_claim``) before the robot is
    taken: a second robot in a taken namespace (two commands started at once, or one started
    by other means than a command) fails to start, saying which robot holds it."""
    if spec.namespace == "/":
        return
    from humanoid_control.ros.namespace_claim import claim_namespace

    name = f"{node.get_namespace().rstrip('/')}/{node.get_name()}"
    holder = claim_namespace(spec.namespace, f"{name} driving {spec.robot}, pid {os.getpid()}")
    if holder is not None:
        raise RuntimeError(f"a robot already runs in namespace {spec.namespace} ({holder}, on this machine)")


def _choose_cpu(specs: tuple[LoopSpec, ...], log) -> None:
    """Run the process on one CPU where that makes its loops faster (``world_on_one_cpu``,
    ``unpaced_loop_on_one_cpu``): one no other loop of this machine has claimed; a world takes
    the one it runs on even when every CPU is claimed (spread over the cores its robots' turns
    at the interpreter lock cost it a third of its speed), a single robot then stays with the
    kernel's choice."""
    from humanoid_core.processes import claim_cpu, current_cpu, run_on_cpu

    interface = specs[0].interface
    world = len(specs) > 1 and interface.world_on_one_cpu
    unpaced = len(specs) == 1 and not specs[0].driver.paced and interface.unpaced_loop_on_one_cpu
    if not (world or unpaced) or len(os.sched_getaffinity(0)) < 2:
        return
    what = f"the world's {len(specs)} robots' loops run" if world else "the loop runs"
    why = "world_on_one_cpu" if world else "unpaced_loop_on_one_cpu"
    cpu = claim_cpu()
    if cpu is not None:
        run_on_cpu(cpu)
        log.info(f"{what} on CPU {cpu} ({why})")
    elif world:
        cpu = current_cpu()
        run_on_cpu(cpu)
        log.info(f"{what} on CPU {cpu} ({why}), which another loop of this machine runs on too: "
                 "every CPU is taken")
    else:
        log.info(f"{what} on any CPU: every CPU runs another loop of this machine ({why})")


def _spin_in_thread(executor):
    def spin() -> None:
        with contextlib.suppress(Exception):
            executor.spin()

    thread = threading.Thread(target=spin, name="loop-executor", daemon=True)
    thread.start()
    return thread


class LoopProcess:
    """The front's handle on the loop's process: start it, talk to it, stop it. One robot's
    loop, or the loops of several robots in one simulated world (each robot's front
    :meth:`join` s before the process starts)."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._specs: list[LoopSpec] = []
        self._loop_ends: list[Connection] = []
        self._clients: list[LoopClient] = []
        self.process: multiprocessing.process.BaseProcess | None = None

    def join(self, spec: LoopSpec, joint_names: tuple[str, ...],
             on_finished: Callable[[Finished], None] | None = None) -> LoopClient:
        """A robot's loop in this process (before it starts): the front's client of it."""
        if self.process is not None:
            raise RuntimeError("the loop's process has started: no robot joins it now")
        front_end, loop_end = self._context.Pipe(duplex=True)
        self._specs.append(spec)
        self._loop_ends.append(loop_end)
        self._clients.append(LoopClient(front_end, joint_names, on_finished))
        return self._clients[-1]

    def start(self) -> None:
        """Start the process, once (call from a thread that lives as long as the node: the
        kernel's parent-death signal follows the thread that started the process)."""
        if self.process is not None:
            return
        self.process = self._context.Process(
            target=_loop_process_main, args=(tuple(self._specs), tuple(self._loop_ends), os.getpid()),
            name=f"{self._specs[0].node_name}_loop", daemon=False)
        self.process.start()
        for end in self._loop_ends:
            end.close()

    def stop(self, timeout: float = EXIT_TIMEOUT) -> int | None:
        """Ask every robot's loop to stop, each releasing its robot, and wait for the process;
        its exit code (None when it never started)."""
        if self.process is None:
            return None
        for client in self._clients:
            with contextlib.suppress(Exception):
                client.shutdown()
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.terminate()  # SIGTERM: the loop still releases the robot
            self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        return self.process.exitcode
