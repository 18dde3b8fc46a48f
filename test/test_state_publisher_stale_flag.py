"""robot_state and joint_states reach a matched subscription even when the matched events'
flag says nobody listens.

The state publisher skips the messages nobody takes, knowing who listens from the
middleware's matched events (a flag). A control container restarted after a SIGKILL once
got no robot_state for 60 s while its subscription was matched (clean-clone run 151): the
flag had missed the match. Where the flag says nobody listens, the publisher asks the
middleware (``MatchedPublisher.heard``, about 5 us), so a missed event costs nothing.

In-process: the simulated Bioloid's control loop (real PyBullet) with the node's state
publisher on a real rclpy node, subscriptions in another node of this process; the flag is
set as a missed event leaves it.
"""

from __future__ import annotations

import pytest
from sensor_msgs.msg import JointState
from system_support import publishing_robot

from humanoid_control.ros import poll_until, robot_state, topics
from humanoid_interfaces.msg import RobotState


@pytest.fixture
def published():
    with publishing_robot("bioloid", {robot_state.TOPIC: RobotState, topics.JOINT_STATES: JointState}) as running:
        yield running


def test_a_missed_match_event_does_not_silence_the_robots_state(published) -> None:
    taken = published.taken
    for matched in (published.publisher._state_pub, published.publisher._joint_state_pub):
        matched.subscribed = False  # as a missed matched event leaves the flag
    before = {topic: len(messages) for topic, messages in taken.items()}
    poll_until(lambda: published.cycle() or all(len(taken[t]) > before[t] + 5 for t in taken),
               "robot_state and joint_states with the flags down", 30.0)
