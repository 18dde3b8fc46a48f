"""The gear train between a servo's motor and its link: play (backlash) and deflection under load.

A real servo measures its angle on the motor side; the link it drives sits behind the
gears, which have some play and bend under load. The HOAP-2 shows both: about 2 deg
of backlash at hip and ankle pitch, with which "the robot sags forward under its own
weight in the zero pose" while its encoders still read zero (Cominoli 2005).

Model (per joint, updated once per control cycle), quasi-static:

- **Load.** The torque PyBullet's motor applied to the link, low-pass filtered over
  ``filter_time`` (which keeps contact chatter and the motor's own transients out: the
  deflection is quasi-static).
- **Deflection.** The link sits behind its motor by ``load / stiffness``.
- **Play.** A joint with backlash has its link against the end of the play (half of
  ``backlash`` from the motor) that its load pushes it to. When the load reverses by
  more than the gears' friction (``breakaway_torque``), the link crosses to the other
  end at ``crossing_speed`` (the load carries it across: an inverted pendulum of the
  HOAP-2's height falls through 2 deg of play in about half a second). A robot put
  down (reset) has its links in the middle of their play; they settle on the side
  their load pushes them, which makes the HOAP-2 sag forward in its zero pose.

PyBullet's stiff position motor then holds each link at its motor's reference plus
the sag (the gears' own oscillation is not modelled). The encoders are on the motor
side: joint readings are the link minus its sag, so the sag is seen by the world
(contacts, centre of mass, ground truth) and never by the joint readings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_core import documented


@dataclass(frozen=True)
class TransmissionParameters:
    """Play and stiffness of the gear trains: ROS parameters ``transmission.*`` of the simulation
    node (defaults: rigid gears; per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``)."""

    stiffness: float = documented(0.0, "N m/rad, deflection of every joint's gears under load; 0 = rigid")
    backlash: float = documented(0.0, "deg, total play of each joint in backlash_joints")
    backlash_joints: tuple[str, ...] = documented((), "joints whose gears have the backlash")
    breakaway_torque: float = documented(0.1, "N m, a load reversal beyond this carries a link across its play")
    crossing_speed: float = documented(4.0, "deg/s, speed at which a link crosses its play")
    filter_time: float = documented(0.05, "s, time constant of the load the links follow")

    def __post_init__(self) -> None:
        for name in ("stiffness", "backlash", "breakaway_torque"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"transmission {name} must be a finite number >= 0, got {value}")
        for name in ("crossing_speed", "filter_time"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"transmission {name} must be a finite number > 0, got {value}")
        if self.backlash > 0.0 and not self.backlash_joints:
            raise ValueError("transmission backlash is set but backlash_joints names no joint")

    @property
    def active(self) -> bool:
        """Does any link ever differ from its motor?"""
        return self.stiffness > 0.0 or (self.backlash > 0.0 and bool(self.backlash_joints))


class Transmissions:
    """The gear trains of all joints of a robot (canonical joint order), vectorised."""

    def __init__(self, params: TransmissionParameters, joint_names: Sequence[str]) -> None:
        unknown = [name for name in params.backlash_joints if name not in joint_names]
        if unknown:
            raise ValueError(f"transmission backlash_joints: unknown joint(s) {', '.join(unknown)} "
                             f"(joints: {', '.join(joint_names)})")
        self.params = params
        self.half_play = np.array([math.radians(params.backlash) / 2.0 if name in params.backlash_joints else 0.0
                                   for name in joint_names])
        self._compliance = 1.0 / params.stiffness if params.stiffness > 0.0 else 0.0
        self._crossing_speed = math.radians(params.crossing_speed)
        count = len(joint_names)
        self.torque = np.zeros(count)  # filtered load the motor carries, N m
        self.side = np.zeros(count)  # where each link is in its play (link - motor), rad
        self.goal = np.zeros(count)  # the end of the play the load pushes each link to, rad
        self.sag = np.zeros(count)  # link - motor, rad

    def reset(self) -> None:
        """A robot just put down: links unloaded, in the middle of their play."""
        for array in (self.torque, self.side, self.goal, self.sag):
            array[:] = 0.0

    def update(self, applied_torque: np.ndarray, dt: float) -> bool:
        """Follow the torques the motors applied over the last ``dt`` seconds; True when a sag
        changed by more than 1e-6 rad (the motors then need new targets)."""
        alpha = dt / (self.params.filter_time + dt)
        self.torque += alpha * (np.asarray(applied_torque, dtype=float) - self.torque)
        # the motor's torque holds the link against its load, which pushes the link the other way
        breakaway = self.params.breakaway_torque
        self.goal = np.where(self.torque > breakaway, -self.half_play,
                             np.where(self.torque < -breakaway, self.half_play, self.goal))
        step = self._crossing_speed * dt
        self.side += np.clip(self.goal - self.side, -step, step)
        sag = self.side - self.torque * self._compliance
        changed = bool(np.max(np.abs(sag - self.sag), initial=0.0) > 1e-6)
        self.sag = sag
        return changed
