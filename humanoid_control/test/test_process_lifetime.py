"""Node processes die with their launcher, and take SIGHUP as SIGTERM.

A stand-in node (a module that records the signal that stopped it) is started by a
real :class:`~humanoid_core.processes.node_graph.Graph` in a launcher process, exactly as the
``humanoid`` command starts nodes; the launcher is then killed outright.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from humanoid_control.ros import poll_until
from humanoid_core.processes import LAUNCHER_PID_VARIABLE, child_processes, is_running, process_tree

PATIENCE = 30.0

#: The stand-in scripts' way of leaving a file for the test: written whole, then named (the test
#: reads a file as soon as it exists, and once read one still empty).
WRITE_WHOLE = """
def write_whole(path, text):
    part = pathlib.Path(path + ".part")
    part.write_text(text)
    part.replace(path)
"""

NODE = """
import pathlib, signal, sys, time
{write_whole}
marker = pathlib.Path({marker!r})

def stop(signum, _frame):
    marker.write_text(signal.Signals(signum).name)
    sys.exit(0)

signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
# like rclpy: SIGHUP is left to whoever ran the module
write_whole({ready!r}, " ".join(sys.argv))
while True:
    time.sleep(0.05)
"""

LAUNCHER = """
import sys, time
from pathlib import Path
from humanoid_core.processes import Graph, NodeSpec
graph = Graph([NodeSpec("stand_in", "stand_in_node")], log_dir=Path({logs!r})).start()
print(graph.processes["stand_in"].pid, flush=True)
time.sleep(600)
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """The stand-in node module; returns its stop marker, its ready marker and an environment
    in which ``python -m stand_in_node`` finds it."""
    marker, ready = tmp_path / "stopped_by", tmp_path / "ready"
    script = NODE.format(marker=str(marker), ready=str(ready), write_whole=WRITE_WHOLE)
    (tmp_path / "stand_in_node.py").write_text(script)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return marker, ready, env


def start_launcher(tmp_path: Path, env: dict[str, str], ready: Path) -> tuple[subprocess.Popen, int]:
    launcher = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LAUNCHER.format(logs=str(tmp_path / "logs")))],
                                stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    node = int(launcher.stdout.readline())
    poll_until(ready.exists, "the stand-in node running", PATIENCE)
    return launcher, node


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_a_node_gets_sigterm_when_its_launcher_dies(tmp_path, stand_in, kill):
    marker, ready, env = stand_in
    launcher, node = start_launcher(tmp_path, env, ready)
    try:
        os.kill(launcher.pid, kill)
        launcher.wait(PATIENCE)
        poll_until(lambda: not is_running(node), "the node gone after its launcher died", PATIENCE)
        assert marker.read_text() == "SIGTERM"  # the clean-shutdown signal, not a kill
    finally:
        for pid in (launcher.pid, node):
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


def test_sighup_stops_a_node_like_sigterm(tmp_path, stand_in):
    marker, ready, env = stand_in
    launcher, node = start_launcher(tmp_path, env, ready)
    try:
        os.kill(node, signal.SIGHUP)
        poll_until(lambda: not is_running(node), "the node gone after SIGHUP", PATIENCE)
        assert marker.read_text() == "SIGTERM"
    finally:
        for pid in (launcher.pid, node):
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_node_whose_launcher_is_already_gone_does_not_start(tmp_path, stand_in):
    """The launcher died between starting the node and the node asking for the parent-death
    signal: the node process is now someone else's child, and must not run."""
    _marker, ready, env = stand_in
    result = subprocess.run([sys.executable, "-m", "humanoid_core.processes.run_tethered", "stand_in_node"],
                            env=env | {LAUNCHER_PID_VARIABLE: "1"}, capture_output=True, text=True,
                            timeout=PATIENCE)
    assert result.returncode == 1
    assert "launcher (process 1) is gone" in result.stderr
    assert not ready.exists()


def test_the_module_gets_its_arguments(tmp_path, stand_in):
    marker, ready, env = stand_in
    process = subprocess.Popen([sys.executable, "-m", "humanoid_core.processes.run_tethered", "stand_in_node",
                                "--ros-args", "-p", "x:=1"], env=env | {LAUNCHER_PID_VARIABLE: str(os.getpid())})
    try:
        poll_until(ready.exists, "the stand-in node running", PATIENCE)
        assert ready.read_text().split()[1:] == ["--ros-args", "-p", "x:=1"]
        process.send_signal(signal.SIGINT)
        assert process.wait(PATIENCE) == 0
        assert marker.read_text() == "SIGINT"
    finally:
        if process.poll() is None:
            process.kill()


