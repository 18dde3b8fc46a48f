"""Record an experiment as an MCAP bag (rosbag2's MCAP storage), beside a running graph.

    ros2 launch humanoid_bringup record.launch.py output:=~/bags/squat

Records the robot interface (joint_states, commands, trajectories, action feedback and
status, diagnostics, sensors) and, in simulation, the clock, ground truth and falls.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration

TOPICS = [
    "/joint_states", "/joint_commands", "/joint_trajectory", "/diagnostics", "/robot_description",
    "/imu/data", "/left_foot/wrench", "/right_foot/wrench", "/left_foot/contact", "/right_foot/contact",
    "/follow_joint_trajectory/_action/feedback", "/follow_joint_trajectory/_action/status",
    "/play_motion/_action/feedback", "/play_motion/_action/status",
    "/clock", "/ground_truth/base_pose", "/ground_truth/base_twist", "/fallen",
]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("output", default_value="humanoid_bag", description="bag directory to create"),
        ExecuteProcess(cmd=["ros2", "bag", "record", "--storage", "mcap", "--output",
                            LaunchConfiguration("output"), *TOPICS], output="screen"),
    ])
