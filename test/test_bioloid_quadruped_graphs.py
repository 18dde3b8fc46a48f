"""The Bioloid quadruped behind the same robot interface as the humanoids: the simulation
graph (``humanoid sim``) and the hardware graph on the emulated bus (``humanoid real
--emulate``) come up with every node, publish joint_states of its 16 joints, play a library
motion, and the balance monitor reports a support polygon of four feet.

What users rely on: the quadruped stands in its home pose without falling; its joint_states
list the 16 joints in the robot's order; play_motion plays its motions; balance_state says
it stands on its four ball feet with the CoM inside them.

Those checks are made on the gait controller's two graphs (test_gait_controller.py: the same
default simulation and hardware graphs, as they come up, before any gait), which saves two
graph starts; what needs a graph of its own stays here: a hardware node that refuses every
trajectory.
"""

from __future__ import annotations

import pytest
from system_support import on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_hw.emulator import emulator_process

pytestmark = pytest.mark.system

ROBOT = "bioloid_quadruped"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 120.0


def test_a_gait_whose_set_points_the_robot_refuses_ends_stopped_naming_the_joint(robot_graph):
    """The gait controller streams open loop like the walk's: a robot that refuses every
    trajectory it sends (the hardware node takes none ending more than 0.05 s after its
    receipt; each the controller sends begins 0.1 s after the reading it answers) does not
    move, and the gait goal must not end SUCCESSFUL."""
    from humanoid_control.nodes import with_node_parameters
    from humanoid_hw import NODE_NAME as HW_NODE
    from humanoid_interfaces.action import PlayGait

    with emulator_process(ROBOT, 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(on_emulated_bus(real_nodes(ROBOT, port=port)), HW_NODE,
                                     {"max_trajectory_duration": 0.05})
        _graph, client = robot_graph(nodes)
        standing = client.current_positions()
        response = client.play_gait("trot", 1.0, 1.0, timeout=PATIENCE)
        assert response.result.error_code == PlayGait.Result.STOPPED, response.result.error_string
        assert "did not reach the last set-point sent" in response.result.error_string
        now = client.current_positions()
        assert max(abs(now[name] - standing[name]) for name in standing) < 0.05  # it never moved
