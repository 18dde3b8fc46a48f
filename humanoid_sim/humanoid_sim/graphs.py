"""The simulation's node graph: the PyBullet robot node and the control nodes the real robot
has too (:func:`humanoid_bringup.graphs.control_nodes`, hosted as there), the one description
``humanoid sim`` and ``launch/sim.launch.py`` both start. It lives with the simulation, as
the Gazebo and Webots ROS packages ship their own launch files: the bring-up knows nothing
of it."""

from __future__ import annotations

from pathlib import Path

from humanoid_bringup import control_nodes, hosted
from humanoid_core.processes import NodeSpec, driver_node_spec, in_namespace
from humanoid_description import Robot, resolve_robot
from humanoid_sim.sim_node_spec import WORLD_NAMESPACES, WORLD_NODE, WORLD_SPACING, sim_node_spec


def sim_nodes(robot: Robot | str, gui: bool = False, real_time_factor: float | None = None,
              control_rate: float | None = None, publish_rate: float | None = None,
              physics_rate: float | None = None, duration: float | None = None, use_sim_time: bool = True,
              publish_robot_description: bool = True, balance_monitor: bool = True,
              self_collision_checker: bool = True, self_collision_veto: bool = True,
              walk_controller: bool = True, gait_controller: bool = True, lockstep: bool = False,
              participants: tuple[str, ...] = (), physics_profile: str | None = None,
              energy_monitor: bool = True, params_file: Path | str | None = None,
              shared_process: bool = True, fall_manager: bool = True,
              auto_getup: bool | None = None, odometry: bool = True, namespace: str = "/",
              count: int = 1, spacing: float | None = None) -> list[NodeSpec]:
    """The simulation graph: the PyBullet robot node (plus the nodes that build on it).
    Options left at None keep the robot's parameter file values (``physics_profile``: the
    simulation's named physics profile, :mod:`humanoid_sim.physics_profiles`; ``params_file``:
    a simulation parameter file, :mod:`humanoid_sim.params_file`); ``use_sim_time`` runs the
    other nodes on the simulated clock; ``publish_robot_description`` False leaves the
    topic to robot_state_publisher (under ros2 launch); ``balance_monitor``, ``energy_monitor``,
    ``self_collision_checker``, ``walk_controller`` and ``gait_controller`` False leave those
    nodes out;
    ``self_collision_veto`` False turns the robot interface's self-collision veto off.
    ``fall_manager`` False leaves the fall manager out; ``auto_getup`` False keeps it from
    getting the robot up by itself (on by default in simulation). ``odometry`` False leaves the
    odometry node out; with it, it relays the ground truth too (``ground_truth/odom``, ``world``).
    ``shared_process`` hosts the control nodes in one container process (the default); False
    gives each a process of its own.
    ``lockstep`` makes the simulator wait at every state for the graph's nodes and for
    ``participants`` (other nodes, such as an experiment's client: see
    humanoid_core.loop.lockstep); its real-time factor then defaults to 0 (as fast as
    they all go). ``namespace`` (absolute, validated: ``humanoid_control.ros.normalized_namespace``)
    puts every node, topic, service and action of the robot under it, ``/clock`` included
    (docs/robot_interface.md, Namespaces). ``robot``: resolved once here when given by name
    (:func:`~humanoid_description.robot.resolve_robot`). ``count`` > 1: that many robots in one
    physics world (:mod:`humanoid_sim.world_node`), ``spacing`` m apart, each with its graph in
    namespace ``<namespace or /robot>_<i>`` (:func:`world_namespaces`)."""
    robot = resolve_robot(robot)
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
                                    energy_monitor=energy_monitor, fall_manager=fall_manager,
                                    auto_getup=True if auto_getup is None else auto_getup,
                                    odometry=odometry, ground_truth=True), shared_process)
    if lockstep:
        overrides.setdefault("real_time_factor", 0.0)
        overrides["lockstep"] = True
        overrides["lockstep_participants"] = ",".join([*(spec.name for spec in controls), *participants])
    if count == 1:
        return in_namespace([sim_node_spec(robot.name, overrides), *controls], namespace)
    namespaces = world_namespaces(robot.name, namespace, count)
    world = {**overrides, WORLD_NAMESPACES: ",".join(namespaces),
             **({} if spacing is None else {WORLD_SPACING: float(spacing)})}
    return [driver_node_spec(WORLD_NODE, "humanoid_sim.world_node", robot.name, world),
            *(spec for each in namespaces for spec in in_namespace(controls, each))]


def world_namespaces(robot: str, namespace: str, count: int) -> list[str]:
    """The namespaces of ``count`` robots in one world: ``<namespace>_<i>``, or ``/<robot>_<i>``
    without a namespace (i from 1)."""
    base = namespace.rstrip("/") if namespace.strip("/") else f"/{robot}"
    return [f"{base}_{index}" for index in range(1, count + 1)]
