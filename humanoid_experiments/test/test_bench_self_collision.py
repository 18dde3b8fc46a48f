"""`humanoid bench self-collision` prints the per-cycle check's figures next to bare Coal's,
measured in the same run, and the collisions it missed against the brute-force reference
(a short run: the speed figures themselves are for the benchmark, not a test)."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.system


def test_bench_self_collision_reports_the_method_beside_bare_coal_and_misses_nothing():
    done = subprocess.run(["humanoid", "bench", "self-collision", "--robot", "bioloid", "--configurations", "300",
                           "--stream-seconds", "2", "--walk-seconds", "2", "--rounds", "1", "--json"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["configurations_random"] == 300 and result["configurations_stream"] == 2000
    # many random configurations are within the safety distance: the reference has something to catch
    assert result["within_safety_distance_random"] > 0
    assert result["missed_collisions"] == 0
    assert result["speedup_vs_coal"] == pytest.approx(result["coal_collisions_us"] / result["method_us"], rel=0.02)
    assert result["period_fraction_1khz"] == pytest.approx(result["method_us"] * 1e-6 / 1e-3, rel=0.02)
    assert result["link_pairs_brute_force"] > result["link_pairs_checked"] > 0


def test_bench_self_collision_refuses_bad_arguments():
    done = subprocess.run(["humanoid", "bench", "self-collision", "--configurations", "5"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2 and "--configurations >= 100" in done.stderr
