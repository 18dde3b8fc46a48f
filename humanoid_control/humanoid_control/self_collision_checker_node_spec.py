"""The self-collision checker node as a process to start: module, node name and parameter file.

One description, used by ``humanoid_bringup.graphs`` (the graphs the ``humanoid``
command starts, mirrored by the launch files) and the system tests, which start the
node alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from humanoid_control.node_graph import NodeSpec
from humanoid_description.runtime_files import CONTROL_NODE_PARAMETERS

NODE_NAME = "self_collision_checker"


def self_collision_checker_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The self-collision checker of ``robot``: the ``self_collision_checker`` section of its
    parameter file (``humanoid_control/config/<robot>.yaml``), then ``parameters`` overriding it."""
    return NodeSpec(NODE_NAME, "humanoid_control.self_collision_checker_node", {"robot": robot, **(parameters or {})},
                    (CONTROL_NODE_PARAMETERS.path(robot),))
