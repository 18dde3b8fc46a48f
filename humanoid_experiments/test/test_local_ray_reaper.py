"""The reaper's sweep kills what starts while it goes by, and what has lost its mark.

A raylet restarts an agent the sweep killed before it; /proc lists by process ID and IDs wrap,
so the raylet can be listed after its agents. One pass then left two agents running for over
30 s on a loaded machine. Here a marked process the sweep keeps stands in for that raylet: it
starts one marked child, and a second one as soon as the first is killed; the sweep must end
with neither running. Ray cannot be made to list its processes in a given order; the reaper's
real use, after a killed search, is checked by test_gait_search.py."""

from __future__ import annotations

import os
import subprocess
import sys

from humanoid_core.processes import is_running
from humanoid_experiments import local_ray

#: Starts a child, waits for it, starts another once, says each child's process ID.
RESTARTER = """
import subprocess, sys, time
for _ in range(2):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(child.pid, flush=True)
    child.wait()
time.sleep(120)
"""


def test_a_sweep_kills_a_process_started_again_after_its_first_pass(monkeypatch):
    monkeypatch.setenv(local_ray.OWNER_VARIABLE, str(os.getpid()))
    restarter = subprocess.Popen([sys.executable, "-c", RESTARTER], stdout=subprocess.PIPE, text=True)
    try:
        first = int(restarter.stdout.readline())
        local_ray.sweep(os.getpid(), keep=restarter.pid)
        second = int(restarter.stdout.readline())  # started once the sweep killed the first
        assert not is_running(first) and not is_running(second)
    finally:
        restarter.kill()
        restarter.wait(30)


def test_a_sweep_kills_an_unmarked_process_holding_a_file_in_the_session_directory(tmp_path):
    """Ray's agents write their process title over their environment (the mark with it) and
    keep their logs open in the instance's directory: such a process is found by its files."""
    session = tmp_path / "session_1"
    (session / "logs").mkdir(parents=True)
    with (session / "logs" / "agent.out").open("w") as log:
        agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdout=log,
                                 env={key: value for key, value in os.environ.items()
                                      if key != local_ray.OWNER_VARIABLE})
    try:
        local_ray.sweep(os.getpid(), session_dirs=[str(session)])
        assert agent.wait(30) == -9  # SIGKILL
    finally:
        agent.kill()
        agent.wait(30)
