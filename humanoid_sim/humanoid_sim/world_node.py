"""Several simulated robots in one PyBullet world (``humanoid sim --count N``).

One process hosts a simulation node per robot, each ``humanoid_sim`` in a namespace of its
own with the whole interface of a simulated robot (topics, action, services), and one loop
process steps the world for all of them (:mod:`humanoid_sim.shared_world`). Each robot's
controllers run in its own namespace as beside a robot alone (:func:`humanoid_sim.graphs.sim_nodes`).

Parameters of ``humanoid_sim_world`` (the process's own node, gone once the robots are
built): ``namespaces`` (comma-separated, one per robot, absolute) and ``spacing`` (m between
neighbours along the world's y axis, the first robot at the origin); every other parameter
it is given is each robot's, as a simulation node's (``ros2 param list`` on one of them).
"""

from __future__ import annotations

import dataclasses
import sys

from rclpy.node import Node
from rclpy.parameter import Parameter

from humanoid_control.ros import driver_node
from humanoid_description import SIM_NODE_PARAMETERS, RobotModel
from humanoid_sim import sim_node
from humanoid_sim.shared_world import DEFAULT_SPACING, WorldSeat
from humanoid_sim.sim_node_spec import NODE_NAME, WORLD_NODE
from humanoid_sim.sim_node_spec import WORLD_NAMESPACES as NAMESPACES
from humanoid_sim.sim_node_spec import WORLD_SPACING as SPACING


def robots() -> list[driver_node.DriverNode]:
    """The world's robots, one simulation node per namespace, joining one loop process."""
    world = Node(WORLD_NODE, automatically_declare_parameters_from_overrides=True)
    try:
        given = world.get_parameters_by_prefix("")
        namespaces = [name.strip() for name in str(given.pop(NAMESPACES).value if NAMESPACES in given else "")
                      .split(",") if name.strip()]
        spacing = float(given.pop(SPACING).value) if SPACING in given else DEFAULT_SPACING
    finally:
        world.destroy_node()
    if not namespaces:
        raise ValueError(f"parameter {NAMESPACES}: none given (one namespace per robot)")
    if len(set(namespaces)) != len(namespaces):
        raise ValueError(f"parameter {NAMESPACES}: two robots in one namespace ({', '.join(namespaces)})")
    if not spacing > 0.0:
        raise ValueError(f"parameter {SPACING}: {spacing} m (robots need room: > 0)")
    overrides = [Parameter(name, value=parameter.value) for name, parameter in given.items()
                 if name != "use_sim_time"]
    loops, ended = driver_node.LoopProcess(), None
    drivers: list[driver_node.DriverNode] = []
    for index, namespace in enumerate(namespaces):
        seat = WorldSeat(index, len(namespaces), spacing)
        options = {"namespace": namespace, "use_global_arguments": False, "parameter_overrides": overrides}
        robot = driver_node.DriverNode(NODE_NAME, SIM_NODE_PARAMETERS, seated(seat), sim_node.EXTENSION,
                                       node_options=options, loops=loops, ended=ended)
        ended = robot.ended
        drivers.append(robot)
    return drivers


def seated(seat: WorldSeat) -> driver_node.DriverDeclaration:
    """The simulation node's driver declaration, the robot given its ``seat`` in the world."""
    def declare(node: Node, model: RobotModel, defaults: dict) -> driver_node.DriverSpec:
        spec = sim_node.declare_driver(node, model, defaults)
        return dataclasses.replace(spec, config=dataclasses.replace(spec.config, seat=seat))

    return declare


def main(args: list[str] | None = None) -> int:
    return driver_node.run(WORLD_NODE, SIM_NODE_PARAMETERS, sim_node.declare_driver, sim_node.EXTENSION, args,
                           drivers=robots)


if __name__ == "__main__":
    sys.exit(main())
