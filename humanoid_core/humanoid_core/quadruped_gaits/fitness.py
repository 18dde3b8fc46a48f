"""The quadruped report's gait fitness (eq 17): how far and how much the body moved.

    P = alpha |p_N - p_1| + beta sum_(i=1)^(N-1) |p_(i+1) - p_i|

over the body's ground positions p_1 .. p_N sampled every ``sample_period`` (1 s: one sample
per cycle of a 1 Hz gait, at the same phase, so that vibrating in place earns nothing) for
``seconds`` (32 s: N = 33). The straight distance does not care which way: a gait that walks
backward scores as one that walks forward (the report's Exp 2 walked backward).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FitnessSettings:
    """Eq 17's weights and sampling (the robot's cpg.yaml ``fitness``)."""

    alpha: float = 1.0
    beta: float = 1.0
    sample_period: float = 1.0  # s
    seconds: float = 32.0  # s per run
    stop_at_fall: bool = False  # the report's runs went on after a fall (it says nothing of falls)

    def __post_init__(self) -> None:
        if not (self.sample_period > 0.0 and self.seconds > 0.0):
            raise ValueError(f"fitness: sample_period and seconds must be > 0, got {self.sample_period}, "
                             f"{self.seconds}")
        if not (math.isfinite(self.alpha) and math.isfinite(self.beta)):
            raise ValueError(f"fitness: alpha and beta must be finite, got {self.alpha}, {self.beta}")

    @classmethod
    def from_section(cls, section: dict) -> FitnessSettings:
        """From a configuration's ``fitness`` section (unknown keys refused by the dataclass)."""
        try:
            return cls(**section)
        except TypeError as error:
            raise ValueError(f"fitness: {error}") from None


def path_fitness(samples: np.ndarray | list | tuple, alpha: float = 1.0, beta: float = 1.0) -> float:
    """Eq 17 on ground positions p_1 .. p_N (rows of x, y): the straight start-to-end distance
    times alpha plus the path length times beta."""
    points = np.asarray(samples, dtype=float)
    if points.ndim != 2 or len(points) < 2:
        raise ValueError(f"eq 17 needs at least two positions, got {points.shape}")
    straight = float(np.linalg.norm(points[-1] - points[0]))
    path = float(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)))
    return alpha * straight + beta * path
