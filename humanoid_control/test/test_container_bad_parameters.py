"""The control container refuses a bad ``nice`` before it hosts anything: one line naming the
parameter, the range and the value given, status 1 (as its other bad parameters end it), no
node built. A launch file or ``ros2 run`` user may give it any value; the graphs the stack
starts give it the hardware node's validated ``loop_nice``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from humanoid_control.nodes import CONTAINER_NICE


@pytest.mark.parametrize(("value", "shown"), [("40", "40"), ("-21", "-21"), ("fast", "'fast'"), ("2.5", "2.5")])
def test_a_nice_out_of_range_or_not_an_integer_ends_the_container_before_it_hosts_a_node(value, shown):
    done = subprocess.run([sys.executable, "-m", "humanoid_control.nodes.container", "--ros-args",
                           "-p", "nodes:=balance_monitor", "-p", "balance_monitor.robot:=bioloid",
                           "-p", f"{CONTAINER_NICE}:={value}"], capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert f"cannot start: parameter {CONTAINER_NICE} must be an integer within -20..19, got {shown}" in output
    assert "hosting" not in output  # refused before the balance monitor was built
