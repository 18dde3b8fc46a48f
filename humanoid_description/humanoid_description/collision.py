"""Self-collision model: the URDF's collision geometry, pairs filtered by the SRDF.

Distances and collisions are computed by Pinocchio with Coal. The SRDF's
``disable_collisions`` entries (adjacent links, pairs that never collide) remove pairs
from the check; everything else is checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from humanoid_description.model import JointPositions, RobotModel
from humanoid_description.robots import robot_files


@dataclass(frozen=True)
class PairDistance:
    """Distance between the collision geometries of two links (m; < 0: penetration)."""

    link_a: str
    link_b: str
    distance: float


@dataclass(frozen=True)
class CollisionReport:
    """Result of one self-collision check."""

    in_collision: bool
    colliding: list[PairDistance]  # closest first
    closest: PairDistance | None
    checked_pairs: int


class CollisionModel:
    """Collision geometry of a robot with the pairs to check.

    ``srdf`` selects the pair filter: the robot's SRDF by default, ``None`` with
    ``use_srdf=False`` to check every pair (used by the SRDF generator).
    """

    def __init__(self, robot_model: RobotModel, srdf: Path | None = None,
                 use_srdf: bool = True) -> None:
        self.robot = robot_model
        self.geometry = pin.buildGeomFromUrdfString(
            robot_model.model, robot_model.urdf, pin.GeometryType.COLLISION)
        self.geometry.addAllCollisionPairs()
        if use_srdf:
            path = srdf if srdf is not None else robot_files(robot_model.name).srdf
            pin.removeCollisionPairsFromXML(robot_model.model, self.geometry, path.read_text())
        self._link_of = [robot_model.model.frames[g.parentFrame].name
                         for g in self.geometry.geometryObjects]
        self.pairs: list[tuple[str, str]] = [
            (self._link_of[p.first], self._link_of[p.second]) for p in self.geometry.collisionPairs]
        self.data = pin.GeometryData(self.geometry)

    @property
    def links(self) -> list[str]:
        """Links that carry collision geometry."""
        return list(dict.fromkeys(self._link_of))

    def _place(self, positions: JointPositions) -> None:
        q = self.robot.configuration(positions)
        pin.updateGeometryPlacements(self.robot.model, self.robot.data, self.geometry, self.data, q)

    def colliding_pairs(self, positions: JointPositions) -> np.ndarray:
        """Boolean per checked pair: do the geometries intersect?"""
        self._place(positions)
        pin.computeCollisions(self.geometry, self.data, False)
        return np.array([r.isCollision() for r in self.data.collisionResults], dtype=bool)

    def distances(self, positions: JointPositions) -> list[PairDistance]:
        """Distance of every checked pair, closest first."""
        self._place(positions)
        pin.computeDistances(self.geometry, self.data)
        result = [PairDistance(a, b, float(r.min_distance))
                  for (a, b), r in zip(self.pairs, self.data.distanceResults, strict=True)]
        return sorted(result, key=lambda p: p.distance)

    def check(self, positions: JointPositions, safety_distance: float = 0.0) -> CollisionReport:
        """Pairs closer than ``safety_distance`` (0 = touching or penetrating)."""
        ranked = self.distances(positions)
        colliding = [p for p in ranked if p.distance <= safety_distance]
        return CollisionReport(in_collision=bool(colliding), colliding=colliding,
                               closest=ranked[0] if ranked else None,
                               checked_pairs=len(ranked))
