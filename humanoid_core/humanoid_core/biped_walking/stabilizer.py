"""Closing the walking pattern's loop on what the robot measures.

The pattern is planned for a cart-table model; the robot is not one (heavy swinging
legs, compliant contacts, servo lag), and an open-loop pattern lets errors grow step
after step. Two corrections, each used only when the robot has the sensor:

- **Trunk inclination** (IMU): the trunk's measured roll and pitch beyond what the
  pattern asks (upright, or ``trunk_pitch`` forward), low-passed and bounded, are given
  to the whole-body IK as the trunk's orientation: the IK then puts the soles flat on
  the ground under the leaning trunk instead of tilted with it, so that a robot rocking
  onto a sole's edge is pressed back onto the whole sole (gain 1: the measured tilt in
  full). Measured in the simulator: the HOAP-2 rocks onto its sole edges less and
  slips less in yaw (docs/walking.md).
- **ZMP** (foot force sensors): the ZMP measured from the foot wrenches is compared
  with the reference; the CoM target moves against the error (integrated, leaking
  back to zero, bounded), so that a robot whose ZMP lags the plan is brought back
  over it.

Without the sensors (the Bioloid) or with ``stabilize`` off, the corrections are zero
and the pattern runs open loop: the logs and the README say so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from humanoid_core.balance import FootWrench, centre_of_pressure
from humanoid_core.biped_walking.parameters import WalkParameters
from humanoid_description import RobotModel

#: Hz: cut-off of the first-order low-pass on the measured ZMP.
FILTER_CUTOFF = 10.0
#: 1/s: how fast the ZMP correction leaks back to zero when the error vanishes.
LEAK_RATE = 0.5


@dataclass(frozen=True)
class Sensors:
    """The balance sensors' latest readings (None: the robot has none, or none is fresh)."""

    imu_orientation: tuple[float, float, float, float] | None = None  # x, y, z, w of the IMU frame
    feet: Mapping[str, FootWrench] | None = None


@dataclass(frozen=True)
class Correction:
    """What the stabiliser changes in the IK targets."""

    com: np.ndarray = field(default_factory=lambda: np.zeros(3))  # m, walking frame
    trunk: np.ndarray = field(default_factory=lambda: np.eye(3))  # rotation applied to the trunk target


def tilt(rotation: np.ndarray) -> tuple[float, float]:
    """Roll and pitch (rad) of a rotation, yaw left out."""
    roll, pitch, _ = pin.rpy.matrixToRpy(rotation)
    return float(roll), float(pitch)


def low_pass_share(cutoff: float, dt: float) -> float:
    """The share of a new sample a first-order low-pass at ``cutoff`` Hz takes after ``dt``
    seconds (1 for the first sample)."""
    return 1.0 - math.exp(-2.0 * math.pi * cutoff * dt) if dt > 0.0 else 1.0


class Stabilizer:
    """Feedback corrections from the IMU and the foot sensors."""

    def __init__(self, model: RobotModel, params: WalkParameters) -> None:
        self.model = model
        self.params = params
        self._imu_frame = model.config.imu_frame
        self._tilt = np.zeros(2)
        self._zmp_error = np.zeros(2)
        self._com_offset = np.zeros(2)
        self._last_time: float | None = None
        #: Which corrections ran in the last update (for logs and diagnostics).
        self.using: tuple[str, ...] = ()

    def reset(self) -> None:
        self._tilt[:] = 0.0
        self._zmp_error[:] = 0.0
        self._com_offset[:] = 0.0
        self._last_time = None
        self.using = ()

    def update(self, time: float, zmp_reference: np.ndarray, posture: np.ndarray, trunk: np.ndarray,
               feet: Mapping[str, pin.SE3], sensors: Sensors | None) -> Correction:
        """Corrections for this cycle. ``posture``: the joints last commanded (for where the
        IMU sits on the trunk), ``trunk``: the base rotation the pattern wants, ``feet``:
        the soles' placements the pattern has them at (walking frame)."""
        p = self.params
        dt = 0.0 if self._last_time is None else max(0.0, time - self._last_time)
        self._last_time = time
        if not p.stabilize or sensors is None:
            self.using = ()
            return Correction()
        alpha = low_pass_share(FILTER_CUTOFF, dt)
        using = []
        rotation = np.eye(3)
        if sensors.imu_orientation is not None and p.tilt_feedback_gain > 0.0:
            measured = self._base_rotation(sensors.imu_orientation, posture)
            error = np.array(tilt(trunk.T @ measured))
            self._tilt += low_pass_share(p.tilt_feedback_cutoff, dt) * (error - self._tilt)
            limit = p.tilt_feedback_limit
            roll, pitch = np.clip(p.tilt_feedback_gain * self._tilt, -limit, limit)
            rotation = pin.rpy.rpyToMatrix(roll, pitch, 0.0)
            using.append("imu")
        com = np.zeros(3)
        if sensors.feet is not None and p.zmp_feedback_gain > 0.0:
            zmp = self._measured_zmp(sensors.feet, feet)
            if zmp is not None:
                self._zmp_error += alpha * ((zmp - np.asarray(zmp_reference)[:2]) - self._zmp_error)
                using.append("feet")
            self._com_offset += dt * (-p.zmp_feedback_gain * self._zmp_error - LEAK_RATE * self._com_offset)
            self._com_offset = np.clip(self._com_offset, -p.zmp_feedback_limit, p.zmp_feedback_limit)
            com[:2] = self._com_offset
        self.using = tuple(using)
        return Correction(com=com, trunk=rotation)

    def _base_rotation(self, imu: tuple[float, float, float, float], posture: np.ndarray) -> np.ndarray:
        """The base's rotation in the world from the IMU's and the IMU's place on the body."""
        imu_in_base = self.model.frame_placement(self._imu_frame, posture).rotation
        world_imu = pin.Quaternion(imu[3], imu[0], imu[1], imu[2]).normalized().toRotationMatrix()
        return world_imu @ imu_in_base.T

    def _measured_zmp(self, wrenches: Mapping[str, FootWrench], feet: Mapping[str, pin.SE3]) -> np.ndarray | None:
        zmp = centre_of_pressure([(wrench, feet[side].rotation, feet[side].translation)
                                  for side, wrench in wrenches.items() if side in feet],
                                 self.params.foot_load_threshold)
        return None if zmp is None else np.array(zmp)
