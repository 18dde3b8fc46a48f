"""``humanoid postures --compare A.json B.json``: two results files test by test, as users run
it on a simulation's and a real robot's results. The differences are worked out here by
hand from the two small files."""

from __future__ import annotations

import json
import math
import subprocess

#: Entries of two results files (the fields --compare reads; a real file has more).
SIM = [{"test": 1, "name": "FL swing back", "joints": ["fl_hip_pitch"], "direction": 1, "start": "zero",
        "limit_rad": 0.30, "limit_raw": [572], "tipped": "forward"},
       {"test": 3, "name": "spine down", "joints": ["spine_pitch"], "direction": -1, "start": "zero",
        "limit_rad": None, "limit_raw": None},
       {"test": 4, "name": "FL swing back home", "joints": ["fl_hip_pitch"], "direction": 1, "start": "home",
        "limit_rad": 0.10, "limit_raw": [533]}]
REAL = [{"test": 3, "name": "spine down", "joints": ["spine_pitch"], "direction": -1, "start": "zero",
         "limit_rad": -0.40, "limit_raw": [377]},
        {"test": 1, "name": "FL swing back", "joints": ["fl_hip_pitch"], "direction": 1, "start": "zero",
         "limit_rad": 0.25, "limit_raw": [562], "tipped": "unknown"},
        {"test": 2, "name": "FR swing back", "joints": ["fr_hip_pitch"], "direction": 1, "start": "zero",
         "limit_rad": 0.2, "limit_raw": [474]}]


def compare(tmp_path, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / "sim.json").write_text(json.dumps(SIM))
    (tmp_path / "real.json").write_text(json.dumps(REAL))
    return subprocess.run(["humanoid", "postures", "--compare", str(tmp_path / "sim.json"),
                           str(tmp_path / "real.json"), *options], capture_output=True, text=True, timeout=60)


def test_compare_gives_each_common_tests_difference_and_the_tests_of_one_file_only(tmp_path):
    run = compare(tmp_path, "--json", "-")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    tests = {entry["test"]: entry for entry in summary["tests"]}
    assert list(tests) == [1, 3]  # in A's order, only those in both
    one = tests[1]
    assert math.isclose(one["difference_rad"], 0.25 - 0.30)
    assert math.isclose(one["difference_deg"], math.degrees(-0.05))
    assert one["difference_raw"] == [562 - 572]
    assert tests[3]["difference_rad"] is None and tests[3]["difference_raw"] is None  # the simulation found none
    assert tests[3]["b_limit_rad"] == -0.40
    assert math.isclose(summary["mean_abs_difference_deg"], math.degrees(0.05))  # test 1 alone has both
    assert summary["only_in_a"] == [4] and summary["only_in_b"] == [2]


def test_compare_prints_a_table(tmp_path):
    run = compare(tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    row = next(line for line in lines if line.strip().startswith("1 "))
    assert row.split()[-6:] == ["+17.19", "+14.32", "-2.86", "572", "562", "-10"], row
    row3 = next(line for line in lines if line.strip().startswith("3 "))
    assert row3.split()[-6:] == ["none", "-22.92", "-", "-", "377", "-"], row3
    assert "mean |B - A| over the 1 tests with a limit in both: 2.86 deg" in lines
    assert "only in A: tests 4" in lines and "only in B: tests 2" in lines
