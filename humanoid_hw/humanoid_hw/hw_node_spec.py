"""The hardware node as a process to start (module and node name; the node reads its robot's
parameter file itself): used by
``humanoid_bringup.graphs`` and by this package's system tests, which start it alone."""

from __future__ import annotations

from collections.abc import Mapping

from humanoid_core.processes import NodeSpec, driver_node_spec

NODE_NAME = "humanoid_hw"


def hw_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The hardware node of ``robot``, ``parameters`` overriding its parameter file."""
    return driver_node_spec(NODE_NAME, "humanoid_hw.hw_node", robot, parameters)
