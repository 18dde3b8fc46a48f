"""Simulated robot: the PyBullet node behind the shared robot interface, the trajectory
generator, robot_state_publisher (TF for RViz) and, on request, RViz.

    ros2 launch humanoid_bringup sim.launch.py robot:=bioloid gui:=true rviz:=true

The same graph runs without ros2 launch: ``humanoid sim --robot bioloid``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

ROBOTS = ["hoap2", "bioloid"]


def robot_nodes(context):
    """The sim node with the robot's parameter file, plus the overrides actually given."""
    robot = LaunchConfiguration("robot").perform(context)
    overrides = {"robot": robot, "gui": LaunchConfiguration("gui").perform(context) == "true",
                 "real_time_factor": float(LaunchConfiguration("real_time_factor").perform(context))}
    for name in ("control_rate", "publish_rate", "physics_rate"):
        value = LaunchConfiguration(name).perform(context)
        if value:
            overrides[name] = float(value)
    sim_params = PathJoinSubstitution([FindPackageShare("humanoid_sim"), "config", f"{robot}.yaml"])
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context) == "true"
    return [
        Node(package="humanoid_sim", executable="sim_node", name="humanoid_sim", output="screen",
             parameters=[sim_params, overrides]),
        Node(package="humanoid_control", executable="trajectory_generator", name="trajectory_generator",
             output="screen", parameters=[{"robot": robot, "use_sim_time": use_sim_time}]),
    ]


def generate_launch_description():
    robot = LaunchConfiguration("robot")
    xacro_file = PathJoinSubstitution(
        [FindPackageShare("humanoid_description"), "xacro", robot, [robot, ".urdf.xacro"]])
    description = ParameterValue(Command(["xacro ", xacro_file]), value_type=str)
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="hoap2", choices=ROBOTS, description="robot to simulate"),
        DeclareLaunchArgument("gui", default_value="false", choices=["true", "false"],
                              description="show the PyBullet window"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
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
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": description,
                          "use_sim_time": LaunchConfiguration("use_sim_time")}]),
        Node(package="rviz2", executable="rviz2", output="screen", condition=IfCondition(LaunchConfiguration("rviz")),
             arguments=["-d", PathJoinSubstitution([FindPackageShare("humanoid_bringup"), "rviz", "humanoid.rviz"])],
             parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}]),
    ])
