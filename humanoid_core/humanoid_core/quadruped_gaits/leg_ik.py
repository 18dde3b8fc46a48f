"""Planar two-link inverse kinematics of a quadruped's leg in its sagittal plane.

A leg is a hip pitch joint, a thigh, a knee (pitch) and a shank ending in the foot
point (the centre of the ball foot). With the hip roll at zero the thigh and shank move
in a vertical plane through the hip pitch axis; the foot's place in that plane, ``x``
forward and ``z`` up from the hip pitch axis, fixes both pitch angles once the side the
knee points to is chosen. As in the reference's gaits the knee bend is limited (90 deg):
a target closer to the hip than that bend allows is reached as far as it can be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_description import RobotModel


@dataclass(frozen=True)
class LegJoints:
    """The joints of one leg (robot.yaml ``legs``) and the way its knee points."""

    hip: str
    roll: str
    knee: str
    knee_points: str  # "backward" or "forward"

    def __post_init__(self) -> None:
        if self.knee_points not in ("backward", "forward"):
            raise ValueError(f"knee_points must be backward or forward, got {self.knee_points!r}")


@dataclass(frozen=True)
class LegGeometry:
    """Lengths (m) of a leg in its sagittal plane, measured on the model."""

    thigh: float  # hip pitch axis -> knee axis
    shank: float  # knee axis -> foot point

    @classmethod
    def of(cls, model: RobotModel, joints: LegJoints, foot_frame: str) -> LegGeometry:
        """The lengths in the zero pose (leg straight), projected on the sagittal plane."""
        zero = np.zeros(len(model.joints))
        # a joint's child link frame is on the joint's axis
        hip = model.frame_placement(model.joints[joints.hip].child_link, zero).translation
        knee = model.frame_placement(model.joints[joints.knee].child_link, zero).translation
        foot = model.frame_placement(foot_frame, zero).translation
        return cls(thigh=float(math.hypot(knee[0] - hip[0], knee[2] - hip[2])),
                   shank=float(math.hypot(foot[0] - knee[0], foot[2] - knee[2])))


@dataclass(frozen=True)
class LegAngles:
    hip: float  # rad, hip pitch
    knee: float  # rad, knee pitch
    reached: bool  # False when the target was out of reach (the nearest reachable point was used)


def solve(geometry: LegGeometry, knee_points: str, x: float, z: float, max_knee_bend: float) -> LegAngles:
    """Hip and knee pitch (URDF: +pitch about +y swings a link backward) that put the foot at
    ``(x, z)`` from the hip pitch axis, the knee bent at most ``max_knee_bend`` rad."""
    l1, l2 = geometry.thigh, geometry.shank
    shortest = math.sqrt(l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * math.cos(max_knee_bend))
    distance = math.hypot(x, z)
    reached = shortest - 1e-9 <= distance <= l1 + l2 + 1e-9  # the ends of the reach included
    distance = min(max(distance, shortest), l1 + l2)
    bend = math.acos(max(-1.0, min(1.0, (distance * distance - l1 * l1 - l2 * l2) / (2.0 * l1 * l2))))
    # angle between the hip->foot line and the thigh, and the line's angle from straight down (+ forward)
    between = math.acos(max(-1.0, min(1.0, (l1 * l1 + distance * distance - l2 * l2) / (2.0 * l1 * distance))))
    line = math.atan2(x, -z)
    if knee_points == "backward":  # the thigh behind the line, the shank swung forward
        return LegAngles(hip=between - line, knee=-bend, reached=reached)
    return LegAngles(hip=-between - line, knee=bend, reached=reached)


def foot_point(geometry: LegGeometry, hip: float, knee: float) -> tuple[float, float]:
    """Forward kinematics of :func:`solve`: the foot's ``(x, z)`` for the two pitch angles."""
    x = -geometry.thigh * math.sin(hip) - geometry.shank * math.sin(hip + knee)
    z = -geometry.thigh * math.cos(hip) - geometry.shank * math.cos(hip + knee)
    return x, z
