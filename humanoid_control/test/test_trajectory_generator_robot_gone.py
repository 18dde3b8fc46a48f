"""The trajectory generator node in this process, over real DDS, whose robot goes away during a
motion: the robot's ``follow_joint_trajectory`` server accepts the motion's trajectory and is
then destroyed before any result (a driver whose process ended). The ``play_motion`` goal ends
``EXECUTION_FAILED`` saying why, :data:`ROBOT_GONE_AFTER` later, where it used to wait for ever;
the node still serves the next goal."""

from __future__ import annotations

import time

import rclpy
from node_teardown import destroy_whole
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.task import Future
from sensor_msgs.msg import JointState

from humanoid_control.nodes import ROBOT_GONE_AFTER, TrajectoryGenerator, trajectory_generator
from humanoid_control.ros import ActionClient, OwnProcess, clock_seconds, poll_until, to_time, topics
from humanoid_description import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory, PlayMotion

ROBOT, MOTION, NAMESPACE = "bioloid", "wave", "robot_gone_test"
PATIENCE = 60.0


def test_a_motion_whose_robot_goes_away_ends_execution_failed_saying_so(monkeypatch):
    rclpy.init()
    nodes = []
    executor = SingleThreadedExecutor()
    try:
        generator = rclpy.create_node("trajectory_generator", namespace=NAMESPACE,
                                      parameter_overrides=[Parameter("robot", value=ROBOT)])
        TrajectoryGenerator(generator, OwnProcess())
        robot = rclpy.create_node("robot_stand_in", namespace=NAMESPACE)
        nodes += [generator, robot]
        model = RobotModel(ROBOT)
        states = robot.create_publisher(JointState, topics.JOINT_STATES, 10)
        accepted: list[object] = []

        async def execute(goal_handle):  # the robot plays the trajectory and never ends it
            accepted.append(goal_handle)
            await Future()

        server = ActionServer(robot, FollowJointTrajectory, topics.FOLLOW_JOINT_TRAJECTORY, execute)
        motions = ActionClient(robot, PlayMotion, topics.PLAY_MOTION)
        for node in nodes:
            executor.add_node(node)

        def tick() -> None:
            state = JointState(name=list(model.joints.names), position=model.home_positions().tolist())
            state.header.stamp = to_time(clock_seconds(robot))
            states.publish(state)
            executor.spin_once(timeout_sec=0.01)

        poll_until(lambda: tick() or motions.server_is_ready(), "the play_motion server", timeout=PATIENCE)
        goal = motions.send_goal_async(PlayMotion.Goal(motion_name=MOTION))
        poll_until(lambda: tick() or bool(accepted), "the motion's trajectory on the robot", timeout=PATIENCE)
        poll_until(lambda: tick() or goal.done(), "the goal's acceptance", timeout=PATIENCE)
        result = goal.result().get_result_async()
        server.destroy()
        gone_at = time.monotonic()
        poll_until(lambda: tick() or result.done(), "the goal's result", timeout=ROBOT_GONE_AFTER + PATIENCE)
        ended = result.result().result
        assert ended.error_code == PlayMotion.Result.EXECUTION_FAILED, ended.error_string
        assert ended.error_string == ("the robot did not complete the trajectory: its follow_joint_trajectory "
                                      f"server went away during the motion (missing for {ROBOT_GONE_AFTER:g} s)")
        assert time.monotonic() - gone_at >= ROBOT_GONE_AFTER
        # the node serves on: the next goal is answered (the robot being gone, refused saying so)
        monkeypatch.setattr(trajectory_generator, "CONNECT_TIMEOUT", 1.0)
        again = motions.send_goal_async(PlayMotion.Goal(motion_name=MOTION))
        poll_until(lambda: tick() or again.done(), "the next goal's acceptance", timeout=PATIENCE)
        second = again.result().get_result_async()
        poll_until(lambda: tick() or second.done(), "the next goal's result", timeout=PATIENCE)
        assert second.result().result.error_string == "no follow_joint_trajectory server within 1 s"
    finally:
        executor.shutdown()
        for node in reversed(nodes):
            destroy_whole(node)
        rclpy.try_shutdown()
