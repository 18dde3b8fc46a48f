"""The hardware node: the Dynamixel driver behind the shared robot interface.

Serves exactly the interface of the simulation node (joint_states, joint_commands,
joint_trajectory, follow_joint_trajectory, robot_description, diagnostics), so that a
controller cannot tell the real robot from the simulated one. Bus parameters (port,
baud, protocol, return delay, retries, policies for missing servos and shutdown) are
ROS parameters whose defaults come from the robot's ``bus.yaml``; the interface's from
its ``hw.yaml`` (both in ``humanoid_description/robots/<robot>/``).

The driver schedules its cycles on a monotonic clock (a step of the system clock
neither stalls nor bursts the loop); the shared front stamps messages with ROS time
(the system clock of a real robot) mapped from it.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from rclpy.node import Node

from humanoid_control.ros import DriverSpec, declare, driver_node
from humanoid_description import HW_NODE_PARAMETERS, RobotModel
from humanoid_hw.driver import DynamixelDriver
from humanoid_hw.hardware_config import DynamixelConfig, hardware_config_path, load_hardware_config
from humanoid_hw.hw_node_spec import NODE_NAME


def declare_driver(node: Node, model: RobotModel, defaults: dict[str, Any]) -> DriverSpec:
    """The Dynamixel driver's parameters (one per :class:`DynamixelConfig` field, the robot's
    ``bus.yaml`` values as defaults); the driver is built in the loop's process."""
    if model.config.joint_map is None:
        raise ValueError(f"robot {model.name} has no Dynamixel joint map "
                         f"(humanoid_description/robots/{model.name}/joint_map.yaml)")
    path = hardware_config_path(model.name)
    base = load_hardware_config(model.name) if path.exists() else DynamixelConfig()
    # each parameter has the type of the field's built-in default (16 or 16.0 both work)
    builtin = DynamixelConfig()
    values = {field.name: declare(node, field.name, type(getattr(builtin, field.name))(getattr(base, field.name)),
                                  defaults)
              for field in dataclasses.fields(DynamixelConfig)}
    config = DynamixelConfig(**values)
    node.get_logger().info(
        f"Dynamixel bus {config.port} at {config.baud} baud, protocol {config.protocol}.0, "
        f"{len(model.joints)} servos; missing servo: {config.on_missing}, on shutdown: {config.on_shutdown}")
    return DriverSpec(f"{__name__}:build_driver", config, clock_is_ros_time=False)


def build_driver(model: RobotModel, config: DynamixelConfig) -> DynamixelDriver:
    """The Dynamixel driver on its monotonic clock (in the loop's process)."""
    return DynamixelDriver.from_model(model, config)


def main(args: list[str] | None = None) -> int:
    return driver_node.run(NODE_NAME, HW_NODE_PARAMETERS, declare_driver, None, args)


if __name__ == "__main__":
    sys.exit(main())
