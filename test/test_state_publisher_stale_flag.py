"""robot_state and joint_states reach a matched subscription even when the matched events'
flag says nobody listens.

The state publisher skips the messages nobody takes, knowing who listens from the
middleware's matched events (a flag). A control container restarted after a SIGKILL once
got no robot_state for 60 s while its subscription was matched (clean-clone run 151): the
flag had missed the match. Where the flag says nobody listens, the publisher asks the
middleware (``MatchedPublisher.heard``, about 5 us), so a missed event costs nothing.

In-process: the simulated HOAP-2's control loop (real PyBullet) with the node's state
publisher on a real rclpy node, subscriptions in another node of this process; the flag is
set as a missed event leaves it.
"""

from __future__ import annotations

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

from humanoid_control.ros import DriverClock, StatePublisher, poll_until, robot_state, topics
from humanoid_interfaces.msg import RobotState
from humanoid_sim import SimulatedRobot


@pytest.fixture
def published():
    rclpy.init()
    robot = SimulatedRobot("bioloid")
    node = rclpy.create_node("stale_flag_publisher")
    listener = rclpy.create_node("stale_flag_listener")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(listener)
    taken: dict[str, list] = {"state": [], "joints": []}
    listener.create_subscription(RobotState, robot_state.TOPIC, taken["state"].append, 100)
    listener.create_subscription(JointState, topics.JOINT_STATES, taken["joints"].append, 100)
    try:
        publisher = StatePublisher(node, robot.loop, DriverClock(robot.driver.now), "sim", "bioloid")
        publisher.on_started(robot.loop.state)
        robot.loop.add_cycle_hook(publisher.on_cycle)

        def cycle() -> bool:
            robot.cycle()
            executor.spin_once(timeout_sec=0.0)
            return True

        poll_until(lambda: cycle() and taken["state"] and taken["joints"], "both topics' first messages", 30.0)
        yield publisher, cycle, taken
    finally:
        executor.shutdown()
        robot.close()
        rclpy.try_shutdown()


def test_a_missed_match_event_does_not_silence_the_robots_state(published) -> None:
    publisher, cycle, taken = published
    for matched in (publisher._state_pub, publisher._joint_state_pub):
        matched.subscribed = False  # as a missed matched event leaves the flag
    before = {topic: len(messages) for topic, messages in taken.items()}
    poll_until(lambda: cycle() and all(len(taken[t]) > before[t] + 5 for t in taken),
               "robot_state and joint_states with the flags down", 30.0)
