"""The drift ``humanoid walk`` reports starts where the odometry's first message is when that
message comes after the run's start: on a slow host the client's ``odom`` subscription matched
after the walk had begun, and the report said NaN for a walk whose odometry ran (clean-clone
run 162). In process, over real DDS; the client is a node and the ground truth it last took."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from node_teardown import ros_context
from rclpy.executors import SingleThreadedExecutor

from humanoid_control.ros import OdometryDrift, poll_until, topics


@dataclass
class Client:
    """What OdometryDrift reads of a RobotClient: its node and the latest ground truth."""

    node: object
    base_pose: PoseStamped | None = None


def truth_at(x: float) -> PoseStamped:
    msg = PoseStamped()
    msg.pose.position.x, msg.pose.orientation.w = x, 1.0
    return msg


def odom_at(x: float) -> Odometry:
    msg = Odometry()
    msg.pose.pose.position.x, msg.pose.pose.orientation.w = x, 1.0
    return msg


@pytest.fixture
def nodes():
    with ros_context():
        client, odometry = rclpy.create_node("drift_client"), rclpy.create_node("odometry_stand_in")
        executor = SingleThreadedExecutor()
        executor.add_node(client)
        executor.add_node(odometry)
        yield client, odometry, executor


def test_a_run_marked_before_the_first_odometry_message_starts_at_that_message(nodes):
    client_node, odometry, executor = nodes
    client = Client(client_node, truth_at(0.0))
    drift = OdometryDrift(client)
    odom = odometry.create_publisher(Odometry, topics.ODOM, 10)
    drift.mark()  # no odometry message yet

    def published(msg: Odometry) -> bool:
        odom.publish(msg)
        executor.spin_once(timeout_sec=0.05)
        return drift.placements() is not None and drift.placements()[0].translation[0] == msg.pose.pose.position.x

    client.base_pose = truth_at(0.10)  # the robot moved on before the odometry was heard
    poll_until(lambda: published(odom_at(0.30)), "the first odometry message taken", 30.0)
    client.base_pose = truth_at(1.10)  # 1 m further; the odometry says 0.95 m
    poll_until(lambda: published(odom_at(1.25)), "the last odometry message taken", 30.0)
    error, heading = drift.drift()
    assert error == pytest.approx(0.05, abs=1e-9) and heading == pytest.approx(0.0, abs=1e-9)


def test_without_any_odometry_message_the_drift_is_unknown(nodes):
    client_node, _odometry, _executor = nodes
    drift = OdometryDrift(Client(client_node, truth_at(0.0)))
    drift.mark()
    assert all(math.isnan(v) for v in drift.drift())
