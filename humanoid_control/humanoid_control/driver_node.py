"""Running a robot driver as a ROS node: the part the sim and hw nodes share.

A driver node is: a ``robot`` parameter, the robot model, a driver built from the
node's parameters, the shared :class:`~humanoid_control.robot_interface.RobotInterface`,
optional extras (the simulator's services), and a multi-threaded executor that spins
until SIGINT/SIGTERM/SIGHUP or until the optional ``duration`` (seconds on the robot's clock)
has elapsed since it came up. On the way out the interface stops and the driver releases the robot.

Per-robot defaults of every parameter come from a ROS parameter file shipped with
the driver's package (``config/<robot>.yaml``, ``/**: ros__parameters:``); values
given on the command line or by a launch file win.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from humanoid_control.command_guard import CommandGuard
from humanoid_control.driver import DriverError, RobotDriver
from humanoid_control.interface_parameters import InterfaceParameters
from humanoid_control.parameter_files import node_parameters
from humanoid_control.parameters import dataclass_parameter_names, declare, declare_dataclass, declare_robot
from humanoid_control.pooled_executor import PooledExecutor
from humanoid_control.process_lifetime import hang_up_like_terminate
from humanoid_control.robot_interface import RobotInterface
from humanoid_control.self_collision_guard import PARAMETER_PREFIX as GUARD_PARAMETER_PREFIX
from humanoid_control.self_collision_guard import SelfCollisionGuard, SelfCollisionGuardParameters
from humanoid_description.model import RobotModel
from humanoid_description.robots import UnknownRobotError
from humanoid_description.runtime_files import RuntimeFile

#: s: longest the spinning thread waits for work before it checks again whether to stop.
SPIN_BACKSTOP = 1.0

DriverFactory = Callable[[Node, RobotModel, dict[str, Any]], RobotDriver]
#: What a node adds to the shared interface (the simulator's services): built with the node's
#: per-robot parameter defaults.
Extension = Callable[[Node, RobotInterface, RobotDriver, dict[str, Any]], object]
GuardFactory = Callable[[Node, RobotModel, dict[str, Any]], CommandGuard]


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


def make_guard(node: Node, model: RobotModel, defaults: dict[str, Any]) -> CommandGuard:
    """The command guard of every driver node (sim and hw alike): the one place that
    decides which checks stand between accepted commands and the driver. The
    self-collision veto (:mod:`humanoid_control.self_collision_guard`), on unless the
    ``self_collision_veto`` parameter is false."""
    params = declare_dataclass(node, SelfCollisionGuardParameters, defaults, prefix=GUARD_PARAMETER_PREFIX)
    log = node.get_logger()
    guard = SelfCollisionGuard(model.name, params, warn=log.warning, inform=log.info)
    if params.veto:
        log.info(f"self-collision veto on (safety distance {guard.safety_distance * 1000:g} mm)")
    else:
        log.warning("self-collision veto off (self_collision_veto false): commands are not checked")
    return guard


class DriverNode:
    """A node serving the shared robot interface for one driver."""

    def __init__(self, node_name: str, parameter_file: RuntimeFile, make_driver: DriverFactory,
                 extension: Extension | None = None, default_robot: str = "hoap2",
                 guard_factory: GuardFactory = make_guard) -> None:
        self.node = Node(node_name)
        robot = declare_robot(self.node, default_robot)
        self.defaults = node_parameters(parameter_file.path(robot), node_name)
        self.model = RobotModel(robot)
        self.duration = declare(self.node, "duration", 0.0, self.defaults)
        self.driver = make_driver(self.node, self.model, self.defaults)
        self.interface = RobotInterface(self.node, self.driver, self.model,
                                        declare_dataclass(self.node, InterfaceParameters, self.defaults),
                                        guard_factory(self.node, self.model, self.defaults))
        if extension is not None:
            extension(self.node, self.interface, self.driver, self.defaults)
        self.finished = threading.Event()
        #: Wakes the spinning thread when the duration ends (a signal wakes it through rclpy).
        self._wake = self.node.create_guard_condition(lambda: None)
        self._started_at: float | None = None
        if self.duration > 0.0:
            self.interface.add_cycle_hook(self._check_duration)

    def _check_duration(self, state) -> None:
        if self._started_at is None:
            self._started_at = state.stamp
        if state.stamp - self._started_at >= self.duration and not self.finished.is_set():
            self.node.get_logger().info(f"duration of {self.duration:g} s reached, shutting down")
            self.finished.set()
            self._wake.trigger()

    def spin(self) -> None:
        """Start the interface and serve until shutdown (signal) or the duration ends."""
        executor = PooledExecutor(num_threads=4)
        executor.add_node(self.node)
        try:
            self.interface.start()  # a signal may come while the servos are set up: stop() then releases them
            # the executor wakes for work, a signal or the duration's end; each wake costs the
            # control thread the interpreter lock for ~1 ms (rebuilding the wait set), so no
            # polling: the timeout is only a backstop
            while rclpy.ok() and not self.finished.is_set():
                executor.spin_once(timeout_sec=SPIN_BACKSTOP)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            self.interface.stop()
            executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()


def run(node_name: str, parameter_file: RuntimeFile, make_driver: DriverFactory, extension: Extension | None = None,
        args: list[str] | None = None) -> int:
    """``main`` of a driver node: exit status 0 on a clean shutdown, 1 if the robot cannot start."""
    rclpy.init(args=args)
    hang_up_like_terminate()  # a closed terminal or kill -HUP: the same clean shutdown as SIGTERM
    logger = rclpy.logging.get_logger(node_name)
    try:
        node = DriverNode(node_name, parameter_file, make_driver, extension)
        node.spin()
        return 0
    except (DriverError, UnknownRobotError, ValueError) as error:
        logger.fatal(f"cannot start: {error}")
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):  # stopped while the node was being built
        return 0
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":  # pragma: no cover - a library module
    sys.exit("run a driver node instead: humanoid_sim sim_node or humanoid_hw hw_node")
