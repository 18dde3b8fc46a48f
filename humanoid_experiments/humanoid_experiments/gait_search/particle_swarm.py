"""Particle swarm optimisation (maximising), asked and told one iteration at a time.

The quadruped report's swarm (eq 15-16, 50 particles, 240 iterations):

    v <- w v + phi_p r_p (personal best - x) + phi_n r_n (neighbourhood best - x),   x <- x + v

with r_p, r_n uniform in [0, 1) per particle and dimension, the inertia w decreased over the
run (Shi and Eberhart: linearly from ``inertia_start`` to ``inertia_end``), and a
**geometrical neighbourhood**: each particle's neighbourhood best is the best personal best
among its ``neighbours`` nearest particles in parameter space (itself included), recomputed
every iteration, so that a swarm spread over several hills climbs each instead of rushing to
the one best found first. ``neighbourhood: global`` is the usual global-best swarm (every
particle's neighbourhood is the whole swarm). The report keeps neither phi_p, phi_n, the
inertia's values nor the neighbourhood's size: they are settings (the robot's cpg.yaml).
The velocity is clamped to a fraction of the box and the position to the box (a particle
that hits a wall stops there).

Written here rather than taken from a library: the search needs an ask/tell loop whose
whole state (swarm, bests, random generator) is plain data that can be saved after every
iteration and resumed bit for bit, and the evaluations farmed out to Ray; the PSO
packages on PyPI (pyswarms, ...) own the loop and call the fitness themselves.

A run is a deterministic function of its seed and of the fitness values it is told.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class SwarmError(ValueError):
    """A swarm asked for something it cannot do (bad bounds, wrong number of fitnesses ...)."""


#: Whose best a particle follows: its nearest particles', or the whole swarm's.
NEIGHBOURHOODS = ("geometric", "global")


@dataclass(frozen=True)
class SwarmSettings:
    """The swarm's constants (the usual values: w from 0.9 to 0.4, c1 = c2 = 2)."""

    particles: int = 50
    iterations: int = 240
    inertia_start: float = 0.9
    inertia_end: float = 0.4
    cognitive: float = 2.0  # phi_p, pull towards the particle's own best
    social: float = 2.0  # phi_n, pull towards its neighbourhood's best
    max_velocity: float = 0.2  # fraction of each dimension's range per iteration
    neighbourhood: str = "global"
    neighbours: int = 5  # geometric: the neighbourhood's size, the particle itself included

    def __post_init__(self) -> None:
        if self.particles < 1 or self.iterations < 1:
            raise SwarmError(f"particles and iterations must be >= 1 (got {self.particles}, {self.iterations})")
        if not 0.0 < self.max_velocity <= 1.0:
            raise SwarmError(f"max_velocity is a fraction of the range in (0, 1], got {self.max_velocity}")
        if self.neighbourhood not in NEIGHBOURHOODS:
            raise SwarmError(f"unknown neighbourhood {self.neighbourhood!r} ({', '.join(NEIGHBOURHOODS)})")
        if self.neighbours < 1:
            raise SwarmError(f"a neighbourhood holds at least the particle itself, got {self.neighbours}")

    def inertia(self, iteration: int) -> float:
        """w at ``iteration`` (0-based): linear from start to end over the run."""
        share = iteration / max(1, self.iterations - 1)
        return self.inertia_start + (self.inertia_end - self.inertia_start) * min(1.0, share)


