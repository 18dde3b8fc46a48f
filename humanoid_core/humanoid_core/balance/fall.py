"""Has the robot fallen, and how does it lie: the robot's own estimate, no ROS, no simulator.

Two sources, the better one the robot has:

- *IMU* (the HOAP-2): the trunk's tilt, the angle between the IMU frame's z axis (the
  trunk's, the IMU is fixed to it) and the vertical. Past ``fall_tilt`` the robot has
  fallen; it is up again below ``fall_tilt - fall_tilt_hysteresis``. Lying, the axis of the
  trunk nearest the vertical tells how: x (forward) up: on the back, down: on the belly;
  y (left) down: on the left side, up: on the right.
- *support* (no IMU: the Bioloids on their bus): the model's CoM projection, with the feet
  on flat ground assumed, more than ``fall_margin`` outside the *reach polygon* for
  ``fall_hold`` seconds: the hull of every foot within ``fall_step_height`` of the lowest
  (:class:`~humanoid_core.balance.estimator.BalanceEstimator`), a swing foot included.
  Not the instantaneous support polygon: a trot stands on a diagonal line, a walk on one
  sole, and their CoM passes outside it at every step without falling (a dynamic gait is
  balanced by its motion, not by its support). No posture a gait or motion of the robot
  plays puts the CoM outside the reach polygon; a posture that does (a robot leaning on
  its ankles, a sitting robot's legs stretched forward) cannot be stood in. A robot that
  tips over rigidly (joints unchanged) is not seen this way, nor how it lies: without an
  IMU or foot sensors nothing tells the robot's attitude.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

#: A lying trunk has its forward or sideways axis this close to the vertical (cos of 60 deg).
LYING_AXIS = 0.5


class Posture(enum.Enum):
    UPRIGHT = "upright"
    ON_BACK = "on_back"
    ON_BELLY = "on_belly"
    ON_LEFT = "on_left"
    ON_RIGHT = "on_right"
    UNKNOWN = "unknown"


class FallSource(enum.Enum):
    IMU = "imu"
    SUPPORT = "support"


@dataclass(frozen=True)
class FallEstimate:
    fallen: bool
    posture: Posture
    tilt: float  # rad, NaN without an IMU
    source: FallSource

    def describe(self) -> str:
        tilt = f", trunk tilt {math.degrees(self.tilt):.0f} deg" if math.isfinite(self.tilt) else ""
        return f"{'fallen' if self.fallen else 'upright'} ({self.posture.value}{tilt}, from {self.source.value})"


class FallDetector:
    """The fall estimate of successive readings (it holds the fallen state for the hysteresis)."""

    def __init__(self, fall_tilt_deg: float, hysteresis_deg: float, fall_margin: float,
                 hold: float = 0.0) -> None:
        self.fall_tilt = math.radians(fall_tilt_deg)
        self.recover_tilt = math.radians(max(fall_tilt_deg - hysteresis_deg, 0.0))
        self.fall_margin = fall_margin
        self.hold = hold
        self.fallen = False
        self._outside_since: float | None = None  # robot time the CoM went beyond fall_margin

    def from_imu(self, orientation: np.ndarray) -> FallEstimate:
        """From the IMU frame's rotation in a gravity-aligned frame (3x3)."""
        up = np.asarray(orientation)[2, :]  # the vertical in the IMU frame: x, y, z components
        tilt = trunk_tilt(orientation)
        self.fallen = tilt > (self.recover_tilt if self.fallen else self.fall_tilt)
        self._outside_since = None
        return FallEstimate(self.fallen, lying(up) if self.fallen else Posture.UPRIGHT, tilt, FallSource.IMU)

    def from_support(self, reach_margin: float, stamp: float) -> FallEstimate:
        """From the CoM's margin in the reach polygon (m, signed, NaN without feet) at robot
        time ``stamp``: fallen once it has stayed below -fall_margin for ``hold`` seconds, up
        again once it is back inside the polygon."""
        if math.isfinite(reach_margin):
            if reach_margin >= -self.fall_margin:
                self._outside_since = None
            elif self._outside_since is None or stamp < self._outside_since:
                self._outside_since = stamp
            if self.fallen:
                self.fallen = reach_margin < 0.0
            else:
                self.fallen = self._outside_since is not None and stamp - self._outside_since >= self.hold
        return FallEstimate(self.fallen, Posture.UNKNOWN if self.fallen else Posture.UPRIGHT, math.nan,
                            FallSource.SUPPORT)


def trunk_tilt(orientation: np.ndarray) -> float:
    """Angle (rad) between the IMU frame's z axis and the vertical, from the frame's rotation
    in a gravity-aligned frame (3x3)."""
    return tilt_of_axis(float(np.asarray(orientation)[2, 2]))


def tilt_of_axis(vertical: float) -> float:
    """Angle (rad) between a unit axis and the vertical, from the axis' vertical component."""
    return math.acos(min(1.0, max(-1.0, vertical)))


def lying(up: np.ndarray, threshold: float = LYING_AXIS) -> Posture:
    """How a fallen trunk lies, from the vertical in its frame; UNKNOWN when neither its
    forward nor its sideways axis is ``threshold`` (a cosine) near the vertical."""
    x, y = float(up[0]), float(up[1])
    if max(abs(x), abs(y)) < threshold:
        return Posture.UNKNOWN
    if abs(x) >= abs(y):
        return Posture.ON_BACK if x > 0 else Posture.ON_BELLY
    return Posture.ON_RIGHT if y > 0 else Posture.ON_LEFT
