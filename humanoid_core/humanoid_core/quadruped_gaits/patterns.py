"""IK gaits of a quadruped: each leg traces an elliptic foot path (:mod:`.foot_path`)
solved by planar leg IK (:mod:`.leg_ik`), the four legs phased by the gait's pattern.

A gait pattern gives each leg the fraction of a cycle by which its path lags the front
left leg's (robot.yaml ``gaits.phases``: the nine gaits of the report's Fig 29): trot moves
the diagonals together, pace the sides, bound the front and back pairs, pronk all four,
walk one leg after another a quarter cycle apart ... As in the reference (an EPFL report on
the Bioloid quadruped, 2007), each cycle is sampled at ``points_per_cycle`` points (28) that
the servos are sent in turn; between two samples the set-point moves linearly.

The foot path (``foot_path``) is by default the report's **rules of thumb**: the largest
ellipse the leg can reach, its nearest point where a knee bent to its limit (90 deg) puts the
foot, its farthest where the leg is straight (the corrected radius, our reading of the
garbled rule): centre ``k = -(r_max + r_min) / 2`` below the hip, vertical radius
``b = (r_max - r_min) / 2 = |k| - sqrt(L1^2 + L2^2)`` at 90 deg, horizontal ``a = 0.95 b``,
the whole ellipse walked (the body rides up and down). ``flat``: our own path, its stride,
lift, height and stance depth given (a flat stance by default).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from humanoid_core.quadruped_gaits.foot_path import EllipticPath
from humanoid_core.quadruped_gaits.leg_ik import LegGeometry, LegJoints, foot_point, solve
from humanoid_description import RobotModel

#: Frequencies the reference's gaits ran at (Hz).
FREQUENCY_RANGE = (0.5, 2.0)
#: The foot paths: the report's rules of thumb, or ours (stride, lift, stance depth given).
FOOT_PATHS = ("rules_of_thumb", "flat")


class GaitError(ValueError):
    """An unknown gait, or gait parameters out of range."""


@dataclass(frozen=True)
class GaitParameters:
    """Shape of the foot paths (robot.yaml ``gaits``; every field can be overridden)."""

    frequency: float = 1.0  # Hz, cycles per second
    foot_path: str = "rules_of_thumb"  # or "flat": the fields below, from half_stride to height
    a_ratio: float = 0.95  # rules of thumb: a = a_ratio b
    half_stride: float = 0.02  # m, a of the ellipse
    lift: float = 0.015  # m, b of the ellipse
    stance_depth: float = 1.0  # fraction of b the stance goes below k (1: the full ellipse)
    centre_x: float = 0.0  # m, h: stride centre forward of the hip
    height: float | None = None  # m, -k: the hip's height over the foot point (None: the home pose's)
    max_knee_bend_deg: float = 90.0  # the reference's knee limit
    points_per_cycle: int = 28

    def __post_init__(self) -> None:
        low, high = FREQUENCY_RANGE
        if not low <= self.frequency <= high:
            raise GaitError(f"gait frequency {self.frequency:g} Hz is outside {low:g}-{high:g} Hz")
        if self.foot_path not in FOOT_PATHS:
            raise GaitError(f"unknown foot path {self.foot_path!r} ({', '.join(FOOT_PATHS)})")
        if not 0.0 < self.a_ratio <= 2.0:
            raise GaitError(f"a_ratio must be in (0, 2], got {self.a_ratio}")
        if self.points_per_cycle < 4:
            raise GaitError(f"points_per_cycle must be at least 4, got {self.points_per_cycle}")
        for name in ("half_stride", "lift", "stance_depth"):
            if getattr(self, name) < 0.0 or not math.isfinite(getattr(self, name)):
                raise GaitError(f"gait {name} must be finite and >= 0, got {getattr(self, name)}")
        if not 0.0 < self.max_knee_bend_deg <= 180.0:
            raise GaitError(f"max_knee_bend_deg must be in (0, 180], got {self.max_knee_bend_deg}")


@dataclass(frozen=True)
class Leg:
    name: str  # robot.yaml feet/legs key (front_left ...)
    joints: LegJoints
    geometry: LegGeometry
    home_height: float  # m, the hip pitch axis over the foot point in the home pose


def robot_legs(model: RobotModel) -> dict[str, Leg]:
    """The legs of a robot with a ``legs`` section in robot.yaml (the quadruped)."""
    section = model.config.sections.get("legs")
    if not section:
        raise GaitError(f"robot {model.name} has no legs section in robot.yaml: it has no IK gaits")
    home = model.home_positions()
    legs = {}
    for name, spec in section.items():
        joints = LegJoints(**spec)
        foot = model.config.feet[name].sole
        hip = model.frame_placement(model.joints[joints.hip].child_link, home).translation
        foot_home = model.frame_placement(foot, home).translation
        legs[name] = Leg(name, joints, LegGeometry.of(model, joints, foot), float(hip[2] - foot_home[2]))
    return legs


def gait_phases(model: RobotModel) -> dict[str, dict[str, float]]:
    """Gait name -> leg -> phase lag (fraction of a cycle), from robot.yaml ``gaits.phases``."""
    section = (model.config.sections.get("gaits") or {}).get("phases") or {}
    legs = tuple(model.config.feet)
    phases = {}
    for gait, values in section.items():
        if len(values) != len(legs):
            raise GaitError(f"gait {gait}: {len(values)} phases for {len(legs)} legs ({', '.join(legs)})")
        phases[gait] = dict(zip(legs, (float(v) for v in values), strict=True))
    return phases


def default_parameters(model: RobotModel, **overrides: float) -> GaitParameters:
    """The robot's gait parameters (robot.yaml ``gaits``, phases and chart aside) with ``overrides``."""
    section = {k: v for k, v in (model.config.sections.get("gaits") or {}).items() if k not in ("phases", "chart")}
    try:
        return replace(GaitParameters(**section), **overrides)
    except TypeError as error:
        raise GaitError(f"robot.yaml gaits of {model.name}: {error}") from None


