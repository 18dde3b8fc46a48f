"""The node graphs of the stack: the one description the ``humanoid`` command and the
launch files both start.

:class:`~humanoid_core.processes.node_graph.Graph` runs them without ``ros2 launch``
(``humanoid real``, and ``humanoid sim`` with the simulation's graph, which its package
builds from :func:`control_nodes` and :func:`hosted` here); ``launch/real.launch.py`` (and
the simulation's ``sim.launch.py``) turn the same node specs into ``launch_ros`` nodes
(:func:`humanoid_bringup.launch_parameters.launch_node`) and add what only a full ROS
install has (robot_state_publisher, RViz). A control node added here runs in both. Nothing
here knows the simulation, the tools or the experiments: the recorder of ``--record`` is
found by its name among the nodes the installed packages register (:func:`recorder_entry`).
"""

from __future__ import annotations

from pathlib import Path

from humanoid_control.nodes import (
    WALK_CONTROLLER,
    balance_monitor_node_spec,
    container_node_spec,
    energy_monitor_node_spec,
    fall_manager_node_spec,
    gait_controller_node_spec,
    odometry_node_spec,
    self_collision_checker_node_spec,
    trajectory_generator_node_spec,
    walk_controller_node_spec,
)
from humanoid_core import NODES, node_parameters, registered
from humanoid_core.loop import InterfaceParameters
from humanoid_core.processes import NodeSpec, OnExit, in_namespace
from humanoid_description import HW_NODE_PARAMETERS, Robot, resolve_robot
from humanoid_hw import NODE_NAME as HW_NODE
from humanoid_hw.hw_node_spec import hw_node_spec


def real_nodes(robot: Robot | str, port: str | None = None, baud: int | None = None,
               control_rate: float | None = None, publish_rate: float | None = None,
               duration: float | None = None, publish_robot_description: bool = True,
               balance_monitor: bool = True, self_collision_checker: bool = True,
               self_collision_veto: bool = True, walk_controller: bool = True,
               gait_controller: bool = True, energy_monitor: bool = True,
               shared_process: bool = True, fall_manager: bool = True,
               auto_getup: bool | None = None, odometry: bool = True, namespace: str = "/") -> list[NodeSpec]:
    """The real-robot graph: the Dynamixel hardware node (plus the nodes that build on it).
    Options left at None keep the robot's parameter file values; ``publish_robot_description``
    False leaves the topic to robot_state_publisher (under ros2 launch); ``balance_monitor``,
    ``energy_monitor``, ``self_collision_checker``, ``walk_controller`` and ``gait_controller``
    False leave those nodes out; ``self_collision_veto`` False turns the robot interface's
    self-collision veto off. ``shared_process`` hosts the control nodes in one container
    process (the default); False gives each a process of its own. ``fall_manager`` False
    leaves the fall manager out; ``auto_getup`` True lets it get the robot up by itself (off
    by default on the robot). ``namespace`` (absolute, validated:
    ``humanoid_control.ros.normalized_namespace``) puts every node, topic, service and action
    of the robot under it (docs/robot_interface.md, Namespaces). ``robot``: resolved once here
    when given by name (:func:`~humanoid_description.robot.resolve_robot`)."""
    robot = resolve_robot(robot)
    overrides: dict[str, object] = {}
    for name, value in (("port", port), ("baud", baud), ("control_rate", control_rate),
                        ("publish_rate", publish_rate), ("duration", duration)):
        if value is not None:
            overrides[name] = value
    if not publish_robot_description:
        overrides["publish_robot_description"] = False
    if not self_collision_veto:
        overrides["self_collision_veto"] = False
    return in_namespace([hw_node_spec(robot.name, overrides),
                         *hosted(control_nodes(robot, use_sim_time=False, balance_monitor=balance_monitor,
                                               self_collision_checker=self_collision_checker,
                                               walk_controller=walk_controller, gait_controller=gait_controller,
                                               energy_monitor=energy_monitor, fall_manager=fall_manager,
                                               auto_getup=bool(auto_getup), odometry=odometry),
                                 shared_process, nice=hw_loop_nice(robot, overrides))], namespace)


def hw_loop_nice(robot: Robot, overrides: dict[str, object]) -> int:
    """The hardware node's ``loop_nice``: ``overrides``, else its parameter file, else the default."""
    values = {**node_parameters(robot.path(HW_NODE_PARAMETERS), HW_NODE), **overrides}
    return int(values.get("loop_nice", InterfaceParameters().loop_nice))


