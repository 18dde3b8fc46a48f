"""What the launch files give ``launch_ros``, as plain data (no ``launch`` import):
the stack's node specs (:mod:`humanoid_bringup.graphs`) as ``Node`` arguments, and
robot_state_publisher's parameters.

Under ``ros2 launch``, robot_state_publisher owns ``robot_description`` (it publishes
the URDF it is given, transient local, and turns joint_states into TF); the driver
node is told not to publish it (``publish_robot_description: false``), so the topic has
exactly one publisher. Without ros2 launch (``humanoid sim``/``humanoid real``, which
cannot start robot_state_publisher on a pip install) the driver node publishes it
itself, its default. Both publish the same URDF: the xacro expanded by
:func:`humanoid_description.robots.urdf_xml`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable

from humanoid_control.processes.node_graph import NodeSpec
from humanoid_description.robots import urdf_xml

#: The launch arguments both launch files take to switch parts of the graph on or off
#: ("true"/"false", default "true"): the keyword arguments of :func:`graphs.sim_nodes`
#: and :func:`graphs.real_nodes` of the same names.
GRAPH_SWITCHES = {
    "balance_monitor": "start the balance monitor (balance_state, balance_markers)",
    "self_collision_checker": "start the self-collision checker (self_collision_state, markers, check services)",
    "self_collision_veto": "refuse commands that bring two links within the safety distance",
    "walk_controller": "start the walk controller (cmd_vel, walk action)",
    "gait_controller": "start the gait controller (play_gait action; robots with gaits)",
}


def launch_node(spec: NodeSpec) -> dict[str, object]:
    """``launch_ros.actions.Node`` keyword arguments that start ``spec`` as the ``humanoid``
    command does: the console script its package installs for its module, its node name,
    its parameter files, then its parameters."""
    package, executable = ros_executable(spec.module)
    return {"package": package, "executable": executable, "name": spec.name, "output": "screen",
            "parameters": [*(str(path) for path in spec.parameter_files), dict(spec.parameters)]}


def ros_executable(module: str) -> tuple[str, str]:
    """``(package, executable)`` that ``ros2 run``/``ros2 launch`` start to run ``module``'s
    ``main``: the console script its package declares for it (setup.py entry points)."""
    package = module.split(".")[0]
    for distribution in (package, package.replace("_", "-")):
        try:
            entry_points = importlib.metadata.distribution(distribution).entry_points
        except importlib.metadata.PackageNotFoundError:
            continue
        for entry_point in entry_points.select(group="console_scripts"):
            if entry_point.value == f"{module}:main":
                return package, entry_point.name
    raise LookupError(f"package {package} installs no console script running {module}:main (setup.py entry_points)")


def graph_switches(argument: Callable[[str], str]) -> dict[str, bool]:
    """The :data:`GRAPH_SWITCHES` as keyword arguments of the graph, from the launch
    arguments' values (``argument(name)``)."""
    return {name: argument(name) == "true" for name in GRAPH_SWITCHES}


def number_or_none(text: str) -> float | None:
    """A launch argument that may be left empty (keep the parameter file's value)."""
    return float(text) if text else None


def state_publisher_parameters(robot: str, use_sim_time: bool = False) -> dict[str, object]:
    """robot_state_publisher's parameters: the robot's URDF (it publishes robot_description)."""
    return {"robot_description": urdf_xml(robot), "use_sim_time": use_sim_time}
