"""Footsteps: where each foot lands, planned one step at a time from a wanted motion.

A step moves one foot (the swing foot) while the other supports the robot. Where it
lands is decided relative to the support foot, so that the plan never drifts away
from the feet: the *centre frame* seen from the support foot (half the stance width
towards the swing side) moves by the step's displacement ``(dx, dy, dyaw)``, and the
swing foot lands half the stance width beyond it, parallel to it.

Moving sideways or turning, only the foot on the side of the motion opens the
stance (twice the displacement) and the other foot closes it again on its own step
(no displacement), so the feet never cross nor come closer than the stance width. A
step is clipped to the robot's step limits (an ellipsoid through the forward,
backward, lateral and turning limits), and shrunk until the landing sole stays
``min_gap`` away from the support sole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_description import rectangle_corners, signed_margin

SIDES = ("right", "left")


def other_side(side: str) -> str:
    return "left" if side == "right" else "right"


def side_sign(side: str) -> float:
    """+1 for the left side (y > 0 in REP-103), -1 for the right."""
    return 1.0 if side == "left" else -1.0


def wrap_angle(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


@dataclass(frozen=True)
class Pose2:
    """A placement on the ground: position (m) and heading (rad)."""

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0

    def compose(self, other: Pose2) -> Pose2:
        """``other`` expressed in this frame, brought to the world."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return Pose2(self.x + c * other.x - s * other.y, self.y + s * other.x + c * other.y,
                     wrap_angle(self.yaw + other.yaw))

    def inverse(self) -> Pose2:
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return Pose2(-c * self.x - s * self.y, s * self.x - c * self.y, -self.yaw)

    def relative(self, other: Pose2) -> Pose2:
        """``other`` seen from this frame."""
        return self.inverse().compose(other)

    def point(self, x: float, y: float) -> np.ndarray:
        """A point given in this frame, in the world (x, y)."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array([self.x + c * x - s * y, self.y + s * x + c * y])

    @property
    def position(self) -> np.ndarray:
        return np.array([self.x, self.y])


def interpolate(a: Pose2, b: Pose2, s: float) -> Pose2:
    """From ``a`` (s = 0) to ``b`` (s = 1), heading along the shorter way."""
    return Pose2(a.x + (b.x - a.x) * s, a.y + (b.y - a.y) * s, wrap_angle(a.yaw + wrap_angle(b.yaw - a.yaw) * s))


def midpoint(a: Pose2, b: Pose2) -> Pose2:
    return interpolate(a, b, 0.5)


@dataclass(frozen=True)
class Footstep:
    """Where one foot (``right`` or ``left``) stands: its sole frame on the ground."""

    side: str
    pose: Pose2


@dataclass(frozen=True)
class StepLimits:
    """The largest displacement of the centre frame in one step, and the closest the soles
    may come to each other (m, rad)."""

    forward: float
    backward: float
    lateral: float
    turn: float
    stance_width: float  # lateral distance between the sole centres, standing
    sole_length: float
    sole_width: float
    min_gap: float

    def clip(self, dx: float, dy: float, dyaw: float) -> tuple[float, float, float]:
        """Scale the displacement into the ellipsoid through the limits (direction kept)."""
        along = self.forward if dx >= 0.0 else self.backward
        norm = math.sqrt((dx / along) ** 2 + (dy / self.lateral) ** 2 + (dyaw / self.turn) ** 2)
        if norm <= 1.0:
            return dx, dy, dyaw
        return dx / norm, dy / norm, dyaw / norm


def sole_polygon(pose: Pose2, length: float, width: float) -> np.ndarray:
    """Counter-clockwise corners (4, 2) of a sole on the ground."""
    return np.array([pose.point(x, y) for x, y, _ in rectangle_corners(length, width)])


def soles_gap(a: Pose2, b: Pose2, length: float, width: float) -> float:
    """Distance between two soles (m), negative when they overlap (approximately: the
    deepest corner). For convex polygons apart, the closest points include a corner."""
    pa, pb = sole_polygon(a, length, width), sole_polygon(b, length, width)
    return min(min(-signed_margin(p, pb) for p in pa), min(-signed_margin(p, pa) for p in pb))


def landing(support: Footstep, dx: float, dy: float, dyaw: float, width: float) -> Footstep:
    """The swing foot's landing for a step of the centre frame by (dx, dy, dyaw)."""
    side = other_side(support.side)
    half = side_sign(side) * width / 2.0
    centre = support.pose.compose(Pose2(0.0, half, 0.0))
    moved = centre.compose(Pose2(dx, dy, dyaw))
    return Footstep(side, moved.compose(Pose2(0.0, half, 0.0)))


def plan_step(support: Footstep, velocity: tuple[float, float, float], period: float,
              limits: StepLimits, remaining: tuple[float, float, float] | None = None) -> Footstep:
    """The next landing of the foot opposite ``support``.

    ``velocity`` (vx, vy, wz) is the wanted motion of the centre frame (m/s, rad/s) and
    ``period`` one step's duration. ``remaining`` (dx, dy, dyaw), when given, is what
    is left to a goal, seen from the centre frame: no step goes past it.
    """
    swing = other_side(support.side)
    sign = side_sign(swing)
    vx, vy, wz = velocity
    dx = vx * period
    # only the foot on the side of the motion opens the stance, by twice the average
    dy = 2.0 * vy * period if vy * sign > 0.0 else 0.0
    dyaw = 2.0 * wz * period if wz * sign > 0.0 else 0.0
    if remaining is not None:
        rx, ry, ryaw = remaining
        dx = math.copysign(min(abs(dx), abs(rx)), rx) if dx * rx > 0.0 else 0.0
        dy = math.copysign(min(abs(dy), abs(ry)), ry) if dy * ry > 0.0 else 0.0
        dyaw = math.copysign(min(abs(dyaw), abs(ryaw)), ryaw) if dyaw * ryaw > 0.0 else 0.0
    dx, dy, dyaw = limits.clip(dx, dy, dyaw)
    for _ in range(30):
        step = landing(support, dx, dy, dyaw, limits.stance_width)
        if soles_gap(support.pose, step.pose, limits.sole_length, limits.sole_width) >= limits.min_gap:
            return step
        dy, dyaw = 0.8 * dy, 0.8 * dyaw  # turning and opening sideways are what bring soles close
    return landing(support, dx, 0.0, 0.0, limits.stance_width)


def aligned(support: Footstep, swing: Footstep, width: float, position_tolerance: float = 0.002,
            yaw_tolerance: float = math.radians(1.0)) -> bool:
    """Is the swing foot already where a step with no displacement would put it?"""
    target = landing(support, 0.0, 0.0, 0.0, width).pose
    offset = target.relative(swing.pose)
    return math.hypot(offset.x, offset.y) <= position_tolerance and abs(offset.yaw) <= yaw_tolerance
