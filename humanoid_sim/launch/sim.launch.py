"""Simulated robot: the graph ``humanoid sim`` starts (the PyBullet node behind the
shared robot interface and the nodes that build on it, from ``humanoid_sim.graphs``),
robot_state_publisher where it is installed (TF for RViz, and then the one publisher of
robot_description) and, on request, RViz. Every process dies with the launch; the
simulation node's exit ends it, the other nodes are respawned.

    ros2 launch humanoid_sim sim.launch.py robot:=bioloid gui:=true rviz:=true
    ros2 launch humanoid_sim sim.launch.py robot:=bioloid namespace:=a   # /a/joint_states, a/base_link
    ros2 launch humanoid_sim sim.launch.py robot:=bioloid_quadruped count:=4   # four in one world

The same graph runs without ros2 launch: ``humanoid sim --robot bioloid``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from humanoid_bringup import (
    GRAPH_SWITCHES,
    NAMESPACE_ARGUMENT,
    full_install_tools,
    graph_switches,
    launch_actions,
    number_or_none,
    tool_nodes,
)
from humanoid_control.ros import normalized_namespace
from humanoid_description import DEFAULT_ROBOT, SIM_NODE_PARAMETERS
from humanoid_sim import robot_count, sim_nodes, world_namespaces

ROBOTS = list(SIM_NODE_PARAMETERS.robots())  # robots with a simulation parameter file


def robot_nodes(context):
    """The simulation graph with the arguments given, and the full install's tools that are
    there; a tool asked for and missing is refused before anything starts."""
    def argument(name):
        return LaunchConfiguration(name).perform(context)

    notes = []
    tools = full_install_tools(argument("rviz") == "true", notes.append)
    robot = argument("robot")
    use_sim_time = argument("use_sim_time") == "true"
    namespace = normalized_namespace(argument("namespace"))  # an invalid one refuses the launch
    count = robot_count(argument("count"))  # so does a count out of range
    graph = sim_nodes(robot, gui=argument("gui") == "true", real_time_factor=float(argument("real_time_factor")),
                      control_rate=number_or_none(argument("control_rate")),
                      publish_rate=number_or_none(argument("publish_rate")),
                      physics_rate=number_or_none(argument("physics_rate")), use_sim_time=use_sim_time,
                      publish_robot_description=not tools.state_publisher,
                      params_file=argument("params_file") or None, namespace=namespace, count=count,
                      spacing=number_or_none(argument("spacing")), **graph_switches(argument))
    return [*(LogInfo(msg=note) for note in notes),
            *launch_actions(graph, tool_nodes(tools, robot, use_sim_time, namespace if count == 1
                                              else world_namespaces(robot, namespace, count)))]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value=DEFAULT_ROBOT, choices=ROBOTS, description="robot to simulate"),
        DeclareLaunchArgument("gui", default_value="false", choices=["true", "false"],
                              description="show the PyBullet window"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description=NAMESPACE_ARGUMENT),
        DeclareLaunchArgument("count", default_value="1",
                              description="robots in one physics world, each in a namespace of its own "
                                          "(/ROBOT_1 ..., or NAMESPACE_1 ...): humanoid sim --count"),
        DeclareLaunchArgument("spacing", default_value="",
                              description="with count above 1: m between neighbouring robots (default 0.5)"),
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
        DeclareLaunchArgument("params_file", default_value="",
                              description="simulation parameter file (servo, transmission, contact, model "
                                          "corrections: docs/identification.md); default: none"),
        OpaqueFunction(function=robot_nodes),
    ])
