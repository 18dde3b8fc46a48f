"""The walk controller's cycle, without ROS: readings in, trajectories to send out.

The walk controller node (:mod:`humanoid_control.walk_controller_node`) and the in-process
walk (:mod:`humanoid_control.walking.in_process`) both drive a
:class:`~humanoid_control.walking.controller.WalkController` through this one cycle, so
that a walk run without ROS sends the robot the very set-points the node would:

- once per reading (``joint_states``), the controller is updated once per control period
  since the last reading handled (readings the node had no CPU for leave no gap, up to
  :data:`MAX_CATCH_UP` periods);
- the set-points computed and not yet due are kept (:func:`still_ahead`);
- every ``send_period`` (and at the walk's end) they go out as one trajectory beginning
  :data:`TRAJECTORY_DELAY` after the reading, with central-difference velocities.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from humanoid_control.balance.foot_pressure import FootWrench
from humanoid_control.walking.controller import VELOCITY_MARGIN, Phase, Setpoint, WalkController
from humanoid_control.walking.parameters import WalkParameters
from humanoid_control.walking.setpoint_window import still_ahead
from humanoid_control.walking.stabilizer import Sensors

#: s: a trajectory sent begins this far after the reading it answers (its header stamp):
#: the front runs the previous one until then, so delays below it change nothing.
TRAJECTORY_DELAY = 0.1
#: Most control periods computed for one reading (after the node got no CPU for a while);
#: beyond that the pattern falls behind the clock (reported) rather than bursting.
MAX_CATCH_UP = 20


@dataclass(frozen=True)
class Batch:
    """One trajectory to send: it begins at ``start`` (robot time, its header stamp); point k
    is for robot time ``setpoints[k].stamp`` with ``velocities[k]``."""

    start: float
    setpoints: list[Setpoint]
    velocities: list[np.ndarray]


class SetpointStream:
    """The set-points of one walk controller as they are sent, reading by reading."""

    def __init__(self, controller: WalkController, warn: Callable[[str], None] = lambda _text: None) -> None:
        self.controller = controller
        self.params = controller.params
        self.warn = warn
        self._ahead: list[Setpoint] = []  # set-points computed, not yet due
        self.sent_at = -math.inf  # robot time of the last trajectory sent
        self.sent_until = -math.inf  # robot time of its last point
        self.updated = math.nan  # robot time of the last update
        self._velocity_limit = VELOCITY_MARGIN * controller.model.joints.velocity

    def is_new(self, now: float) -> bool:
        """Is a reading at robot time ``now`` after the one handled last (not out of order, nor
        a restarted clock)?"""
        return not now <= self.updated

    def cycle(self, now: float, positions: np.ndarray, sensors: Sensors | None) -> Batch | None:
        """One reading at robot time ``now`` (call only when :meth:`is_new`): the trajectory to
        send now, if any."""
        controller, period = self.controller, self.params.period
        times = [now]
        if controller.phase is not Phase.IDLE and math.isfinite(self.updated):
            missed = min(MAX_CATCH_UP, round((now - self.updated) / period) - 1)
            times = [self.updated + period * (k + 1) for k in range(max(0, missed))] + [now]
        final = False
        for t in times:
            setpoint = controller.update(t, positions, sensors)
            if setpoint is None:
                continue
            final = controller.phase is Phase.IDLE
            if not self._ahead or setpoint.stamp > self._ahead[-1].stamp:
                self._ahead.append(setpoint)
            elif final:  # the walk ended at the last set-point's time: that one is at rest
                self._ahead[-1] = setpoint
            if final:
                break
        self.updated = now
        window = still_ahead(self._ahead, now + TRAJECTORY_DELAY, final, now + self.params.command_lead)
        if window.final_late_by is not None:
            self.warn(f"the walk's final set-point came {window.final_late_by:.3f} s late (this node lagged "
                      f"behind the robot's clock): sent for {self.params.command_lead:g} s from now")
        self._ahead = window.setpoints
        batch = None
        if self._ahead and (final or now - self.sent_at >= self.params.send_period - 1e-9):
            batch = self._batch(now)
        if final:
            self._ahead = []
        return batch

    def _batch(self, now: float) -> Batch:
        """The set-points still ahead, as one trajectory starting ``TRAJECTORY_DELAY`` after
        ``now``: the front follows the previous one until that time and joins this one
        from where its set-point is then, so the walk keeps its timing whatever the
        transport's delay below that (a later arrival joins it where its timeline is then:
        :func:`~humanoid_control.trajectory_executor.joined_at`)."""
        ahead = self._ahead
        velocities = [s.velocities for s in ahead]
        for k in range(1, len(ahead) - 1):  # central differences where both neighbours are known
            before, after = ahead[k - 1], ahead[k + 1]
            if np.any(ahead[k].velocities):  # zero: a set-point at rest stays so
                velocities[k] = np.clip((after.positions - before.positions) / (after.stamp - before.stamp),
                                        -self._velocity_limit, self._velocity_limit)
        self.sent_at = now
        self.sent_until = ahead[-1].stamp
        return Batch(now + TRAJECTORY_DELAY, list(ahead), velocities)


def walk_sensors(params: WalkParameters, imu: tuple[float, float, float, float] | None,
                 feet: Mapping[str, FootWrench] | None) -> Sensors | None:
    """The fresh readings (IMU orientation x, y, z, w; foot wrenches by side) the walk's
    corrections use: the IMU for the tilt feedback, the feet for the ZMP feedback; None when
    stabilisation is off or nothing is left."""
    if not params.stabilize:
        return None
    imu = imu if params.tilt_feedback_gain > 0.0 else None
    feet = feet if params.zmp_feedback_gain > 0.0 and feet else None
    if imu is None and feet is None:
        return None
    return Sensors(imu_orientation=imu, feet=feet)