def test_a_node_process_runs_blas_on_one_thread(tmp_path):
    """numpy's OpenBLAS starts a worker thread per core at import unless told otherwise, and a
    worker spins for a while after each call it shared (a core's worth in the simulation's
    loop process): a node's process runs BLAS on its own thread, unless the user chose."""
    (tmp_path / "count_threads.py").write_text("import os\nimport numpy\nprint(len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | {
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        LAUNCHER_PID_VARIABLE: str(os.getpid())}

    def threads(command: list[str], **extra: str) -> int:
        result = subprocess.run(command, env=env | extra, capture_output=True, text=True, timeout=PATIENCE, check=True)
        return int(result.stdout)

    tethered = [sys.executable, "-m", "humanoid_core.processes.run_tethered", "count_threads"]
    plain = [sys.executable, str(tmp_path / "count_threads.py")]
    assert threads(tethered) == 1
    if os.cpu_count() > 1:  # the baseline: left alone, OpenBLAS does start its workers here
        assert threads(plain) > 1
        assert threads(tethered, OPENBLAS_NUM_THREADS="2") == 2


#: A node that leaves a child behind: the child ignores SIGINT and SIGTERM, as a process hung
#: in native code does (a loop process in Fast DDS's teardown), and outlives the node.
LEAVING_NODE = """
import pathlib, signal, subprocess, sys, time
{write_whole}
child = subprocess.Popen([sys.executable, "-c",
                          "import signal, time\\n"
                          "signal.signal(signal.SIGINT, signal.SIG_IGN)\\n"
                          "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
                          "while True: time.sleep(0.05)\\n"])
write_whole({child_pid!r}, str(child.pid))
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
while True:
    time.sleep(0.05)
"""


def test_stopping_a_graph_ends_what_a_node_left_behind(tmp_path, monkeypatch):
    from humanoid_core.processes import Graph, NodeSpec

    child_pid = tmp_path / "child_pid"
    (tmp_path / "leaving_node.py").write_text(LEAVING_NODE.format(child_pid=str(child_pid), write_whole=WRITE_WHOLE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    graph = Graph([NodeSpec("leaving", "leaving_node")], log_dir=tmp_path / "logs").start()
    try:
        poll_until(child_pid.exists, "the node's child running", PATIENCE)
        child = int(child_pid.read_text())
        assert is_running(child)
    finally:
        codes = graph.stop(grace=1.0)
    try:
        assert codes == {"leaving": 0}  # the node itself stopped cleanly on SIGINT
        poll_until(lambda: not is_running(child), "the child left behind ended", PATIENCE)
    finally:
        if is_running(child):  # the test failed: it leaves nothing behind either
            os.kill(child, signal.SIGKILL)


def test_exit_within_ends_a_process_without_running_any_of_its_python():
    """The kernel's default action for SIGALRM: a process stuck in native code holding the
    interpreter (where no Python signal handler can run) still ends at the deadline."""
    code = ("import signal, time\n"
            "from humanoid_core.processes.process_lifetime import exit_within\n"
            "signal.signal(signal.SIGALRM, lambda *_: print('handled'))\n"  # replaced: no handler runs
            "exit_within(1)\n"
            "time.sleep(60)\n")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == -signal.SIGALRM, result.stderr
    assert "handled" not in result.stdout
    assert time.monotonic() - started < PATIENCE / 2


#: A process whose main thread is stuck in native code for good: it takes a mutex it already
#: holds (glibc's default mutex, zeroed, deadlocks on a second lock; no signal breaks the wait),
#: through ``{library}``: ctypes.CDLL releases the interpreter for the call, ctypes.PyDLL keeps it.
#: SIGTERM has a Python handler, which never runs: only end_when_orphaned can end it.
STUCK = """
import ctypes, os, signal, sys
from humanoid_core.processes import die_with_parent, end_when_orphaned
die_with_parent()
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
end_when_orphaned(os.getppid(), grace={grace}, hang_limit={hang_limit})
mutex = ctypes.create_string_buffer(64)
ctypes.CDLL(None).pthread_mutex_lock(mutex)
print("stuck", ctypes.addressof(mutex), flush=True)
ctypes.{library}(None).pthread_mutex_lock(mutex)  # stuck here
"""

#: Starts STUCK as its child, says the child's pid, and waits to be killed.
STUCK_PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {code!r}], stdout=subprocess.PIPE, stderr=open({stderr!r}, "w"),
                         text=True)
