"""The in-memory motion every reader produces and every player consumes.

A :class:`Motion` is a list of keyframes for some joints of one robot: arrival time,
joint positions (rad, URDF joint names and conventions), optional velocities, an
optional hold (the keyframe is kept for that long after arrival), an optional label
and the feet that carry the robot there. The robot's own formats (HOAP-2 csv, Bioloid
poses and pages) and the project's keyframe YAML all map onto it, so that scaling,
sampling and playback exist once.

Conventions that make playback well defined:

- ``times`` are strictly increasing and non-negative; before ``times[0]`` the motion
  rests at its first keyframe;
- a keyframe's hold ends before the next keyframe's arrival
  (``times[i] + holds[i] < times[i + 1]``); the last hold extends the motion;
- a motion starts and ends at rest, and a held keyframe has zero velocity (otherwise
  the velocity would jump).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from humanoid_core.loop import Law, Spline
from humanoid_description import DataFileError

#: Which feet carry the robot at a keyframe (used by balance checks).
SUPPORTS: tuple[str, ...] = ("both", "right", "left")


class MotionError(ValueError):
    """A motion that cannot be played; the message names the file, the line and the problem."""

    def __init__(self, source: str | os.PathLike[str], problem: str, line: int | None = None) -> None:
        self.source = str(source)
        self.problem = problem
        self.line = line
        where = self.source if line is None else f"{self.source}:{line}"
        super().__init__(f"{where}: {problem}")

    @classmethod
    def from_data_file(cls, error: DataFileError) -> MotionError:
        """A data file reader's error (unreadable, not text, malformed line) as a MotionError."""
        return cls(error.path, error.problem, error.line)


@dataclass(frozen=True)
class JointPose:
    """One pose of a pose file as joint name -> position (rad), with the line it came from
    and the feet that carry the robot in it."""

    label: str
    positions: dict[str, float]
    line: int
    support: str = "both"


