"""Stepping between two poses of the quadruped: a leg at a time lifted and put down, the body
first shifted over the three feet that stand.

Why: a run that glides every joint at once from the stance to a gait's first set-point (one
diagonal pair forward, the other back) moves four standing feet against each other; the
ground settles it by turning the body a few degrees as the balls slip, a turn no joint reading
shows, so the odometry cannot see it (docs/walking.md, "Drift against the ground truth").
Stepping moves no standing foot against another:

- a **shift** moves every foot by the same distance along the body (hip pitch and knee, by the
  gaits' leg IK): the body translates over feet that stay where they are;
- a **swing** lifts one leg, carries its foot to its place in the target pose and puts it
  down while the three others stand still. The body's centre of mass is near the middle of
  the four feet, so lifting one leaves it near the diagonal of the three that stand: the
  body is first shifted back (the feet forward) before a front leg swings, forward before a
  back leg does, and the centre of mass is then inside the triangle of the standing feet
  (the Bioloid quadruped's by 4.6–11.8 mm with the default shift: docs/quadruped.md).

The order: shift back, the front legs, shift forward, the back legs, shift back to centre.
A transition steps only between two poses on four feet at one height (:meth:`Stepper.level`):
from a pose with a foot lifted (a gait stopped mid-cycle) or from within a stepped lead-in
(the body already shifted: a second shift would tip it over), a run glides instead.
Hip roll and every joint outside the legs' pitch joints move from the start to the target
over the whole path; the feet's heights (``z``) come from the two poses as well."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_core.loop import cubic
from humanoid_core.quadruped_gaits.leg_ik import foot_point, solve
from humanoid_core.quadruped_gaits.patterns import GaitError, Leg


@dataclass(frozen=True)
class SteppingSettings:
    """How far and how fast the body shifts and a leg swings (m, s)."""

    shift: float = 0.035  # m the feet move along the body before the front (+) and the back (-) legs swing
    lift: float = 0.02  # m a swinging foot rises at the middle of its swing
    swing_duration: float = 0.5  # s a leg's swing takes
    shift_duration: float = 0.6  # s a shift by ``shift`` takes (twice that from one side to the other)
    max_knee_bend_deg: float = 90.0  # the gaits' knee limit, for the leg IK

    def __post_init__(self) -> None:
        for name in ("shift", "lift"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0.0):
                raise GaitError(f"stepping {name} must be finite and >= 0 m, got {getattr(self, name)}")
        for name in ("swing_duration", "shift_duration"):
            if not getattr(self, name) > 0.0:
                raise GaitError(f"stepping {name} must be > 0 s, got {getattr(self, name)}")


#: m: the feet of a pose stand at one height when their heights differ by at most this.
LEVEL_TOLERANCE = 0.002


def _smooth(u: float) -> float:
    """0 to 1 over ``u`` in [0, 1], at rest at both ends: the rest-to-rest cubic of the loop's laws."""
    return float(cubic(min(max(u, 0.0), 1.0), 0.0, 1.0, 0.0, 0.0, 1.0, 0.0)[0])


