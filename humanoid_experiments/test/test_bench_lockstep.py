"""``humanoid bench lockstep``'s bound from the CPU the graph takes (the benchmark itself runs
the whole graph and is a command, not a test)."""

import math

import pytest

from humanoid_experiments.bench import cpu_bound


def test_the_cpu_bound_is_the_cores_over_the_graphs_cpu_per_simulated_second():
    # the figures of a measured run (docs/lockstep.md): 1.27 CPU s per simulated s in all
    measured = {"humanoid_sim": 0.64, "balance_monitor": 0.13, "walk_controller": 0.13, "humanoid_recorder": 0.11,
                "humanoid_bench_lockstep": 0.10, "self_collision_checker": 0.08, "energy_monitor": 0.05,
                "trajectory_generator": 0.03}
    assert cpu_bound(measured, 2) == pytest.approx(2.0 / 1.27)
    assert cpu_bound(measured, 4) == pytest.approx(2.0 * cpu_bound(measured, 2))
    assert cpu_bound({"humanoid_sim": 0.5, "walk_controller": 0.5}, 2) == pytest.approx(2.0)
    assert math.isinf(cpu_bound({}, 2))
