"""The report's fitness (eq 17) on known paths: the straight start-to-end distance times alpha
plus the sampled path's length times beta; a walk backward scores as one forward, and a walk
round a square back to its start earns only its path."""

import math

import pytest

from humanoid_core.quadruped_gaits import FitnessSettings, path_fitness


def test_a_straight_walk_scores_its_distance_twice():
    line = [(0.0, 0.0), (0.1, 0.0), (0.25, 0.0), (0.4, 0.0)]
    assert path_fitness(line) == pytest.approx(0.8)
    backward = [(-x, y) for x, y in line]
    assert path_fitness(backward) == pytest.approx(path_fitness(line))


def test_a_square_back_to_the_start_earns_only_its_path():
    square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)]
    assert path_fitness(square) == pytest.approx(4.0)
    assert path_fitness(square, alpha=2.0, beta=0.5) == pytest.approx(2.0)


def test_the_weights_apply_to_their_own_terms():
    corner = [(0.0, 0.0), (3.0, 0.0), (3.0, 4.0)]  # 5 m apart, 7 m of path
    assert path_fitness(corner, alpha=1.0, beta=0.0) == pytest.approx(5.0)
    assert path_fitness(corner, alpha=0.0, beta=1.0) == pytest.approx(7.0)
    assert path_fitness(corner) == pytest.approx(12.0)
    assert path_fitness([(0.0, 0.0), (0.0, 0.0)]) == 0.0


def test_bad_samples_and_settings_are_refused():
    with pytest.raises(ValueError, match="at least two positions"):
        path_fitness([(0.0, 0.0)])
    with pytest.raises(ValueError, match="must be > 0"):
        FitnessSettings(sample_period=0.0)
    with pytest.raises(ValueError, match="must be finite"):
        FitnessSettings(alpha=math.inf)
    with pytest.raises(ValueError, match="unexpected keyword"):
        FitnessSettings.from_section({"gamma": 1.0})
