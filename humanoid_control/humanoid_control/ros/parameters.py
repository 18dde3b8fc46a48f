"""Declaring ROS parameters with per-robot defaults and forgiving number types.

ROS parameters are strictly typed: a float parameter given ``-p rate:=100`` (an integer)
would stop a node with a type exception. Parameters declared here accept any value that
converts to the type of their default, and a wrong one gets a clear error.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from humanoid_core import control_node_defaults
from humanoid_description import DEFAULT_ROBOT, ROBOTS, UnknownRobotError

T = TypeVar("T")


def declare_robot(node: Node, default: str = DEFAULT_ROBOT) -> str:
    """The node's ``robot`` parameter: one of the known robots, else UnknownRobotError."""
    robot = declare(node, "robot", default)
    if robot not in ROBOTS:
        raise UnknownRobotError(robot)
    return robot


def declare_control_node(node: Node, cls: type[T], node_name: str) -> tuple[str, T]:
    """A control node's robot (:func:`declare_robot`) and its parameters ``cls``
    (:func:`declare_dataclass`), whose defaults are the robot's section ``node_name`` of
    its control-node parameter file."""
    robot = declare_robot(node)
    return robot, declare_dataclass(node, cls, control_node_defaults(robot, node_name))


def declare_dataclass(node: Node, cls: type[T], defaults: dict[str, Any] | None = None, prefix: str = "",
                      builtin: T | None = None) -> T:
    """Declare one ROS parameter per field of the frozen dataclass ``cls`` and build it.

    Each parameter is named ``prefix + field name``, typed like the field's built-in
    default (from ``builtin``, else the class default), described by the field's
    ``description`` metadata; its default is the robot's value from ``defaults`` (a
    parameter file, keys with the prefix) when given. The dataclass's own checks
    (``__post_init__``) then run on the values, so the node refuses bad ones at start.
    """
    base = builtin if builtin is not None else cls()  # type: ignore[call-arg]
    values = {f.name: declare(node, name, getattr(base, f.name), defaults, f.metadata.get("description", ""))
              for f, name in zip(dataclasses.fields(cls), dataclass_parameter_names(cls, prefix),  # type: ignore[arg-type]
                                 strict=True)}
    return cls(**values)


def dataclass_parameter_names(cls: type, prefix: str = "") -> list[str]:
    """The names of the parameters :func:`declare_dataclass` declares for ``cls``."""
    return [prefix + f.name for f in dataclasses.fields(cls)]


def declare(node: Node, name: str, default: Any, defaults: dict[str, Any] | None = None,
            description: str = "") -> Any:
    """Declare ``name``; its default is ``defaults[name]`` (a robot's YAML) or ``default``.

    The value (command line or launch file override, else the default) is returned
    converted to the type of ``default``; ValueError names the parameter otherwise.
    """
    initial = (defaults or {}).get(name, default)
    descriptor = ParameterDescriptor(dynamic_typing=True, description=description)
    value = node.declare_parameter(name, initial, descriptor).value
    kind = type(default)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"parameter {name} must be true or false, got {value!r}")
        return value
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"parameter {name} must be a {kind.__name__}, got {value!r}") from None
