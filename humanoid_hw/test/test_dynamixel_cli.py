"""``humanoid emulate`` and ``humanoid bench bus`` as processes, the way a user runs them."""

import argparse
import json
import os
import select
import signal
import subprocess
import sys

import pytest
from dynamixel_sdk import COMM_SUCCESS, PacketHandler, PortHandler

from humanoid_hw import bench
from humanoid_hw.emulator import cli

TIMEOUT = 60


def start_emulator(*args):
    process = subprocess.Popen([sys.executable, "-m", "humanoid_hw.emulator", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
    assert ready, "the emulator printed nothing"
    return process, process.stdout.readline().strip()


@pytest.mark.parametrize(("protocol", "model_number", "stop", "link"),
                         [(1, 12, signal.SIGTERM, False), (2, 1060, signal.SIGINT, True)])
def test_emulate_prints_the_port_first_and_serves_until_signalled(tmp_path, monkeypatch, protocol, model_number,
                                                                  stop, link):
    monkeypatch.setattr("dynamixel_sdk.port_handler.LATENCY_TIMER", 100)  # patient on a loaded machine
    extra = ["--link", str(tmp_path / "ttyDXL")] if link else []
    process, port_path = start_emulator("--robot", "bioloid", "--protocol", str(protocol), *extra)
    try:
        assert os.path.exists(port_path)
        assert port_path == (str(tmp_path / "ttyDXL") if link else os.path.realpath(port_path))
        port = PortHandler(port_path)
        assert port.openPort()
        try:
            packets = PacketHandler(float(protocol))
            assert [packets.ping(port, i)[:2] for i in (1, 18)] == [(model_number, COMM_SUCCESS)] * 2
            assert packets.ping(port, 19)[1] != COMM_SUCCESS  # the Bioloid has IDs 1..18
        finally:
            port.closePort()
    finally:
        process.send_signal(stop)
        _, errors = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, errors
    assert "emulating 18" in errors
    assert not os.path.exists(port_path)


def test_emulate_refuses_a_robot_without_dynamixels():
    result = subprocess.run([sys.executable, "-m", "humanoid_hw.emulator", "--robot", "hoap2"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2 and "no Dynamixel joint map" in result.stderr and result.stdout == ""


def test_emulate_and_bench_expose_add_arguments_and_run():
    emulate = argparse.ArgumentParser()
    cli.add_arguments(emulate)
    args = emulate.parse_args(["--robot", "bioloid", "--protocol", "2", "--baud", "57600", "--timing"])
    assert (args.robot, args.protocol, args.baud, args.timing) == ("bioloid", 2, 57600, True)
    assert callable(cli.run)
    bus = argparse.ArgumentParser()
    bench.add_arguments(bus)
    args = bus.parse_args(["--robot", "bioloid", "--json"])
    assert (args.robot, args.protocol, args.json, args.cycles) == ("bioloid", 1, True, 300)
    assert callable(bench.run)


def test_bench_bus_json_measures_the_protocol_minimum():
    result = subprocess.run([sys.executable, "-m", "humanoid_hw.bench", "--robot", "bioloid", "--json",
                             "--cycles", "40"], capture_output=True, text=True, timeout=2 * TIMEOUT)
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
    # The emulator charges wire time: no loop can beat the bus limit.
    assert 0 < figures["loop_hz"] <= figures["bus_limit_hz"]


def test_bench_bus_text_states_the_formula():
    assert bench.BusCost(2, 18, 21, 8).bytes == (14 + 18) + 18 * (11 + 21) + 14 + 18 * 9
    text = bench.format_text(bench.BusBenchmark(
        robot="bioloid", protocol=1, servos=18, baud=1_000_000, cycles=10, bytes_per_cycle=494.0,
        bytes_out_per_cycle=242.0, bytes_in_per_cycle=252.0, instructions_per_cycle=19.0,
        min_bytes_per_cycle=494, min_bytes_formula=bench.BusCost(1, 18, 8, 4).formula, bus_time_ms=4.94,
        min_bus_time_ms=4.94, bus_limit_hz=202.4, loop_hz=150.0, retries=0))
    assert "18 READ round trips x (8 + 6 + 8) + SYNC_WRITE (8 + 18 x (1 + 4)) = 396 + 98 = 494 bytes" in text
    assert "150.0 Hz" in text and "bus limit 202.4 Hz" in text
