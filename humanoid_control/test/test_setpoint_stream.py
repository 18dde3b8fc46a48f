"""The end of a streamed motion over real DDS (ros.setpoint_stream): a robot not at the last
set-point once it is due is sent it again from where it is measured, within half the speed
limits, and the controller reports success only once the robot is there; a robot that takes
nothing is reported, naming the joint, after that one resend."""

from __future__ import annotations

import time

import numpy as np
import pytest
from trajectory_msgs.msg import JointTrajectory

from humanoid_control.ros import FINAL_RESENDS, OwnProcess, SetpointStream, poll_until, seconds
from humanoid_core.loop import TRAJECTORY_DELAY, Setpoint, SetpointBatcher
from humanoid_description import JointInfo, JointLimits, JointTable

NAMES = ("a", "b")
LIMIT = np.array([2.0, 2.0])  # rad/s
#: A robot of two joints.
JOINTS = JointTable([JointInfo(name, k, JointLimits(-3.0, 3.0, float(LIMIT[k]), 1.0), (0.0, 0.0, 1.0),
                               "base", f"link_{name}") for k, name in enumerate(NAMES)])
LEAD, SETTLE, TOLERANCE = 0.3, 0.2, 0.05
PATIENCE = 30.0
START = np.zeros(2)  # where the robot stands, and stays unless it takes a trajectory
TARGET = np.array([0.5, -0.8])  # the motion's last set-point


class Robot:
    """A robot that refuses the motion's trajectories and takes, or not, what comes after."""

    def __init__(self, takes_a_resend: bool) -> None:
        self.takes_a_resend = takes_a_resend
        self.received: list[JointTrajectory] = []
        self.at = START
        self.t0 = time.monotonic()

    def on_trajectory(self, msg: JointTrajectory) -> None:
        self.received.append(msg)
        if len(self.received) > 1 and self.takes_a_resend:
            self.at = np.array(msg.points[-1].positions)

    def reading(self) -> tuple[float, np.ndarray]:
        return time.monotonic() - self.t0, self.at


def streamed(spinning_nodes, robot: Robot) -> SetpointStream:
    controller, listener = spinning_nodes("setpoint_stream_controller", "setpoint_stream_robot")
    listener.create_subscription(JointTrajectory, "joint_trajectory", robot.on_trajectory, 10)
    stream = SetpointStream(controller, OwnProcess(), JOINTS, SetpointBatcher(LIMIT, LEAD, send_period=0.05))
    poll_until(lambda: controller.count_subscribers("joint_trajectory") > 0, "the robot subscribed", PATIENCE)
    now = robot.reading()[0]
    stream.batcher.add(Setpoint(now + 0.2, TARGET, np.zeros(2)), final=True)
    stream.flush(now, final=True)  # the motion's last trajectory: the robot refuses it
    poll_until(lambda: robot.received, "the last trajectory", PATIENCE)
    while robot.reading()[0] < stream.sent_until:
        time.sleep(0.01)
    return stream


def short(stream: SetpointStream, robot: Robot) -> str | None:
    return stream.short_of_the_end(robot.reading, NAMES, TOLERANCE, SETTLE, lambda: True, 0.01)


def test_a_robot_short_of_the_last_set_point_is_sent_it_again_from_where_it_is(spinning_nodes):
    robot = Robot(takes_a_resend=True)
    stream = streamed(spinning_nodes, robot)
    assert short(stream, robot) is None
    assert len(robot.received) == 2
    again = robot.received[1]
    (point,) = again.points
    np.testing.assert_array_equal(point.positions, TARGET)
    assert not any(point.velocities)
    lead_in = seconds(point.time_from_start) + TRAJECTORY_DELAY  # from the reading it answered
    assert np.max(np.abs(TARGET - START) / LIMIT) / lead_in <= 0.5 + 1e-6  # half the limits at most
    assert seconds(point.time_from_start) + TRAJECTORY_DELAY >= LEAD - 1e-6


def test_a_robot_that_takes_nothing_is_reported_naming_the_joint_after_one_resend(spinning_nodes):
    robot = Robot(takes_a_resend=False)
    stream = streamed(spinning_nodes, robot)
    said = short(stream, robot)
    assert said is not None and said.startswith("the robot did not reach the last set-point sent: b 0.800 rad")
    assert len(robot.received) == 1 + FINAL_RESENDS
    assert pytest.approx(0.8) == float(np.max(np.abs(TARGET - robot.at)))
