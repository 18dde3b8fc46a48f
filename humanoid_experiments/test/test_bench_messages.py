"""``humanoid bench messages``: a short run over real DDS (every message taken by every
receiver, each side's CPU read), and its refusal of impossible arguments. The costs it
prints are figures of the machine, not asserted here."""

import json
import statistics
import subprocess
import sys

import pytest

from humanoid_experiments.bench import messages as bench

pytestmark = pytest.mark.system


def test_a_short_run_measures_the_sender_and_every_receiver_in_both_phases():
    result = subprocess.run([sys.executable, "-m", "humanoid_experiments.bench.messages", "--type", "joint_state",
                             "--receivers", "2", "--count", "40", "--period", "0.005", "--json"],
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    assert (measured["type"], measured["receivers"], measured["count"]) == ("joint_state", 2, 40)
    for phase in ("isolated", "burst"):
        cost = measured[phase]
        assert len(cost["receiver_us_each"]) == 2
        assert all(us > 0.0 for us in cost["receiver_us_each"]), cost
        assert cost["sender_us"] > 0.0, cost
        assert cost["receiver_us"] == pytest.approx(statistics.median(cost["receiver_us_each"]), abs=0.1)


@pytest.mark.parametrize("arguments", [["--receivers", "0"], ["--count", "0"], ["--period", "0"]])
def test_impossible_arguments_are_refused(arguments, capsys):
    assert bench.main(arguments) == 2
    assert "--receivers and --count must be at least 1, --period positive" in capsys.readouterr().err
