#!/usr/bin/env python3
"""CPU-seconds of every process on the machine, summed by kind, until SIGTERM or SIGINT.

``scripts/cpu_by_process.py OUT`` samples ``/proc`` every ``--period`` seconds and, when
stopped, writes one line per kind to OUT (``CPU-s kind``, largest first): the simulation
loops, the control containers, the test workers' in-process work, the bus emulators, Ray,
the browser, the build. What the suite's CPU log cannot tell (docs/testing.md, "Where the
time goes"): which process of a graph took it. Run beside ``make test``; a process that
starts and ends between two samples is missed (a short command: a few tenths of a second).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
#: Words of a command line and the kind they name, first match wins.
KINDS = (("humanoid_sim.sim_node", "sim front"), ("hw_node", "hw front"), ("nodes.container", "container"),
         ("humanoid_hw.emulator", "emulator"), ("ray::", "ray"), ("raylet", "ray"), ("gcs_server", "ray"),
         ("/ray/", "ray"), ("chrom", "chromium"), ("bin/pytest", "pytest controller"),
         ("import sys;exec(eval(sys.stdin.readline()))", "pytest worker"), ("humanoid_bringup", "humanoid command"),
         ("bin/humanoid", "humanoid command"), ("colcon", "build"), ("cc1", "build"), ("cmake", "build"),
         ("rosidl", "build"), ("pip", "set-up"), ("ruff", "ruff"),
         ("resource_tracker", "resource tracker"))


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def kind_of(pid: int, parent: int, name: str) -> str:
    """What a process is: a loop process by its parent (a spawned child of a driver's front)."""
    line = command_line(pid)
    if "multiprocessing.spawn" in line:
        front = command_line(parent)
        return "sim loop" if "sim_node" in front else "hw loop" if "hw_node" in front else "other spawned"
    for words, kind in KINDS:
        if words in line:
            return kind
    return f"other python ({' '.join(line.split()[1:3])[:60]})" if "python" in line else f"other ({name})"


def cpu_ticks(pid: int) -> tuple[int, int, int, str]:
    """Parent, CPU ticks (user + system), start time and name of a process."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    name = text[text.index("(") + 1:text.rindex(")")]
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19]), name


class Tally:
    """CPU ticks by kind since the first sample (what processes had spent before it is left out)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], tuple[str, int]] = {}
        self.ticks: dict[str, int] = {}
        self.first = True

    def sample(self) -> None:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                parent, ticks, started, name = cpu_ticks(int(entry))
            except (OSError, ValueError):
                continue
            key = (int(entry), started)
            if key not in self.seen:
                self.seen[key] = (kind_of(int(entry), parent, name), ticks if self.first else 0)
            kind, before = self.seen[key]
            self.ticks[kind] = self.ticks.get(kind, 0) + ticks - before
            self.seen[key] = (kind, ticks)
        self.first = False

    def lines(self) -> list[str]:
        return [f"{ticks / TICKS:9.1f} {kind}" for kind, ticks in sorted(self.ticks.items(), key=lambda kv: -kv[1])
                if ticks > 0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path, help="file the sums are written to when stopped")
    parser.add_argument("--period", type=float, default=0.5, help="seconds between samples (0.5)")
    args = parser.parse_args()
    tally = Tally()
    stopped = False

    def stop(_signal: int, _frame: object) -> None:
        nonlocal stopped
        stopped = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tally.sample()
    print(f"sampling every {args.period:g} s; the sums go to {args.output} when stopped (SIGTERM, Ctrl-C)", flush=True)
    while not stopped:
        time.sleep(args.period)
        tally.sample()
    tally.sample()  # the processes still running, up to now
    args.output.write_text("\n".join(tally.lines()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
