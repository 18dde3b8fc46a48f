"""CPG gaits: coupled non-linear oscillators (the quadruped report, platforms.md).

Each oscillator i has a state (x, v) and follows

    tau v' = -alpha ((x^2 + v^2 - E_i) / E_i) v - x + sum_j (a_ij x_j + b_ij v_j),   tau x' = v,

which, uncoupled, converges to the limit cycle x = sqrt(E_i) sin(t / tau + phi): period
2 pi tau (every oscillator shares tau, so one frequency f = 1 / (2 pi tau)), amplitude
sqrt(E_i). A joint's set-point is its offset plus x. Coupling weights in [-0.7, 0.7]
synchronise the oscillators (the report's range); with this equation a negative weight
on x pulls two oscillators into phase and a positive one into anti-phase (the coupling
also shifts the amplitude and frequency a little: two oscillators at +-0.5 settle at
0.86 sqrt(E)). alpha = 0.7 and E = 1 are the report's figures' values.

One oscillator drives each leg's hip pitch and one its knee (eight in all). The coupling
structures of the reference's experiments:

- ``independent``: no coupling between legs; each leg's knee follows its hip (one weight);
- ``paired``: in addition the legs of each diagonal pair drive each other's hip (one weight);
- ``symmetric``: every hip drives every other hip with one weight, the same for all pairs.

The oscillators are integrated with a fixed sub-step (semi-implicit Euler, 1 ms by
default), so a run is a deterministic function of its parameters and initial state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from humanoid_core.quadruped_gaits.patterns import GaitError, robot_legs
from humanoid_description import RobotModel

#: The report's coupling range: weights beyond it are refused.
COUPLING_LIMIT = 0.7
STRUCTURES = ("independent", "paired", "symmetric")
#: Diagonal leg pairs (the trot's) for the ``paired`` structure.
DIAGONALS = (("front_left", "back_right"), ("front_right", "back_left"))


@dataclass(frozen=True)
class CPGParameters:
    """What a CPG gait is made of (the search space of a gait optimisation)."""

    frequency: float = 1.0  # Hz: tau = 1 / (2 pi f)
    alpha: float = 0.7  # convergence rate to the limit cycle (the report's)
    hip_amplitude: float = 0.25  # rad, sqrt(E) of the hip oscillators
    knee_amplitude: float = 0.2  # rad, sqrt(E) of the knee oscillators
    hip_offset: float = 0.0  # rad, added to the home pose's hip pitch
    knee_offset: float = 0.0  # rad, added to the home pose's knee
    knee_coupling: float = -0.5  # a (x) weight, hip -> knee of the same leg (negative: in phase)
    leg_coupling: float = -0.5  # a (x) weight between legs (paired / symmetric; negative: in phase)
    structure: str = "paired"
    initial_phases: tuple[float, ...] = field(default=(0.0, math.pi, math.pi, 0.0))  # rad, per leg's hip

    def __post_init__(self) -> None:
        if self.structure not in STRUCTURES:
            raise GaitError(f"unknown coupling structure {self.structure!r} ({', '.join(STRUCTURES)})")
        if not self.frequency > 0.0 or not self.alpha > 0.0:
            raise GaitError(f"frequency and alpha must be > 0 (got {self.frequency}, {self.alpha})")
        for name in ("hip_amplitude", "knee_amplitude"):
            if not getattr(self, name) > 0.0:
                raise GaitError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("knee_coupling", "leg_coupling"):
            if abs(getattr(self, name)) > COUPLING_LIMIT:
                raise GaitError(f"{name} {getattr(self, name)} is outside [-{COUPLING_LIMIT}, {COUPLING_LIMIT}]")

    @property
    def tau(self) -> float:
        return 1.0 / (2.0 * math.pi * self.frequency)


#: The box a gait search explores, per searched :class:`CPGParameters` field (rad, Hz):
#: the reference's 0.5-2 Hz and coupling range; amplitudes up to about a quarter of the
#: AX-12's 300 deg; offsets that keep the legs under the body. ``alpha``, the structure and
#: the initial phases (a trot's) are not searched.
SEARCH_BOUNDS: dict[str, tuple[float, float]] = {
    "frequency": (0.5, 2.0),
    "hip_amplitude": (0.05, 0.5),
    "knee_amplitude": (0.05, 0.5),
    "hip_offset": (-0.3, 0.3),
    "knee_offset": (-0.3, 0.3),
    "knee_coupling": (-COUPLING_LIMIT, COUPLING_LIMIT),
    "leg_coupling": (-COUPLING_LIMIT, COUPLING_LIMIT),
}


def search_box() -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper corners of the search box (``SEARCH_BOUNDS`` order)."""
    return (np.array([low for low, _ in SEARCH_BOUNDS.values()]),
            np.array([high for _, high in SEARCH_BOUNDS.values()]))


def parameters_from_vector(vector: np.ndarray, structure: str) -> CPGParameters:
    """The gait at a point of the search box (``SEARCH_BOUNDS`` order)."""
    if len(vector) != len(SEARCH_BOUNDS):
        raise GaitError(f"a search point has {len(SEARCH_BOUNDS)} values ({', '.join(SEARCH_BOUNDS)}), "
                        f"got {len(vector)}")
    values = {name: float(value) for name, value in zip(SEARCH_BOUNDS, vector, strict=True)}
    return CPGParameters(structure=structure, **values)


#: How a link's input is scaled by its sender's state (eq 12 against eq 14, whose divisor the
#: report lost): ``energy`` divides by sqrt(E_j) (the reading the reference favours), ``state``
#: by sqrt(x_j^2 + v_j^2) (the other candidate), ``none`` is eq 12 (no normalisation).
NORMALISATIONS = ("energy", "state", "none")
#: Below this radius a ``state``-normalised sender sends nothing (its divisor would be 0).
STATE_FLOOR = 1e-9


