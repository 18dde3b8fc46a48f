"""The walk controller node in this process, over real DDS, before any robot answers: a
cmd_vel it cannot act on is refused with an error in its log, not dropped in silence."""

from __future__ import annotations

import rclpy
from geometry_msgs.msg import Twist
from node_teardown import ros_context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from trajectory_msgs.msg import JointTrajectory

from humanoid_control.nodes import WalkControllerNode
from humanoid_control.ros import OwnProcess, poll_until
from humanoid_core.biped_walking import NODE_NAME


def test_cmd_vel_before_the_robots_first_joint_states_is_refused_in_the_log(capfd):
    with ros_context():
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


def test_a_walk_waits_until_the_robot_hears_its_trajectories(capfd):
    """A robot interface whose readings arrive before its joint_trajectory subscription has
    matched the controller's publisher (discovery's order on a loaded machine): a walk started
    then lost its first set-points (the crouch), and the robot refused every later one as too
    far from where it stood. The walk starts only once the robot hears it; the robot gets the
    walk's first trajectory."""
    from rclpy.action import ActionServer
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import clock_seconds, to_time
    from humanoid_description import RobotModel
    from humanoid_interfaces.action import FollowJointTrajectory

    with ros_context():
        node = rclpy.create_node(NODE_NAME, parameter_overrides=[Parameter("robot", value="bioloid")])
        walker = WalkControllerNode(node, OwnProcess())
        # the robot's readings, and its follow_joint_trajectory action (what names it the robot interface)
        robot = rclpy.create_node("robot_interface_stand_in")
        ActionServer(robot, FollowJointTrajectory, "follow_joint_trajectory", lambda goal: goal.abort())
        model = RobotModel("bioloid")
        home = dict(zip(model.joints.names, model.home_positions().tolist(), strict=True))
        states = robot.create_publisher(JointState, "joint_states", 10)
        recorder = rclpy.create_node("recorder_stand_in")  # hears everything sent, from the start
        recorded: list[JointTrajectory] = []
        recorder.create_subscription(JointTrajectory, "joint_trajectory", recorded.append, 10)
        cmd_vel = recorder.create_publisher(Twist, "cmd_vel", 10)
        executor = SingleThreadedExecutor()
        for each in (node, robot, recorder):
            executor.add_node(each)
        forward = Twist()
        forward.linear.x = 0.04
        seen = ""

        def tick() -> None:
            state = JointState(name=list(home), position=list(home.values()))
            state.header.stamp = to_time(clock_seconds(robot))
            states.publish(state)
            cmd_vel.publish(forward)
            executor.spin_once(timeout_sec=0.01)

        def refused() -> bool:
            nonlocal seen
            tick()
            seen += capfd.readouterr().err
            # (another test's robot interface, gone without a word, may be listed beside it)
            return any(line.startswith("cmd_vel ignored: the robot interface (") and "/robot_interface_stand_in" in line
                       and "does not subscribe to /joint_trajectory yet" in line
                       for line in seen.replace("]: ", "\n").splitlines())

        poll_until(refused, "the walk controller's error for a robot that does not hear it", timeout=30.0)
        assert walker.controller.phase.name == "IDLE" and not recorded  # nothing started, nothing sent
        received: list[JointTrajectory] = []
        robot.create_subscription(JointTrajectory, "joint_trajectory", received.append, 10)

        def walking() -> bool:
            tick()
            return bool(received) and bool(recorded)

        poll_until(walking, "the robot to receive the walk's first trajectory", timeout=30.0)
        assert walker.controller.phase.name != "IDLE"
        assert received[0] == recorded[0]  # the first sent is the first the robot got: nothing lost
