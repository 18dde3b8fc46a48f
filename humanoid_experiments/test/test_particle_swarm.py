"""The particle swarm: it finds the top of a known function, stays in its box, decreases its
inertia as documented, and resumes from its saved state exactly where it was."""

import json

import numpy as np
import pytest

from humanoid_experiments.gait_search import ParticleSwarm, SwarmError, SwarmSettings

LOWER, UPPER = np.array([-1.0, 0.0, 10.0]), np.array([1.0, 5.0, 20.0])
TOP = np.array([0.3, 4.2, 12.5])


def hill(points: np.ndarray) -> np.ndarray:
    """A smooth function whose only maximum (0) is at TOP, scaled per dimension."""
    return -np.sum(((points - TOP) / (UPPER - LOWER)) ** 2, axis=1)


def run(swarm: ParticleSwarm, iterations: int | None = None) -> list[np.ndarray]:
    asked = []
    for _ in range(iterations or swarm.settings.iterations):
        points = swarm.ask()
        asked.append(points)
        assert np.all(points >= LOWER) and np.all(points <= UPPER)
        swarm.tell(hill(points))
    return asked


def test_the_swarm_climbs_to_the_top_of_a_known_hill():
    swarm = ParticleSwarm(LOWER, UPPER, SwarmSettings(particles=15, iterations=60), seed=3)
    first = hill(swarm.ask()).max()
    run(swarm)
    best, fitness = swarm.global_best
    assert swarm.finished
    assert fitness > first
    np.testing.assert_allclose(best, TOP, atol=0.01 * (UPPER - LOWER).max())


def test_a_top_on_the_box_wall_is_reached_and_never_crossed():
    global TOP
    saved, TOP = TOP, np.array([1.0, 0.0, 20.0])  # a corner
    try:
        swarm = ParticleSwarm(LOWER, UPPER, SwarmSettings(particles=10, iterations=40), seed=1)
        run(swarm)
        np.testing.assert_allclose(swarm.global_best[0], TOP, atol=0.02 * (UPPER - LOWER).max())
    finally:
        TOP = saved


def test_the_inertia_decreases_linearly_from_start_to_end():
    settings = SwarmSettings(iterations=5, inertia_start=0.9, inertia_end=0.4)
    assert [settings.inertia(i) for i in range(5)] == pytest.approx([0.9, 0.775, 0.65, 0.525, 0.4])


def test_a_saved_swarm_resumes_bit_for_bit():
    settings = SwarmSettings(particles=6, iterations=10)
    straight = ParticleSwarm(LOWER, UPPER, settings, seed=7)
    asked_straight = run(straight)
    interrupted = ParticleSwarm(LOWER, UPPER, settings, seed=7)
    asked_before = run(interrupted, 4)
    resumed = ParticleSwarm.from_state(json.loads(json.dumps(interrupted.state())))  # through a JSON file
    asked_after = run(resumed, 6)
    for a, b in zip(asked_straight, asked_before + asked_after, strict=True):
        np.testing.assert_array_equal(a, b)
    assert resumed.global_best[1] == straight.global_best[1]


def test_the_same_seed_gives_the_same_run_and_another_seed_another():
    settings = SwarmSettings(particles=5, iterations=3)
    one, two, other = (run(ParticleSwarm(LOWER, UPPER, settings, seed=s))[-1] for s in (4, 4, 5))
    np.testing.assert_array_equal(one, two)
    assert not np.array_equal(one, other)


def test_misuse_is_refused_with_a_reason():
    with pytest.raises(SwarmError, match="upper > lower"):
        ParticleSwarm(UPPER, LOWER, SwarmSettings(), seed=0)
    with pytest.raises(SwarmError, match=">= 1"):
        SwarmSettings(particles=0)
    swarm = ParticleSwarm(LOWER, UPPER, SwarmSettings(particles=3, iterations=1), seed=0)
    with pytest.raises(SwarmError, match="3 finite fitness"):
        swarm.tell(np.array([1.0, 2.0]))
    with pytest.raises(SwarmError, match="3 finite fitness"):
        swarm.tell(np.array([1.0, np.nan, 2.0]))
    swarm.tell(hill(swarm.ask()))
    with pytest.raises(SwarmError, match="has run its 1 iterations"):
        swarm.ask()


