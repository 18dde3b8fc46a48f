"""Tying a node process's life to its launcher's, and SIGHUP to a clean shutdown.

A node started by the ``humanoid`` command (or a test) must not outlive it: a
hardware node left running drives the bus with nothing supervising it, and a second
launch then fights it for the port. Linux delivers a chosen signal to a process when
its parent dies (``prctl(PR_SET_PDEATHSIG)``); the node asks for SIGTERM, the signal
of a normal shutdown, so a hardware node still applies its safe state on the way out.

The parent-death signal fires when the *thread* that started the process exits, not
only the whole parent process: start node processes from a thread that lives as long
as they should (the main thread, as :class:`~humanoid_core.processes.node_graph.Graph` does).

A terminal that closes (or ``kill -HUP``) sends SIGHUP, whose default action kills the
process on the spot, without the shutdown a hardware node needs:
:func:`hang_up_like_terminate` makes it a SIGTERM.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import faulthandler
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

#: The launcher's process ID, given to its children in the environment, so that a child
#: can tell whether its launcher already died before it asked for the parent-death signal.
LAUNCHER_PID_VARIABLE = "HUMANOID_LAUNCHER_PID"
#: Environment variable a restarted node finds the reason of its restart in
#: (:mod:`humanoid_control.ros.restart_report`).
RESTART_VARIABLE = "HUMANOID_RESTART_REASON"
_PR_SET_PDEATHSIG = 1


def tethered_child(module: str, arguments: Sequence[str] = (),
                   restart_reason: str | None = None) -> tuple[list[str], dict[str, str]]:
    """Command line and environment that run ``python -m module arguments`` as a child of
    this process that dies with it (through :mod:`humanoid_core.processes.run_tethered`);
    ``restart_reason``: why it runs again (the node reports it)."""
    command = [sys.executable, "-m", "humanoid_core.processes.run_tethered", module, *arguments]
    env = {k: v for k, v in os.environ.items() if k != RESTART_VARIABLE}
    return command, env | {LAUNCHER_PID_VARIABLE: str(os.getpid())} | (
        {RESTART_VARIABLE: restart_reason} if restart_reason else {})


def tethered_program(node: bool = False) -> tuple[list[str], dict[str, str]]:
    """Command prefix and environment that run a program (given after the prefix) as a child
    of this process that dies with it: how the launch files start every process, the
    launch process being the parent (``run_tethered --exec``; ``node``: a node of this
    stack, ``--exec-node``)."""
    prefix = [sys.executable, "-m", "humanoid_core.processes.run_tethered", "--exec-node" if node else "--exec"]
    return prefix, {LAUNCHER_PID_VARIABLE: str(os.getpid())}


def die_with_parent(expected_parent: int | None = None) -> bool:
    """Ask the kernel to send SIGTERM to this process when its parent dies (Linux; elsewhere
    nothing is asked). Returns False when the parent is already gone: this process was
    re-parented before it asked (``os.getppid()`` is not ``expected_parent``), and the
    caller should exit."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    return expected_parent is None or os.getppid() == expected_parent


def exit_within(seconds: int) -> None:
    """End this process (SIGALRM, the kernel's default action: no Python code needs to run)
    if it is still alive ``seconds`` from now: for a teardown that may hang in native code
    holding the interpreter (Fast DDS busy-waits in ``set_listener`` while a node is destroyed,
    eProsima/Fast-DDS#6513; a loop process left spinning a core after its front had gone)."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, seconds))


#: s the interpreter may stay unavailable to :func:`end_when_orphaned`'s thread before the
#: process ends: no healthy process holds it that long (loading a robot into PyBullet, the
#: longest native call here, takes seconds on the slowest machine CI has).
HANG_LIMIT = 30.0


def end_when_orphaned(parent: int, grace: float, hang_limit: float = HANG_LIMIT) -> None:
    """Make sure this process ends ``grace`` seconds after ``parent`` dies, even when the
    SIGTERM of :func:`die_with_parent` cannot be handled: Python runs a signal handler in the
    main thread only, between bytecodes, and a main thread stuck in native code (a DDS write
    that never returns) never gets there. A daemon thread re-arms faulthandler's watchdog (a C
    thread that needs no interpreter lock) every second while ``parent`` lives; once it is
    gone, for ``grace`` seconds, the time the process's own shutdown is given. When the
    watchdog fires it prints every thread's stack on stderr (what was stuck) and exits with
    status 1. A process whose interpreter is held by a stuck thread cannot re-arm it, and ends
    ``hang_limit`` seconds after the last time it could, parent or not."""

    def watch() -> None:
        while os.getppid() == parent:
            faulthandler.dump_traceback_later(hang_limit, exit=True)
            time.sleep(1.0)
        faulthandler.dump_traceback_later(grace, exit=True)

    threading.Thread(target=watch, name="orphan-watchdog", daemon=True).start()


def is_running(pid: int) -> bool:
    """Is process ``pid`` alive? A zombie is not: it has exited, only its parent has not
    reaped it yet (a launcher killed outright never will). Nor is a process whose memory is
    gone (its command line reads empty): it is exiting, and its pipes may be closed already.
    A parent that read its pipe to the end found /proc still saying running in 178 of 300
    exits of a one-thread child beside four CPU hogs (in none on a quiet machine); the command
    line was empty in each."""
    fields = _stat(pid)
    if fields is None or fields[0] == "Z":
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return bool(cmdline.read(1))
    except OSError:
        return False


def running_process_groups() -> set[int]:
    """The process groups a running process (not a zombie: see :func:`is_running`) is in."""
    groups = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None and fields[0] != "Z":
            groups.add(int(fields[2]))
    return groups


def child_processes(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (zombies included), from the process table."""
    return _children_by_parent().get(pid, [])


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (zombies included), from one read of the process table."""
    children = _children_by_parent()
    tree, todo = [], [pid]
    while todo:
        member = todo.pop()
        tree.append(member)
        todo.extend(children.get(member, []))
    return tree


def _children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, parent, process
    group, ...); None when the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def hang_up_like_terminate() -> None:
    """Make SIGHUP do what SIGTERM does in this process (rclpy's shutdown, or Python's
    handler): the handler re-sends the hang-up to this process as SIGTERM."""
    signal.signal(signal.SIGHUP, lambda _signum, _frame: os.kill(os.getpid(), signal.SIGTERM))
