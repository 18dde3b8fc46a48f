"""``humanoid bench lockstep``'s bound from the CPU the graph takes and its spread over several
runs (the benchmark itself runs the whole graph and is a command, not a test)."""

import math

import pytest

from humanoid_experiments.bench import cpu_bound, spread, spread_text


def test_the_cpu_bound_is_the_cores_over_the_graphs_cpu_per_simulated_second():
    # the figures of a measured run (docs/lockstep.md): 1.27 CPU s per simulated s in all
    measured = {"humanoid_sim": 0.64, "balance_monitor": 0.13, "walk_controller": 0.13, "humanoid_recorder": 0.11,
                "humanoid_bench_lockstep": 0.10, "self_collision_checker": 0.08, "energy_monitor": 0.05,
                "trajectory_generator": 0.03}
    assert cpu_bound(measured, 2) == pytest.approx(2.0 / 1.27)
    assert cpu_bound(measured, 4) == pytest.approx(2.0 * cpu_bound(measured, 2))
    assert cpu_bound({"humanoid_sim": 0.5, "walk_controller": 0.5}, 2) == pytest.approx(2.0)
    assert math.isinf(cpu_bound({}, 2))


def test_several_runs_give_each_ratio_its_median_and_range():
    # three runs' ratios as a shared machine gives them (docs/graph_cost.md, "Fewer trajectories")
    runs = [{"ratio": 0.578, "cost_vs_physics": 2.89, "rtf_realtime": 1.0},
            {"ratio": 0.419, "cost_vs_physics": 3.94, "rtf_realtime": 1.02},
            {"ratio": 0.527, "cost_vs_physics": 3.13, "rtf_realtime": 0.99}]
    ratios = spread(runs)
    assert ratios["ratio"] == {"median": 0.527, "min": 0.419, "max": 0.578}
    assert ratios["cost_vs_physics"] == {"median": 3.13, "min": 2.89, "max": 3.94}
    assert ratios["rtf_realtime"] == {"median": 1.0, "min": 0.99, "max": 1.02}
    printed = spread_text(ratios)
    assert "lockstep / raw (goal >= 0.5)" in printed and "0.527  (0.419 - 0.578)" in printed
    assert "graph CPU / physics (goal <= 2)" in printed and "3.130  (2.890 - 3.940)" in printed
