"""The hardware node as a process to start (module, node name, parameter file): used by
``humanoid_bringup.graphs`` and by this package's system tests, which start it alone."""

from __future__ import annotations

from collections.abc import Mapping

from humanoid_control.processes.node_graph import NodeSpec, driver_node_spec
from humanoid_description.runtime_files import HW_NODE_PARAMETERS

NODE_NAME = "humanoid_hw"


def hw_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The hardware node of ``robot``, ``parameters`` overriding its parameter file."""
    return driver_node_spec(NODE_NAME, "humanoid_hw.hw_node", HW_NODE_PARAMETERS.path(robot), robot, parameters)
