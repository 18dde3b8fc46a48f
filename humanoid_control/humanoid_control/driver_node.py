"""Running a robot driver as a ROS node: the part the sim and hw nodes share.

A driver node is: a ``robot`` parameter, the robot model, a driver built from the
node's parameters, the shared :class:`~humanoid_control.robot_interface.RobotInterface`,
optional extras (the simulator's services), and a multi-threaded executor that spins
until SIGINT/SIGTERM or until the optional ``duration`` (seconds on the robot's clock)
has elapsed since it came up. On the way out the interface stops and the driver releases the robot.

Per-robot defaults of every parameter come from a ROS parameter file shipped with
the driver's package (``config/<robot>.yaml``, ``/**: ros__parameters:``); values
given on the command line or by a launch file win.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rclpy
import yaml
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from humanoid_control.driver import DriverError, RobotDriver
from humanoid_control.parameters import declare
from humanoid_control.robot_interface import InterfaceParameters, RobotInterface
from humanoid_description.model import RobotModel
from humanoid_description.robots import ROBOTS, UnknownRobotError

DriverFactory = Callable[[Node, RobotModel, dict[str, Any]], RobotDriver]
Extension = Callable[[Node, RobotInterface, RobotDriver], None]


def robot_defaults(path: Path) -> dict[str, Any]:
    """Flattened ``ros__parameters`` of a parameter file (nested keys joined with dots);
    empty when the file does not exist (a robot this driver has no defaults for)."""
    if not Path(path).is_file():
        return {}
    data = yaml.safe_load(Path(path).read_text()) or {}
    section = next(iter(data.values()), {}).get("ros__parameters", {}) if data else {}

    def flatten(prefix: str, value: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                out.update(flatten(f"{prefix}.{key}" if prefix else str(key), item))
            return out
        return {prefix: value}

    return flatten("", section)


class DriverNode:
    """A node serving the shared robot interface for one driver."""

    def __init__(self, node_name: str, config_dir: Path, make_driver: DriverFactory,
                 extension: Extension | None = None, default_robot: str = "hoap2") -> None:
        self.node = Node(node_name)
        robot = declare(self.node, "robot", default_robot)
        if robot not in ROBOTS:
            raise UnknownRobotError(robot)
        self.defaults = robot_defaults(config_dir / f"{robot}.yaml")
        self.model = RobotModel(robot)
        self.duration = declare(self.node, "duration", 0.0, self.defaults)
        self.driver = make_driver(self.node, self.model, self.defaults)
        self.interface = RobotInterface(self.node, self.driver, self.model,
                                        InterfaceParameters.declare(self.node, self.defaults))
        if extension is not None:
            extension(self.node, self.interface, self.driver)
        self.finished = threading.Event()
        self._started_at: float | None = None
        if self.duration > 0.0:
            self.interface.add_cycle_hook(self._check_duration)

    def _check_duration(self, state) -> None:
        if self._started_at is None:
            self._started_at = state.stamp
        if state.stamp - self._started_at >= self.duration and not self.finished.is_set():
            self.node.get_logger().info(f"duration of {self.duration:g} s reached, shutting down")
            self.finished.set()

    def spin(self) -> None:
        """Start the interface and serve until shutdown (signal) or the duration ends."""
        self.interface.start()
        executor = MultiThreadedExecutor(num_threads=4)
        executor.add_node(self.node)
        try:
            while rclpy.ok() and not self.finished.is_set():
                executor.spin_once(timeout_sec=0.1)
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            self.interface.stop()
            executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()


def run(node_name: str, config_dir: Path, make_driver: DriverFactory, extension: Extension | None = None,
        args: list[str] | None = None) -> int:
    """``main`` of a driver node: exit status 0 on a clean shutdown, 1 if the robot cannot start."""
    rclpy.init(args=args)
    logger = rclpy.logging.get_logger(node_name)
    try:
        node = DriverNode(node_name, config_dir, make_driver, extension)
        node.spin()
        return 0
    except (DriverError, UnknownRobotError, ValueError) as error:
        logger.fatal(f"cannot start: {error}")
        return 1
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":  # pragma: no cover - a library module
    sys.exit("run a driver node instead: humanoid_sim sim_node or humanoid_hw hw_node")