@pytest.mark.parametrize(("change", "reason"), [
    (lambda s: s.pop("rng"), "no 'rng'"),
    (lambda s: s.update(positions=s["positions"][:2]), r"positions has the shape \(2, 3\), not \(3, 3\)"),
    (lambda s: s.update(velocities=[[0.0]] * 3), r"velocities has the shape \(3, 1\)"),
    (lambda s: s.update(best_positions=[[0.0, "x"]] * 3), "could not convert string to float"),
    (lambda s: s.update(best_fitness=[1.0]), r"best_fitness has the shape \(1,\), not \(3,\)"),
    (lambda s: s.update(iteration=2.5), "iteration must be an integer from 0 to 4, got 2.5"),
    (lambda s: s.update(iteration=5), "iteration must be an integer from 0 to 4, got 5"),
    (lambda s: s.update(lower=[0.0, 0.0]), "bounds must be two vectors of one length"),
    (lambda s: s["settings"].update(particles="3"), "'<' not supported"),
    (lambda s: s.update(rng={"bit_generator": "nonsense"}), "state must be for a PCG64 RNG"),
])
def test_a_state_that_is_not_a_saved_swarm_is_refused_with_a_reason(change, reason):
    """A swarm resumed from a damaged or hand-edited state would fail at its first iteration,
    or go on with garbage: it is refused when it is read."""
    state = json.loads(json.dumps(ParticleSwarm(LOWER, UPPER, SwarmSettings(particles=3, iterations=4),
                                                seed=0).state()))
    change(state)
    with pytest.raises(SwarmError, match=f"not a saved swarm: .*{reason}"):
        ParticleSwarm.from_state(state)


def two_clusters(neighbourhood: str) -> tuple[ParticleSwarm, np.ndarray, np.ndarray]:
    """A swarm of 10 in [0, 1]^2: 5 particles around (0.1, 0.1) whose best is 1, 5 around
    (0.9, 0.9) whose best is 10 (the swarm's); told once with no inertia and no pull to their
    own bests, so that each moves only towards its neighbourhood's best."""
    settings = SwarmSettings(particles=10, iterations=2, inertia_start=0.0, inertia_end=0.0, cognitive=0.0,
                             social=2.0, max_velocity=1.0, neighbourhood=neighbourhood, neighbours=5)
    swarm = ParticleSwarm(np.zeros(2), np.ones(2), settings, seed=2)
    offsets = np.array([[0.0, 0.0], [0.03, 0.0], [0.0, 0.03], [-0.03, 0.0], [0.0, -0.03]])
    low, high = np.array([0.1, 0.1]), np.array([0.9, 0.9])
    swarm.positions = np.vstack([low + offsets, high + offsets])
    fitness = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0])
    swarm.tell(fitness)
    return swarm, low + offsets[1], high + offsets[2]


def test_a_geometric_neighbourhood_follows_its_own_clusters_best():
    swarm, low_best, high_best = two_clusters("geometric")
    swarm.positions = swarm.best_positions.copy()  # where they were told (tell moved them)
    leaders = swarm.neighbourhood_bests()
    np.testing.assert_array_equal(leaders[:5], np.tile(low_best, (5, 1)))
    np.testing.assert_array_equal(leaders[5:], np.tile(high_best, (5, 1)))
    swarm, _, _ = two_clusters("geometric")
    assert np.all(np.linalg.norm(swarm.positions[:5] - low_best, axis=1) < 0.1), "the low cluster left its best"
    assert np.all(np.linalg.norm(swarm.positions[5:] - high_best, axis=1) < 0.1)


def test_a_global_neighbourhood_pulls_every_particle_to_the_swarms_best():
    swarm, _, high_best = two_clusters("global")
    assert np.mean(np.linalg.norm(swarm.positions[:5] - high_best, axis=1)) < 0.9, "the low cluster stayed put"
    swarm.positions = swarm.best_positions.copy()
    np.testing.assert_array_equal(swarm.neighbourhood_bests(), np.tile(high_best, (10, 1)))
