"""What the launch files give ``launch_ros``, as plain data (only :func:`launch_actions`
imports ``launch``): the stack's node specs (:mod:`humanoid_bringup.graphs`) as ``Node``
arguments, the full install's tools (robot_state_publisher, RViz) that are there, and
``ros2 bag record``'s command.

Every process a launch file starts dies with the launch process, even killed outright,
as the nodes of ``humanoid sim`` do: each runs behind the tether prefix
(``humanoid_core.processes.run_tethered --exec``, the parent-death signal). A node whose exit
ends the graph (the driver: nothing else holds the robot) shuts the launch down when it
exits; the others are respawned as ``humanoid sim`` restarts them (:data:`RESTART_POLICY`'s
first delay and count; ``launch`` has no back-off).

Under ``ros2 launch``, robot_state_publisher owns ``robot_description`` (it publishes
the URDF it is given, transient local, and turns joint_states into TF); the driver
node is told not to publish it (``publish_robot_description: false``), so the topic has
exactly one publisher. Where robot_state_publisher is not installed, and without ros2
launch (``humanoid sim``/``humanoid real``, which cannot start it on a pip install), the
driver node publishes it itself, its default. Both publish the same URDF: the xacro
expanded by :func:`humanoid_description.robots.urdf_xml`. A missing optional package is
said before anything starts: RViz asked for and not installed refuses the launch.
"""

from __future__ import annotations

import importlib.metadata
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from humanoid_core.processes import RESTART_POLICY, NodeSpec, OnExit, describe_exit, tethered_program
from humanoid_description import package_share_directory

if TYPE_CHECKING:
    from humanoid_description import Robot

#: The launch arguments both launch files take to switch parts of the graph on or off
#: ("true"/"false", default "true"): the keyword arguments of :func:`graphs.sim_nodes`
#: and :func:`graphs.real_nodes` of the same names.
GRAPH_SWITCHES = {
    "balance_monitor": "start the balance monitor (balance_state, fall_state, balance_markers)",
    "energy_monitor": "start the energy monitor (energy_state: current, power, energy)",
    "self_collision_checker": "start the self-collision checker (self_collision_state, markers, check services)",
    "self_collision_veto": "refuse commands that bring two links within the safety distance",
    "walk_controller": "start the walk controller (cmd_vel, walk action)",
    "gait_controller": "start the gait controller (play_gait action; robots with gaits)",
    "fall_manager": "start the fall manager (fall_manager_state, protective action, get-up)",
    "odometry": "start the odometry (odom, /tf; in simulation the ground truth's world frame)",
}

#: The ``namespace`` launch argument both launch files take (default "": none): the keyword
#: argument of the graph functions of that name, validated as ``humanoid sim|real --namespace``.
NAMESPACE_ARGUMENT = ("the robot's namespace: its nodes, topics, services and actions under it, its TF frames "
                      "prefixed (NAME/base_link); default: none")


class MissingPackageError(RuntimeError):
    """A launch asked for something this ROS install lacks; raised before anything starts."""


def launch_node(spec: NodeSpec) -> dict[str, object]:
    """``launch_ros.actions.Node`` keyword arguments that start ``spec`` as the ``humanoid``
    command does: the console script its package installs for its module, its node name,
    its parameter files, then its parameters; tethered to the launch process, and respawned
    unless its exit ends the graph."""
    package, executable = ros_executable(spec.module)
    respawn = {"respawn": True, "respawn_delay": RESTART_POLICY.first_delay,
               "respawn_max_retries": RESTART_POLICY.max_restarts} if spec.on_exit is OnExit.RESTART else {}
    return {"package": package, "executable": executable, "name": spec.name, "namespace": spec.namespace,
            "remappings": spec.remappings(), "output": "screen",
            "parameters": [*(str(path) for path in spec.parameter_files), dict(spec.parameters)],
            "exec_name": executable, **tethered(node=True), **respawn}


def tethered(node: bool = False) -> dict[str, object]:
    """``ExecuteProcess``/``Node`` keyword arguments that make the process die with the launch
    process (this one: the launch file runs in it): the tether prefix and the launcher's ID.
    (With a prefix, launch names the process after the prefix's program: give it a name,
    ``exec_name`` or ``name``.) ``node``: a node of this stack (``run_tethered --exec-node``)."""
    prefix, environment = tethered_program(node)
    return {"prefix": shlex.join(prefix), "additional_env": environment}


def installed(package: str) -> bool:
    """Whether the ROS install has ``package`` (the ament index, as ``launch_ros`` looks)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


@dataclass(frozen=True)
class FullInstallTools:
    """Which of the full install's tools a launch starts."""

    state_publisher: bool  #: robot_state_publisher (robot_description and TF); else the driver publishes it
    rviz: bool


