"""The simulation node's parameters as commands see them (:mod:`humanoid_sim.sim_parameters`,
read without PyBullet) are the ones the node declares: ``humanoid postures --set`` refuses
no parameter the node takes and lets no misspelt one through (ROS would ignore it)."""

from __future__ import annotations

from node_teardown import ros_context
from rclpy.node import Node

from humanoid_control.ros import DriverNode
from humanoid_description import SIM_NODE_PARAMETERS
from humanoid_sim import NODE_NAME, parameter_names, sim_node


def declared(node: Node) -> set[str]:
    return set(node.list_parameters([], 0).names)


def test_the_listed_parameters_are_those_the_simulation_node_declares():
    with ros_context(args=["--ros-args", "-p", "robot:=bioloid"]):  # the loop's process is never started
        bare = Node("bare_node")  # what rclpy declares on every node (use_sim_time ...)
        simulation = DriverNode(NODE_NAME, SIM_NODE_PARAMETERS, sim_node.declare_driver, sim_node.EXTENSION)
        # less the listing of the robot's physics profiles (physics_profiles.<name>.<parameter>)
        listed = {name for name in declared(simulation.node) if name.startswith("physics_profiles.")}
        assert listed  # the Bioloid's pd_torque profile
        assert declared(simulation.node) - declared(bare) - listed == set(parameter_names())
        assert len(parameter_names()) == len(set(parameter_names()))
