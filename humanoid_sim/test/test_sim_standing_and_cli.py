"""The simulated robot over time and from the command line, each test with its own
simulation process (so that no other simulation answers on the same topics)."""

import signal
import subprocess
import time

import numpy as np
import pytest

from humanoid_bringup.graphs import sim_nodes
from humanoid_bringup.robot_client import RobotClient
from humanoid_description.model import load_model


@pytest.mark.parametrize("robot_name", ["hoap2", "bioloid"])
def test_the_robot_stands_ten_seconds_in_its_home_pose(robot_graph, robot_name):
    _, client = robot_graph(sim_nodes(robot_name, real_time_factor=0.0))
    start = client.now()
    height = client.base_pose.pose.position.z if client.base_pose else None
    while client.now() < start + 10.0:
        client.wait_until(client.now() + 0.5)
        assert client.fallen is False
    assert client.base_pose.pose.position.z == pytest.approx(height or client.base_pose.pose.position.z, abs=0.01)
    home = load_model(robot_name).home_positions()
    assert np.max(np.abs(np.array(client.wait_for_joint_states().position) - home)) < 0.05


# -- the command line ---------------------------------------------------------------------
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_humanoid_sim_runs_until_interrupted_and_stops_cleanly(stop):
    process = subprocess.Popen(["humanoid", "sim", "--robot", "hoap2"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        with RobotClient("sim_cli_client") as client:
            client.wait_for_joint_states(60.0)
            client.wait_until(client.now() + 1.0)
            assert process.poll() is None  # still running: no duration given
        process.send_signal(stop)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_humanoid_sim_duration_ends_it():
    started = time.monotonic()
    result = subprocess.run(["humanoid", "sim", "--robot", "bioloid", "--duration", "2",
                             "--real-time-factor", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "duration of 2 s reached" in result.stdout + result.stderr
    assert time.monotonic() - started < 60
