"""The suite's last guard: a test stuck in C with the GIL held (where pytest-timeout's alarm,
which runs Python, never gets to run) ends its worker, is reported as crashed with the stacks
printed, and the run goes on with the next test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent

STUCK = textwrap.dedent('''
    import ctypes


    def test_stuck_in_c_holding_the_gil():
        # a default pthread mutex locked twice by one thread never returns, signals or not; PyDLL
        # keeps the GIL across the call, so pytest-timeout's SIGALRM handler (Python) never runs
        libc = ctypes.PyDLL(None)
        mutex = ctypes.create_string_buffer(64)
        libc.pthread_mutex_init(mutex, None)
        libc.pthread_mutex_lock(mutex)
        libc.pthread_mutex_lock(mutex)


    def test_after_it():
        assert True
''')


def test_a_test_stuck_holding_the_gil_ends_its_worker_and_the_run_goes_on(tmp_path):
    (tmp_path / "test_stuck.py").write_text(STUCK)
    began = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "hard_timeout", "-n", "1", "-p", "no:cacheprovider",
         "-o", "timeout=1", "-o", "hard_timeout=3", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env={**_environment(), "PYTHONPATH": str(SUPPORT)}, capture_output=True, text=True,
        timeout=120)
    took = time.monotonic() - began
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "1 failed, 1 passed" in out, out  # the stuck test failed, the next one still ran
    assert "crashed" in out and "test_stuck_in_c_holding_the_gil" in out, out
    assert "Timeout (0:00:03)!" in out, out  # the watchdog's report, with the stacks, in the test's
    assert "in test_stuck_in_c_holding_the_gil" in out, out
    assert took < 60, f"{took:.1f} s"


def _environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
