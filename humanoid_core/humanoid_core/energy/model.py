"""The supply current model of the ODE humanoid simulator (Lima et al., equation 8 of
the platforms reference) and the energy it integrates to.

I = K * sum(|T_i|) + N * I_servo + I_controller: each servo draws a current proportional
to the torque it exerts above its idle current, and the controller board draws its own.
Power is I * V at the supply voltage; energy is the power integrated over the readings'
stamps (trapezoids). Velocity does not enter the model (a servo holding a load draws
current without moving); the mechanical power sum(|T_i * w_i|) is given beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_core.energy.parameters import EnergyParameters


@dataclass(frozen=True)
class CurrentEstimate:
    """The current drawn at one reading."""

    joint_currents: np.ndarray  # A, K * |T_i| (NaN: effort unknown)
    total_current: float  # A
    mechanical_power: float  # W, sum of |T_i * w_i| over the joints with both known
    unknown_joints: int  # joints whose effort was unknown (their K * |T_i| counts 0)


@dataclass(frozen=True)
class CurrentModel:
    """Equation 8's constants for one robot of ``servo_count`` servos."""

    torque_to_current: float  # K, A / (N m)
    servo_idle_current: float  # A
    controller_current: float  # A
    servo_count: int

    @classmethod
    def of(cls, params: EnergyParameters, joint_count: int) -> CurrentModel:
        """The model of ``params``; ``servo_count`` 0 means one servo per joint."""
        return cls(params.torque_to_current, params.servo_idle_current, params.controller_current,
                   params.servo_count or joint_count)

    @property
    def idle_current(self) -> float:
        """A, the robot at rest with no load: N * I_servo + I_controller."""
        return self.servo_count * self.servo_idle_current + self.controller_current

    def estimate(self, effort: np.ndarray, velocity: np.ndarray | None = None) -> CurrentEstimate:
        """The current for joint ``effort`` (N m) and, for the mechanical power, ``velocity`` (rad/s)."""
        joint = self.torque_to_current * np.abs(effort)
        known = np.isfinite(joint)
        total = float(joint[known].sum()) + self.idle_current
        mechanical = 0.0
        if velocity is not None and len(velocity) == len(effort):
            power = np.abs(effort * velocity)
            mechanical = float(power[np.isfinite(power)].sum())
        return CurrentEstimate(joint, total, mechanical, int((~known).sum()))


class EnergyIntegral:
    """Electrical energy (J) over a stream of stamped power readings: trapezoids between
    consecutive stamps; a reading not after the previous one, or after a gap longer than
    ``max_gap``, adds nothing (the gap is counted and its energy unknown)."""

    def __init__(self, max_gap: float) -> None:
        self.max_gap = max_gap
        self.energy = 0.0
        self.gaps = 0
        self.out_of_order = 0
        self._last: tuple[float, float] | None = None

    def add(self, stamp: float, power: float) -> float:
        """Add the reading at ``stamp`` (s) of ``power`` (W); the energy so far (J)."""
        if not (math.isfinite(stamp) and math.isfinite(power)):
            return self.energy
        last = self._last
        if last is not None:
            dt = stamp - last[0]
            if dt <= 0.0:
                self.out_of_order += 1
                return self.energy
            if dt > self.max_gap:
                self.gaps += 1
            else:
                self.energy += 0.5 * (power + last[1]) * dt
        self._last = (stamp, power)
        return self.energy
