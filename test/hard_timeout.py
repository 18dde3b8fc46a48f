"""A pytest plugin: a test that hangs where pytest-timeout cannot reach it ends its worker
process instead of the whole run.

pytest-timeout's alarm runs Python, so it waits for the GIL; a thread blocked in C while
holding it (a DDS teardown deadlocked inside rcl, seen once in the suite) stops every thread of
the process for good, and the run with it. faulthandler's watchdog is a C thread that needs no
GIL: it writes every thread's stack to a file and exits the process. Under pytest-xdist the
test is then reported as crashed, with those stacks, and a new worker takes the rest; the
test's processes die with their parent. Run in one process (no xdist), the stacks stay in
:func:`stacks_file`.
"""

from __future__ import annotations

import faulthandler
import os
import tempfile
from pathlib import Path

import pytest

#: s after pytest-timeout's ``timeout`` (pytest.ini) at which the watchdog ends the process,
#: unless the ``hard_timeout`` ini option says otherwise.
MARGIN = 60.0


def pytest_addoption(parser) -> None:
    parser.addini("hard_timeout", "s a test may run before its process ends, stacks printed (default: "
                  f"pytest-timeout's timeout + {MARGIN:g}; 0: never)", default="")


def hard_timeout(config) -> float:
    explicit = config.getini("hard_timeout")
    if explicit != "":
        return float(explicit)
    timeout = float(config.getini("timeout") or 0)
    return timeout + MARGIN if timeout > 0 else 0.0


def stacks_file(run: str, worker: str) -> Path:
    """Where a worker's watchdog writes the stacks (one file per run and worker)."""
    return Path(tempfile.gettempdir()) / f"humanoid-hung-test-{run}-{worker}.txt"


def _this_process_file(config) -> Path:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return stacks_file(str(os.getpid()), "main")
    return stacks_file(workerinput["testrunuid"], workerinput["workerid"])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The watchdog armed for each test's set-up, call and teardown."""
    seconds = hard_timeout(item.config)
    if seconds <= 0:
        yield
        return
    with open(_this_process_file(item.config), "w") as stacks:
        faulthandler.dump_traceback_later(seconds, exit=True, file=stacks)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
    _this_process_file(item.config).unlink(missing_ok=True)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched) -> None:
    """(pytest-xdist, in the controller) The crashed worker's stacks join the test's report."""
    worker = report.node.workerinput
    path = stacks_file(worker["testrunuid"], worker["workerid"])
    if path.exists() and path.stat().st_size:
        report.longrepr = f"{report.longrepr}\n{path.read_text(errors='replace')}"
    path.unlink(missing_ok=True)
