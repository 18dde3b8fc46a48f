"""A local Ray instance that dies with the process that started it.

``ray.init()`` starts Ray's processes (GCS, raylet, workers, agents) on this machine and
``ray.shutdown()`` stops them; but a driver killed outright (``kill -KILL``, the OOM killer)
leaves Ray's agents running for a minute or more (they try to report the raylet's death
to a GCS that is gone). Every process we start must die with its parent, so
:func:`start` marks Ray's processes (an environment variable they all inherit) and starts
a small reaper, ``python -m humanoid_experiments.local_ray OWNER``, which waits on a pipe from
the owner: when the pipe closes (the owner stopped Ray, exited or was killed), it kills
every process that still carries the owner's mark or holds a file in the instance's session
directory (the owner writes it to the pipe once Ray started): Ray's agents set their process
title over their environment, the mark with it, but keep their logs open there.

The instance listens on the loopback interface only and sends no usage report. Ray turns
the ``127.0.0.1`` given to ``ray.init`` into the machine's network address and has its
servers listen on every interface, unless its single-machine mode is on, which it keeps for
Windows and macOS: :data:`LOCAL_MODE` turns it on for the local instance (every
server then listens on 127.0.0.1; ``test_local_ray.py`` reads the instance's sockets from
``/proc``). A cluster given by address keeps its own settings.

The local instance's workers run at niceness 0, the command's own, not Ray's default 15: a
search started by hand is the work the user asked for, and at 15 anything else running in
the same session (the kernel's autogroup weighs nice values within it) took nearly all the
CPU from the evaluations (a fit of 2 minutes took over 10 beside two busy processes).
``RAY_worker_niceness`` in the environment overrides it (15: a search in the background).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

#: The mark every Ray process of one owner inherits: the owner's process ID.
OWNER_VARIABLE = "HUMANOID_RAY_OWNER"
#: Ray's environment: no usage report sent to its makers.
RAY_ENVIRONMENT = {"RAY_USAGE_STATS_ENABLED": "0"}
#: The local instance's besides: Ray's single-machine mode (loopback addresses only; the
#: variable's name says what it was made for, its effect is the same on Linux).
LOCAL_MODE = ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
#: The local instance's workers' niceness unless the environment sets ``RAY_worker_niceness``.
WORKER_NICENESS = 0
#: Starts of the local instance tried when Ray's own start-up wait runs out (its words for it).
START_ATTEMPTS = 3
STARTUP_TIMEOUT_WORDS = "timed out during startup"


class LocalRay:
    """A running local instance and its reaper; :meth:`stop` ends both."""

    def __init__(self, reaper: subprocess.Popen, session_dir: str) -> None:
        self._reaper = reaper
        #: Ray's directory of this instance (its logs are in ``logs``).
        self.session_dir = session_dir

    def stop(self) -> None:
        import ray

        ray.shutdown()
        if self._reaper.stdin is not None:
            self._reaper.stdin.close()  # the reaper sweeps what ray.shutdown left, then exits
        self._reaper.wait(timeout=30)


def start(cpus: int) -> LocalRay:
    """``ray.init`` of a local instance of ``cpus`` CPUs on 127.0.0.1, reaped with this process.
    Call it before anything imports ``ray``: Ray reads its single-machine mode at import (a
    second instance after the first one stopped is fine: the mode was read then)."""
    if "ray" in sys.modules and os.environ.get(LOCAL_MODE[0]) != LOCAL_MODE[1]:
        raise RuntimeError("local_ray.start() must come before `import ray`: Ray reads its single-machine mode "
                           "(loopback only) when it is imported")
    os.environ.update(RAY_ENVIRONMENT | dict([LOCAL_MODE]) | {OWNER_VARIABLE: str(os.getpid())})
    os.environ.setdefault("RAY_worker_niceness", str(WORKER_NICENESS))
    reaper = subprocess.Popen([sys.executable, "-m", "humanoid_experiments.local_ray", str(os.getpid())],
                              stdin=subprocess.PIPE)
    import ray

    def clean() -> None:  # what the failed start left running (the reaper stays)
        sweep(os.getpid(), keep=reaper.pid)
        ray.shutdown()

    started: list = []
    started_again(lambda: started.append(ray.init(num_cpus=cpus, include_dashboard=False,
                                                  _node_ip_address="127.0.0.1", logging_level="ERROR",
                                                  log_to_driver=False)), clean)
    session_dir = started[-1].address_info["session_dir"]
    reaper.stdin.write(f"{session_dir}\n".encode())
    reaper.stdin.flush()
    return LocalRay(reaper, session_dir)


def started_again(init: Callable[[], object], clean: Callable[[], None], attempts: int = START_ATTEMPTS) -> None:
    """``init()``, and again after ``clean()`` when it failed on Ray's start-up wait (Ray
    gives its raylet 30 s, fixed in its code, to register with its GCS: a machine busy with
    other work missed it), up to ``attempts`` in all; any other error at once. Said on stderr."""
    for attempt in range(1, attempts + 1):
        try:
            init()
            return
        except Exception as error:
            if STARTUP_TIMEOUT_WORDS not in str(error) or attempt == attempts:
                raise
            print(f"Ray's local instance did not start in time (\"{error}\"), starting it again "
                  f"({attempt + 1} of {attempts})", file=sys.stderr)
            clean()


class RayConnection:
    """Ray for a search's evaluations: a local instance (:func:`start`) or the cluster at an
    address; ``workers`` evaluations at once; :meth:`close` stops the local instance, or
    leaves the cluster running."""

    def __init__(self, workers: int | None, address: str | None) -> None:
        self._local: LocalRay | None = None if address else start(workers or os.cpu_count() or 1)
        import ray  # after start(), which must come first

        if address:
            os.environ.update(RAY_ENVIRONMENT)
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        self.workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))

    @property
    def local(self) -> bool:
        return self._local is not None

    @property
    def session_dir(self) -> str | None:
        """The local instance's directory (Ray's logs are in its ``logs``); None on a cluster."""
        return self._local.session_dir if self._local is not None else None

    def close(self) -> None:
        import ray

        if self._local is not None:
            self._local.stop()
        else:
            ray.shutdown()  # leaves the cluster running


def _others(owner: int) -> list[Path]:
    """The /proc entries of the processes but this one and ``owner``."""
    return [entry for entry in Path("/proc").iterdir()
            if entry.name.isdigit() and int(entry.name) not in (os.getpid(), owner)]


def marked_processes(owner: int) -> list[int]:
    """The processes (other than this one) whose environment carries ``owner``'s mark."""
    mark = f"{OWNER_VARIABLE}={owner}".encode()
    found = []
    for entry in _others(owner):
        try:
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if mark in environment:
            found.append(int(entry.name))
    return found


