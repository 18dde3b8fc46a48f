"""The walk controller's cycle, without ROS: readings in, trajectories to send out.

The walk controller node (:mod:`humanoid_control.nodes.walk_controller`) and the in-process
walk (:mod:`humanoid_experiments.walk_in_process`) both drive a
:class:`~humanoid_core.biped_walking.controller.WalkController` through this one cycle, so
that a walk run without ROS sends the robot the very set-points the node would:

- once per reading (``joint_states``), the controller is updated once per control period
  since the last reading handled (readings the node had no CPU for leave no gap, up to
  :data:`MAX_CATCH_UP` periods);
- its set-points go through a :class:`~humanoid_core.loop.setpoint_window.SetpointBatcher`,
  which says when a trajectory is due and what it carries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from humanoid_core.balance import FootWrench
from humanoid_core.biped_walking.controller import Phase, WalkController
from humanoid_core.biped_walking.parameters import WalkParameters
from humanoid_core.biped_walking.stabilizer import Sensors
from humanoid_core.loop import VELOCITY_MARGIN, Batch, SetpointBatcher

#: Most control periods computed for one reading (after the node got no CPU for a while);
#: beyond that the pattern falls behind the clock (reported) rather than bursting.
MAX_CATCH_UP = 20


class WalkCycle:
    """One walk controller's updates and the trajectories they give, reading by reading."""

    def __init__(self, controller: WalkController, warn: Callable[[str], None] = lambda _text: None) -> None:
        self.controller = controller
        self.params = controller.params
        self.batcher = SetpointBatcher(VELOCITY_MARGIN * controller.model.joints.velocity, self.params.command_lead,
                                       self.params.send_period, warn=warn)
        self.updated = math.nan  # robot time of the last update

    @property
    def sent_until(self) -> float:
        return self.batcher.sent_until

    def is_new(self, now: float) -> bool:
        """Is a reading at robot time ``now`` after the one handled last (not out of order, nor
        a restarted clock)?"""
        return not now <= self.updated

    def cycle(self, now: float, positions: np.ndarray, sensors: Sensors | None,
              clock: float | None = None) -> Batch | None:
        """One reading at robot time ``now`` (call only when :meth:`is_new`): the trajectory to
        send now, if any (``clock``: the robot's time when the reading is handled,
        :meth:`~humanoid_core.loop.setpoint_window.SetpointBatcher.flush`)."""
        controller, period = self.controller, self.params.period
        times = [now]
        if controller.phase is not Phase.IDLE and math.isfinite(self.updated):
            missed = min(MAX_CATCH_UP, round((now - self.updated) / period) - 1)
            times = [self.updated + period * (k + 1) for k in range(max(0, missed))] + [now]
        final = False
        start = self.batcher.origin(now, positions)  # a walk begins where the robot's set-point is
        for t in times:
            setpoint = controller.update(t, start, sensors)
            if setpoint is None:
                continue
            final = controller.phase is Phase.IDLE
            self.batcher.add(setpoint, final)
            if final:
                break
        self.updated = now
        return self.batcher.flush(now, final, clock, positions)


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