class IKGait:
    """Joint set-points of one gait: :meth:`positions` at any time, :meth:`samples` as sent."""

    def __init__(self, model: RobotModel, gait: str, params: GaitParameters) -> None:
        phases = gait_phases(model)
        if gait not in phases:
            raise GaitError(f"unknown gait {gait!r} for {model.name} (gaits: {', '.join(phases)})")
        self.model, self.name, self.params = model, gait, params
        self.legs = robot_legs(model)
        self.lags = phases[gait]
        self.home = model.home_positions()
        n = params.points_per_cycle
        self.cycle_phases = np.arange(n + 1) / n  # the last sample closes the cycle
        self.unreached = 0  # samples whose foot point was out of the leg's reach
        #: per leg: (hip, knee) angles at each sample phase of the cycle (n + 1, 2)
        self._tables = {name: self._table(leg) for name, leg in self.legs.items()}

    def path(self, leg: Leg) -> EllipticPath:
        """The leg's foot path: the rules of thumb from its lengths, or the given ellipse."""
        p = self.params
        if p.foot_path == "rules_of_thumb":
            g = leg.geometry
            bend = math.radians(p.max_knee_bend_deg)
            nearest = math.sqrt(g.thigh ** 2 + g.shank ** 2 + 2.0 * g.thigh * g.shank * math.cos(bend))
            farthest = g.thigh + g.shank
            radius = (farthest - nearest) / 2.0
            return EllipticPath(p.centre_x, -(farthest + nearest) / 2.0, p.a_ratio * radius, radius, 1.0)
        height = leg.home_height if p.height is None else p.height
        return EllipticPath(p.centre_x, -height, p.half_stride, p.lift, p.stance_depth)

    def _table(self, leg: Leg) -> np.ndarray:
        p = self.params
        path = self.path(leg)
        table = np.empty((len(self.cycle_phases), 2))
        for i, u in enumerate(self.cycle_phases):
            x, z = path.point(2.0 * math.pi * u)
            angles = solve(leg.geometry, leg.joints.knee_points, x, z, math.radians(p.max_knee_bend_deg))
            self.unreached += 0 if angles.reached else 1
            table[i] = angles.hip, angles.knee
        return table

    @property
    def frequency(self) -> float:
        return self.params.frequency

    def fresh(self) -> IKGait:
        """The same gait (an IK gait has no state)."""
        return self

    def foot_point(self, leg: str, hip: float, knee: float) -> tuple[float, float]:
        return foot_point(self.legs[leg].geometry, hip, knee)

    def positions(self, t: float) -> np.ndarray:
        """Every joint's set-point at ``t`` s into the gait (joints outside the legs' pitch
        joints hold the home pose; the hip roll stays at 0)."""
        q = self.home.copy()
        index = self.model.joints.index
        for name, leg in self.legs.items():
            u = (self.params.frequency * t - self.lags[name]) % 1.0
            table = self._tables[name]
            q[index(leg.joints.hip)] = np.interp(u, self.cycle_phases, table[:, 0])
            q[index(leg.joints.knee)] = np.interp(u, self.cycle_phases, table[:, 1])
            q[index(leg.joints.roll)] = 0.0
        return np.clip(q, self.model.joints.lower, self.model.joints.upper)

    def samples(self, cycles: int) -> tuple[np.ndarray, np.ndarray]:
        """Times (s) and positions of ``cycles`` cycles at the sample points (a trajectory's points)."""
        period = 1.0 / self.params.frequency
        n = self.params.points_per_cycle
        times = np.arange(cycles * n + 1) * period / n
        return times, np.array([self.positions(t) for t in times])
