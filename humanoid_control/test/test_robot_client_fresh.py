"""RobotClient.current_positions: a reading no older than the call, not the latest this
client happened to take. A client behind the robot (a loaded machine, a command sharing its
process) measured the robot where it had been: CI's posing test read an elbow 0.41 s into
its move, 2 deg short of where it came to rest."""

from __future__ import annotations

import threading

import pytest
import rclpy
from sensor_msgs.msg import JointState

from humanoid_control.ros import RobotClient, RobotState, poll_until, robot_state, to_time

PATIENCE = 30.0


def reading(t: float, position: float) -> JointState:
    msg = JointState(name=["joint"], position=[position])
    msg.header.stamp = to_time(t)
    return msg


@pytest.mark.parametrize("standard_topics", [False, True], ids=["robot_state", "joint_states"])
def test_current_positions_takes_a_reading_from_after_the_call(standard_topics):
    """The client has taken the reading at 0.1; the robot then publishes 0.2, 0.3, ... in
    turn, each as soon as the client took the one before, so that the client is always one
    behind; a call made then returns no earlier reading than the newest at the call."""
    namespace = f"fresh_test_{int(standard_topics)}"
    with RobotClient("fresh_client", namespace=namespace, standard_topics=standard_topics) as client:
        robot = rclpy.create_node("fresh_robot", namespace=namespace)
        try:
            if standard_topics:
                publisher = robot.create_publisher(JointState, robot_state.JOINT_STATES, 10)
                publish = publisher.publish
            else:
                publisher = robot.create_publisher(RobotState, robot_state.TOPIC, 10)
                publish = lambda msg: publisher.publish(RobotState(joint_states=msg))  # noqa: E731
            poll_until(lambda: publisher.get_subscription_count() > 0, "the client subscribed", PATIENCE)
            publish(reading(1.0, 0.1))
            client.wait_for_joint_states(PATIENCE)
            assert client.positions()["joint"] == 0.1

            answer: list[dict[str, float]] = []
            asking = threading.Thread(target=lambda: answer.append(client.current_positions(PATIENCE)))
            asking.start()
            asking.join(0.5)
            assert not answer  # the only reading was taken before the call: nothing is known of now
            t, value = 1.0, 0.1
            while asking.is_alive():  # the robot goes on publishing
                t, value = t + 0.01, round(value + 0.1, 1)
                publish(reading(t, value))
                asking.join(0.05)
            assert answer and answer[0]["joint"] >= 0.2
            assert client.positions()["joint"] >= answer[0]["joint"]  # the client has taken it too
            # a second call: the middleware's newest, not the one the first call returned
            publish(reading(t + 0.01, 9.0))
            poll_until(lambda: client.positions()["joint"] == 9.0, "the client took 9.0", PATIENCE)
            again: list[dict[str, float]] = []
            second = threading.Thread(target=lambda: again.append(client.current_positions(PATIENCE)))
            second.start()
            while second.is_alive():
                publish(reading(t + 0.02, 9.5))
                second.join(0.05)
            assert again == [{"joint": 9.5}]
        finally:
            robot.destroy_node()
