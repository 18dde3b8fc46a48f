"""Real robot: the Dynamixel hardware node behind the shared robot interface, the
trajectory generator, robot_state_publisher (TF for RViz) and, on request, RViz.

    ros2 launch humanoid_bringup real.launch.py robot:=bioloid port:=/dev/ttyUSB0

The same graph runs without ros2 launch: ``humanoid real --robot bioloid --port /dev/ttyUSB0``
(or ``--emulate`` for the bus emulator).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

ROBOTS = ["bioloid"]  # robots with a Dynamixel joint map


def robot_nodes(context):
    """The hardware node with the robot's parameter files, plus the overrides given."""
    robot = LaunchConfiguration("robot").perform(context)
    overrides = {"robot": robot, "port": LaunchConfiguration("port").perform(context)}
    baud = LaunchConfiguration("baud").perform(context)
    if baud:
        overrides["baud"] = int(baud)
    for name in ("control_rate", "publish_rate"):
        value = LaunchConfiguration(name).perform(context)
        if value:
            overrides[name] = float(value)
    share = FindPackageShare("humanoid_hw")
    return [
        Node(package="humanoid_hw", executable="hw_node", name="humanoid_hw", output="screen",
             parameters=[PathJoinSubstitution([share, "config", f"{robot}.yaml"]), overrides]),
        Node(package="humanoid_control", executable="trajectory_generator", name="trajectory_generator",
             output="screen", parameters=[{"robot": robot}]),
    ]


def generate_launch_description():
    robot = LaunchConfiguration("robot")
    xacro_file = PathJoinSubstitution(
        [FindPackageShare("humanoid_description"), "xacro", robot, [robot, ".urdf.xacro"]])
    description = ParameterValue(Command(["xacro ", xacro_file]), value_type=str)
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="bioloid", choices=ROBOTS, description="robot on the bus"),
        DeclareLaunchArgument("port", default_value="/dev/ttyUSB0", description="serial device of the bus"),
        DeclareLaunchArgument("baud", default_value="",
                              description="bus speed in bit/s (default: the robot's hw config, 1000000)"),
        DeclareLaunchArgument("control_rate", default_value="", description="control loop rate in Hz"),
        DeclareLaunchArgument("publish_rate", default_value="", description="joint_states rate in Hz"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
        OpaqueFunction(function=robot_nodes),
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": description}]),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(LaunchConfiguration("rviz")),
             arguments=["-d", PathJoinSubstitution([FindPackageShare("humanoid_bringup"), "rviz", "humanoid.rviz"])]),
    ])
