"""The control nodes of a robot in one process: a container, as ROS 2's component containers
host several nodes in one process.

Each node stays a ROS node of its own (its name, parameters, topics, services, actions,
diagnostics and log), written once against a host (:mod:`humanoid_control.ros.node_host`).
What the nodes share here: one executor thread (rclpy's EventsExecutor), one ``robot_state``
subscription that hands every node the per-state topics it asked for
(:mod:`humanoid_control.ros.state_feed`), one answer to a lockstep simulation per state
(:class:`~humanoid_control.ros.lockstep.SharedParticipant`, named after the container), and
one interpreter with its libraries. Why: each node in a process of its own cost a process
of 130-160 MB and a wake-up per message it takes, several times its own work
(docs/graph_cost.md has the figures).

What is given up: isolation between these nodes. A callback that raises ends the process:
the graph (``humanoid sim``/``real``, the launch files) restarts the container with every
node it hosts, and the log names the node whose callback raised. A callback that takes long
delays the other nodes' (what blocks is offloaded: :mod:`humanoid_control.ros.offload`). The
robot's driver is never hosted here: it keeps its own processes, so the robot survives
anything a control node does.

Which nodes a container can host: those registered by the installed packages under the
entry point group ``humanoid.nodes`` (name = node name, value = ``module:Class``, the class
built with the node and its host), as ros2cli finds the verbs packages register:
humanoid_control registers its control nodes, humanoid_tools the recorder. A hosted class
may define ``RESTARTED = False`` (the container started again after a crash then leaves it
out: the recorder, whose bag a new process cannot finish) and ``stop(spin_once)`` (called
when the container stops, while its executor can still take messages: the recorder drains
its subscriptions and closes its bag) and ``WATCHER = True`` (it only watches the robot and
sends it nothing: it takes each state after the nodes that do, and the container's lockstep
answer does not wait for it; :meth:`~humanoid_control.ros.node_host.Shared.watch_only`).

Parameters (of the container's own node): ``nodes``, the hosted nodes' names separated by
commas, and for each hosted node N its parameters as ``N.<parameter>``
(``balance_monitor.robot:=bioloid``); ``nice`` (default 0), the process's scheduling priority
(:func:`~humanoid_core.processes.priority.set_priority`): the real robot's graph gives its
container the driver loop's ``loop_nice``, since the controllers stream set-points to a robot
that runs to the wall clock, and a container starved by the machine's other work paused
gaits and sent set-points the robot refused as late (docs/graph_cost.md, "The container's
priority").
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

import rclpy
import rclpy.logging
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from humanoid_control.nodes.specs import CONTAINER_NICE
from humanoid_control.ros import STOP_TIMEOUT, Shared, destroy_whole, report_restart, spin_while
from humanoid_core import NODES, Registration, registered
from humanoid_core.processes import (
    RESTART_VARIABLE,
    hang_up_like_terminate,
    leads_session,
    set_priority,
    stop_on_signals,
)
from humanoid_description import UnknownRobotError

#: The container's node name when none is given.
NODE_NAME = "control_container"


def hostable() -> dict[str, Registration]:
    """The nodes the installed packages let a container host, by name."""
    return {entry.name: entry for entry in registered(NODES)}


def hosted_names(container: Node, known: Sequence[str]) -> list[str]:
    """The nodes ``container``'s ``nodes`` parameter names; ValueError for an unknown one."""
    value = container.get_parameter("nodes").value if container.has_parameter("nodes") else ""
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise ValueError(f"parameter nodes: {', '.join(unknown) or 'none given'}; the nodes a container hosts here "
                         f"are {', '.join(sorted(known))} (entry point group {NODES})")
    return names


def container_nice(container: Node) -> int:
    """The ``nice`` the container was given (0 when not given), checked before any node is
    built: a bad value ends the container with nothing hosted."""
    nice = container.get_parameter(CONTAINER_NICE).value if container.has_parameter(CONTAINER_NICE) else 0
    if not isinstance(nice, int) or isinstance(nice, bool) or not -20 <= nice <= 19:
        raise ValueError(f"parameter {CONTAINER_NICE} must be an integer within -20..19, got {nice!r}")
    return nice


