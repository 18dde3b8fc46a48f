"""The node graphs of the stack: the one description the ``humanoid`` command and the
launch files both start.

:class:`~humanoid_core.processes.node_graph.Graph` runs them without ``ros2 launch``
(``humanoid sim``/``humanoid real``); ``launch/sim.launch.py`` and
``launch/real.launch.py`` turn the same node specs into ``launch_ros`` nodes
(:func:`humanoid_bringup.launch_parameters.launch_node`) and add what only a full ROS
install has (robot_state_publisher, RViz). A node added here runs in both. The real
graph needs no simulation: only :func:`sim_nodes` imports ``humanoid_sim``.
"""

from __future__ import annotations

from pathlib import Path

from humanoid_control.nodes.specs import (
    balance_monitor_node_spec,
    container_node_spec,
    energy_monitor_node_spec,
    gait_controller_node_spec,
    self_collision_checker_node_spec,
    trajectory_generator_node_spec,
    walk_controller_node_spec,
)
from humanoid_core.biped_walking.parameters import walking_robot
from humanoid_core.processes.node_graph import NodeSpec, OnExit
from humanoid_core.quadruped_gaits.parameters import gaited_robot
from humanoid_hw.hw_node_spec import hw_node_spec

#: Options of :func:`sim_nodes` and :func:`real_nodes` for the robot and the trajectory
#: generator alone: no balance monitor, energy monitor, self-collision checker, walk or gait controller (a
#: controller that needs none of them, on a machine with cores to spare for its own work).
ROBOT_AND_PLAYER_ONLY = {"balance_monitor": False, "self_collision_checker": False, "walk_controller": False,
                         "gait_controller": False, "energy_monitor": False}


def sim_nodes(robot: str, gui: bool = False, real_time_factor: float | None = None,
              control_rate: float | None = None, publish_rate: float | None = None,
              physics_rate: float | None = None, duration: float | None = None, use_sim_time: bool = True,
              publish_robot_description: bool = True, balance_monitor: bool = True,
              self_collision_checker: bool = True, self_collision_veto: bool = True,
              walk_controller: bool = True, gait_controller: bool = True, lockstep: bool = False,
              participants: tuple[str, ...] = (), physics_profile: str | None = None,
              energy_monitor: bool = True, params_file: Path | str | None = None,
              shared_process: bool = True) -> list[NodeSpec]:
    """The simulation graph: the PyBullet robot node (plus the nodes that build on it).
    Options left at None keep the robot's parameter file values (``physics_profile``: the
    simulation's named physics profile, :mod:`humanoid_sim.physics_profiles`; ``params_file``:
    a simulation parameter file, :mod:`humanoid_sim.params_file`); ``use_sim_time`` runs the
    other nodes on the simulated clock; ``publish_robot_description`` False leaves the
    topic to robot_state_publisher (under ros2 launch); ``balance_monitor``, ``energy_monitor``,
    ``self_collision_checker``, ``walk_controller`` and ``gait_controller`` False leave those
    nodes out;
    ``self_collision_veto`` False turns the robot interface's self-collision veto off.
    ``shared_process`` hosts the control nodes in one container process (the default); False
    gives each a process of its own.
    ``lockstep`` makes the simulator wait at every state for the graph's nodes and for
    ``participants`` (other nodes, such as an experiment's client: see
    humanoid_core.loop.lockstep); its real-time factor then defaults to 0 (as fast as
    they all go)."""
    from humanoid_sim.sim_node_spec import sim_node_spec  # here: the real graph runs without humanoid_sim

    overrides: dict[str, object] = {"gui": gui}
    for name, value in (("real_time_factor", real_time_factor), ("control_rate", control_rate),
                        ("publish_rate", publish_rate), ("physics_rate", physics_rate), ("duration", duration)):
        if value is not None:
            overrides[name] = float(value)
    if not publish_robot_description:
        overrides["publish_robot_description"] = False
    if not self_collision_veto:
        overrides["self_collision_veto"] = False
    if physics_profile is not None:
        overrides["physics_profile"] = physics_profile
    if params_file is not None and str(params_file):
        overrides["params_file"] = str(Path(params_file).resolve())
    controls = hosted(control_nodes(robot, use_sim_time=use_sim_time, balance_monitor=balance_monitor,
                                    self_collision_checker=self_collision_checker, walk_controller=walk_controller,
                                    gait_controller=gait_controller, lockstep=lockstep,
                                    energy_monitor=energy_monitor), shared_process)
    if lockstep:
        overrides.setdefault("real_time_factor", 0.0)
        overrides["lockstep"] = True
        overrides["lockstep_participants"] = ",".join([*(spec.name for spec in controls), *participants])
    return [sim_node_spec(robot, overrides), *controls]