class Stepper:
    """Set-points every ``period`` from one pose to another by shifts and swings (module docstring)."""

    def __init__(self, legs: dict[str, Leg], joint_index: dict[str, int], front: set[str],
                 settings: SteppingSettings, period: float) -> None:
        """``legs`` (:func:`~humanoid_core.quadruped_gaits.patterns.robot_legs`), each joint's column,
        and the names of the legs whose hips are in front of the body's middle."""
        if not period > 0.0:
            raise GaitError(f"the set-point period must be > 0, got {period}")
        self.legs, self.index, self.settings, self.period = legs, joint_index, settings, period
        self._front = front

    def feet(self, q: np.ndarray) -> dict[str, tuple[float, float]]:
        """Each leg's foot in pose ``q``: along the body and height from its hip (the gaits' leg IK)."""
        return {name: foot_point(leg.geometry, float(q[self.index[leg.joints.hip]]),
                                 float(q[self.index[leg.joints.knee]]))
                for name, leg in self.legs.items()}

    def level(self, q: np.ndarray) -> bool:
        """Whether every foot of pose ``q`` is at one height (nothing lifted): a pose to step from or to."""
        heights = [z for _x, z in self.feet(q).values()]
        return max(heights) - min(heights) <= LEVEL_TOLERANCE

    def between(self, start: np.ndarray, target: np.ndarray) -> np.ndarray | None:
        """The stepped transition as rows from ``start`` (row 0) to ``target`` (the last row), or
        None when either pose has a foot lifted (:meth:`level`): the run glides instead."""
        if not (self.level(start) and self.level(target)):
            return None
        return np.vstack([start, self.path(start, target)])

    def path(self, start: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Positions at each period after ``start`` up to ``target`` (the last row), one row each."""
        s = self.settings
        feet, goal = self.feet(start), self.feet(target)
        rows: list[np.ndarray] = []
        shift = 0.0
        for side in (+1.0, -1.0):
            swinging = [n for n in self.legs if (n in self._front) == (side > 0)]
            if not swinging:
                continue
            to = side * s.shift
            rows += self._shift(feet, shift, to)
            shift = to
            for name in swinging:
                rows += self._swing(feet, shift, name, goal[name])
                feet[name] = goal[name]
        rows += self._shift(feet, shift, 0.0)
        # everything but the legs' pitch joints: from the start to the target over the whole path
        path = np.array(rows) if rows else np.empty((0, len(start)))
        pitch = [self.index[j] for leg in self.legs.values() for j in (leg.joints.hip, leg.joints.knee)]
        others = np.setdiff1d(np.arange(len(start)), pitch)
        for i in range(len(path)):
            u = _smooth((i + 1) / len(path))
            path[i, others] = start[others] + (target[others] - start[others]) * u
        if len(path):
            path[-1] = target  # exactly there (the IK of the target's own foot points gives it back)
        return path

    def _pose(self, feet: dict[str, tuple[float, float]], shift: float) -> np.ndarray:
        """Hip pitch and knee of every leg (a row of the joints, others zero) for its foot at
        ``feet`` moved ``shift`` along the body."""
        row = np.zeros(len(self.index))
        bend = math.radians(self.settings.max_knee_bend_deg)
        for name, (x, z) in feet.items():
            leg = self.legs[name]
            angles = solve(leg.geometry, leg.joints.knee_points, x + shift, z, bend)
            row[self.index[leg.joints.hip]], row[self.index[leg.joints.knee]] = angles.hip, angles.knee
        return row

    def _steps(self, duration: float) -> int:
        return max(1, math.ceil(duration / self.period - 1e-9))

    def _shift(self, feet: dict[str, tuple[float, float]], shift: float, to: float) -> list[np.ndarray]:
        if shift == to:
            return []
        distance = abs(to - shift) / self.settings.shift if self.settings.shift > 0.0 else 1.0
        n = self._steps(self.settings.shift_duration * distance)
        return [self._pose(feet, shift + (to - shift) * _smooth(i / n)) for i in range(1, n + 1)]

    def _swing(self, feet: dict[str, tuple[float, float]], shift: float, name: str,
               goal: tuple[float, float]) -> list[np.ndarray]:
        """The foot lifted, carried (in the middle three fifths of the swing) and put down."""
        (x0, z0), (x1, z1) = feet[name], goal
        n = self._steps(self.settings.swing_duration)
        rows = []
        for i in range(1, n + 1):
            u = i / n
            x = x0 + (x1 - x0) * _smooth((u - 0.2) / 0.6)
            z = z0 + (z1 - z0) * _smooth(u) + self.settings.lift * math.sin(math.pi * u)
            rows.append(self._pose({**feet, name: (x, z)}, shift))
        return rows


def path_velocities(path: np.ndarray, period: float, index: int) -> np.ndarray:
    """Row ``index`` of ``path``'s velocities: central differences, at rest at both ends."""
    if index <= 0 or index >= len(path) - 1:
        return np.zeros(path.shape[1])
    return (path[index + 1] - path[index - 1]) / (2.0 * period)


def robot_stepper(model, settings: SteppingSettings, period: float) -> Stepper:
    """The stepper of a robot with a ``legs`` section (the quadruped): its front legs are those
    whose hip pitch axis is ahead of the middle of the hips in the home pose."""
    from humanoid_core.quadruped_gaits.patterns import robot_legs

    legs = robot_legs(model)
    home = model.home_positions()
    hips = {n: float(model.frame_placement(model.joints[leg.joints.hip].child_link, home).translation[0])
            for n, leg in legs.items()}
    middle = sum(hips.values()) / len(hips)
    index = {name: model.joints.index(name) for name in model.joints.names}
    return Stepper(legs, index, {n for n, x in hips.items() if x > middle}, settings, period)
