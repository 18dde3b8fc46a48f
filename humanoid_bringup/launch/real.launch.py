"""Real robot: the graph ``humanoid real`` starts (the Dynamixel hardware node behind the
shared robot interface and the nodes that build on it, from ``humanoid_bringup.graphs``),
robot_state_publisher where it is installed (TF for RViz, and then the one publisher of
robot_description) and, on request, RViz. Every process dies with the launch; the
hardware node's exit ends it (nothing else holds the robot), the other nodes are
respawned. Needs humanoid_interfaces, _description, _control, _hw and this package's
launch and graph modules, not the simulation.

    ros2 launch humanoid_bringup real.launch.py robot:=bioloid port:=/dev/ttyUSB0
    ros2 launch humanoid_bringup real.launch.py robot:=bioloid port:=/dev/ttyUSB1 namespace:=b

The same graph runs without ros2 launch: ``humanoid real --robot bioloid --port /dev/ttyUSB0``
(or ``--emulate`` for the bus emulator).
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
    real_nodes,
    tool_nodes,
)
from humanoid_control.ros import normalized_namespace
from humanoid_description import HW_NODE_PARAMETERS

ROBOTS = list(HW_NODE_PARAMETERS.robots())  # robots with a hardware parameter file (a Dynamixel bus)


def robot_nodes(context):
    """The real-robot graph with the arguments given, and the full install's tools that are
    there; a tool asked for and missing is refused before anything starts."""
    def argument(name):
        return LaunchConfiguration(name).perform(context)

    notes = []
    tools = full_install_tools(argument("rviz") == "true", notes.append)
    robot = argument("robot")
    baud = argument("baud")
    namespace = normalized_namespace(argument("namespace"))  # an invalid one refuses the launch
    graph = real_nodes(robot, port=argument("port"), baud=int(baud) if baud else None,
                       control_rate=number_or_none(argument("control_rate")),
                       publish_rate=number_or_none(argument("publish_rate")),
                       publish_robot_description=not tools.state_publisher, namespace=namespace,
                       **graph_switches(argument))
    return [*(LogInfo(msg=note) for note in notes),
            *launch_actions(graph, tool_nodes(tools, robot, use_sim_time=False, namespace=namespace))]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="bioloid", choices=ROBOTS, description="robot on the bus"),
        DeclareLaunchArgument("port", default_value="/dev/ttyUSB0", description="serial device of the bus"),
        DeclareLaunchArgument("baud", default_value="",
                              description="bus speed in bit/s (default: the robot's hw config, 1000000)"),
        DeclareLaunchArgument("control_rate", default_value="", description="control loop rate in Hz"),
        DeclareLaunchArgument("publish_rate", default_value="", description="joint_states rate in Hz"),
        DeclareLaunchArgument("rviz", default_value="false", choices=["true", "false"], description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description=NAMESPACE_ARGUMENT),
        *(DeclareLaunchArgument(name, default_value="true", choices=["true", "false"], description=text)
          for name, text in GRAPH_SWITCHES.items()),
        OpaqueFunction(function=robot_nodes),
    ])
