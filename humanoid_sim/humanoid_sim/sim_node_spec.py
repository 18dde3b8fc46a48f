"""The simulation node as a process to start (module and node name; the node reads its robot's
parameter file itself): used by
the simulation's graph (:mod:`humanoid_sim.graphs`) and by this package's system tests, which start it alone; and the
rates of what only the simulator publishes, which in-process runs (no ROS) keep too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from humanoid_core import node_parameters
from humanoid_core.loop import InterfaceParameters
from humanoid_core.processes import NodeSpec, driver_node_spec
from humanoid_description import SIM_NODE_PARAMETERS

if TYPE_CHECKING:
    from humanoid_description import Robot

NODE_NAME = "humanoid_sim"
#: The node of a process simulating several robots in one world (humanoid_sim.world_node) and
#: its parameters: the robots' namespaces (comma-separated) and the m between them.
WORLD_NODE = "humanoid_sim_world"
WORLD_NAMESPACES = "namespaces"
WORLD_SPACING = "spacing"


def sim_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The simulation node of ``robot``, ``parameters`` overriding its parameter file."""
    return driver_node_spec(NODE_NAME, "humanoid_sim.sim_node", robot, parameters)


def control_period(robot: Robot) -> float:
    """Seconds per control cycle of ``robot``'s simulation node (its parameter file's
    ``control_rate``, else the interface's default)."""
    values = node_parameters(robot.path(SIM_NODE_PARAMETERS), NODE_NAME)
    return 1.0 / float(values.get("control_rate", InterfaceParameters().control_rate))