def full_install_tools(rviz: bool, warn: Callable[[str], None],
                       is_installed: Callable[[str], bool] = installed) -> FullInstallTools:
    """The tools to start: RViz asked for and missing raises :class:`MissingPackageError`;
    robot_state_publisher missing is said (``warn``) and its role left to the driver."""
    if rviz and not is_installed("rviz2"):
        raise MissingPackageError("rviz:=true but package rviz2 is not installed: install it (ros-<distro>-rviz2) "
                                  "or leave rviz:=false (`humanoid view` shows the robot in a browser)")
    state_publisher = is_installed("robot_state_publisher")
    if not state_publisher:
        warn("package robot_state_publisher is not installed: the driver node publishes robot_description; "
             "no TF from joint_states (RViz cannot place the links)")
    return FullInstallTools(state_publisher, rviz)


def tool_nodes(tools: FullInstallTools, robot: Robot | str, use_sim_time: bool,
               namespace: str | Sequence[str] = "/") -> list[dict[str, object]]:
    """``launch_ros.actions.Node`` keyword arguments of the tools to start, tethered too;
    robot_state_publisher in the robot's ``namespace`` (its frames prefixed, its clock the
    robot's), one per namespace for the robots of one world (``namespace`` a list), RViz once
    in the root (its configuration names the root's topics). ``robot``: resolved once
    (:func:`~humanoid_description.robot.resolve_robot`) when given by name."""
    nodes: list[dict[str, object]] = []
    for each in [namespace] if isinstance(namespace, str) else namespace:
        if tools.state_publisher:
            spec = NodeSpec("robot_state_publisher", "", namespace=each)
            nodes.append({"package": "robot_state_publisher", "executable": "robot_state_publisher",
                          "namespace": each, "remappings": spec.remappings(), "output": "screen",
                          "parameters": [state_publisher_parameters(robot, use_sim_time, each)],
                          "exec_name": "robot_state_publisher", **tethered()})
    if tools.rviz:
        config = package_share_directory("humanoid_bringup") / "rviz" / "humanoid.rviz"
        nodes.append({"package": "rviz2", "executable": "rviz2", "output": "screen", "arguments": ["-d", str(config)],
                      "parameters": [{"use_sim_time": use_sim_time}], "exec_name": "rviz2", **tethered()})
    return nodes


def launch_actions(graph: Sequence[NodeSpec], tools: Sequence[dict[str, object]]) -> list:
    """The launch actions of a graph and its tools: a ``Node`` each, and for each node whose
    exit ends the graph (the driver) a handler that shuts the launch down when it exits
    (:func:`driver_exited`). The one function here that imports ``launch`` (the launch
    files call it)."""
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.events import Shutdown
    from launch_ros.actions import Node

    actions: list = []
    for spec in graph:
        node = Node(**launch_node(spec))
        actions.append(node)
        if spec.on_exit is OnExit.END_GRAPH:
            def ended(event, _context, name: str = spec.name) -> list:
                return [EmitEvent(event=Shutdown(reason=driver_exited(name, event.returncode)))]
            actions.append(RegisterEventHandler(OnProcessExit(target_action=node, on_exit=ended)))
    return [*actions, *(Node(**kwargs) for kwargs in tools)]


def driver_exited(name: str, returncode: int) -> str:
    """The reason the launch stops when the driver exited; raises (the launch fails, non-zero)
    unless the driver ended cleanly."""
    reason = f"{name} {describe_exit(returncode)}: nothing holds the robot, stopping the graph"
    if returncode != 0:
        raise RuntimeError(reason)
    return reason


def ros2_bag_record(output: str, topics: Sequence[str], which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """``ros2 bag record``'s command recording ``topics`` into the MCAP bag ``output`` (the
    ``--topics`` form; hidden action topics included); raises :class:`MissingPackageError`
    when there is no ``ros2`` command."""
    if which("ros2") is None:
        raise MissingPackageError("record.launch.py records with `ros2 bag record`, and there is no ros2 command "
                                  "(a full ROS 2 install with ros2bag); without it: `humanoid record --output DIR`")
    # action topics (<action>/_action/...) are hidden topics: ros2 bag skips them unless told
    return ["ros2", "bag", "record", "--storage", "mcap", "--include-hidden-topics", "--output", output,
            "--topics", *topics]


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


def state_publisher_parameters(robot: Robot | str, use_sim_time: bool = False,
                               namespace: str = "/") -> dict[str, object]:
    """robot_state_publisher's parameters: the robot's URDF (it publishes robot_description)
    and, in a namespace, its ``frame_prefix`` (``a/``: the frames the stack's nodes use there).
    ``robot``: resolved once when given by name."""
    from humanoid_control.ros import frame_prefix
    from humanoid_description import resolve_robot

    return {"robot_description": resolve_robot(robot).urdf, "use_sim_time": use_sim_time,
            **({"frame_prefix": frame_prefix(namespace)} if frame_prefix(namespace) else {})}


def recording_failed(returncode: int) -> None:
    """After ``ros2 bag record`` exited: raises (the launch fails, non-zero) unless it ended
    cleanly."""
    if returncode != 0:
        raise RuntimeError(f"ros2 bag record exited with status {returncode}: the bag may be incomplete "
                           "(`humanoid record --reindex DIR` repairs an MCAP bag)")
