"""Declaring ROS parameters with per-robot defaults and forgiving number types.

ROS parameters are strictly typed: a float parameter given ``-p rate:=100`` (an integer)
would stop a node with a type exception. Parameters declared here accept any value that
converts to the type of their default, and a wrong one gets a clear error.
"""

from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node


def declare(node: Node, name: str, default: Any, defaults: dict[str, Any] | None = None) -> Any:
    """Declare ``name``; its default is ``defaults[name]`` (a robot's YAML) or ``default``.

    The value (command line or launch file override, else the default) is returned
    converted to the type of ``default``; ValueError names the parameter otherwise.
    """
    initial = (defaults or {}).get(name, default)
    value = node.declare_parameter(name, initial, ParameterDescriptor(dynamic_typing=True)).value
    kind = type(default)
    if kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"parameter {name} must be true or false, got {value!r}")
        return value
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"parameter {name} must be a {kind.__name__}, got {value!r}") from None