def hosted(nodes: list[NodeSpec], shared_process: bool, nice: int = 0) -> list[NodeSpec]:
    """The control nodes as processes: one container hosting them all (``shared_process``:
    humanoid_control.nodes.container, docs/graph_cost.md) at ``nice``, else a process each
    (at the default priority: a control node of its own is a debugging set-up)."""
    return [container_node_spec(nodes, nice=nice)] if shared_process and nodes else nodes


def control_nodes(robot: Robot | str, use_sim_time: bool, balance_monitor: bool = True,
                  self_collision_checker: bool = True, walk_controller: bool = True,
                  gait_controller: bool = True, lockstep: bool = False, energy_monitor: bool = True,
                  fall_manager: bool = True, auto_getup: bool | None = None, odometry: bool = True,
                  ground_truth: bool = False) -> list[NodeSpec]:
    """The nodes that drive or watch the robot through its interface, the same for sim and
    real; per-robot parameters in ``humanoid_description/robots/<robot>/control.yaml``.
    ``lockstep``: each answers a lockstep simulation after every joint_states it handles.
    ``fall_manager`` False leaves the fall manager out; ``auto_getup``: whether it gets the
    robot up by itself (None: in simulation, ``use_sim_time``, yes; on the robot, no). What
    the robot can do (walk, play gaits) is asked of the resolved :class:`Robot`; each node is
    started with the robot's name and reads its own section of ``control.yaml``. ``odometry``
    False leaves the odometry node out (``odom``, ``/tf``); ``ground_truth``: it also relays the
    simulator's ground truth (``ground_truth/odom``, ``world`` on ``/tf``): the simulation's
    graph only, off on the real robot, which has no such truth."""
    robot = resolve_robot(robot)
    name = robot.name
    clock = {"use_sim_time": use_sim_time, **({"lockstep": True} if lockstep else {})}
    nodes = [trajectory_generator_node_spec(name, clock)]
    if balance_monitor:
        nodes.append(balance_monitor_node_spec(name, clock))
    if energy_monitor:
        nodes.append(energy_monitor_node_spec(name, clock))
    if self_collision_checker:
        nodes.append(self_collision_checker_node_spec(name, clock))
    # on the robot's clock: the joint_states stamps (no /clock to follow); only for the
    # robots it walks (a walk_controller section in their parameter file: the bipeds)
    if walk_controller and robot.configures(WALK_CONTROLLER):
        nodes.append(walk_controller_node_spec(name, {"lockstep": True} if lockstep else None))
    # on the robot's clock too; only for the robots with gaits in robot.yaml (the quadruped)
    if gait_controller and robot.has_gaits:
        nodes.append(gait_controller_node_spec(name, {"lockstep": True} if lockstep else None))
    if odometry:
        nodes.append(odometry_node_spec(name, {**clock, "ground_truth": bool(ground_truth)}))
    # last: for each state it decides after the controllers took it
    if fall_manager:
        getup = use_sim_time if auto_getup is None else auto_getup
        nodes.append(fall_manager_node_spec(name, {**clock, "auto_getup": bool(getup)}))
    return nodes


#: The recorder's node name (``--record``), and the name a package registers it by among the
#: nodes a container can host (:data:`humanoid_core.registrations.NODES`; the workstation
#: tools do, and a robot's computer may register one of its own).
RECORDER_NODE = "humanoid_recorder"


class RecorderMissingError(LookupError):
    """No installed package registers the recorder."""


def recorder_entry():
    """The recorder the installed packages register: the ``humanoid.nodes`` entry point
    :data:`RECORDER_NODE` (``module:Class``; nothing imported); :class:`RecorderMissingError`
    when there is none. The class also prepares a new bag (``prepare(output)``, ValueError
    saying why not) and makes a dead recorder's bag readable (``recover(output)``)."""
    for entry in registered(NODES, RECORDER_NODE):
        return entry
    raise RecorderMissingError(f"no installed package registers the recorder (node {RECORDER_NODE} in the "
                               f"entry point group {NODES}: the workstation tools do)")


def recorder_node(output: Path, lockstep: bool = False, namespace: str = "/") -> NodeSpec:
    """The recorder (``humanoid record``) recording the default topics into a new bag; when it
    dies it is not restarted (a new process cannot finish the dead one's bag: the launcher
    reindexes it). ``lockstep``: a lockstep participant (name it in ``sim_nodes``'
    ``participants``), so that a lockstep simulation never outruns it. Its module is the
    registered recorder's (:func:`recorder_entry`); in ``namespace`` it records the robot's topics there."""
    return NodeSpec(RECORDER_NODE, recorder_entry().module,
                    {"output": str(output), **({"lockstep": True} if lockstep else {})}, on_exit=OnExit.REPORT,
                    namespace=namespace)