class OscillatorNetwork:
    """N coupled oscillators with coupling matrices ``a`` (on x) and ``b`` (on v): eq 12-13 of
    the report, or eq 14 with ``normalisation``, so that a link's input does not grow with its
    sender's amplitude. ``tau`` is one value or one per oscillator."""

    def __init__(self, tau: float | np.ndarray, alpha: float, energy: np.ndarray, a: np.ndarray, b: np.ndarray,
                 x: np.ndarray, v: np.ndarray, substep: float = 0.001, normalisation: str = "none") -> None:
        if normalisation not in NORMALISATIONS:
            raise GaitError(f"unknown normalisation {normalisation!r} ({', '.join(NORMALISATIONS)})")
        self.alpha, self.substep, self.normalisation = alpha, substep, normalisation
        self.energy = np.asarray(energy, dtype=float)
        self.tau = np.broadcast_to(np.asarray(tau, dtype=float), self.energy.shape).copy()
        self.a, self.b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        self.x, self.v = np.array(x, dtype=float), np.array(v, dtype=float)
        self.time = 0.0

    def coupling_input(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """sum_j (a_ij x_j + b_ij v_j), each sender's state divided as ``normalisation`` says."""
        if self.normalisation == "energy":
            scale = 1.0 / np.sqrt(self.energy)
        elif self.normalisation == "state":
            radius = np.sqrt(x * x + v * v)
            scale = np.where(radius > STATE_FLOOR, 1.0 / np.maximum(radius, STATE_FLOOR), 0.0)
        else:
            return self.a @ x + self.b @ v
        return self.a @ (x * scale) + self.b @ (v * scale)

    def advance(self, seconds: float) -> np.ndarray:
        """Integrate ``seconds`` further; returns x. Semi-implicit Euler, the damping term taken at
        the new v: an oscillator driven far outside a small limit cycle (x^2 >> E, a strong link
        into a small sqrt(E)) is damped at a rate of alpha x^2 / (E tau), beyond what an explicit
        step of 1 ms keeps stable (it diverged in searches); implicitly it stays bounded."""
        steps = max(1, round(seconds / self.substep))
        dt = seconds / steps
        for _ in range(steps):
            x, v = self.x, self.v
            damping = self.alpha * (x * x + v * v - self.energy) / self.energy
            drive = -x + self.coupling_input(x, v)
            self.v = (v + dt * drive / self.tau) / (1.0 + dt * damping / self.tau)
            self.x = x + dt * self.v / self.tau
        self.time += seconds
        return self.x


class CPGGait:
    """Joint set-points from an oscillator network driving the legs' hip and knee pitch.

    :meth:`positions` must be asked at non-decreasing times (it integrates forward), as a
    control loop does; the hip roll joints stay at 0 and the other joints at home."""

    def __init__(self, model: RobotModel, params: CPGParameters, substep: float = 0.001) -> None:
        self.model, self.params = model, params
        self.legs = robot_legs(model)
        names = tuple(self.legs)
        if len(params.initial_phases) != len(names):
            raise GaitError(f"{len(params.initial_phases)} initial phases for {len(names)} legs")
        index = model.joints.index
        self._hips = np.array([index(self.legs[n].joints.hip) for n in names])
        self._knees = np.array([index(self.legs[n].joints.knee) for n in names])
        self._rolls = np.array([index(self.legs[n].joints.roll) for n in names])
        self.home = model.home_positions()
        n = len(names)
        energy = np.array([params.hip_amplitude ** 2] * n + [params.knee_amplitude ** 2] * n)
        a = coupling_matrix(params, names)
        phases = np.array(params.initial_phases, dtype=float)
        # start on the limit cycle: x = sqrt(E) sin(phase), v = tau x' = sqrt(E) cos(phase); knees a quarter later
        phases = np.concatenate([phases, phases + math.pi / 2])
        amplitude = np.sqrt(energy)
        self.network = OscillatorNetwork(params.tau, params.alpha, energy, a, np.zeros_like(a),
                                         amplitude * np.sin(phases), amplitude * np.cos(phases), substep)
        self._last = 0.0

    @property
    def frequency(self) -> float:
        return self.params.frequency

    def fresh(self) -> CPGGait:
        """The same gait at its start."""
        return CPGGait(self.model, self.params, self.network.substep)

    def positions(self, t: float) -> np.ndarray:
        if t < self._last - 1e-12:
            raise GaitError(f"a CPG runs forward: asked for t = {t} after {self._last}")
        x = self.network.advance(t - self._last) if t > self._last else self.network.x
        self._last = t
        n = len(self._hips)
        q = self.home.copy()
        q[self._hips] += self.params.hip_offset + x[:n]
        q[self._knees] += self.params.knee_offset + x[n:]
        q[self._rolls] = 0.0
        return np.clip(q, self.model.joints.lower, self.model.joints.upper)


def coupling_matrix(params: CPGParameters, legs: tuple[str, ...]) -> np.ndarray:
    """The ``a`` matrix (hips first, then knees, legs in ``legs`` order) of the structure."""
    n = len(legs)
    a = np.zeros((2 * n, 2 * n))
    for i in range(n):
        a[n + i, i] = params.knee_coupling  # each knee follows its own hip
    position = {name: i for i, name in enumerate(legs)}
    if params.structure == "paired":
        for first, second in DIAGONALS:
            i, j = position[first], position[second]
            a[i, j] = a[j, i] = params.leg_coupling
    elif params.structure == "symmetric":
        for i in range(n):
            for j in range(n):
                if i != j:
                    a[i, j] = params.leg_coupling
    return a
