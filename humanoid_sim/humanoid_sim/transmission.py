"""The gear train between a servo's motor and its link: play (backlash) and deflection under load.

A real servo measures its angle on the motor side; the link it drives sits behind the
gears, which have some play and bend under load. The HOAP-2 shows both: about 2 deg
of backlash at hip and ankle pitch, with which "the robot sags forward under its own
weight in the zero pose" while its encoders still read zero (Cominoli 2005).

Model (per joint, updated once per control cycle), quasi-static:

- **Load.** The torque PyBullet's motor applied to the link, low-pass filtered over
  ``filter_time`` (which keeps contact chatter and the motor's own transients out: the
  deflection is quasi-static).
- **Deflection.** The link sits behind its motor by ``load / stiffness``: one stiffness for
  every joint, or its own for each joint group (hips, knees, ankles, trunk: the robot's
  ``<group>_joints``) whose ``<group>_stiffness`` is set. Four fixed groups, each a scalar
  parameter, so that ``humanoid identify`` fits each by name
  (``transmission.hip_stiffness=30:400``).
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

#: The joint groups whose gears may have a stiffness of their own.
GROUPS = ("hip", "knee", "ankle", "trunk")


@dataclass(frozen=True)
class TransmissionParameters:
    """Play and stiffness of the gear trains: ROS parameters ``transmission.*`` of the simulation
    node (defaults: rigid gears; per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``)."""

    stiffness: float = documented(0.0, "N m/rad, deflection of every joint's gears under load; 0 = rigid")
    backlash: float = documented(0.0, "deg, total play of each joint in backlash_joints")
    backlash_joints: tuple[str, ...] = documented((), "joints whose gears have the backlash")
    hip_joints: tuple[str, ...] = documented((), "joints of the hip group (their gears take hip_stiffness)")
    hip_stiffness: float = documented(0.0, "N m/rad of the hip group's gears; 0 = stiffness")
    knee_joints: tuple[str, ...] = documented((), "joints of the knee group (their gears take knee_stiffness)")
    knee_stiffness: float = documented(0.0, "N m/rad of the knee group's gears; 0 = stiffness")
    ankle_joints: tuple[str, ...] = documented((), "joints of the ankle group (their gears take ankle_stiffness)")
    ankle_stiffness: float = documented(0.0, "N m/rad of the ankle group's gears; 0 = stiffness")
    trunk_joints: tuple[str, ...] = documented((), "joints of the trunk group (waist, spine: their gears take "
                                                   "trunk_stiffness)")
    trunk_stiffness: float = documented(0.0, "N m/rad of the trunk group's gears; 0 = stiffness")
    breakaway_torque: float = documented(0.1, "N m, a load reversal beyond this carries a link across its play")
    crossing_speed: float = documented(4.0, "deg/s, speed at which a link crosses its play")
    filter_time: float = documented(0.05, "s, time constant of the load the links follow")

    def __post_init__(self) -> None:
        for name in ("stiffness", "backlash", "breakaway_torque", *(f"{group}_stiffness" for group in GROUPS)):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"transmission {name} must be a finite number >= 0, got {value}")
        for name in ("crossing_speed", "filter_time"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"transmission {name} must be a finite number > 0, got {value}")
        if self.backlash > 0.0 and not self.backlash_joints:
            raise ValueError("transmission backlash is set but backlash_joints names no joint")
        seen: dict[str, str] = {}
        for group, joints, stiffness in self.groups():
            for joint in joints:
                if joint in seen:
                    raise ValueError(f"transmission: joint {joint} is in the {seen[joint]} and the {group} groups")
                seen[joint] = group
            if stiffness > 0.0 and not joints:
                raise ValueError(f"transmission {group}_stiffness is set but {group}_joints names no joint")

    def groups(self) -> list[tuple[str, tuple[str, ...], float]]:
        """Each joint group: its name, joints and own stiffness (0: the common one)."""
        return [(group, getattr(self, f"{group}_joints"), getattr(self, f"{group}_stiffness")) for group in GROUPS]

    @property
    def active(self) -> bool:
        """Does any link ever differ from its motor?"""
        return (self.stiffness > 0.0 or any(stiffness > 0.0 for _, _, stiffness in self.groups())
                or (self.backlash > 0.0 and bool(self.backlash_joints)))

    def stiffness_of(self, joint: str) -> float:
        """N m/rad of ``joint``'s gears: its group's where set, else the common stiffness."""
        for _, joints, own in self.groups():
            if own > 0.0 and joint in joints:
                return own
        return self.stiffness

    def describe_stiffness(self) -> str:
        """The stiffness in force, for the simulation's log."""
        groups = [f"{group}s {stiffness:g}" for group, _, stiffness in self.groups() if stiffness > 0.0]
        common = f"{self.stiffness:g} N m/rad" if self.stiffness > 0.0 else "rigid"
        if not groups:
            return f"stiffness {common}"
        return f"stiffness {', '.join(groups)} N m/rad, {common} elsewhere"


class Transmissions:
    """The gear trains of all joints of a robot (canonical joint order), vectorised."""

    def __init__(self, params: TransmissionParameters, joint_names: Sequence[str]) -> None:
        listed = [("backlash_joints", params.backlash_joints),
                  *((f"{group}_joints", joints) for group, joints, _ in params.groups())]
        for parameter, joints in listed:
            unknown = [name for name in joints if name not in joint_names]
            if unknown:
                raise ValueError(f"transmission {parameter}: unknown joint(s) {', '.join(unknown)} "
                                 f"(joints: {', '.join(joint_names)})")
        self.params = params
        self.half_play = np.array([math.radians(params.backlash) / 2.0 if name in params.backlash_joints else 0.0
                                   for name in joint_names])
        stiffness = np.array([params.stiffness_of(name) for name in joint_names])
        self._compliance = np.divide(1.0, stiffness, out=np.zeros_like(stiffness), where=stiffness > 0.0)
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
