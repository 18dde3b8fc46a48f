"""The control-layer nodes as processes to start: module, node name and parameter file.

One description of each node, used by ``humanoid_bringup.graphs`` (the graphs the
``humanoid`` command starts, mirrored by the launch files), the benchmarks and the system
tests, which start a node alone. Importing this module imports none of the nodes.
Each node reads its section of the robot's ``control.yaml``
(``humanoid_description/robots/<robot>/control.yaml``); ``parameters`` override it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from humanoid_core.balance.fall_manager import NODE_NAME as FALL_MANAGER
from humanoid_core.balance.parameters import NODE_NAME as BALANCE_MONITOR
from humanoid_core.biped_walking import NODE_NAME as WALK_CONTROLLER
from humanoid_core.energy import NODE_NAME as ENERGY_MONITOR
from humanoid_core.odometry import NODE_NAME as ODOMETRY
from humanoid_core.processes import NodeSpec
from humanoid_core.quadruped_gaits import NODE_NAME as GAIT_CONTROLLER

__all__ = [
    "BALANCE_MONITOR",
    "CONTAINER_MODULE",
    "CONTROL_CONTAINER",
    "ENERGY_MONITOR",
    "FALL_MANAGER",
    "GAIT_CONTROLLER",
    "ODOMETRY",
    "SELF_COLLISION_CHECKER",
    "TRAJECTORY_GENERATOR",
    "WALK_CONTROLLER",
    "balance_monitor_node_spec",
    "container_node_spec",
    "energy_monitor_node_spec",
    "fall_manager_node_spec",
    "gait_controller_node_spec",
    "host_in",
    "hosted_names",
    "odometry_node_spec",
    "self_collision_checker_node_spec",
    "trajectory_generator_node_spec",
    "walk_controller_node_spec",
    "with_node_parameters",
]

SELF_COLLISION_CHECKER = "self_collision_checker"
TRAJECTORY_GENERATOR = "trajectory_generator"
#: The container hosting a graph's control nodes (:mod:`humanoid_control.nodes.container`).
CONTROL_CONTAINER = "control_container"
CONTAINER_MODULE = "humanoid_control.nodes.container"
#: The container's parameter: its process's nice value (0, or not given: the default priority).
CONTAINER_NICE = "nice"



def _control_node(name: str, robot: str, parameters: Mapping[str, object] | None) -> NodeSpec:
    """The node reads its defaults from its section of the robot's ``control.yaml`` itself
    (:func:`~humanoid_control.ros.parameters.declare_control_node`): the file is one source,
    never passed again as parameter overrides, which would hide what a caller changes."""
    return NodeSpec(name, f"humanoid_control.nodes.{name}", {"robot": robot, **(parameters or {})})


def container_node_spec(nodes: Sequence[NodeSpec], name: str = CONTROL_CONTAINER, nice: int = 0) -> NodeSpec:
    """One process hosting ``nodes`` (control nodes of this module, each with its parameters):
    the container's parameters name them and carry each one's as ``<node>.<parameter>``;
    ``nice``: the process's scheduling priority (0: the default)."""
    parameters: dict[str, object] = {"nodes": ",".join(spec.name for spec in nodes)}
    if nice:
        parameters[CONTAINER_NICE] = nice
    for spec in nodes:
        if spec.parameter_files:
            raise ValueError(f"a container gives its nodes parameters, not parameter files: {spec.name}")
        parameters.update({f"{spec.name}.{key}": value for key, value in spec.parameters.items()})
    return NodeSpec(name, CONTAINER_MODULE, parameters)


def hosted_names(container: NodeSpec) -> list[str]:
    """The nodes a container spec hosts."""
    return list(container.hosted)


def with_node_parameters(nodes: Sequence[NodeSpec], name: str, parameters: Mapping[str, object]) -> list[NodeSpec]:
    """A graph whose node ``name`` (a process of its own, or hosted by a container) has
    ``parameters`` on top of its own; KeyError when the graph has no such node."""
    updated, found = [], False
    for spec in nodes:
        if spec.name == name:
            spec, found = dataclasses.replace(spec, parameters={**spec.parameters, **parameters}), True
        elif spec.module == CONTAINER_MODULE and name in hosted_names(spec):
            spec, found = dataclasses.replace(spec, parameters={
                **spec.parameters, **{f"{name}.{key}": value for key, value in parameters.items()}}), True
        updated.append(spec)
    if not found:
        raise KeyError(f"no node {name} in the graph")
    return updated


def host_in(container: NodeSpec, spec: NodeSpec, first: bool = False) -> NodeSpec:
    """``container`` hosting ``spec`` too (``first``: built before the others)."""
    names = hosted_names(container)
    names = [spec.name, *names] if first else [*names, spec.name]
    return dataclasses.replace(container, parameters={
        **container.parameters, "nodes": ",".join(names),
        **{f"{spec.name}.{key}": value for key, value in spec.parameters.items()}})


def balance_monitor_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The balance monitor of ``robot``."""
    return _control_node(BALANCE_MONITOR, robot, parameters)


def energy_monitor_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The energy monitor (current, power, energy) of ``robot``."""
    return _control_node(ENERGY_MONITOR, robot, parameters)


def fall_manager_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The fall manager (``fall_manager_state``, protective action, get-up) of ``robot``."""
    return _control_node(FALL_MANAGER, robot, parameters)


def self_collision_checker_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The self-collision checker of ``robot``."""
    return _control_node(SELF_COLLISION_CHECKER, robot, parameters)


def trajectory_generator_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The trajectory generator (``play_motion``) of ``robot`` (no section in ``control.yaml``)."""
    return _control_node(TRAJECTORY_GENERATOR, robot, parameters)


def walk_controller_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The walk controller of ``robot``."""
    return _control_node(WALK_CONTROLLER, robot, parameters)


def gait_controller_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The gait controller (``play_gait``) of ``robot``."""
    return _control_node(GAIT_CONTROLLER, robot, parameters)


def odometry_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The odometry (``odom``, ``/tf``; in simulation the ground truth's too) of ``robot``."""
    return _control_node(ODOMETRY, robot, parameters)
