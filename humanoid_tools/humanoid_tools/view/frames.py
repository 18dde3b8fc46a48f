"""What the page shows at one instant, built from messages (rclpy's live ones and the ones
rosbags deserializes from a bag have the same fields, so both go through here)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class BalanceSample:
    com: np.ndarray  # (3,)
    com_projection: np.ndarray  # (3,)
    zmp_model: np.ndarray | None  # (3,), None when invalid
    zmp_measured: np.ndarray | None
    polygon: np.ndarray  # (k, 3) on the ground
    margin: float  # m, NaN without support
    stable: bool


@dataclass(frozen=True)
class CollisionSample:
    in_collision: bool
    colliding: tuple[tuple[str, str, float], ...]  # link a, link b, distance (m)
    closest: tuple[str, str, float] | None


@dataclass(frozen=True)
class Frame:
    time: float  # robot time (s)
    positions: dict[str, float] = field(default_factory=dict)  # NaN: unknown (stale reading)
    base: tuple[np.ndarray, np.ndarray] | None = None  # position (3,), quaternion wxyz (4,)
    balance: BalanceSample | None = None
    collision: CollisionSample | None = None


def _xyz(p) -> np.ndarray:
    return np.array([p.x, p.y, p.z], dtype=float)


def joint_positions(msg) -> dict[str, float]:
    return {name: float(value) for name, value in zip(msg.name, msg.position, strict=False)}


def base_pose(msg) -> tuple[np.ndarray, np.ndarray]:
    """A PoseStamped as (position, wxyz)."""
    q = msg.pose.orientation
    return _xyz(msg.pose.position), np.array([q.w, q.x, q.y, q.z], dtype=float)


def balance_sample(msg) -> BalanceSample:
    ground = float(msg.com_projection.z)
    polygon = np.array([[p.x, p.y, ground] for p in msg.support_polygon.points], dtype=float).reshape(-1, 3)
    margin = float(msg.stability_margin)
    return BalanceSample(_xyz(msg.com), _xyz(msg.com_projection),
                         _xyz(msg.zmp_model) if msg.zmp_model_valid else None,
                         _xyz(msg.zmp_measured) if msg.zmp_measured_valid else None,
                         polygon, margin if math.isfinite(margin) else math.nan, bool(msg.stable))


def collision_sample(msg) -> CollisionSample:
    closest = msg.closest_pair
    return CollisionSample(bool(msg.in_collision),
                           tuple((p.link_a, p.link_b, float(p.distance)) for p in msg.colliding_pairs),
                           (closest.link_a, closest.link_b, float(closest.distance)) if closest.link_a else None)
