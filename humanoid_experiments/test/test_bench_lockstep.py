"""``humanoid bench lockstep``'s bound from the CPU the graph takes and its spread over several
runs (the benchmark itself runs the whole graph and is a command, not a test)."""

import math

import pytest

from humanoid_experiments.bench import cpu_bound, falls_text, spread, spread_text


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


#: A measured run (load 2.3, 2 cores) whose real-time walk the fall manager stopped: its figures
#: and outcomes, the CPU per process left out.
FELL_IN_REAL_TIME = {
    "robot": "hoap2", "physics": "reference", "distance_asked_m": 1.0, "rtf_lockstep": 0.836, "rtf_raw": 2.123,
    "ratio": 0.394, "distance_m": 1.0011, "drift_m": 0.2211, "graph_cpu_per_sim_s": 1.8568,
    "raw_cpu_per_sim_s": 0.4714, "cost_vs_physics": 3.939, "rtf_realtime": 1.005, "fell": False,
    "rtf_raw_runs": [1.317, 2.123], "cores": 2, "rtf_cpu_bound": 1.077, "load": [2.34, 3.17, 4.67],
    "realtime": {"real_time_factor_asked": 1.0, "distance_m": 0.7801, "fell": True, "walk_s": 7.69, "rtf": 1.005,
                 "result": "aborted: the fall manager: falling at t = 10.925 s", "cpu_per_sim_s": {},
                 "walk_controller_behind": False, "gate": None, "nodes": ["humanoid_sim", "control_container"]},
    "lockstep": {"distance_m": 1.0011, "fell": False, "result": "succeeded", "walk_s": 8.52, "rtf": 0.8361,
                 "cpu_per_sim_s": {}, "gate": None, "walk_controller_behind": False,
                 "nodes": ["humanoid_sim", "control_container"]},
}


def test_a_real_time_walk_that_fell_is_printed_with_its_result_and_counted():
    from humanoid_experiments.bench.lockstep import text

    printed = text(FELL_IN_REAL_TIME)
    assert "no in lockstep, YES in real time" in printed
    assert "succeeded in lockstep; aborted: the fall manager: falling at t = 10.925 s in real time" in printed
    standing = {**FELL_IN_REAL_TIME, "realtime": {**FELL_IN_REAL_TIME["realtime"], "fell": False}}
    assert " ".join(falls_text([FELL_IN_REAL_TIME, standing, standing]).split()) == \
        "walks that fell 0 of 3 in lockstep, 1 of 3 in real time"
