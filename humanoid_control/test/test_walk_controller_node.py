"""The walk controller node in this process, over real DDS, before any robot answers: a
cmd_vel it cannot act on is refused with an error in its log, not dropped in silence."""

from __future__ import annotations

import rclpy
from geometry_msgs.msg import Twist
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from trajectory_msgs.msg import JointTrajectory

from humanoid_control.nodes import WalkControllerNode
from humanoid_control.ros import OwnProcess, poll_until
from humanoid_core.biped_walking import NODE_NAME


def test_cmd_vel_before_the_robots_first_joint_states_is_refused_in_the_log(capfd):
    rclpy.init()
    try:
        node = rclpy.create_node(NODE_NAME, parameter_overrides=[Parameter("robot", value="bioloid")])
        walker = WalkControllerNode(node, OwnProcess())
        user = rclpy.create_node("cmd_vel_user")
        sent: list[JointTrajectory] = []
        user.create_subscription(JointTrajectory, "joint_trajectory", sent.append, 10)
        cmd_vel = user.create_publisher(Twist, "cmd_vel", 10)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.add_node(user)
        forward = Twist()
        forward.linear.x = 0.04
        seen = ""

        def refused() -> bool:
            nonlocal seen
            cmd_vel.publish(forward)
            executor.spin_once(timeout_sec=0.1)
            seen += capfd.readouterr().err
            return "cmd_vel ignored: no joint_states from the robot yet" in seen

        poll_until(refused, "the walk controller's error for a cmd_vel before any joint_states", timeout=30.0)
        assert walker.controller.phase.name == "IDLE"  # nothing started, nothing sent
        assert not sent
    finally:
        rclpy.try_shutdown()
