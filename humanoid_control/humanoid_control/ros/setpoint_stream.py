"""Set-points computed ahead of the robot's clock, sent as short trajectories on
``joint_trajectory`` (the walk and gait controller nodes).

A controller node appends the set-points it computed up to its command lead, then flushes
at every reading it handles: the set-points not yet due when a trajectory sent now would
begin (``TRAJECTORY_DELAY`` after the reading) go out as one trajectory every
``send_period`` of robot time. Each trajectory replaces the previous one where the robot
is, so the robot moves on through a controller that gets no CPU for a while instead of
holding a stale set-point mid-motion, and everything it sends passes the shared front's
validation, collision veto and balance monitor like any controller's.
"""

from __future__ import annotations

import math

import numpy as np
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.loop.setpoint_window import Setpoint, still_ahead
from humanoid_control.ros.ros_time import to_duration, to_time

#: s: a trajectory sent begins this far after the reading it answers (its header stamp):
#: the front runs the previous one until then, so delays below it change nothing.
TRAJECTORY_DELAY = 0.1


class SetpointStream:
    """The set-points computed and not yet due, and the trajectories that carry them."""

    def __init__(self, node: Node, joint_names: tuple[str, ...], velocity_limit: np.ndarray, command_lead: float,
                 send_period: float, smooth_velocities: bool = True) -> None:
        if command_lead < 2.0 * TRAJECTORY_DELAY + send_period:
            raise ValueError(f"command_lead must be at least {2.0 * TRAJECTORY_DELAY:g} s plus send_period, got "
                             f"{command_lead:g} s")
        self._log = node.get_logger()
        self._publisher = node.create_publisher(JointTrajectory, "joint_trajectory", 10)
        self._names = list(joint_names)
        self._velocity_limit = velocity_limit
        self.command_lead, self.send_period = command_lead, send_period
        #: Replace each moving set-point's velocity by the central difference of its neighbours
        #: (a controller whose set-points carry exact velocities keeps its own: the difference of
        #: two robot times of 1.8e9 s, wall-clock time, loses digits)
        self.smooth_velocities = smooth_velocities
        self.ahead: list[Setpoint] = []  # computed, not yet due
        self.sent_at = -math.inf  # robot time of the last trajectory sent
        self.sent_until = -math.inf  # robot time of its last point

    def flush(self, now: float, final: bool = False) -> None:
        """At a reading stamped ``now``: keep the set-points still ahead and send them when a
        trajectory is due (always with the motion's ``final`` set-point, after which nothing is
        kept)."""
        window = still_ahead(self.ahead, now + TRAJECTORY_DELAY, final, now + self.command_lead)
        if window.final_late_by is not None:
            self._log.warning(f"the final set-point came {window.final_late_by:.3f} s late (this node lagged behind "
                              f"the robot's clock): sent for {self.command_lead:g} s from now")
        self.ahead = window.setpoints
        if self.ahead and (final or now - self.sent_at >= self.send_period - 1e-9):
            self._send(now)
        if final:
            self.ahead = []

    def _send(self, now: float) -> None:
        """The set-points still ahead, as one trajectory starting ``TRAJECTORY_DELAY`` after
        ``now``: the front follows the previous one until that time and joins this one
        from where its set-point is then, so the motion keeps its timing whatever the
        transport's delay below that (a later arrival joins it where its timeline is then:
        :func:`~humanoid_control.loop.trajectory_executor.joined_at`)."""
        start = now + TRAJECTORY_DELAY
        msg = JointTrajectory(joint_names=self._names)
        msg.header.stamp = to_time(start)
        ahead = self.ahead
        velocities = [s.velocities for s in ahead]
        for k in range(1, len(ahead) - 1 if self.smooth_velocities else 1):  # where both neighbours are known
            before, after = ahead[k - 1], ahead[k + 1]
            if np.any(ahead[k].velocities):  # zero: a set-point at rest stays so
                velocities[k] = np.clip((after.positions - before.positions) / (after.stamp - before.stamp),
                                        -self._velocity_limit, self._velocity_limit)
        for setpoint, velocity in zip(ahead, velocities, strict=True):
            point = JointTrajectoryPoint(positions=setpoint.positions.tolist(), velocities=velocity.tolist())
            point.time_from_start = to_duration(setpoint.stamp - start)
            msg.points.append(point)
        self._publisher.publish(msg)
        self.sent_at = now
        self.sent_until = ahead[-1].stamp
