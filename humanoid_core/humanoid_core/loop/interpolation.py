"""Interpolation laws between trajectory points, each implemented once.

Every law maps a segment ``[t0, t1]`` with boundary conditions to position, velocity
and acceleration at time ``t``; all are vectorised over joints (numpy arrays) and
depend only on ``t - t0`` (time-shift invariant).

- ``LINEAR``: positions only (constant velocity, zero acceleration);
- ``CUBIC``: positions and velocities at both ends (Hermite cubic);
- ``QUINTIC``: positions, velocities and accelerations at both ends;
- ``TWO_SEGMENT``: the constant-acceleration reference generator of Lima et al.:
  two halves of constant acceleration joined at the midpoint velocity
  ``wm = ((w1 + w2)(t1 - t2) + 4 (p2 - p1)) / (2 (t2 - t1))``, with the misprint of
  the paper corrected (the second half accelerates from ``wm`` to ``w2``).

:class:`Spline` strings segments together; when no law is given it picks one from
the data like ros2_controllers' trajectory controller (positions only: linear, with
velocities: cubic, with accelerations: quintic).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Sample = tuple[np.ndarray, np.ndarray, np.ndarray]  # position, velocity, acceleration


class Law(enum.Enum):
    LINEAR = "linear"
    CUBIC = "cubic"
    QUINTIC = "quintic"
    TWO_SEGMENT = "two_segment"

    @classmethod
    def parse(cls, name: str) -> Law:
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(law.value for law in cls)
            raise ValueError(f"unknown interpolation law {name!r} (known: {known})") from None


def linear(t: float, t0: float, t1: float, p0: np.ndarray, p1: np.ndarray) -> Sample:
    duration = t1 - t0
    velocity = (p1 - p0) / duration
    return p0 + velocity * (t - t0), velocity, np.zeros_like(p0)


def cubic(t: float, t0: float, t1: float, p0: np.ndarray, v0: np.ndarray,
          p1: np.ndarray, v1: np.ndarray) -> Sample:
    """Hermite cubic: matches position and velocity at both ends."""
    h, s = t1 - t0, t - t0
    c2 = (3.0 * (p1 - p0) / h - 2.0 * v0 - v1) / h
    c3 = (2.0 * (p0 - p1) / h + v0 + v1) / (h * h)
    return (p0 + v0 * s + c2 * s**2 + c3 * s**3,
            v0 + 2.0 * c2 * s + 3.0 * c3 * s**2,
            2.0 * c2 + 6.0 * c3 * s)


def quintic(t: float, t0: float, t1: float, p0: np.ndarray, v0: np.ndarray, a0: np.ndarray,
            p1: np.ndarray, v1: np.ndarray, a1: np.ndarray) -> Sample:
    """Quintic: matches position, velocity and acceleration at both ends."""
    h, s = t1 - t0, t - t0
    c3 = (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h**2) / (2.0 * h**3)
    c4 = (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h**2) / (2.0 * h**4)
    c5 = (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * h - (a0 - a1) * h**2) / (2.0 * h**5)
    return (p0 + v0 * s + 0.5 * a0 * s**2 + c3 * s**3 + c4 * s**4 + c5 * s**5,
            v0 + a0 * s + 3.0 * c3 * s**2 + 4.0 * c4 * s**3 + 5.0 * c5 * s**4,
            a0 + 6.0 * c3 * s + 12.0 * c4 * s**2 + 20.0 * c5 * s**3)


def two_segment_mid_velocity(t1: float, t2: float, p1: np.ndarray, w1: np.ndarray,
                             p2: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """The velocity ``wm`` reached at the segment's midpoint."""
    return ((w1 + w2) * (t1 - t2) + 4.0 * (p2 - p1)) / (2.0 * (t2 - t1))


def two_segment(t: float, t1: float, t2: float, p1: np.ndarray, w1: np.ndarray,
                p2: np.ndarray, w2: np.ndarray) -> Sample:
    """Constant acceleration on each half of ``[t1, t2]`` (Lima et al., corrected)."""
    tm = 0.5 * (t1 + t2)
    wm = two_segment_mid_velocity(t1, t2, p1, w1, p2, w2)
    first_acc = (wm - w1) / (tm - t1)
    if t <= tm:
        tau = t - t1
        return p1 + w1 * tau + 0.5 * first_acc * tau**2, w1 + first_acc * tau, first_acc
    second_acc = (w2 - wm) / (t2 - tm)
    half = tm - t1
    p_mid = p1 + w1 * half + 0.5 * first_acc * half**2
    tau = t - tm
    return p_mid + wm * tau + 0.5 * second_acc * tau**2, wm + second_acc * tau, second_acc


