"""robot_description has one publisher: robot_state_publisher under ros2 launch (the driver
node told not to publish it), the driver node itself in the graphs started without
ros2 launch; both carry the same URDF."""

import pytest
import rclpy
from node_teardown import destroy_whole

from humanoid_bringup import launch_node, real_nodes, state_publisher_parameters
from humanoid_control.ros import LoopThread, RobotInterface
from humanoid_core.loop import IdealDriver, InterfaceParameters
from humanoid_description import HW_NODE_PARAMETERS, SIM_NODE_PARAMETERS, RobotModel
from humanoid_sim import sim_nodes


@pytest.mark.parametrize(("graph", "robot"), [
    *((sim_nodes, robot) for robot in SIM_NODE_PARAMETERS.robots()),
    *((real_nodes, robot) for robot in HW_NODE_PARAMETERS.robots())])
def test_under_ros2_launch_robot_state_publisher_owns_the_description(graph, robot):
    driver, *_ = graph(robot, control_rate=50.0, publish_robot_description=False)
    (overrides,) = launch_node(driver)["parameters"]  # the node reads its robot's file itself
    assert overrides["control_rate"] == 50.0 and overrides["robot"] == robot
    assert overrides["publish_robot_description"] is False
    assert state_publisher_parameters(robot)["robot_description"] == RobotModel(robot).urdf


def test_without_ros2_launch_the_driver_node_publishes_it():
    for spec in [*sim_nodes("hoap2"), *real_nodes("bioloid")]:
        assert spec.parameters.get("publish_robot_description", True) is True
    assert InterfaceParameters().publish_robot_description is True


@pytest.mark.parametrize("publish", [True, False])
def test_the_interface_publishes_the_description_only_when_asked(publish):
    model = RobotModel("bioloid")
    rclpy.init()
    try:
        node = rclpy.create_node("description_owner_under_test")
        params = InterfaceParameters(publish_robot_description=publish)
        loop = LoopThread(node, IdealDriver(model.joints), model, params)
        interface = RobotInterface(node, loop.client, model, params, clock_is_ros_time=True)
        assert node.count_publishers("robot_description") == int(publish)
        if publish:
            assert node.get_publishers_info_by_topic("robot_description")[0].topic_type == "std_msgs/msg/String"
        del interface
        destroy_whole(node)  # its follow_joint_trajectory server with it
    finally:
        rclpy.try_shutdown()
