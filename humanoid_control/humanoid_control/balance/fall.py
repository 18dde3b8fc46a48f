"""Has the robot fallen, and how does it lie: the robot's own estimate, no ROS, no simulator.

Two sources, the better one the robot has:

- *IMU* (the HOAP-2): the trunk's tilt, the angle between the IMU frame's z axis (the
  trunk's, the IMU is fixed to it) and the vertical. Past ``fall_tilt`` the robot has
  fallen; it is up again below ``fall_tilt - fall_tilt_hysteresis``. Lying, the axis of the
  trunk nearest the vertical tells how: x (forward) up: on the back, down: on the belly;
  y (left) down: on the left side, up: on the right.
- *support* (no IMU: the Bioloids): the model's CoM projection, with flat feet on flat ground
  assumed, more than ``fall_margin`` outside the support polygon: the robot cannot be
  standing so. A robot that tips over rigidly (joints unchanged) is not seen this way:
  without an IMU or foot sensors nothing tells the robot's attitude.
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

    def __init__(self, fall_tilt_deg: float, hysteresis_deg: float, fall_margin: float) -> None:
        self.fall_tilt = math.radians(fall_tilt_deg)
        self.recover_tilt = math.radians(max(fall_tilt_deg - hysteresis_deg, 0.0))
        self.fall_margin = fall_margin
        self.fallen = False

    def from_imu(self, orientation: np.ndarray) -> FallEstimate:
        """From the IMU frame's rotation in a gravity-aligned frame (3x3)."""
        up = np.asarray(orientation)[2, :]  # the vertical in the IMU frame: x, y, z components
        tilt = math.acos(min(1.0, max(-1.0, float(up[2]))))
        self.fallen = tilt > (self.recover_tilt if self.fallen else self.fall_tilt)
        return FallEstimate(self.fallen, lying(up) if self.fallen else Posture.UPRIGHT, tilt, FallSource.IMU)

    def from_support(self, margin: float) -> FallEstimate:
        """From the CoM margin (m, signed, NaN without support) of the flat-feet model."""
        if math.isfinite(margin):
            self.fallen = margin < -self.fall_margin
        return FallEstimate(self.fallen, Posture.UNKNOWN if self.fallen else Posture.UPRIGHT, math.nan,
                            FallSource.SUPPORT)


def lying(up: np.ndarray) -> Posture:
    """How a fallen trunk lies, from the vertical in its frame."""
    x, y = float(up[0]), float(up[1])
    if max(abs(x), abs(y)) < LYING_AXIS:
        return Posture.UNKNOWN
    if abs(x) >= abs(y):
        return Posture.ON_BACK if x > 0 else Posture.ON_BELLY
    return Posture.ON_RIGHT if y > 0 else Posture.ON_LEFT
