"""RobotClient.take_readings: a state's readings (the IMU, the feet, ``fallen``) reach the
caller before that state's ``joint_states``, never after it.

A client held at a state in lockstep acts once that state's ``joint_states`` is in. The
postures protocol's foot watch took the IMU, the feet and ``fallen`` on topics of their own,
which reach the client apart from ``joint_states`` (``fallen``, with no stamp, could not even
be waited for); taken from the robot's state message, they come in the state's order, as the
in-process watch gets them (docs/postures.md)."""

from __future__ import annotations

import rclpy
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Bool

from humanoid_control.ros import FEED_QOS, RobotClient, poll_until, robot_state, seconds, topics
from humanoid_interfaces.msg import RobotState

NAMESPACE = "robot_client_readings_test"
STATES = 50


def state(n: int) -> RobotState:
    msg = RobotState()
    msg.header.stamp.sec = n
    msg.joint_states = JointState(name=["a"], position=[float(n)])
    msg.joint_states.header.stamp.sec = n
    imu = Imu()
    imu.header.stamp.sec = n
    msg.imu = [imu]
    wrench = WrenchStamped()
    wrench.header.stamp.sec = n
    msg.foot_sides, msg.foot_wrenches, msg.foot_contacts = ["left"], [wrench], [Bool(data=True)]
    msg.fallen = [Bool(data=n % 2 == 1)]
    return msg


def test_each_reading_comes_before_its_states_joint_states():
    with RobotClient("readings_client", namespace=NAMESPACE) as client:
        seen: list[tuple[str, int, int | None]] = []  # (what, its stamp, the client's joint state then)

        def latest() -> int | None:
            joint_state = client.joint_state
            return None if joint_state is None else round(seconds(joint_state.header.stamp))

        client.take_readings(robot_state.IMU, Imu,
                             lambda msg: seen.append(("imu", msg.header.stamp.sec, latest())))
        client.take_readings(topics.foot_wrench("left"), WrenchStamped,
                             lambda msg: seen.append(("wrench", msg.header.stamp.sec, latest())))
        client.take_readings(robot_state.FALLEN, Bool,
                             lambda msg: seen.append(("fallen", int(msg.data), latest())))
        robot = rclpy.create_node("readings_robot", namespace=NAMESPACE, context=client.node.context)
        try:
            states = robot.create_publisher(RobotState, robot_state.TOPIC, FEED_QOS)
            poll_until(lambda: states.get_subscription_count() >= 1, "the client's state subscription", 30.0)
            for n in range(1, STATES + 1):
                states.publish(state(n))
            poll_until(lambda: latest() == STATES, "the last state's joint_states", 30.0)
        finally:
            robot.destroy_node()

    for n in range(1, STATES + 1):  # each of state n's readings, taken while the client was at state n - 1
        assert ("imu", n, n - 1 or None) in seen and ("wrench", n, n - 1 or None) in seen, seen
    assert [value for what, value, _ in seen if what == "fallen"] == [n % 2 for n in range(1, STATES + 1)]
    assert all(at is None or at < stamp for what, stamp, at in seen if what != "fallen"), seen