@dataclass(frozen=True, eq=False)
class Motion:
    """Keyframes of some joints of one robot (rad, s); see the module docstring."""

    name: str
    robot: str
    joint_names: tuple[str, ...]
    times: np.ndarray  # (n,)
    positions: np.ndarray  # (n, j)
    law: Law = Law.CUBIC
    velocities: np.ndarray | None = None  # (n, j); None = at rest at every keyframe
    holds: np.ndarray | None = None  # (n,); None = no holds
    labels: tuple[str, ...] = ()  # one per keyframe, or empty
    supports: tuple[str, ...] = ()  # one of SUPPORTS per keyframe, or empty (= both)
    description: str = ""
    source: str = field(default="<memory>")

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "joint_names", tuple(self.joint_names))
        set_(self, "times", np.asarray(self.times, dtype=float).reshape(-1))
        set_(self, "positions", np.asarray(self.positions, dtype=float).reshape(len(self.times), -1))
        if self.velocities is not None:
            set_(self, "velocities", np.asarray(self.velocities, dtype=float).reshape(self.positions.shape))
        if self.holds is not None:
            set_(self, "holds", np.asarray(self.holds, dtype=float).reshape(self.times.shape))
        set_(self, "labels", tuple(self.labels))
        set_(self, "supports", tuple(self.supports))
        problem = self._problem()
        if problem:
            raise MotionError(self.source, problem)

    def _problem(self) -> str | None:
        """What makes this motion unplayable, or None."""
        n, j = self.positions.shape
        if n == 0:
            return "a motion needs at least one keyframe"
        if j != len(self.joint_names) or len(set(self.joint_names)) != j:
            return f"{j} position columns for joints {list(self.joint_names)} (names must be unique)"
        if not isinstance(self.law, Law):
            return f"interpolation law must be a Law, got {self.law!r}"
        arrays = [("times", self.times), ("positions", self.positions),
                  ("velocities", self.velocities), ("holds", self.holds)]
        for name, values in arrays:
            if values is not None and not np.all(np.isfinite(values)):
                return f"{name} contain NaN or infinite values"
        if self.times[0] < 0.0 or np.any(np.diff(self.times) <= 0.0):
            return "keyframe times must be non-negative and strictly increasing"
        if self.holds is not None:
            if np.any(self.holds < 0.0):
                return "holds must be non-negative"
            if np.any(self.times[:-1] + self.holds[:-1] >= self.times[1:]):
                return "a keyframe's hold must end before the next keyframe's time"
        if self.labels and len(self.labels) != n:
            return f"{len(self.labels)} labels for {n} keyframes"
        if self.supports and (len(self.supports) != n or not set(self.supports) <= set(SUPPORTS)):
            return f"supports must be one of {', '.join(SUPPORTS)} per keyframe"
        if self.velocities is not None:
            resting = [0, n - 1] + ([] if self.holds is None else list(np.flatnonzero(self.holds > 0.0)))
            moving = [i for i in resting if np.any(self.velocities[i] != 0.0)]
            if moving:
                return (f"keyframe {moving[0]} must have zero velocity "
                        "(motions start and end at rest; held keyframes stand still)")
        return None

    # -- shape -------------------------------------------------------------------------
    @property
    def keyframe_count(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        """Time from the motion's start (t = 0) to the end of the last keyframe's hold."""
        return float(self.times[-1] + (0.0 if self.holds is None else self.holds[-1]))

    def label(self, index: int) -> str:
        return (self.labels[index] if self.labels else "") or f"keyframe {index}"

    def support(self, index: int) -> str:
        return self.supports[index] if self.supports else "both"

    def keyframe(self, index: int) -> dict[str, float]:
        """Joint name -> position (rad) of one keyframe."""
        return {name: float(v) for name, v in zip(self.joint_names, self.positions[index], strict=True)}

    # -- derived motions ---------------------------------------------------------------
    def stretched(self, factor: float) -> Motion:
        """The same path with every time multiplied by ``factor`` (> 1: slower)."""
        if not factor > 0.0 or not np.isfinite(factor):
            raise ValueError(f"time-stretch factor must be positive and finite, got {factor}")
        return replace(self, times=self.times * factor,
                       velocities=None if self.velocities is None else self.velocities / factor,
                       holds=None if self.holds is None else self.holds * factor)

    def select(self, joints: Sequence[str]) -> Motion:
        """The motion of a subset of its joints (in the given order)."""
        missing = [j for j in joints if j not in self.joint_names]
        if missing:
            raise MotionError(self.source, f"motion {self.name!r} has no joint(s) {', '.join(missing)}")
        columns = [self.joint_names.index(j) for j in joints]
        return replace(self, joint_names=tuple(joints), positions=self.positions[:, columns],
                       velocities=None if self.velocities is None else self.velocities[:, columns])

    # -- interpolation -----------------------------------------------------------------
    def knots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Spline knots: every keyframe, plus its end of hold when held (same position, at rest)."""
        if self.holds is None or not np.any(self.holds > 0.0):
            return self.times, self.positions, self.velocities
        times, positions, velocities = [], [], []
        zero = np.zeros(len(self.joint_names))
        for i, t in enumerate(self.times):
            v = zero if self.velocities is None else self.velocities[i]
            times.append(t)
            positions.append(self.positions[i])
            velocities.append(v)
            if self.holds[i] > 0.0:
                times.append(t + self.holds[i])
                positions.append(self.positions[i])
                velocities.append(zero)
        return np.array(times), np.array(positions), None if self.velocities is None else np.array(velocities)

    def spline(self) -> Spline:
        """The motion's path with its interpolation law (the one implementation in interpolation.py)."""
        times, positions, velocities = self.knots()
        return Spline.build(times, positions, velocities=velocities, law=self.law)


def joint_array(values: Mapping[str, float], joints: Sequence[str], source: str = "<current state>") -> np.ndarray:
    """Values of ``joints`` from a name -> value mapping; MotionError names any missing joint."""
    missing = [j for j in joints if j not in values]
    if missing:
        raise MotionError(source, f"no value for joint(s) {', '.join(missing)}")
    return np.array([float(values[j]) for j in joints])
