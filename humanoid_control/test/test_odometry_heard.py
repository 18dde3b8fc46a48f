"""The odometry publishes to a subscription as soon as the middleware has matched it, not
once its node's executor has dispatched the matched event.

In the control container the matched event of a publisher reached the odometry seconds
after the match (3-11 s on a quiet machine, up to 157 s in the test suite): a /tf
subscription made after the robot started (RViz opened on a running robot, a second robot's
frames) got nothing until then. The odometry asks the middleware when its flag says no one
listens (``MatchedPublisher.heard``). Here its node is never spun, so the event never comes:
a state handled after a /tf subscription has matched must reach it all the same."""

from __future__ import annotations

import rclpy
from node_teardown import ros_context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from humanoid_control.nodes import OdometryNode
from humanoid_control.ros import OwnProcess, poll_until, to_time
from humanoid_core.odometry import NODE_NAME
from humanoid_description import RobotModel

NAMESPACE = "odometry_heard_test"


def test_a_tf_subscription_gets_the_frames_before_the_matched_event_is_dispatched():
    with ros_context():
        node = rclpy.create_node(NODE_NAME, namespace=NAMESPACE,
                                 parameter_overrides=[Parameter("robot", value="bioloid")])
        odometry = OdometryNode(node, OwnProcess())  # never spun: its matched events never come
        listener = rclpy.create_node("tf_listener", namespace=NAMESPACE)
        received: list[TFMessage] = []
        listener.create_subscription(TFMessage, "/tf", received.append, 10)
        executor = SingleThreadedExecutor()
        executor.add_node(listener)
        model = RobotModel("bioloid")
        state = JointState(name=list(model.joints.names), position=model.home_positions().tolist())
        step = [0]

        def handled() -> bool:  # one state handled per try, until a /tf message arrives
            step[0] += 1
            state.header.stamp = to_time(0.01 * step[0])
            odometry._on_joint_state(state)
            executor.spin_once(timeout_sec=0.01)
            return bool(received)

        poll_until(handled, "a /tf message from the odometry", timeout=30.0)
        frames = {(t.header.frame_id, t.child_frame_id) for t in received[0].transforms}
        assert frames == {(f"{NAMESPACE}/odom", f"{NAMESPACE}/base_link")}
