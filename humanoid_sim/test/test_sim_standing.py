"""The simulated robot standing still over time: each robot in its home pose for ten seconds
of robot time, held by its control loop, without a fall.

A property of the physics and the control loop, not of the ROS graph: the robot runs in
this process (:class:`humanoid_sim.in_process.SimulatedRobot`: the simulation node's
driver, control loop and parameter file, its fall watch at the node's ground-truth rate),
from its first physics step, and every fall watch of the ten seconds is checked (the node
in a process of its own cost a graph start, and was watched every 0.5 s from whenever the
test's client first heard it). The node's process, topics and ground truth are the
simulation node's system tests' (test_sim_node_system.py: the HOAP-2 standing on its soles)."""

import numpy as np
import pytest

from humanoid_sim import SimulatedRobot

#: Robot seconds the robot must stand.
SPAN = 10.0


@pytest.mark.parametrize("robot_name", ["hoap2", "bioloid"])
def test_the_robot_stands_ten_seconds_in_its_home_pose(robot_name):
    with SimulatedRobot(robot_name) as robot:
        start_z = robot.driver.base_placement().translation[2]
        robot.run_until(SPAN)
        assert robot.fall is not None and not robot.fall.fallen and robot.fell_at is None, robot.fall
        end = robot.cycle()
        assert end.stamp >= SPAN  # ten seconds later, not the first state again
        assert robot.driver.base_placement().translation[2] == pytest.approx(start_z, abs=0.01)
        assert np.max(np.abs(np.array(end.position) - robot.model.home_positions())) < 0.05
