"""The limits a motion must respect, per joint: position, velocity, acceleration.

Positions come from the URDF. Velocity is the smaller of the actuator limit of the
robot configuration (HOAP-2: 57 pulse/ms measured; Bioloid: AX-12 datasheet) and the
URDF's joint velocity; acceleration is the actuator limit. Everything in rad, rad/s
and rad/s^2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from humanoid_description import load_config, load_model

#: Tolerance (rad) on position limits, for values rounded by a file format.
POSITION_TOLERANCE = 1e-9


@dataclass(frozen=True)
class JointBounds:
    """Limits of some joints of one robot, in the order of ``joint_names``."""

    robot: str
    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def for_robot(cls, robot: str, joint_names: Sequence[str] | None = None) -> JointBounds:
        """Limits of ``joint_names`` (all joints in canonical order when None)."""
        table = load_model(robot).joints
        actuators = load_config(robot).actuators
        bounds = cls(robot=robot, joint_names=table.names, lower=table.lower.copy(), upper=table.upper.copy(),
                     velocity=np.minimum(table.velocity, actuators.max_velocity),
                     acceleration=np.full(len(table), actuators.max_acceleration))
        return bounds if joint_names is None else bounds.select(joint_names)

    def select(self, joint_names: Sequence[str]) -> JointBounds:
        """Limits of a subset of the joints; KeyError names an unknown joint."""
        unknown = [j for j in joint_names if j not in self.joint_names]
        if unknown:
            raise KeyError(f"robot {self.robot} has no joint(s) {', '.join(unknown)}")
        idx = [self.joint_names.index(j) for j in joint_names]
        return replace(self, joint_names=tuple(joint_names), lower=self.lower[idx], upper=self.upper[idx],
                       velocity=self.velocity[idx], acceleration=self.acceleration[idx])

    def with_rate_fraction(self, fraction: float) -> JointBounds:
        """The same limits with velocity and acceleration multiplied by ``fraction``."""
        return replace(self, velocity=self.velocity * fraction, acceleration=self.acceleration * fraction)

    def position_violation(self, column: int, value: float) -> str | None:
        """Why ``value`` (rad) is outside joint ``column``'s range, or None."""
        low, high = self.lower[column], self.upper[column]
        if low - POSITION_TOLERANCE <= value <= high + POSITION_TOLERANCE:
            return None
        return (f"{self.joint_names[column]} = {math.degrees(value):.2f} deg is outside its limits "
                f"[{math.degrees(low):.2f}, {math.degrees(high):.2f}] deg")
