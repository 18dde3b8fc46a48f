"""``humanoid bench fall-protection`` through its entry point, one trial (the figures themselves
are for the benchmark): the simulated HOAP-2 pushed while it walks, ``protect: limp``."""

import json
import math
import subprocess

import pytest

pytestmark = pytest.mark.system


def test_bench_fall_protection_times_one_limp_fall_as_json():
    done = subprocess.run(["humanoid", "bench", "fall-protection", "--robot", "hoap2", "--protect", "limp",
                           "--trials", "1", "--json"], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["protect"] == "limp" and result["where"] == "simulation, lockstep"
    (trial,) = result["trials"]
    assert trial["trial"] == 1
    # robot seconds after the fall was seen coming: the walk ended FELL, the joints released
    # (reported by the driver), the simulator saying fallen; bounds against real defects only.
    # The walk's figure is its result's arrival on the client's clock while the lockstep
    # simulation runs on without this client, so it grows with the machine's load (3.07 s in
    # a loaded clean-clone run); a walk not stopped by the fall ends otherwise than FELL (NaN)
    assert 0.0 <= trial["goal_fell_s"] < 5.0, trial
    assert 0.0 <= trial["protect_s"] < 1.0, trial
    assert 0.0 < trial["margin_s"] < 3.0, trial
    assert result["worst_protect_s"] == trial["protect_s"] and result["least_margin_s"] == trial["margin_s"]
    assert all(math.isfinite(v) for v in result["load_average"])


def test_bench_fall_protection_refuses_a_real_robot_without_the_emulator():
    done = subprocess.run(["humanoid", "bench", "fall-protection", "--robot", "bioloid", "--real"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "humanoid bench fall-protection: error: --real needs --emulate (the benchmark tips the robot over: not on "
        "a real one)")
