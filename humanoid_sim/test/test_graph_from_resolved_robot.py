"""The graphs take the robot a command resolved once (or its name, resolved there): the same
nodes either way, each node started with the robot's name."""

from __future__ import annotations

import pytest

from humanoid_bringup import control_nodes, real_nodes
from humanoid_description import resolve_robot
from humanoid_sim import sim_nodes


@pytest.mark.parametrize("name", ["hoap2", "bioloid", "bioloid_quadruped"])
def test_a_resolved_robot_and_its_name_give_the_same_graph(name):
    robot = resolve_robot(name)
    assert sim_nodes(robot, lockstep=True) == sim_nodes(name, lockstep=True)
    assert control_nodes(robot, use_sim_time=True) == control_nodes(name, use_sim_time=True)
    if robot.on_dynamixel_bus:
        assert real_nodes(robot, port="/dev/ttyUSB0") == real_nodes(name, port="/dev/ttyUSB0")
    started = [spec for spec in control_nodes(robot, use_sim_time=True)]
    assert started and all(spec.parameters["robot"] == name for spec in started)
    names = {spec.name for spec in started}
    assert ("walk_controller" in names) is robot.configures("walk_controller")
    assert ("gait_controller" in names) is robot.has_gaits
