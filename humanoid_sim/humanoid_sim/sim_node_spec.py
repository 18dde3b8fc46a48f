"""The simulation node as a process to start (module, node name, parameter file): used by
``humanoid_bringup.graphs`` and by this package's system tests, which start it alone; and the
rates of what only the simulator publishes, which in-process runs (no ROS) keep too."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from humanoid_control.interface_parameters import documented
from humanoid_control.node_graph import NodeSpec, driver_node_spec
from humanoid_description.runtime_files import SIM_NODE_PARAMETERS

NODE_NAME = "humanoid_sim"


def sim_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The simulation node of ``robot``, ``parameters`` overriding its parameter file."""
    return driver_node_spec(NODE_NAME, "humanoid_sim.sim_node", SIM_NODE_PARAMETERS.path(robot), robot, parameters)


@dataclass(frozen=True)
class SimulationPublishingParameters:
    """Rates of what only the simulation node publishes (ROS parameters of the node)."""

    clock_rate: float = documented(200.0, "Hz, simulated time on /clock")
    ground_truth_rate: float = documented(50.0, "Hz, ground_truth/base_pose, ground_truth/base_twist and fallen")

    def __post_init__(self) -> None:
        for name in ("clock_rate", "ground_truth_rate"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
