"""`humanoid gaits --sweep --chart FILE`: the nine gaits of the report's Fig 29, each run
scored by eq 17 and classed as its Fig 30 does (moves forward, walks backward, falls, stays
on the spot), drawn as a PNG and written as JSON. One short sweep (1 s runs at 1 Hz): the
report's 32 s at four frequencies is the command, not a test."""

from __future__ import annotations

import json
import subprocess

import pytest

from humanoid_core.quadruped_gaits import path_fitness
from humanoid_experiments import OUTCOMES, classify
from humanoid_sim import GaitOutcome

pytestmark = pytest.mark.system

NINE = {"walk", "trot", "transverse_gallop", "rotary_gallop", "canter", "amble", "pace", "bound", "pronk"}


def outcome(distance: float, fell: bool) -> GaitOutcome:
    return GaitOutcome("trot", 1.0, 32.0, distance, 0.0, 0.0, abs(distance), fell, 3.0 if fell else None,
                       ((0.0, 0.0), (distance, 0.0)), "head" if fell else None, fell)


def test_a_run_is_classed_as_the_reports_figure_30_does():
    assert classify(outcome(0.2, False), 0.05) == "moves forward"
    assert classify(outcome(-0.2, False), 0.05) == "walks backward"
    assert classify(outcome(0.02, False), 0.05) == "stays on the spot"
    assert classify(outcome(0.5, True), 0.05) == "falls"  # a fall first, however far it went


def test_a_sweep_draws_and_writes_the_outcome_of_each_of_the_nine_gaits(tmp_path):
    chart = tmp_path / "outcomes.png"
    done = subprocess.run(["humanoid", "gaits", "--sweep", "--frequencies", "1", "--seconds", "1", "--chart",
                           str(chart)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the report found the trot best by far: this sweep" in done.stdout
    assert chart.read_bytes().startswith(b"\x89PNG")
    summary = json.loads(chart.with_suffix(".json").read_text())
    runs = summary["runs"]
    assert {r["gait"] for r in runs} == NINE and len(runs) == 9
    for r in runs:
        assert r["outcome"] in OUTCOMES and r["frequency"] == 1.0 and r["seconds"] == 1.0
        assert r["fitness"] == pytest.approx(path_fitness(r["samples"]))
        assert len(r["samples"]) == 2  # the start and one second later: eq 17's samples
        assert (r["outcome"] == "falls") == r["fell"]


def test_odometry_reports_the_kinematic_odometrys_drift_over_a_run():
    """``--odometry``: the odometry node's estimate, fed every cycle's joint readings, against the
    simulator's base. The trot at 0.5 Hz as played, 4 s: measured 19 mm off over 175 mm, and as
    far off in heading as the robot turned (0.7 deg): the stance feet cannot see a slip."""
    from cli_entry import entry_point

    done = entry_point("gaits", "--gait", "trot", "--foot-path", "flat", "--frequency", "0.5", "--seconds", "4",
                       "--as-played", "--odometry", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    (run,) = json.loads(done.stdout)["runs"]
    assert not run["fell"] and run["distance"] > 0.1, run
    assert 0.0 <= run["odometry_error_m"] < 0.25 * run["distance"], run
    assert abs(run["odometry_heading_error_deg"]) <= abs(run["heading_deg"]) + 3.0, run

    plain = entry_point("gaits", "--gait", "trot", "--foot-path", "flat", "--frequency", "0.5", "--seconds", "1",
                        "--json")
    assert json.loads(plain.stdout)["runs"][0]["odometry_error_m"] is None  # not asked: not measured
