"""Real robot: the graph ``humanoid real`` starts (the Dynamixel hardware node behind the
shared robot interface and the nodes that build on it, from ``humanoid_bringup.graphs``),
robot_state_publisher (TF for RViz, and the one publisher of robot_description here)
and, on request, RViz.

    ros2 launch humanoid_bringup real.launch.py robot:=bioloid port:=/dev/ttyUSB0

The same graph runs without ros2 launch: ``humanoid real --robot bioloid --port /dev/ttyUSB0``
(or ``--emulate`` for the bus emulator).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from humanoid_bringup.graphs import real_nodes
from humanoid_bringup.launch_parameters import (
    GRAPH_SWITCHES,
    graph_switches,
    launch_node,
    number_or_none,
    state_publisher_parameters,
)
from humanoid_description.runtime_files import HW_NODE_PARAMETERS

ROBOTS = list(HW_NODE_PARAMETERS.robots())  # robots with a hardware parameter file (a Dynamixel bus)


def robot_nodes(context):
    """The real-robot graph with the arguments given, and robot_state_publisher."""
    def argument(name):
        return LaunchConfiguration(name).perform(context)

    robot = argument("robot")
    baud = argument("baud")
    graph = real_nodes(robot, port=argument("port"), baud=int(baud) if baud else None,
                       control_rate=number_or_none(argument("control_rate")),
                       publish_rate=number_or_none(argument("publish_rate")), publish_robot_description=False,
                       **graph_switches(argument))
    return [*(Node(**launch_node(spec)) for spec in graph),
            Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                 parameters=[state_publisher_parameters(robot)])]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="bioloid", choices=ROBOTS, description="robot on the bus"),
        DeclareLaunchArgument("port", default_value="/dev/ttyUSB0", description="serial device of the bus"),
        DeclareLaunchArgument("baud", default_value="",
                              description="bus speed in bit/s (default: the robot's hw config, 1000000)"),
        DeclareLaunchArgument("control_rate", default_value="", description="control loop rate in Hz"),
        DeclareLaunchArgument("publish_rate", default_value="", description="joint_states rate in Hz"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
        *(DeclareLaunchArgument(name, default_value="true", choices=["true", "false"], description=text)
          for name, text in GRAPH_SWITCHES.items()),
        OpaqueFunction(function=robot_nodes),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(LaunchConfiguration("rviz")),
             arguments=["-d", PathJoinSubstitution([FindPackageShare("humanoid_bringup"), "rviz", "humanoid.rviz"])]),
    ])