def in_session(pid: int, session_dirs: Sequence[str]) -> bool:
    """Does process ``pid`` hold a file (or its working directory) in one of ``session_dirs``?"""
    prefixes = tuple(directory.rstrip("/") + "/" for directory in session_dirs)
    if not prefixes:
        return False
    entry = Path("/proc") / str(pid)
    try:
        links = [entry / "cwd", *(entry / "fd").iterdir()]
    except OSError:  # gone meanwhile, or not ours to read
        return False
    for link in links:
        with contextlib.suppress(OSError):
            if (os.readlink(link) + "/").startswith(prefixes):
                return True
    return False


def ray_processes(owner: int, session_dirs: Sequence[str] = ()) -> list[int]:
    """The processes (other than this one) of ``owner``'s Ray: those carrying its mark, and
    those holding a file in one of its instances' ``session_dirs``."""
    marked = marked_processes(owner)
    return marked + [pid for pid in (int(entry.name) for entry in _others(owner))
                     if pid not in marked and in_session(pid, session_dirs)]


def reap(owner: int) -> None:
    """Wait until the owner closes our stdin (or dies), then kill what is left of its Ray;
    the owner writes each instance's session directory on a line of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is for the owner
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    said = b""
    while chunk := sys.stdin.buffer.read(4096):
        said += chunk
    sweep(owner, session_dirs=said.decode(errors="replace").split())


#: Sweeps in a row that must find nothing to kill before the reaper ends, and the seconds
#: between sweeps. One sweep can miss a process started while it went by: /proc lists by
#: process ID, IDs wrap, and a raylet listed after its agents starts an agent again when the
#: sweep kills one; the next sweep finds it with the raylet already dead.
QUIET_SWEEPS = 3
SWEEP_INTERVAL = 0.2


def sweep(owner: int, keep: int | None = None, quiet_sweeps: int = QUIET_SWEEPS,
          session_dirs: Sequence[str] = ()) -> None:
    """:func:`kill_ray` until ``quiet_sweeps`` sweeps in a row find nothing to kill."""
    quiet = 0
    while quiet < quiet_sweeps:
        quiet = 0 if kill_ray(owner, keep, session_dirs) else quiet + 1
        time.sleep(SWEEP_INTERVAL)


def kill_ray(owner: int, keep: int | None = None, session_dirs: Sequence[str] = ()) -> int:
    """Kill (SIGKILL) ``owner``'s Ray processes (:func:`ray_processes`) but ``keep``; how many."""
    killed = 0
    for pid in ray_processes(owner, session_dirs):
        if pid != keep:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


if __name__ == "__main__":
    reap(int(sys.argv[1]))
