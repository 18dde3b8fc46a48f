"""Typed parameter dataclasses: a field's default and the description of its parameter.

Every node's parameters are frozen dataclasses whose fields carry their description
(:func:`documented`); ``humanoid_control.ros.parameters.declare_dataclass`` declares them
as ROS parameters, and experiments build the same dataclasses without ROS.
"""

from __future__ import annotations

from dataclasses import field

__all__ = ["documented"]


def documented(default: object, description: str) -> object:
    """A dataclass field with a default and the description of its ROS parameter."""
    return field(default=default, metadata={"description": description})
