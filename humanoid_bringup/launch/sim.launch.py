"""Simulated robot: the graph ``humanoid sim`` starts (the PyBullet node behind the
shared robot interface and the nodes that build on it, from ``humanoid_bringup.graphs``),
robot_state_publisher (TF for RViz, and the one publisher of robot_description here)
and, on request, RViz.

    ros2 launch humanoid_bringup sim.launch.py robot:=bioloid gui:=true rviz:=true

The same graph runs without ros2 launch: ``humanoid sim --robot bioloid``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

from humanoid_bringup.graphs import sim_nodes
from humanoid_bringup.launch_parameters import (
    GRAPH_SWITCHES,
    graph_switches,
    launch_node,
    number_or_none,
    state_publisher_parameters,
)
from humanoid_description.runtime_files import SIM_NODE_PARAMETERS

ROBOTS = list(SIM_NODE_PARAMETERS.robots())  # robots with a simulation parameter file


def robot_nodes(context):
    """The simulation graph with the arguments given, and robot_state_publisher."""
    def argument(name):
        return LaunchConfiguration(name).perform(context)

    robot = argument("robot")
    use_sim_time = argument("use_sim_time") == "true"
    graph = sim_nodes(robot, gui=argument("gui") == "true", real_time_factor=float(argument("real_time_factor")),
                      control_rate=number_or_none(argument("control_rate")),
                      publish_rate=number_or_none(argument("publish_rate")),
                      physics_rate=number_or_none(argument("physics_rate")), use_sim_time=use_sim_time,
                      publish_robot_description=False,
                      **graph_switches(argument))
    return [*(Node(**launch_node(spec)) for spec in graph),
            Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                 parameters=[state_publisher_parameters(robot, use_sim_time)])]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="hoap2", choices=ROBOTS, description="robot to simulate"),
        DeclareLaunchArgument("gui", default_value="false", choices=["true", "false"],
                              description="show the PyBullet window"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
        *(DeclareLaunchArgument(name, default_value="true", choices=["true", "false"], description=text)
          for name, text in GRAPH_SWITCHES.items()),
        DeclareLaunchArgument("use_sim_time", default_value="true", choices=["true", "false"],
                              description="run the other nodes on the simulated clock (/clock)"),
        DeclareLaunchArgument("real_time_factor", default_value="1.0",
                              description="1 = real time, 2 = twice as fast, 0 = as fast as possible"),
        DeclareLaunchArgument("control_rate", default_value="",
                              description="control loop rate in Hz (default: the robot's sim config)"),
        DeclareLaunchArgument("publish_rate", default_value="",
                              description="joint_states rate in Hz (default: the robot's sim config)"),
        DeclareLaunchArgument("physics_rate", default_value="",
                              description="physics step rate in Hz (default: 1000)"),
        OpaqueFunction(function=robot_nodes),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(LaunchConfiguration("rviz")),
             arguments=["-d", PathJoinSubstitution([FindPackageShare("humanoid_bringup"), "rviz", "humanoid.rviz"])],
             parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}]),
    ])
