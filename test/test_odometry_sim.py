"""Odometry in simulation (issue 39 item 1): the odometry node in the lockstep graph.

The Bioloid walks a few steps through the ``walk`` action, its graph in lockstep with the
test's client; the kinematic odometry (``odom``, from the joints and the support sole: the
Bioloid's odometry uses no IMU, as on the real robot) ends within the goal of the ground
truth (position within 10 % of the distance walked, heading within 5 deg), measured as
``humanoid walk --json`` reports it. A client taking ``/tf`` by the standard type name
``tf2_msgs/msg/TFMessage`` receives ``odom -> base_link`` and ``world -> odom``, whose chain
is the simulator's ground truth (``ground_truth/odom``).
"""

from __future__ import annotations

import importlib
import math
import threading

import numpy as np
import pinocchio as pin
import pytest

from conftest import MODULE_CLIENT
from humanoid_experiments.walk import walk
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

LOCKSTEP = True
GRAPH = sim_nodes("bioloid", lockstep=True, participants=(MODULE_CLIENT,))

#: The standard name of the transforms' type (ros2/geometry2's tf2_msgs).
TF_TYPE = "tf2_msgs/msg/TFMessage"


def message_type(name: str) -> type:
    """A message class by its ROS type name, as rosidl_runtime_py.utilities.get_message finds it."""
    package, kind, message = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), message)


def placement(transform) -> pin.SE3:
    t, r = transform.translation, transform.rotation
    return pin.XYZQUATToSE3(np.array([t.x, t.y, t.z, r.x, r.y, r.z, r.w]))


@pytest.fixture(scope="module")
def bioloid(module_graph):
    return module_graph


def test_odometry_drift_and_tf_on_a_short_walk(bioloid):
    lock = threading.Lock()
    latest: dict[tuple[str, str], object] = {}
    truths: list = []

    def on_tf(msg) -> None:
        with lock:
            for transform in msg.transforms:
                latest[(transform.header.frame_id, transform.child_frame_id)] = transform

    bioloid.node.create_subscription(message_type(TF_TYPE), "/tf", on_tf, 100)
    from nav_msgs.msg import Odometry
    bioloid.node.create_subscription(Odometry, "ground_truth/odom", truths.append, 100)

    report = walk(bioloid, "bioloid", 0.2, timeout=300.0)
    assert report.error_code == 0 and not report.fell, report.text()
    assert report.distance_m > 0.15, report.text()
    # the goal: position within 10 % of the distance walked, heading within 5 deg
    assert report.odometry_error_m <= 0.1 * math.hypot(report.distance_m, report.lateral_m), report.text()
    assert abs(report.odometry_heading_error_deg) <= 5.0, report.text()

    bioloid.wait_until(bioloid.now() + 0.5, timeout=60.0)
    types = dict(bioloid.node.get_topic_names_and_types())
    assert types.get("/tf") == [TF_TYPE]
    with lock:
        odom = latest.get(("odom", "base_link"))
        world = latest.get(("world", "odom"))
    assert odom is not None and world is not None, sorted(latest)
    assert truths and truths[-1].header.frame_id == "world" and truths[-1].child_frame_id == "base_link"
    # standing still: world -> odom -> base_link is the ground truth
    chained = placement(world.transform) * placement(odom.transform)
    p = truths[-1].pose.pose
    truth = pin.XYZQUATToSE3(np.array([p.position.x, p.position.y, p.position.z, p.orientation.x,
                                       p.orientation.y, p.orientation.z, p.orientation.w]))
    assert np.linalg.norm(chained.translation - truth.translation) < 0.01
