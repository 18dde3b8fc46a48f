"""The self-collision checker while nobody listens to its state (a standing robot's graph, the
robot-side computer): clear states are found clear from the tracker's bounds, with no pair
distance computed, and what users read still says the truth. Diagnostics name the exact
closest pair of the latest state, a collision is counted and reported with its pair, and a
stale joint still turns diagnostics to WARN.

In process: the node is built on a host of its own and never spun; its diagnostics are asked
for directly and read by a subscription, as a user's `ros2 topic echo /diagnostics` reads them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from node_teardown import ros_context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from humanoid_control.nodes import SELF_COLLISION_CHECKER, SelfCollisionChecker
from humanoid_control.ros import OwnProcess, poll_until, to_time
from humanoid_description import CollisionModel, CollisionTracker, RobotModel

ROBOT = "hoap2"
NAMESPACE = "unheard_checker_test"


@pytest.fixture
def checker():
    with ros_context():
        node = rclpy.create_node(SELF_COLLISION_CHECKER, namespace=NAMESPACE,
                                 parameter_overrides=[Parameter("robot", value=ROBOT)])
        checker = SelfCollisionChecker(node, OwnProcess())
        listener = rclpy.create_node("diagnostics_listener", namespace=NAMESPACE)
        received: list[DiagnosticStatus] = []
        listener.create_subscription(
            DiagnosticArray, "diagnostics",
            lambda msg: received.extend(s for s in msg.status if "self-collision" in s.name), 10)
        executor = SingleThreadedExecutor()
        executor.add_node(listener)

        def diagnostics() -> DiagnosticStatus:
            """The checker's diagnostics for its latest state, as a subscriber receives them."""
            received.clear()

            def arrived() -> bool:
                checker._publish_diagnostics()
                executor.spin_once(timeout_sec=0.05)
                return bool(received)

            poll_until(arrived, "the checker's diagnostics", timeout=30.0)
            return received[-1]

        yield checker, diagnostics


def feed(checker: SelfCollisionChecker, positions: np.ndarray, stamp: float) -> None:
    msg = JointState(name=list(checker.joints.names), position=positions.tolist())
    msg.header.stamp = to_time(stamp)
    checker._on_joint_states(msg)


def test_an_unheard_checker_finds_clear_states_clear_without_a_distance_and_reports_the_truth(checker):
    checker, diagnostics = checker
    model = RobotModel(ROBOT)
    assert not checker._state_pub.heard
    reference = CollisionTracker(CollisionModel(model), checker.safety_distance)
    home = model.home_positions()
    # the legs drawn in, clear (the feet 7.7 mm apart): their pair is the closest, alone (at home the two arms tie)
    near = home + model.joints.to_array({"rleg_joint2": math.radians(1), "lleg_joint2": math.radians(-1)})
    rng = np.random.default_rng(3)
    for k in range(3):  # the first states set the bounds up
        feed(checker, near, 0.01 * k)
    tracker = checker._tracker
    before = tracker.exact_evaluations
    standing = home
    for k in range(3, 50):  # standing: the encoders' noise
        standing = near + rng.normal(0.0, 1e-4, len(home))
        feed(checker, standing, 0.01 * k)
    assert tracker.exact_evaluations == before, "a clear state of an unheard checker computed pair distances"

    status = diagnostics()
    closest = reference.report(standing).closest
    values = {v.key: v.value for v in status.values}
    assert status.level == DiagnosticStatus.OK, status.message
    assert {closest.link_a[:4], closest.link_b[:4]} == {"rleg", "lleg"} and not reference.report(standing).in_collision
    assert values["closest_pair"] == f"{closest.link_a} / {closest.link_b}"
    assert values["closest_distance_mm"] == f"{closest.distance * 1000:.1f}"
    assert values["states_checked"] == "50" and values["states_in_collision"] == "0"

    crossed = model.joints.to_array({"rleg_joint2": math.radians(21), "lleg_joint2": math.radians(-21)})
    feed(checker, crossed, 0.5)
    status = diagnostics()
    values = {v.key: v.value for v in status.values}
    expected = reference.report(crossed)
    assert expected.in_collision
    assert status.level == DiagnosticStatus.WARN and values["states_in_collision"] == "1"
    worst = expected.colliding[0]
    assert f"{worst.link_a} / {worst.link_b} {worst.distance * 1000:.1f} mm" in status.message, status.message

    stale = home.copy()
    stale[model.joints.index("rarm_joint1")] = math.nan
    feed(checker, stale, 0.51)
    status = diagnostics()
    values = {v.key: v.value for v in status.values}
    assert status.level == DiagnosticStatus.WARN and "rarm_joint1" in status.message, status.message
    assert values["states_with_unknown_joints"] == "1" and int(values["unchecked_pairs"]) > 0
