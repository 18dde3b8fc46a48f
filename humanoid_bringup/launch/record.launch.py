"""Record an experiment as a rosbag2 bag (MCAP storage) with ``ros2 bag``, beside a running graph.

    ros2 launch humanoid_bringup record.launch.py output:=~/bags/squat [namespace:=a]

Records the same topics as ``humanoid record`` (the pip-only way, without ros2 bag):
the robot interface (joint_states, commands, trajectories, action feedback and status,
diagnostics, sensors), the balance monitor's and self-collision checker's outputs and,
in simulation, the clock, ground truth and falls. ``humanoid plot BAG`` makes figures
of either bag.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit
from launch.substitutions import LaunchConfiguration

from humanoid_bringup import recording_failed, ros2_bag_record, tethered
from humanoid_control.ros import DEFAULT_TOPICS, absolute, normalized_namespace


def record(context):
    """``ros2 bag record`` into the bag asked for; no ``ros2`` command refuses the launch, and
    a recording that fails fails the launch (non-zero status)."""
    namespace = normalized_namespace(LaunchConfiguration("namespace").perform(context))
    topics = [absolute(topic, namespace) for topic in DEFAULT_TOPICS]  # the robot's, in its namespace
    recorder = ExecuteProcess(cmd=ros2_bag_record(LaunchConfiguration("output").perform(context), topics),
                              name="ros2_bag_record", output="screen", **tethered())
    return [recorder, RegisterEventHandler(OnProcessExit(
        target_action=recorder, on_exit=lambda event, _context: recording_failed(event.returncode)))]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("output", default_value="humanoid_bag", description="bag directory to create"),
        DeclareLaunchArgument("namespace", default_value="", description="the namespace of the robot to record"),
        OpaqueFunction(function=record),
    ])
