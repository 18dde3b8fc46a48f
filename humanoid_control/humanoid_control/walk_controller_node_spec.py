"""The walk controller node as a process to start: module, node name and parameter file.

One description, used by ``humanoid_bringup.graphs`` (the graphs the ``humanoid``
command starts, mirrored by the launch files) and by the system tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from humanoid_control.node_graph import NodeSpec
from humanoid_control.walking.parameters import NODE_NAME
from humanoid_description.runtime_files import CONTROL_NODE_PARAMETERS


def walk_controller_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The walk controller of ``robot``: the ``walk_controller`` section of its parameter
    file (``humanoid_control/config/<robot>.yaml``), then ``parameters`` overriding it."""
    return NodeSpec(NODE_NAME, "humanoid_control.walk_controller_node", {"robot": robot, **(parameters or {})},
                    (CONTROL_NODE_PARAMETERS.path(robot),))