class ParticleSwarm:
    """Ask positions, evaluate them anywhere, tell their fitness; repeat ``iterations`` times."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, settings: SwarmSettings, seed: int) -> None:
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        if self.lower.shape != self.upper.shape or self.lower.ndim != 1 or not np.all(self.upper > self.lower):
            raise SwarmError("bounds must be two vectors of one length with upper > lower")
        self.settings = settings
        self.rng = np.random.default_rng(seed)
        n, d = settings.particles, self.lower.size
        span = self.upper - self.lower
        self.positions = self.lower + self.rng.random((n, d)) * span
        self.velocities = (self.rng.random((n, d)) - 0.5) * span * settings.max_velocity
        self.best_positions = self.positions.copy()
        self.best_fitness = np.full(n, -np.inf)
        self.iteration = 0  # iterations told so far

    @property
    def finished(self) -> bool:
        return self.iteration >= self.settings.iterations

    @property
    def global_best(self) -> tuple[np.ndarray, float]:
        """The best position found so far and its fitness (-inf before the first tell)."""
        i = int(np.argmax(self.best_fitness))
        return self.best_positions[i].copy(), float(self.best_fitness[i])

    def ask(self) -> np.ndarray:
        """The positions to evaluate in this iteration (one row per particle)."""
        if self.finished:
            raise SwarmError(f"the swarm has run its {self.settings.iterations} iterations")
        return self.positions.copy()

    def tell(self, fitness: np.ndarray) -> None:
        """The fitness of each position :meth:`ask` returned (higher is better); moves the swarm."""
        fitness = np.asarray(fitness, dtype=float)
        if fitness.shape != (self.settings.particles,) or not np.all(np.isfinite(fitness)):
            raise SwarmError(f"need {self.settings.particles} finite fitness values, got {fitness!r}")
        improved = fitness > self.best_fitness
        self.best_positions[improved] = self.positions[improved]
        self.best_fitness[improved] = fitness[improved]
        leaders = self.neighbourhood_bests()
        s = self.settings
        r1, r2 = self.rng.random(self.positions.shape), self.rng.random(self.positions.shape)
        velocities = (s.inertia(self.iteration) * self.velocities
                      + s.cognitive * r1 * (self.best_positions - self.positions)
                      + s.social * r2 * (leaders - self.positions))
        limit = (self.upper - self.lower) * s.max_velocity
        self.velocities = np.clip(velocities, -limit, limit)
        moved = self.positions + self.velocities
        self.positions = np.clip(moved, self.lower, self.upper)
        self.velocities[moved != self.positions] = 0.0  # stopped by a wall
        self.iteration += 1

    def neighbourhoods(self) -> np.ndarray:
        """Per particle, the indices of its neighbourhood (nearest first, itself included):
        its ``neighbours`` nearest particles by their current positions (each dimension scaled
        to its range), or every particle."""
        n = self.settings.particles
        if self.settings.neighbourhood == "global":
            return np.tile(np.arange(n), (n, 1))
        size = min(self.settings.neighbours, n)
        scaled = (self.positions - self.lower) / (self.upper - self.lower)
        distances = np.linalg.norm(scaled[:, None, :] - scaled[None, :, :], axis=2)
        distances[np.arange(n), np.arange(n)] = -1.0  # a particle is its own nearest
        return np.argsort(distances, axis=1, kind="stable")[:, :size]

    def neighbourhood_bests(self) -> np.ndarray:
        """Per particle, the best personal best of its neighbourhood (one row per particle)."""
        members = self.neighbourhoods()
        chosen = members[np.arange(len(members)), np.argmax(self.best_fitness[members], axis=1)]
        return self.best_positions[chosen]

    # -- saving and resuming -------------------------------------------------------------
    def state(self) -> dict:
        """Everything needed to go on exactly where the swarm is (JSON-compatible)."""
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist(),
                "settings": self.settings.__dict__.copy(), "iteration": self.iteration,
                "positions": self.positions.tolist(), "velocities": self.velocities.tolist(),
                "best_positions": self.best_positions.tolist(),
                "best_fitness": [None if not np.isfinite(f) else float(f) for f in self.best_fitness],
                "rng": self.rng.bit_generator.state}

    @classmethod
    def from_state(cls, state: dict) -> ParticleSwarm:
        """The swarm :meth:`state` saved. SwarmError when ``state`` is not one (an entry missing
        or of the wrong type, arrays not of the swarm's particles x dimensions): a swarm
        resumed from it would fail at its first iteration, or go on with garbage."""
        try:
            return cls._restore(state)
        except KeyError as error:
            raise SwarmError(f"not a saved swarm: no {error.args[0]!r}") from None
        except (TypeError, ValueError) as error:
            raise SwarmError(f"not a saved swarm: {error}") from None

    @classmethod
    def _restore(cls, state: dict) -> ParticleSwarm:
        swarm = cls.__new__(cls)
        swarm.lower, swarm.upper = np.array(state["lower"], dtype=float), np.array(state["upper"], dtype=float)
        if swarm.lower.ndim != 1 or swarm.lower.shape != swarm.upper.shape or not np.all(swarm.upper > swarm.lower):
            raise SwarmError("bounds must be two vectors of one length with upper > lower")
        swarm.settings = SwarmSettings(**state["settings"])
        shape = (swarm.settings.particles, swarm.lower.size)
        swarm.positions, swarm.velocities, swarm.best_positions = (
            _array(state, name, shape) for name in ("positions", "velocities", "best_positions"))
        swarm.best_fitness = _array({"best_fitness": [-np.inf if f is None else f for f in state["best_fitness"]]},
                                    "best_fitness", shape[:1])
        swarm.iteration = state["iteration"]
        if not isinstance(swarm.iteration, int) or not 0 <= swarm.iteration <= swarm.settings.iterations:
            raise SwarmError(f"iteration must be an integer from 0 to {swarm.settings.iterations}, "
                             f"got {swarm.iteration!r}")
        swarm.rng = np.random.default_rng()
        swarm.rng.bit_generator.state = state["rng"]
        return swarm


def _array(state: dict, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """``state[name]`` as an array of ``shape`` (particles x dimensions, or particles)."""
    array = np.array(state[name], dtype=float)
    if array.shape != shape:
        raise SwarmError(f"{name} has the shape {array.shape}, not {shape} (particles x dimensions)")
    return array