stuck, mutex = child.stdout.readline().split()
assert stuck == "stuck"
print(child.pid, mutex, flush=True)
time.sleep(600)
"""


def waits_on(pid: int, address: int) -> bool:
    """Whether ``pid``'s main thread is in a system call on the word at ``address`` (the futex
    of a mutex it waits for: the call's first argument)."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(call) > 1 and call[1].startswith("0x") and int(call[1], 16) == address


@pytest.mark.parametrize(("library", "grace", "hang_limit", "killed"), [
    ("CDLL", 1.0, 600.0, True),  # the interpreter free: ends `grace` after its parent
    ("PyDLL", 600.0, 2.0, False),  # the interpreter held: ends `hang_limit` after it was taken, parent alive
])
def test_a_process_stuck_in_native_code_still_ends_with_its_stacks_printed(tmp_path, library, grace, hang_limit,
                                                                            killed):
    """The loop's process of a driver node ends after its front dies even when its main thread
    never returns from native code (and so never runs the SIGTERM handler that would release
    the robot and exit): faulthandler's watchdog ends it, printing where each thread was."""
    stderr = tmp_path / "stderr.txt"
    code = STUCK.format(library=library, grace=grace, hang_limit=hang_limit)
    parent = subprocess.Popen([sys.executable, "-c", STUCK_PARENT.format(code=code, stderr=str(stderr))],
                              stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        child, mutex = (int(word) for word in parent.stdout.readline().split())
        # killed between its "stuck" and the second lock, the child runs its SIGTERM handler
        poll_until(lambda: waits_on(child, mutex), "the child blocked in the mutex", PATIENCE)
        if killed:
            parent.kill()
        poll_until(lambda: not is_running(child), "the stuck process's end", PATIENCE)
        stacks = stderr.read_text()
        assert "most recent call first" in stacks and "pthread_mutex_lock" not in stacks, stacks
        stuck_line = next(n for n, line in enumerate(code.splitlines(), 1) if line.endswith("# stuck here"))
        assert f'File "<string>", line {stuck_line} in <module>' in stacks, stacks  # the main thread's
    finally:
        if child and is_running(child):
            os.kill(child, signal.SIGKILL)
        parent.kill()
        parent.wait(10)


def test_the_process_table_gives_a_process_its_children_and_its_whole_tree():
    """What the tests and benchmarks count a node's CPU over: its children, and every
    descendant (a driver node's loop is its front's child)."""
    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
             "print('ready', flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        (grandchild,) = poll_until(lambda: child_processes(child.pid), "the grandchild", PATIENCE)
        assert child.pid in child_processes(os.getpid())
        assert sorted(process_tree(child.pid)) == sorted([child.pid, grandchild])
        assert process_tree(grandchild) == [grandchild]
    finally:
        for pid in process_tree(child.pid)[1:]:
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait(10)


def test_a_process_whose_pipe_its_parent_read_to_the_end_is_not_running():
    """Once a parent has read a child's pipe to its end the child is gone for ``is_running``,
    even in the moment when /proc still says it runs (its memory released, its pipes closed,
    not yet a zombie). The pytest-xdist controller hears of a dead worker so: it once missed
    the processes of a worker that had died, the worker still 'running' (test_left_behind.py, a
    clean-clone run). The moment shows only on a busy machine: two busy processes per core
    make it here (178 exits in 300 read 'running' beside four)."""
    child = "import os, sys; sys.stdout.write('x'); sys.stdout.flush(); os._exit(1)"
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        seen_running = 0
        for _ in range(30):
            process = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
            assert process.stdout.read() == b"x"
            seen_running += is_running(process.pid)
            process.wait()
        assert seen_running == 0, f"{seen_running} of 30 children running after their pipe's end"
    finally:
        for process in busy:
            process.kill()
            process.wait()
