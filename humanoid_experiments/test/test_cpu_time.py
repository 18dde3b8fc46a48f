"""The benchmarks' CPU time of another process: what /proc counts (in its 10 ms ticks, read here in ns),
and None once the process has ended."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from humanoid_experiments.bench import own_cpu_seconds

TICK = 1.0 / os.sysconf("SC_CLK_TCK")


def test_another_process_cpu_time_agrees_with_proc_and_ends_with_it():
    child = subprocess.Popen([sys.executable, "-c", "import sys\nx = 0\nfor i in range(2_000_000): x += i\n"
                              "sys.stdout.write('done\\n'); sys.stdout.flush(); sys.stdin.read()"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "done\n"  # the work is done; the child waits, idle
        fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticked = (int(fields[11]) + int(fields[12])) * TICK
        measured = own_cpu_seconds(child.pid)
        assert measured is not None and measured > 0.0
        assert abs(measured - ticked) <= 2 * TICK, (measured, ticked)
    finally:
        child.stdin.close()
        child.wait(30)
    assert own_cpu_seconds(child.pid) is None
