"""Running a robot driver as a ROS node: the part the sim and hw nodes share.

A driver node is: a ``robot`` parameter, the robot model, the driver's parameters (declared
by the kind of node, turned into a :class:`~humanoid_control.ros.loop_process.DriverSpec`),
the shared :class:`~humanoid_control.ros.robot_interface.RobotInterface` (commands, the
action), optional extras on this side (the simulator's services), and the control loop in
a process of its own (:mod:`humanoid_control.ros.loop_process`), which publishes the robot's
state. It serves until SIGINT/SIGTERM/SIGHUP or until the optional ``duration`` (seconds on
the robot's clock) has elapsed since it came up; on the way out the loop stops and the
driver releases the robot.

Per-robot defaults of every parameter come from a ROS parameter file in the robot's
folder (``humanoid_description/robots/<robot>/sim.yaml`` or ``hw.yaml``,
``/**: ros__parameters:``); values given on the command line or by a launch file win.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.task import Future

from humanoid_control.ros.loop_process import DriverSpec, LoopProcess, LoopSpec
from humanoid_control.ros.node_main import destroy_whole, spin_while
from humanoid_control.ros.parameters import dataclass_parameter_names, declare, declare_dataclass, declare_robot
from humanoid_control.ros.robot_interface import RobotInterface
from humanoid_core import node_parameters
from humanoid_core.guards import PARAMETER_PREFIX as GUARD_PARAMETER_PREFIX
from humanoid_core.guards import SelfCollisionGuardParameters
from humanoid_core.loop import Finished, InterfaceParameters, RemoteError
from humanoid_core.processes import hang_up_like_terminate
from humanoid_description import DEFAULT_ROBOT, RobotModel, RuntimeFile, UnknownRobotError

#: s: longest the spinning thread waits for work before it checks again whether to stop.
SPIN_BACKSTOP = 1.0
#: s: how often the start-up wait looks whether a signal asked to stop meanwhile.
START_POLL = 0.2

#: Declares a driver's parameters on the node (with the robot's per-robot defaults) and says
#: how the loop's process builds it.
DriverDeclaration = Callable[[Node, RobotModel, dict[str, Any]], DriverSpec]
#: What a node adds to the shared interface on the front's side (the simulator's services).
Extension = Callable[[Node, RobotInterface, dict[str, Any]], object]

#: Parameters every driver node declares besides its driver's: plain names, then (prefix,
#: dataclass) groups whose fields are declared with ``declare_dataclass``.
SHARED_PARAMETERS = ("robot", "duration")
SHARED_PARAMETER_GROUPS: tuple[tuple[str, type], ...] = (
    ("", InterfaceParameters), (GUARD_PARAMETER_PREFIX, SelfCollisionGuardParameters))


def parameter_names(driver_groups: tuple[tuple[str, type], ...]) -> list[str]:
    """Every parameter of a driver node whose driver (and extension) declare ``driver_groups``:
    what a parameter override may name (an unknown name would be silently ignored by ROS)."""
    return [*SHARED_PARAMETERS, *(name for prefix, cls in (*SHARED_PARAMETER_GROUPS, *driver_groups)
                                  for name in dataclass_parameter_names(cls, prefix))]


class DriverNode:
    """A node serving the shared robot interface for one driver."""

    def __init__(self, node_name: str, parameter_file: RuntimeFile, declare_driver: DriverDeclaration,
                 extension: Extension | None = None, default_robot: str = DEFAULT_ROBOT,
                 node_options: dict[str, Any] | None = None, loops: LoopProcess | None = None,
                 ended: Future | None = None) -> None:
        """``node_options``, ``loops`` and ``ended`` for robots sharing one process (one
        simulated world): rclpy's options of the node (its namespace, its parameters), the
        loop's process every robot joins, and the future any robot's end completes (see
        :func:`serve`)."""
        self.node = Node(node_name, **(node_options or {}))
        self.log = self.node.get_logger()
        robot = declare_robot(self.node, default_robot)
        self.defaults = node_parameters(parameter_file.path(robot), node_name)
        self.model = RobotModel(robot)
        duration = declare(self.node, "duration", 0.0, self.defaults)
        driver = declare_driver(self.node, self.model, self.defaults)
        params = declare_dataclass(self.node, InterfaceParameters, self.defaults)
        guard = declare_dataclass(self.node, SelfCollisionGuardParameters, self.defaults,
                                  prefix=GUARD_PARAMETER_PREFIX)
        self.spec = LoopSpec(node_name, robot, driver, params, guard, duration, self.node.get_namespace())
        self.failure: str | None = None
        #: Completed when the loop ends: the spinning thread returns at once.
        self.ended: Future = ended if ended is not None else Future()
        self.loops = loops if loops is not None else LoopProcess()
        client = self.loops.join(self.spec, self.model.joints.names, on_finished=self._on_loop_finished)
        self.interface = RobotInterface(self.node, client, self.model, params, driver.clock_is_ros_time)
        if extension is not None:
            extension(self.node, self.interface, self.defaults)

    def _on_loop_finished(self, finished: Finished) -> None:
        if finished.failed:
            self.failure = finished.reason
        if not self.ended.done():
            self.ended.set_result(None)

def serve(drivers: list[DriverNode]) -> int:
    """Start the loop's process and the robots' interfaces (one robot, or the robots of one
    world, which share the process and the ``ended`` future), and serve until shutdown
    (signal) or a loop ends; the exit status: 0, or 1 when a robot could not start or a loop
    failed."""
    executor = EventsExecutor()  # blocking callbacks are offloaded (humanoid_control.ros.offload)
    for driver in drivers:
        executor.add_node(driver.node)
    ended, current = drivers[0].ended, drivers[0]
    try:
        drivers[0].loops.start()
        for current in drivers:
            while current.interface.start(timeout=START_POLL) is None:  # a signal may come meanwhile
                if not rclpy.ok() or ended.done():
                    return _exit_status(drivers)
        spin_while(executor, rclpy.ok, ended, SPIN_BACKSTOP)
    except RemoteError as error:
        current.log.fatal(f"cannot start: {error}")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for driver in drivers:
            driver.interface.stop()
        drivers[0].loops.stop()
        executor.shutdown(timeout_sec=1.0)
        for driver in drivers:
            destroy_whole(driver.node, timeout=1.0)
    return _exit_status(drivers, report=True)


def _exit_status(drivers: list[DriverNode], report: bool = False) -> int:
    """1 when a robot could not start or its loop failed (said in its log when ``report``), else 0."""
    failed = [driver for driver in drivers if driver.failure]
    if report:
        for driver in failed:
            driver.log.fatal(driver.failure)
    return 1 if failed else 0


def run(node_name: str, parameter_file: RuntimeFile, declare_driver: DriverDeclaration,
        extension: Extension | None = None, args: list[str] | None = None,
        drivers: Callable[[], list[DriverNode]] | None = None) -> int:
    """``main`` of a driver node: exit status 0 on a clean shutdown, 1 if the robot cannot
    start. ``drivers`` builds the process's robots instead of one (robots of one world)."""
    rclpy.init(args=args)
    hang_up_like_terminate()  # a closed terminal or kill -HUP: the same clean shutdown as SIGTERM
    logger = rclpy.logging.get_logger(node_name)
    try:
        return serve(drivers() if drivers is not None
                     else [DriverNode(node_name, parameter_file, declare_driver, extension)])
    except (UnknownRobotError, ValueError) as error:
        logger.fatal(f"cannot start: {error}")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):  # stopped while the node was being built
        return 0
    except Exception:
        if not rclpy.ok():  # a signal shut the context down while the node was being built: not a failure
            return 0
        raise
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":  # pragma: no cover - a library module
    sys.exit("run a driver node instead: humanoid_sim sim_node or humanoid_hw hw_node")
