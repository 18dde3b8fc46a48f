"""Set-points computed ahead of the robot's clock, sent as short trajectories on
``joint_trajectory`` (the walk and gait controller nodes): a
:class:`~humanoid_core.loop.setpoint_window.SetpointBatcher`'s batches, published.

Everything a controller sends this way passes the shared front's validation, collision veto
and balance monitor like any controller's. The stream takes the robot's set-points
(``joint_setpoints``, carried by ``robot_state`` in a container: no message more) so that
its lead-ins, and the motions its controller starts, begin where the robot interface's
set-point is (:meth:`~humanoid_core.loop.setpoint_window.SetpointBatcher.heard_setpoint`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.ros import topics
from humanoid_control.ros.matched_publisher import STREAM_HISTORY, robot_unheard
from humanoid_control.ros.node_host import NodeHost
from humanoid_control.ros.ros_time import clock_seconds, seconds, to_duration, to_time
from humanoid_core.loop import Batch, Setpoint, SetpointBatcher, farthest_joint
from humanoid_description import JointTable

#: Times a controller sends its last set-point again to a robot not there once it is due.
FINAL_RESENDS = 1


class SetpointStream:
    """A batcher whose trajectories go out on ``joint_trajectory``."""

    def __init__(self, node: Node, host: NodeHost, joints: JointTable, batcher: SetpointBatcher) -> None:
        self.batcher = batcher
        self._node = node
        # a stream, as the states are: a recorder or a watching client starved of CPU gets back
        # what it missed at the transport only while the publisher still holds it
        self._publisher = node.create_publisher(JointTrajectory, topics.JOINT_TRAJECTORY, STREAM_HISTORY)
        self._joints = joints
        self._names = list(joints.names)
        host.subscribe_state(node, JointState, topics.JOINT_SETPOINTS, self._on_setpoint, QoSProfile(depth=1))

    def positions(self, msg: JointState) -> np.ndarray:
        """``msg``'s positions in canonical order; a joint it does not give, or gives as NaN, is NaN."""
        return self._joints.from_named(msg.name, msg.position)

    def _on_setpoint(self, msg: JointState) -> None:
        self.batcher.heard_setpoint(seconds(msg.header.stamp), self.positions(msg))

    @property
    def ahead(self) -> list[Setpoint]:
        return self.batcher.ahead

    @ahead.setter
    def ahead(self, setpoints: list[Setpoint]) -> None:
        self.batcher.ahead = setpoints

    def abandon(self) -> None:
        """Forget the motion under way (:meth:`SetpointBatcher.abandon`)."""
        self.batcher.abandon()

    @property
    def sent_until(self) -> float:
        return self.batcher.sent_until

    def unheard(self) -> str | None:
        """Why a trajectory sent now could reach no robot (None: it would reach it; the robot
        interface: the node that serves follow_joint_trajectory): a motion starts only once it
        is heard (:func:`~humanoid_control.ros.matched_publisher.robot_unheard`)."""
        return robot_unheard(self._node, self._publisher, topics.action_topics(topics.FOLLOW_JOINT_TRAJECTORY)[1])

    def unheard_until(self, deadline: float, going_on: Callable[[], bool] = lambda: True) -> str | None:
        """:meth:`unheard`, waited on until it says None or ``deadline`` (``time.monotonic()``)
        passes or ``going_on()`` turns False: why the robot still would not hear, or None."""
        while (unheard := self.unheard()) is not None and time.monotonic() < deadline and going_on():
            time.sleep(0.05)
        return unheard

    def flush(self, now: float, final: bool = False, clock: float | None = None,
              measured: np.ndarray | None = None) -> None:
        """At a reading stamped ``now`` (the node's clock reading ``clock``, the joints
        ``measured``): send the set-points still ahead when a trajectory is due."""
        self.publish(self.batcher.flush(now, final, clock, measured))

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

    def short_of_the_end(self, reading: Callable[[], tuple[float, np.ndarray | None]], names: Sequence[str],
                         tolerance: float, settle: float, going_on: Callable[[], bool], period: float) -> str | None:
        """Once the last set-point sent is due: None when every joint is measured within
        ``tolerance`` (rad) of it, allowed ``settle`` s of robot time; else which joint is
        how far off. ``reading``: the robot's time and measured positions (canonical order);
        ``going_on``: False stops the wait (the robot silent, the node shutting down). The
        controllers stream open loop: a robot that refused their set-points (come too late,
        too fast from where it stood, too long) would otherwise pass for one that moved. A
        robot not there is sent the last set-point again, from where it is, up to
        :data:`FINAL_RESENDS` times (a last trajectory refused as late on a loaded machine)."""
        target = self.batcher.last_sent
        if target is None:
            return None
        deadline = reading()[0] + settle
        resends = 0
        while True:
            now, measured = reading()
            if measured is None:
                return None
            joint, error = farthest_joint(measured, target.positions)
            if error <= tolerance:
                return None
            if not going_on():
                return self._short(names[joint], error, settle, tolerance)
            if now >= deadline:
                if resends == FINAL_RESENDS:
                    return self._short(names[joint], error, settle, tolerance)
                resends += 1
                self._node.get_logger().warning(
                    f"the robot did not reach the last set-point sent ({names[joint]} {error:.3f} rad from it "
                    f"{settle:g} s after it was due): sent again from where it is ({resends} of {FINAL_RESENDS})")
                clock = clock_seconds(self._node)
                self.publish(self.batcher.resend_last(now, measured, clock))
                target = self.batcher.last_sent
                deadline = target.stamp + settle
            time.sleep(period)

    @staticmethod
    def _short(joint: str, error: float, settle: float, tolerance: float) -> str:
        return (f"the robot did not reach the last set-point sent: {joint} {error:.3f} rad from it {settle:g} s after "
                f"it was due (tolerance {tolerance:g} rad; set-points refused or late? the robot interface's log "
                "says why)")
