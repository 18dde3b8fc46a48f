"""The balance monitor node as a process to start: module, node name and parameter file.

One description, used by ``humanoid_bringup.graphs`` (the graphs the ``humanoid``
command starts, mirrored by the launch files), the benchmark and the system tests,
which start the node alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from humanoid_control.balance.parameters import NODE_NAME
from humanoid_control.node_graph import NodeSpec
from humanoid_description.runtime_files import CONTROL_NODE_PARAMETERS


def balance_monitor_node_spec(robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """The balance monitor of ``robot``: the ``balance_monitor`` section of its parameter file
    (``humanoid_control/config/<robot>.yaml``), then ``parameters`` overriding it."""
    return NodeSpec(NODE_NAME, "humanoid_control.balance_monitor_node", {"robot": robot, **(parameters or {})},
                    (CONTROL_NODE_PARAMETERS.path(robot),))