@dataclass(frozen=True)
class Spline:
    """A piecewise trajectory through points, sampled with one interpolation law.

    ``times`` (n,) strictly increasing; ``positions`` (n, j); ``velocities`` and
    ``accelerations`` (n, j) or None. Laws that need velocities/accelerations treat
    missing ones as zero (a stop at every point).
    """

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None
    accelerations: np.ndarray | None = None
    law: Law | None = None

    @classmethod
    def build(cls, times: Sequence[float], positions: Sequence[Sequence[float]],
              velocities: Sequence[Sequence[float]] | None = None,
              accelerations: Sequence[Sequence[float]] | None = None,
              law: Law | None = None) -> Spline:
        t = np.asarray(times, dtype=float)
        p = np.asarray(positions, dtype=float).reshape(len(t), -1)
        v = None if velocities is None else np.asarray(velocities, dtype=float).reshape(p.shape)
        a = None if accelerations is None else np.asarray(accelerations, dtype=float).reshape(p.shape)
        if len(t) == 0:
            raise ValueError("a spline needs at least one point")
        if np.any(np.diff(t) <= 0.0):
            raise ValueError("spline times must be strictly increasing")
        return cls(t, p, v, a, law)

    @property
    def effective_law(self) -> Law:
        if self.law is not None:
            return self.law
        if self.accelerations is not None:
            return Law.QUINTIC
        if self.velocities is not None:
            return Law.CUBIC
        return Law.LINEAR

    @property
    def start_time(self) -> float:
        return float(self.times[0])

    @property
    def end_time(self) -> float:
        return float(self.times[-1])

    def _velocity(self, i: int) -> np.ndarray:
        return np.zeros(self.positions.shape[1]) if self.velocities is None else self.velocities[i]

    def _acceleration(self, i: int) -> np.ndarray:
        return np.zeros(self.positions.shape[1]) if self.accelerations is None else self.accelerations[i]

    def segment_index(self, t: float) -> int:
        """Index i of the segment [times[i], times[i+1]] containing t (clamped)."""
        # min/max on a Python int: np.clip's value, without its wrappers (sampled every control cycle)
        return min(max(int(np.searchsorted(self.times, t, side="right")) - 1, 0), len(self.times) - 2)

    def sample(self, t: float) -> Sample:
        """Position, velocity, acceleration at ``t``; held constant outside the span. The first
        point belongs to the span: a run taking over at its first point's time moves off at
        that point's velocity (a zero there, one control cycle of standstill, jolted a walk
        at every new trajectory)."""
        if len(self.times) == 1 or t < self.times[0]:
            return self.positions[0].copy(), self._velocity(0) * 0.0, self._acceleration(0) * 0.0
        if t >= self.times[-1]:
            last = len(self.times) - 1
            return self.positions[last].copy(), self._velocity(last) * 0.0, self._acceleration(last) * 0.0
        i = self.segment_index(t)
        t0, t1 = float(self.times[i]), float(self.times[i + 1])
        p0, p1 = self.positions[i], self.positions[i + 1]
        law = self.effective_law
        if law is Law.LINEAR:
            return linear(t, t0, t1, p0, p1)
        if law is Law.CUBIC:
            return cubic(t, t0, t1, p0, self._velocity(i), p1, self._velocity(i + 1))
        if law is Law.QUINTIC:
            return quintic(t, t0, t1, p0, self._velocity(i), self._acceleration(i),
                           p1, self._velocity(i + 1), self._acceleration(i + 1))
        return two_segment(t, t0, t1, p0, self._velocity(i), p1, self._velocity(i + 1))

    def sample_many(self, times: Sequence[float]) -> Sample:
        """Stacked samples (len(times), j) for each of position, velocity, acceleration: the
        values :meth:`sample` gives, computed for all times at once (a dense check of a long
        trajectory samples thousands of times)."""
        t = np.asarray(times, dtype=float)
        law = self.effective_law
        if len(self.times) == 1 or law is Law.TWO_SEGMENT or len(t) == 0:
            samples = [self.sample(float(x)) for x in t]
            joints = self.positions.shape[1]
            return tuple(np.array([s[k] for s in samples]).reshape(len(t), joints)  # type: ignore[return-value]
                         for k in range(3))
        i = np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 2)
        t0, t1 = self.times[i][:, None], self.times[i + 1][:, None]
        tc = np.clip(t, self.times[0], self.times[-1])[:, None]
        p0, p1 = self.positions[i], self.positions[i + 1]
        if law is Law.LINEAR:
            position, velocity, acceleration = linear(tc, t0, t1, p0, p1)
        else:
            v = np.zeros_like(self.positions) if self.velocities is None else self.velocities
            if law is Law.CUBIC:
                position, velocity, acceleration = cubic(tc, t0, t1, p0, v[i], p1, v[i + 1])
            else:
                a = np.zeros_like(self.positions) if self.accelerations is None else self.accelerations
                position, velocity, acceleration = quintic(tc, t0, t1, p0, v[i], a[i], p1, v[i + 1], a[i + 1])
        before, after = t < self.times[0], t >= self.times[-1]
        position = np.where(before[:, None], self.positions[0], np.where(after[:, None], self.positions[-1], position))
        still = (before | after)[:, None]
        return position, np.where(still, 0.0, velocity), np.where(still, 0.0, acceleration)
