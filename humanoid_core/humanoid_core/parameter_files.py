"""Reading ROS 2 parameter files (``<node>: ros__parameters: ...``) without ROS.

Nodes read their robot's file through this module for their parameters' defaults; tests
and benchmarks that run a node's computation in-process read the same file the same way,
so that both see one set of per-robot values.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from humanoid_description import CONTROL_NODE_PARAMETERS, load_package_yaml


def node_parameters(path: Path, node_name: str) -> dict[str, Any]:
    """Flattened parameters (nested keys joined with dots) that a node called ``node_name``
    gets from a parameter file: the ``/**`` section, then its own section, which wins.
    Empty when the file does not exist."""
    path = Path(path)
    if not path.is_file():
        return {}
    stat = path.stat()
    data = _parsed(path.resolve(), stat.st_mtime_ns, stat.st_size)
    values: dict[str, Any] = {}
    for section in ("/**", node_name, f"/{node_name}"):
        values.update(flatten(copy.deepcopy((data.get(section) or {}).get("ros__parameters", {}))))
    return values


@functools.lru_cache(maxsize=16)
def _parsed(path: Path, _mtime_ns: int, _size: int) -> dict[str, Any]:
    """A robot's parameter file parsed once per process while it is unchanged: the control
    container's nodes each read the same file at start (six pure-Python parses were 0.3 s
    of CPU per start). Callers get copies of the sections (:func:`flatten`)."""
    return load_package_yaml(path.read_text()) or {}


def control_node_defaults(robot: str, node_name: str) -> dict[str, Any]:
    """What the control node ``node_name`` (its canonical name) gets from the robot's file of
    control-node parameters, ``humanoid_description/robots/<robot>/control.yaml`` (empty if none)."""
    return node_parameters(CONTROL_NODE_PARAMETERS.path(robot), node_name)


T = TypeVar("T")
#: Parameters every node has that are not part of its parameter dataclass.
NODE_PARAMETERS = frozenset({"robot", "use_sim_time"})


def control_node_parameters(cls: type[T], robot: str, node_name: str, **overrides: Any) -> T:
    """The dataclass ``cls`` of control node ``node_name`` with the robot's values (for
    in-process use: tests, benchmarks); a value in the file that is not one of its fields is
    refused, naming the file."""
    values = control_node_defaults(robot, node_name)
    unknown = set(values) - {f.name for f in fields(cls)} - NODE_PARAMETERS  # type: ignore[arg-type]
    if unknown:
        raise ValueError(f"{CONTROL_NODE_PARAMETERS.path(robot)}: {node_name}: not parameters of the node: "
                         f"{', '.join(sorted(unknown))}")
    return cls(**{**{k: v for k, v in values.items() if k not in NODE_PARAMETERS}, **overrides})


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as one mapping of dotted names (``{servo: {position_gain: 0.2}}`` ->
    ``{"servo.position_gain": 0.2}``)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}
