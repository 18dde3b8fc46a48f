"""The odometry's drift against the simulator's ground truth over one run, as a client sees
both (``odom`` and ``ground_truth/base_pose``): what ``humanoid walk`` and ``humanoid
play-gait`` report as ``odometry_error_m`` and ``odometry_heading_error_deg``.

A client subscribes to ``odom`` only when it asks for this (the odometry publishes at the
joint states' rate, and a client that does not measure the drift should not wake for it)."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import Pose
from nav_msgs.msg import Odometry

from humanoid_control.ros import topics
from humanoid_core.odometry import planar_drift


def pose_se3(pose: Pose) -> pin.SE3:
    """A message's pose as a Pinocchio placement."""
    p, o = pose.position, pose.orientation
    return pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))


class OdometryDrift:
    """Marks where the odometry and the ground truth put the base at a run's start, and gives
    the drift between the two at its end (NaN where either is missing: no odometry node, a
    real robot without ground truth)."""

    def __init__(self, client) -> None:
        self._client = client
        self._odom: Odometry | None = None
        self._start: tuple[pin.SE3, pin.SE3] | None = None
        self._marked = False
        client.node.create_subscription(Odometry, topics.ODOM, self._on_odom, 50)

    def _on_odom(self, msg: Odometry) -> None:
        self._odom = msg
        if self._marked and self._start is None:
            self._start = self.placements()

    def placements(self) -> tuple[pin.SE3, pin.SE3] | None:
        """The odometry's and the ground truth's base placements now (None without either)."""
        odom, truth = self._odom, self._client.base_pose
        if odom is None or truth is None:
            return None
        return pose_se3(odom.pose.pose), pose_se3(truth.pose)

    def mark(self) -> None:
        """The run starts here; without an odometry message yet (its subscription matched late,
        on a slow machine), at the first one to come, with the ground truth of that moment."""
        self._start = self.placements()
        self._marked = True

    def drift(self) -> tuple[float, float]:
        """Since :meth:`mark`: the distance (m) between the odometry's and the ground truth's
        final positions, each from its own start in its start's heading frame, and the heading
        error (deg) of the turn made."""
        end = self.placements()
        if self._start is None or end is None:
            return math.nan, math.nan
        error, heading = planar_drift(self._start[0], end[0], self._start[1], end[1])
        return error, math.degrees(heading)
