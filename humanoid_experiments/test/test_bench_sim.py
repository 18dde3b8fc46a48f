"""`humanoid bench sim` prints the simulation node's figures next to raw PyBullet's, measured
in the same run (a short run: the figures themselves are for the benchmark, not a test),
with joint_states alone subscribed or every per-cycle topic (``--subscribe-all``)."""

import json
import subprocess

import pytest

pytestmark = pytest.mark.system


@pytest.mark.parametrize(("options", "subscribed"), [((), "joint_states"),
                                                     (("--subscribe-all",), "every per-cycle topic")],
                         ids=["joint_states", "every-topic"])
def test_bench_sim_reports_node_and_raw_side_by_side_as_json(options, subscribed):
    done = subprocess.run(["humanoid", "bench", "sim", "--robot", "bioloid", "--seconds", "0.5", "--rounds", "1",
                           *options, "--json"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["subscribed"] == subscribed
    assert len(result["rtf_raw_runs"]) == 2 and len(result["rtf_node_runs"]) == 1
    assert result["rtf_raw"] == max(result["rtf_raw_runs"]) and result["rtf_node"] == max(result["rtf_node_runs"])
    # every figure printed to 3 decimals: the quotient of printed values is off by their rounding
    # (a slow raw run, at 1 x real time say, puts a ratio of 4.6 about 0.003 off)
    def rounded(numerator: float, denominator: float) -> float:
        return numerator / denominator * (0.5e-3 / numerator + 0.5e-3 / denominator) + 0.5e-3 + 1e-6

    node, raw = result["rtf_node"], result["rtf_raw"]
    assert result["ratio"] == pytest.approx(node / raw, abs=rounded(node, raw))
    node_run, (before, after) = result["rtf_node_runs"][0], result["rtf_raw_runs"]
    mean_raw = 0.5 * (before + after)
    assert result["ratio_median"] == pytest.approx(node_run / mean_raw, abs=rounded(node_run, mean_raw))
    assert all(result[key] > 0 for key in ("rtf_node", "rtf_raw", "cpu_raw_per_sim_s"))
    if result["cpu_node_per_sim_s"] > 0:  # /proc counts in 10 ms ticks: a run this short may count none
        raw, node = result["cpu_raw_per_sim_s"], result["cpu_node_per_sim_s"]
        # both printed to 4 decimals: a node that took a few hundredths of a CPU second per
        # simulated second leaves the quotient of the printed values a few hundredths off
        rounding = raw / node * (0.5e-4 / raw + 0.5e-4 / node) + 0.5e-3
        assert result["cpu_ratio"] == pytest.approx(raw / node, abs=rounding + 1e-6)
    else:
        assert result["cpu_ratio"] is None
