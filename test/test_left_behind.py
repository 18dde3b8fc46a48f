"""Tests leave no process to the tests after them (conftest.py): a module whose tests started a
process that outlives them fails at its last test, naming the process and the test that
started it, and the process is killed; the next module's tests run as usual. An inner pytest
session runs two modules with this project's conftest as its plugin."""

from __future__ import annotations

import os
import signal
import sys

from inner_session import inner_pytest

from humanoid_core.processes import is_running

LEAKING = """
import os
import subprocess
import sys
from pathlib import Path

def test_starts_a_process_it_leaves_running():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    Path("leaked.pid").write_text(str(process.pid))
    try:  # what the session's check reads, for the outer test's message should it fail
        marked = f"HUMANOID_TEST_SESSION={os.getpid()}".encode() in Path(f"/proc/{process.pid}/environ").read_bytes()
        Path("leaked.seen").write_text(f"its environment read, this session's variable in it: {marked}")
    except OSError as error:
        Path("leaked.seen").write_text(f"its environment unreadable: {error}")

def test_after_it_in_the_same_module():
    pass
"""

NEXT = """
def test_of_the_next_module():
    pass
"""


def test_a_module_leaving_a_process_running_fails_at_its_last_test_and_the_process_is_killed(tmp_path):
    (tmp_path / "test_a_leaking.py").write_text(LEAKING)
    (tmp_path / "test_b_next.py").write_text(NEXT)
    result = inner_pytest(tmp_path, "-rA", "test_a_leaking.py", "test_b_next.py")
    leaked = int((tmp_path / "leaked.pid").read_text())
    seen = (tmp_path / "leaked.seen").read_text()
    output = result.stdout + result.stderr + f"\n(the leaked process {leaked}: {seen}; running: {is_running(leaked)})"
    # the test that started it is read from its environment; where that cannot be read, it is found as a descendant
    started_in = "?" if "unreadable" in seen else "test_a_leaking.py::test_starts_a_process_it_leaves_running (call)"
    try:
        assert result.returncode == 1, output
        assert "ERROR test_a_leaking.py::test_after_it_in_the_same_module" in output, output
        assert (f"1 process(es) started by test_a_leaking.py's tests still ran 1 s after its last test (killed now): "
                f"{leaked}: {sys.executable} -c import time; time.sleep(600) (started in {started_in})") \
            in output, output
        assert "PASSED test_a_leaking.py::test_after_it_in_the_same_module" in output  # the test itself passed
        assert "PASSED test_b_next.py::test_of_the_next_module" in output, output
        assert not is_running(leaked)
    finally:  # the outer session does not know it
        if is_running(leaked):
            os.kill(leaked, signal.SIGKILL)


CRASHING = """
import os
import subprocess
import sys
from pathlib import Path

def test_starts_a_process_then_its_worker_dies():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    Path("orphan.pid").write_text(str(process.pid))
    os._exit(1)  # as the hard-timeout watchdog ends a worker: no teardown, no check of its own
"""


def test_what_a_dead_workers_tests_started_is_killed_and_named(tmp_path):
    """A pytest-xdist worker that dies (crashed, or ended by the hard-timeout watchdog) runs no
    check of its own: the controller kills what its tests started once the grace is over, and
    names it, with the test it was started in."""
    (tmp_path / "test_crashing.py").write_text(CRASHING)
    result = inner_pytest(tmp_path, "-n", "1", "--dist", "loadfile", "--max-worker-restart=0", "test_crashing.py")
    orphan = int((tmp_path / "orphan.pid").read_text())
    output = result.stdout + result.stderr + f"\n(the orphan {orphan}: running: {is_running(orphan)})"
    try:
        assert result.returncode == 1, output
        assert "worker 'gw0' crashed while running 'test_crashing.py::test_starts_a_process_then_its_worker_dies'" \
            in output, output
        assert ("1 process(es) started by the tests of the worker that died still ran 1 s after it (killed now):"
                in output), output
        assert (f"{orphan}: {sys.executable} -c import time; time.sleep(600) (started in "
                "test_crashing.py::test_starts_a_process_then_its_worker_dies (call))") in output, output
        assert not is_running(orphan)
    finally:  # the outer session does not know it
        if is_running(orphan):
            os.kill(orphan, signal.SIGKILL)
