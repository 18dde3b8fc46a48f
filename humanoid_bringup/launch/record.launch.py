"""Record an experiment as a rosbag2 bag (MCAP storage) with ``ros2 bag``, beside a running graph.

    ros2 launch humanoid_bringup record.launch.py output:=~/bags/squat

Records the same topics as ``humanoid record`` (the pip-only way, without ros2 bag):
the robot interface (joint_states, commands, trajectories, action feedback and status,
diagnostics, sensors), the balance monitor's and self-collision checker's outputs and,
in simulation, the clock, ground truth and falls. ``humanoid plot BAG`` makes figures
of either bag.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration

from humanoid_control.ros.topics import DEFAULT_TOPICS


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("output", default_value="humanoid_bag", description="bag directory to create"),
        # action topics (<action>/_action/...) are hidden topics: ros2 bag skips them unless told
        ExecuteProcess(cmd=["ros2", "bag", "record", "--storage", "mcap", "--include-hidden-topics",
                            "--output", LaunchConfiguration("output"), *DEFAULT_TOPICS], output="screen"),
    ])
