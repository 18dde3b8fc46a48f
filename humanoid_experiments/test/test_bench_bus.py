"""``humanoid bench bus`` as a process, the way a user runs it, and its text output."""

import argparse
import json
import subprocess
import sys

import pytest

from humanoid_experiments.bench import bus as bench

TIMEOUT = 60


def test_bench_bus_exposes_add_arguments_and_run():
    bus = argparse.ArgumentParser()
    bench.add_arguments(bus)
    args = bus.parse_args(["--robot", "bioloid", "--json"])
    assert (args.robot, args.protocol, args.json, args.cycles, args.rounds) == ("bioloid", 1, True, 300, 3)
    assert callable(bench.run)


def test_bench_bus_json_measures_the_protocol_minimum():
    result = subprocess.run([sys.executable, "-m", "humanoid_experiments.bench.bus", "--robot", "bioloid", "--json",
                             "--cycles", "20", "--rounds", "2"], capture_output=True, text=True, timeout=5 * TIMEOUT)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    # 18 READs of 8 bytes: 18 x (8 + 6 + 8) = 396, one SYNC_WRITE of 8 + 18 x (1 + 4) = 98
    assert figures["min_bytes_per_cycle"] == 494
    assert figures["min_bus_time_ms"] == 4.94
    if figures["retries"] == 0:  # the driver wastes nothing; only a retry (a loaded machine) costs more
        assert figures["bytes_per_cycle"] == 494 and figures["bus_time_ms"] == 4.94
        assert figures["instructions_per_cycle"] == 19
    else:
        assert figures["bytes_per_cycle"] > 494
    assert figures["bus_limit_hz"] == pytest.approx(1 / 4.94e-3, abs=0.01)
    # The emulator charges wire time: no loop can beat the bus limit, the bare SDK's neither.
    assert 0 < figures["loop_hz"] <= figures["bus_limit_hz"]
    assert 0 < figures["sdk_baseline_hz"] <= figures["bus_limit_hz"]
    assert len(figures["loop_hz_runs"]) == len(figures["sdk_baseline_hz_runs"]) == 2
    assert figures["loop_hz"] == max(figures["loop_hz_runs"])
    assert figures["sdk_baseline_hz"] == max(figures["sdk_baseline_hz_runs"])
    assert figures["loop_vs_sdk"] == pytest.approx(figures["loop_hz"] / figures["sdk_baseline_hz"], abs=5e-4)
    round_ratios = [d / s for d, s in zip(figures["loop_hz_runs"], figures["sdk_baseline_hz_runs"], strict=True)]
    # two rounds; the runs' rates are printed to 0.01 Hz, which on a loaded machine's slow runs
    # (a few Hz) moves their ratio by up to a per cent
    assert figures["loop_vs_sdk_median"] == pytest.approx(sum(round_ratios) / 2, rel=1e-2, abs=5e-3)
    # The driver's own CPU per cycle: some, and less than the cycle's wall time (it sleeps for
    # each answer but in a window around its due time: 100 us each side, the robot's bus.yaml).
    assert figures["answer_poll_us"] == 100.0
    assert 0 < figures["loop_cpu_us_per_cycle"] < 1e6 / figures["loop_hz"]


def test_bench_bus_text_states_the_formula():
    assert bench.BusCost(2, 18, 21, 8).bytes == (14 + 18) + 18 * (11 + 21) + 14 + 18 * 9
    text = bench.format_text(bench.BusBenchmark(
        robot="bioloid", protocol=1, servos=18, baud=1_000_000, cycles=10, bytes_per_cycle=494.0,
        bytes_out_per_cycle=242.0, bytes_in_per_cycle=252.0, instructions_per_cycle=19.0,
        min_bytes_per_cycle=494, min_bytes_formula=bench.BusCost(1, 18, 8, 4).formula, bus_time_ms=4.94,
        min_bus_time_ms=4.94, bus_limit_hz=202.4, loop_hz=150.0, sdk_baseline_hz=160.0, loop_vs_sdk=0.9375,
        loop_vs_sdk_median=0.921, loop_hz_runs=[140.0, 150.0], sdk_baseline_hz_runs=[160.0, 155.0],
        loop_cpu_us_per_cycle=1150.0, answer_poll_us=300.0, retries=0))
    assert "18 READ round trips x (8 + 6 + 8) + SYNC_WRITE (8 + 18 x (1 + 4)) = 396 + 98 = 494 bytes" in text
    assert "150.0 Hz" in text and "bus limit 202.4 Hz" in text
    assert "bare SDK baseline   160.0 Hz" in text and "driver / SDK        0.938" in text
    assert "median of the rounds 0.921" in text
    assert "driver CPU          1150 us per cycle" in text and "polled for 300 us each side of their due time" in text


def test_the_bus_driver_alone_runs_at_the_robots_control_rate_and_is_measured_on_its_thread():
    """``bench graph --real``'s floor: the driver paced by its own deadline wait (``sync``), as
    the hardware loop runs it, never faster than hw.yaml's control rate (free, it runs at
    140-150 Hz on the emulator), and its CPU a share of one core."""
    driver = bench.paced_driver_cost("bioloid", 1.0)
    assert driver.control_rate == 100.0
    assert 1.0 <= driver.seconds < 1.5
    assert 0 < driver.cycles <= driver.control_rate * driver.seconds + 1
    assert 0.0 < driver.cpu < 1.0


def test_bench_graph_says_what_share_of_the_loop_and_the_graph_the_bus_driver_alone_is():
    from humanoid_experiments.bench import graph

    processes = [{"name": "humanoid_hw_loop", "pid": 1, "cpu": 0.2, "rss_mb": 1.0, "pss_mb": 1.0},
                 {"name": "control_container", "pid": 2, "cpu": 0.1, "rss_mb": 1.0, "pss_mb": 1.0}]
    part = {"processes": processes, "total": {"processes": 2, "cpu": 0.3, "rss_mb": 2.0, "pss_mb": 2.0,
                                              "resident_mb": None}}
    result = {"robot": "bioloid", "graph": "real (emulated bus)", "seconds": 1.0, "load": [0.0, 0.0, 0.0],
              "container": part, "process_per_node": part, "ratio": dict.fromkeys(("cpu", "rss_mb", "pss_mb",
                                                                                   "resident_mb"), 1.0),
              "bus_driver_alone": {"control_rate": 100.0, "cycles": 100, "seconds": 1.0, "cpu": 0.15}}
    line = graph.text(result).splitlines()[-1]
    assert "0.150 of a core" in line and "100 Hz" in line
    assert f"{0.15 / 0.2:.2f} of the hardware loop's" in line and f"{0.15 / 0.3:.2f} of the graph's" in line
