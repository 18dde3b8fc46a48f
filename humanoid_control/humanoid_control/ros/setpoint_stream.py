"""Set-points computed ahead of the robot's clock, sent as short trajectories on
``joint_trajectory`` (the walk and gait controller nodes): a
:class:`~humanoid_core.loop.setpoint_window.SetpointBatcher`'s batches, published.

Everything a controller sends this way passes the shared front's validation, collision veto
and balance monitor like any controller's.
"""

from __future__ import annotations

from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.ros import topics
from humanoid_control.ros.ros_time import to_duration, to_time
from humanoid_core.loop import Batch, Setpoint, SetpointBatcher


class SetpointStream:
    """A batcher whose trajectories go out on ``joint_trajectory``."""

    def __init__(self, node: Node, joint_names: tuple[str, ...], batcher: SetpointBatcher) -> None:
        self.batcher = batcher
        self._publisher = node.create_publisher(JointTrajectory, topics.JOINT_TRAJECTORY, 10)
        self._names = list(joint_names)

    @property
    def ahead(self) -> list[Setpoint]:
        return self.batcher.ahead

    @ahead.setter
    def ahead(self, setpoints: list[Setpoint]) -> None:
        self.batcher.ahead = setpoints

    @property
    def sent_until(self) -> float:
        return self.batcher.sent_until

    def flush(self, now: float, final: bool = False, clock: float | None = None) -> None:
        """At a reading stamped ``now`` (the node's clock reading ``clock``): send the
        set-points still ahead when a trajectory is due."""
        self.publish(self.batcher.flush(now, final, clock))

    def publish(self, batch: Batch | None) -> None:
        if batch is None:
            return
        msg = JointTrajectory(joint_names=self._names)
        msg.header.stamp = to_time(batch.start)
        for setpoint, velocity in zip(batch.setpoints, batch.velocities, strict=True):
            point = JointTrajectoryPoint(positions=setpoint.positions.tolist(), velocities=velocity.tolist())
            point.time_from_start = to_duration(setpoint.stamp - batch.start)
            msg.points.append(point)
        self._publisher.publish(msg)