def raise_priority(container: Node, nice: int) -> None:
    """The process at ``nice``, every thread of it and (as the leader of its session) its
    session's scheduling group; nothing when 0. Threads started later inherit it from the
    threads that start them."""
    if nice:
        set_priority(nice, container.get_logger().warning, "the control container", session=leads_session())


def hosted_parameters(container: Node, name: str) -> list[Parameter]:
    """The parameters ``container`` was given for hosted node ``name`` (``name.<parameter>``)."""
    return [Parameter(key, value=parameter.value)
            for key, parameter in container.get_parameters_by_prefix(name).items()]


def build_node(container: Node, host: Shared, name: str, cls: type) -> tuple[Node, object]:
    """Hosted node ``name``: its own rclpy node (its parameters only: the command line's are
    the container's) in the container's namespace, its behaviour ``cls`` built with the host."""
    node = Node(name, namespace=container.get_namespace(), use_global_arguments=False,
                parameter_overrides=hosted_parameters(container, name))
    if getattr(cls, "WATCHER", False):
        host.watch_only(name)
    behaviour = cls(node, host)
    host.adopt_clock(node)
    return node, behaviour


def stop_hosted(hosted: list[tuple[Node, object]], executor) -> None:
    """Each behaviour's own stop, while ``executor`` (holding the hosted nodes) can still take
    messages: the recorder drains its subscriptions and seals its bag."""
    for _node, behaviour in hosted:
        if hasattr(behaviour, "stop"):
            behaviour.stop(lambda timeout: executor.spin_once(timeout_sec=timeout))


def destroy_hosted(hosted: list[tuple[Node, object]]) -> None:
    """The hosted nodes destroyed whole (offloaded work, waitables, node), the last built first."""
    for node, _behaviour in reversed(hosted):
        destroy_whole(node)


def main(args: Sequence[str] | None = None) -> int:
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    with stop_on_signals(signal.SIGINT, signal.SIGTERM) as stop:
        hang_up_like_terminate()
        container: Node | None = None
        hosted: list[tuple[Node, object]] = []
        executor = None
        host: Shared | None = None
        try:
            container = Node(NODE_NAME, automatically_declare_parameters_from_overrides=True)
            nice = container_nice(container)
            host = Shared(container, stopping=stop.is_set)
            entries = hostable()
            log = container.get_logger()
            for name in hosted_names(container, list(entries)):
                cls = entries[name].load()
                if os.environ.get(RESTART_VARIABLE) and not getattr(cls, "RESTARTED", True):
                    log.warning(f"{name} is not started again in a restarted container")
                    continue
                try:
                    hosted.append(build_node(container, host, name, cls))
                except (ValueError, UnknownRobotError) as error:
                    raise ValueError(f"{name}: {error}") from None
            log.info(f"hosting {', '.join(node.get_name() for node, _ in hosted)} (watchers, which take each state "
                     f"after the others: {', '.join(sorted(host.watchers)) or 'none'})")
            for node in (container, *(node for node, _ in hosted)):  # each on diagnostics, as if alone
                report_restart(node)
            executor = EventsExecutor()
            for node in (container, *(node for node, _ in hosted)):
                executor.add_node(node)
            raise_priority(container, nice)
            spin_while(executor, lambda: not stop.is_set() and rclpy.ok(), stop=stop)
            stop_hosted(hosted, executor)
            return 0
        except (ValueError, UnknownRobotError) as error:
            (container.get_logger() if container is not None
             else rclpy.logging.get_logger(NODE_NAME)).fatal(f"cannot start: {error}")
            return 1
        except ExternalShutdownException:
            return 0
        finally:
            if executor is not None:
                executor.shutdown(timeout_sec=STOP_TIMEOUT)
            if host is not None and host.participant is not None:
                host.participant.leave()
            destroy_hosted(hosted)
            if container is not None:
                container.destroy_node()
            rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
