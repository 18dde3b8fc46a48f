"""A robot interface stand-in for a gait controller node in the test's own process."""

from __future__ import annotations

import rclpy
from node_teardown import destroy_whole
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from humanoid_control.ros import ActionClient, clock_seconds, to_time
from humanoid_core.quadruped_gaits import GaitControllerParameters
from humanoid_description import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory, PlayGait


class StandInRobot:
    """The robot's side beside ``controller`` (in ``namespace``): readings in the stance stamped
    ``behind`` seconds before the clock, the action that names it the robot interface (every goal
    aborted), what it is sent (kept in ``received``), and a ``play_gait`` client; one executor
    spins both nodes, a turn per :meth:`tick`."""

    def __init__(self, controller: Node, robot: str, namespace: str, behind: float = 0.0) -> None:
        self.model = RobotModel(robot)
        stance = GaitControllerParameters.for_robot(robot).stance
        self.stance = self.model.joints.to_array(self.model.config.pose(stance))
        self.behind = behind
        self.node = rclpy.create_node("robot_interface_stand_in", namespace=namespace)
        ActionServer(self.node, FollowJointTrajectory, "follow_joint_trajectory", lambda goal: goal.abort())
        self._states = self.node.create_publisher(JointState, "joint_states", 10)
        self.received: list[JointTrajectory] = []
        self.node.create_subscription(JointTrajectory, "joint_trajectory", self.received.append, 100)
        self.gaits = ActionClient(self.node, PlayGait, "play_gait")
        self._controller = controller
        self.executor = SingleThreadedExecutor()
        for node in (controller, self.node):
            self.executor.add_node(node)

    def now(self) -> float:
        return clock_seconds(self.node)

    def tick(self) -> None:
        """A reading in the stance, then one turn of the executor."""
        state = JointState(name=list(self.model.joints.names), position=self.stance.tolist())
        state.header.stamp = to_time(self.now() - self.behind)
        self._states.publish(state)
        self.executor.spin_once(timeout_sec=0.01)

    def close(self) -> None:
        """The executor, then both nodes whole (``destroy_whole``): nothing left to the garbage
        collector, whose teardown of an rclpy node may wait for ever (docs/testing.md)."""
        self.executor.shutdown()
        for node in (self.node, self._controller):
            destroy_whole(node)
