"""The gait controller stops on a fall: a gait under way ends ``FELL`` once ``fall_state`` says
the robot fell, nothing more is sent, and a gait on a robot that lies is refused ``FELL``.

The Bioloid quadruped has no IMU and tips over only in the balance monitor's extreme cases
(its CoM far outside the support of four ball feet), so the fall estimate is given here as the
balance monitor publishes it (same topic, QoS and message): the node under test, the gait
controller, runs in the simulation graph as users run it (no balance monitor, which would
publish its own estimate).
"""

from __future__ import annotations

import threading

import pytest
from trajectory_msgs.msg import JointTrajectory

from humanoid_bringup.graphs import sim_nodes
from humanoid_control.loop.setpoint_window import TRAJECTORY_DELAY
from humanoid_control.ros.fall_watch import FALL_STATE_QOS
from humanoid_control.ros.ros_time import seconds, to_time
from humanoid_interfaces.action import PlayGait
from humanoid_interfaces.msg import FallState

pytestmark = pytest.mark.system

#: Wall seconds from the fall's message to the gait's result.
RESULT_WITHIN = 20.0
#: Robot seconds for the fall's message to reach the controller (it plays on meanwhile).
TRANSPORT = 0.2

GRAPH = sim_nodes("bioloid_quadruped", real_time_factor=0.5, balance_monitor=False, self_collision_checker=False,
                  energy_monitor=False)


@pytest.fixture(scope="module")
def quadruped(module_graph):
    return module_graph


def fall_state(client, fallen: bool) -> FallState:
    msg = FallState(fallen=fallen, posture=FallState.UNKNOWN if fallen else FallState.UPRIGHT, tilt=float("nan"),
                    source="support")
    msg.header.stamp = to_time(client.now())
    return msg


def test_a_fall_ends_the_gait_with_fell_and_nothing_more_is_sent(quadruped):
    client = quadruped
    publisher = client.node.create_publisher(FallState, "fall_state", FALL_STATE_QOS)
    lock, trajectories = threading.Lock(), []

    def on_trajectory(msg: JointTrajectory) -> None:
        with lock:
            trajectories.append(seconds(msg.header.stamp) - TRAJECTORY_DELAY)

    client.node.create_subscription(JointTrajectory, "joint_trajectory", on_trajectory, 100)
    publisher.publish(fall_state(client, False))
    started: list[PlayGait.Feedback] = []
    handle = client.send_gait("trot", 0.5, 30.0, feedback=started.append)
    client.wait_until(client.now() + 2.0, timeout=120.0)
    assert started and trajectories, "the gait did not start"
    fall = fall_state(client, True)
    publisher.publish(fall)
    result = client.wait_result(handle, RESULT_WITHIN, "play_gait result after the fall").result
    assert result.error_code == PlayGait.Result.FELL, result.error_string
    assert "fell" in result.error_string
    client.wait_until(seconds(fall.header.stamp) + 2.0, timeout=120.0)
    with lock:
        late = [t for t in trajectories if t > seconds(fall.header.stamp) + TRANSPORT]
    assert not late, f"joint_trajectory sent after the fall (readings at {late[:5]})"

    refused = client.wait_result(client.send_gait("trot", 0.5, 2.0), 60.0, "play_gait result").result
    assert refused.error_code == PlayGait.Result.FELL, refused.error_string