def real_nodes(robot: str, port: str | None = None, baud: int | None = None,
               control_rate: float | None = None, publish_rate: float | None = None,
               duration: float | None = None, publish_robot_description: bool = True,
               balance_monitor: bool = True, self_collision_checker: bool = True,
               self_collision_veto: bool = True, walk_controller: bool = True,
               gait_controller: bool = True, energy_monitor: bool = True,
               shared_process: bool = True) -> list[NodeSpec]:
    """The real-robot graph: the Dynamixel hardware node (plus the nodes that build on it),
    options as for :func:`sim_nodes`."""
    overrides: dict[str, object] = {}
    for name, value in (("port", port), ("baud", baud), ("control_rate", control_rate),
                        ("publish_rate", publish_rate), ("duration", duration)):
        if value is not None:
            overrides[name] = value
    if not publish_robot_description:
        overrides["publish_robot_description"] = False
    if not self_collision_veto:
        overrides["self_collision_veto"] = False
    return [hw_node_spec(robot, overrides),
            *hosted(control_nodes(robot, use_sim_time=False, balance_monitor=balance_monitor,
                                  self_collision_checker=self_collision_checker, walk_controller=walk_controller,
                                  gait_controller=gait_controller, energy_monitor=energy_monitor), shared_process)]


def hosted(nodes: list[NodeSpec], shared_process: bool) -> list[NodeSpec]:
    """The control nodes as processes: one container hosting them all (``shared_process``:
    humanoid_control.nodes.container, docs/graph_cost.md), else a process each."""
    return [container_node_spec(nodes)] if shared_process and nodes else nodes


def control_nodes(robot: str, use_sim_time: bool, balance_monitor: bool = True,
                  self_collision_checker: bool = True, walk_controller: bool = True,
                  gait_controller: bool = True, lockstep: bool = False, energy_monitor: bool = True) -> list[NodeSpec]:
    """The nodes that drive or watch the robot through its interface, the same for sim and
    real; per-robot parameters in ``humanoid_description/robots/<robot>/control.yaml``.
    ``lockstep``: each answers a lockstep simulation after every joint_states it handles."""
    clock = {"use_sim_time": use_sim_time, **({"lockstep": True} if lockstep else {})}
    nodes = [trajectory_generator_node_spec(robot, clock)]
    if balance_monitor:
        nodes.append(balance_monitor_node_spec(robot, clock))
    if energy_monitor:
        nodes.append(energy_monitor_node_spec(robot, clock))
    if self_collision_checker:
        nodes.append(self_collision_checker_node_spec(robot, clock))
    # on the robot's clock: the joint_states stamps (no /clock to follow); only for the
    # robots it walks (a walk_controller section in their parameter file: the bipeds)
    if walk_controller and walking_robot(robot):
        nodes.append(walk_controller_node_spec(robot, {"lockstep": True} if lockstep else None))
    # on the robot's clock too; only for the robots with gaits in robot.yaml (the quadruped)
    if gait_controller and gaited_robot(robot):
        nodes.append(gait_controller_node_spec(robot, {"lockstep": True} if lockstep else None))
    return nodes


#: The recorder's node name (``--record``).
RECORDER_NODE = "humanoid_recorder"


def recorder_node(output: Path, lockstep: bool = False) -> NodeSpec:
    """The recorder (``humanoid record``) recording the default topics into a new bag; when it
    dies it is not restarted (a new process cannot finish the dead one's bag: the launcher
    reindexes it). ``lockstep``: a lockstep participant (name it in ``sim_nodes``'
    ``participants``), so that a lockstep simulation never outruns it."""
    return NodeSpec(RECORDER_NODE, "humanoid_tools.recording.recorder",
                    {"output": str(output), **({"lockstep": True} if lockstep else {})}, on_exit=OnExit.REPORT)
