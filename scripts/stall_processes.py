#!/usr/bin/env python3
"""Stop a random process of a test run now and then, as a starved machine does, until SIGTERM.

``scripts/stall_processes.py LOG --under DIR`` picks, every ``--every`` seconds (a random
span between the two values), one Python or ``humanoid`` process whose working directory is
under DIR (a clean clone running ``make test``), stops it (SIGSTOP) for ``--stop`` seconds and
lets it go on (SIGCONT), and writes one line per stop to LOG: ``start time, seconds, PID,
command line``. CI's 2-core machine has held processes back for a second and more (a container
handling states 1-1.5 s after their stamps); a test that such a stall fails waits on time
instead of on the event, unless what stalled was the robot itself (its loop or its bus), where
a safety watchdog is right to trip: ``--spare-robot`` leaves the control loops' processes and
the bus emulators alone. The pytest controller is never stopped (that only delays the run).
Every process it stopped is let go when it ends. docs/testing.md, "Stalls", says what runs
beside it found.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import sys
import time
from pathlib import Path

#: Words of a command line that mark the robot's own processes (--spare-robot).
ROBOT_SIDE = ("multiprocessing.spawn", "humanoid_hw.emulator", " emulate ")
#: Words of the pytest controller's command line (its workers are started through execnet).
CONTROLLER = ("bin/pytest", "-m pytest")


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def candidates(under: str, spare_robot: bool) -> list[tuple[int, str]]:
    """The processes that may be stopped now: PID and command line."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid, command = int(entry), command_line(int(entry))
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if not command or not cwd.startswith(under) or not ("python" in command or "humanoid" in command):
            continue
        if any(word in command for word in CONTROLLER) or (spare_robot and any(w in command for w in ROBOT_SIDE)):
            continue
        found.append((pid, command))
    return found


def stall(pid: int, seconds: float) -> bool:
    """Stop ``pid`` for ``seconds``; False when it was gone."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        return False
    try:
        time.sleep(seconds)
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="docs/testing.md, \"Stalls\", shows a run beside make test.")
    parser.add_argument("log", type=Path, help="file the stops are appended to (one line each)")
    parser.add_argument("--under", required=True, help="only processes whose working directory is under this")
    parser.add_argument("--stop", type=float, nargs=2, default=(0.3, 1.5), metavar=("MIN", "MAX"),
                        help="seconds each stop lasts, drawn between MIN and MAX (default 0.3 1.5)")
    parser.add_argument("--every", type=float, nargs=2, default=(2.0, 5.0), metavar=("MIN", "MAX"),
                        help="seconds between stops, drawn between MIN and MAX (default 2 5)")
    parser.add_argument("--spare-robot", action="store_true",
                        help="never stop a control loop's process or a bus emulator")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one each run)")
    args = parser.parse_args(argv)
    if not (0.0 < args.stop[0] <= args.stop[1]) or not (0.0 < args.every[0] <= args.every[1]):
        parser.error("--stop and --every need 0 < MIN <= MAX")
    under = os.path.realpath(args.under)
    rng = random.Random(args.seed)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a stop under way is let go (stall's finally)
    with args.log.open("a", buffering=1) as log:
        try:
            while True:
                time.sleep(rng.uniform(*args.every))
                found = candidates(under, args.spare_robot)
                if not found:
                    continue
                pid, command = rng.choice(found)
                seconds, start = rng.uniform(*args.stop), time.time()
                if stall(pid, seconds):
                    log.write(f"{start:.3f}\t{seconds:.2f}\t{pid}\t{' '.join(command.split())[:200]}\n")
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
