"""``humanoid bench graph``: what a robot's default graph costs while it stands, process by
process: CPU (share of one core) and memory (resident and proportional set size).

It runs the command a user runs (``humanoid sim --robot R``, or ``humanoid real --robot R
--emulate``), waits until the robot interface is up and every node has settled, then reads
``/proc`` of every process the command started (the command itself included, the bus
emulator left out: it stands for the servos) over ``--seconds`` of wall time. The baseline,
from the same run: the same command with ``--process-per-node`` (each control node in a
process of its own, as the stack ran them before the container). With ``--real``, a second
baseline: the bus driver alone at the robot's control rate, against the same kind of emulator
with no ROS (:func:`~humanoid_experiments.bench.bus.paced_driver_cost`), the floor under the
hardware loop's share while the bus is read this way.

Memory: ``rss`` counts every page a process maps, so a shared library mapped by five
processes is counted five times in a sum of RSS; ``pss`` divides each shared page among the
processes that map it, including processes outside the graph (the bus emulator, another
Python program), so a sum of PSS understates what the graph alone would hold. The total to
judge a small computer by is ``resident_mb``: the physical pages the graph's processes hold,
each counted once however many of them map it (the page frames of ``/proc/<pid>/pagemap``,
which only a privileged reader sees; ``None`` otherwise).

Nothing subscribes to the graph from here (a subscriber would make the driver publish for
it): readiness is read from the command's log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_core import UsageError, positive_number, robot_name
from humanoid_core.processes import process_tree
from humanoid_experiments.bench.cpu_time import load_average, own_cpu_seconds

#: s after the robot interface is up before the window opens: the control nodes finish
#: starting (their first states, the self-collision model, the walk controller's pattern).
SETTLE = 5.0
#: s the command may take to bring the robot up.
START_TIMEOUT = 120.0
#: What the command logs once the robot's interface is up (humanoid_control.ros.robot_interface).
READY_LINE = "robot interface up"


@dataclass(frozen=True)
class ProcessCost:
    """One process of the graph over the window."""

    name: str
    pid: int
    cpu: float  # share of one core
    rss_mb: float
    pss_mb: float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace

    parser.add_argument("--robot", required=True, type=robot_name, help="the robot")
    parser.add_argument("--real", action="store_true",
                        help="the hardware graph (humanoid real) instead of the simulation's; needs --emulate")
    parser.add_argument("--emulate", action="store_true", help="with --real: on the bus emulator")
    parser.add_argument("--seconds", type=positive_number, default=20.0, help="wall seconds measured (20)")
    add_own_robot_namespace(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def graph_command(args: argparse.Namespace, per_node: bool) -> list[str]:
    """The ``humanoid`` command a user runs for this graph."""
    command = [sys.executable, "-m", "humanoid_bringup.cli"]
    command += ["real", "--robot", args.robot, "--emulate"] if args.real else ["sim", "--robot", args.robot]
    return [*command, *(["--process-per-node"] if per_node else []),
            *(["--namespace", args.namespace] if args.namespace != "/" else [])]


def measure(command: list[str], seconds: float, say) -> tuple[list[ProcessCost], float | None]:
    """Run ``command`` (a graph), wait for its robot to be up and settled, measure each of its
    processes over ``seconds``, stop it: the processes' costs, and the memory they hold
    together (:func:`resident_once_mb`)."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    up = threading.Event()
    log: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            if READY_LINE in line:
                up.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not up.wait(START_TIMEOUT):
            raise RuntimeError(f"the graph did not come up within {START_TIMEOUT:g} s: {''.join(log[-5:])}")
        time.sleep(SETTLE)  # not a guess at readiness: a settling time kept out of the window on purpose
        members = graph_processes(process.pid)
        before = {pid: own_cpu_seconds(pid) for pid in members}
        start = time.monotonic()
        time.sleep(seconds)  # the measuring window itself
        elapsed = time.monotonic() - start
        costs = []
        for pid, name in members.items():
            after = own_cpu_seconds(pid)
            if after is None or before[pid] is None:
                continue
            rss, pss = memory_mb(pid)
            costs.append(ProcessCost(name, pid, round((after - before[pid]) / elapsed, 4), rss, pss))
        resident = resident_once_mb([c.pid for c in costs])
        if process.poll() is not None:
            raise RuntimeError(f"the graph ended during the measurement: {''.join(log[-5:])}")
        return costs, resident
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        say(f"  stopped ({len(log)} log lines)")


def graph_processes(root: int) -> dict[int, str]:
    """The command's processes (``root`` and its descendants), named: the command itself, each
    node by its ROS name (``__node:=``), a driver's loop process as ``<node>_loop``; the bus
    emulator and multiprocessing's resource tracker left out."""
    named = named_processes(process_tree(root))
    if root in named:
        named[root] = "humanoid (the command)"
    return named


@contextlib.contextmanager
def log_tails_on_failure(graph) -> Iterator[None]:
    """A client's failure to reach ``graph`` (RobotClientError), raised again with the last lines
    of each of its processes' logs: a benchmark's log folder is temporary and goes with it."""
    from humanoid_control.ros import RobotClientError

    try:
        yield
    except RobotClientError as error:
        raise RobotClientError(f"{error}\nthe graph's logs, last lines:\n{graph.log_tails()}") from error


def named_processes(pids: list[int]) -> dict[int, str]:
    """``pids`` named as :func:`graph_processes` names them."""
    named: dict[int, str] = {}
    children: dict[int, int] = {}
    for pid in pids:
        arguments = command_line(pid)
        if not arguments or any("humanoid_hw.emulator" in a or "resource_tracker" in a for a in arguments):
            continue
        node = next((a.split(":=", 1)[1] for a in arguments if a.startswith("__node:=")), None)
        if node is not None:
            named[pid] = node
        elif any("multiprocessing" in a for a in arguments):
            children[pid] = parent_of(pid)
        else:
            named[pid] = " ".join(arguments)[:40]
    for pid, parent in children.items():
        named[pid] = f"{named.get(parent, parent)}_loop"
    return named


def command_line(pid: int) -> list[str]:
    try:
        return [a for a in Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0") if a]
    except OSError:
        return []


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident and proportional set size of one process, MB."""
    rss = pss = 0.0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "Rss":
                rss = int(value.split()[0]) / 1024.0
            elif key == "Pss":
                pss = int(value.split()[0]) / 1024.0
    except OSError:
        pass
    return round(rss, 1), round(pss, 1)


#: /proc/<pid>/pagemap: one 64-bit entry per virtual page; bit 63 "present", bits 0-54 the
#: page frame (zero for an unprivileged reader).
PAGE_PRESENT = np.uint64(1 << 63)
PAGE_FRAME = np.uint64((1 << 55) - 1)


def resident_once_mb(pids: list[int]) -> float | None:
    """The physical memory ``pids`` hold together, MB: each page frame once, however many of
    them map it. None when the page frames cannot be read (an unprivileged reader sees zeros)."""
    frames = [page_frames(pid) for pid in pids]
    present = [f for f in frames if f is not None]
    if not present:
        return None
    union = np.unique(np.concatenate(present))
    if union.size and not union.any():
        return None
    return round(union.size * os.sysconf("SC_PAGE_SIZE") / 1048576.0, 1)


def page_frames(pid: int) -> np.ndarray | None:
    """The page frames of one process's resident pages (None once it is gone)."""
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        ranges = [tuple(int(x, 16) for x in line.split(None, 1)[0].split("-"))
                  for line in Path(f"/proc/{pid}/maps").read_text().splitlines()]
        found = []
        with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for start, end in ranges:
                pagemap.seek(start // page * 8)
                try:
                    entries = np.frombuffer(pagemap.read((end - start) // page * 8), dtype="<u8")
                except OSError:  # a range the kernel does not map per page ([vsyscall])
                    continue
                found.append(entries[(entries & PAGE_PRESENT) != 0] & PAGE_FRAME)
    except OSError:
        return None
    return np.concatenate(found) if found else np.zeros(0, dtype=np.uint64)


def totals(costs: list[ProcessCost], resident_mb: float | None) -> dict[str, float | None]:
    return {"processes": len(costs), "cpu": round(sum(c.cpu for c in costs), 3),
            "rss_mb": round(sum(c.rss_mb for c in costs), 1), "pss_mb": round(sum(c.pss_mb for c in costs), 1),
            "resident_mb": resident_mb}


def run(args: argparse.Namespace) -> int:
    if args.real and not args.emulate:
        raise UsageError("--real measures the hardware graph on the bus emulator: give --emulate too")
    if args.emulate and not args.real:
        raise UsageError("--emulate goes with --real")
    from humanoid_bringup import free_namespace

    free_namespace(args.namespace)  # refused here in one line, not by the graph's command after a wait
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if not args.json else (lambda _text: None)
    result: dict[str, Any] = {"robot": args.robot, "graph": "real (emulated bus)" if args.real else "simulation",
                              "seconds": args.seconds}
    for label, per_node in (("container", False), ("process_per_node", True)):
        say(f"{args.robot}: {' '.join(graph_command(args, per_node)[3:])} ...")
        costs, resident = measure(graph_command(args, per_node), args.seconds, say)
        result[label] = {"processes": [asdict(c) for c in costs], "total": totals(costs, resident)}
    shared, apart = result["container"]["total"], result["process_per_node"]["total"]
    result["ratio"] = {key: round(shared[key] / apart[key], 3) if shared[key] and apart[key] else None
                       for key in ("cpu", "rss_mb", "pss_mb", "resident_mb")}
    if args.real:
        from humanoid_experiments.bench.bus import paced_driver_cost

        say(f"{args.robot}: the bus driver alone at its control rate ...")
        result["bus_driver_alone"] = asdict(paced_driver_cost(args.robot, args.seconds))
    result["load"] = load_average()
    print(json.dumps(result) if args.json else text(result))
    return 0


def text(r: dict[str, Any]) -> str:
    lines = [f"{r['robot']}, {r['graph']} graph standing, {r['seconds']:g} s measured "
             f"(load {', '.join(f'{v:.2f}' for v in r['load'])})"]
    for label in ("container", "process_per_node"):
        lines.append(f"  {label.replace('_', ' ')}:")
        lines.append(f"    {'process':32} {'CPU (cores)':>11} {'RSS MB':>8} {'PSS MB':>8}")
        for c in sorted(r[label]["processes"], key=lambda c: -c["cpu"]):
            lines.append(f"    {c['name'][:32]:32} {c['cpu']:11.3f} {c['rss_mb']:8.1f} {c['pss_mb']:8.1f}")
        t = r[label]["total"]
        lines.append(f"    {'all ' + str(t['processes']) + ' processes':32} {t['cpu']:11.3f} {t['rss_mb']:8.1f} "
                     f"{t['pss_mb']:8.1f}")
        once = ("unknown (reading page frames needs root)" if t["resident_mb"] is None
                else f"{t['resident_mb']:.1f} MB")
        lines.append(f"    resident in all, each page once: {once}")
    ratio = r["ratio"]
    lines.append(f"  container / process per node: CPU {ratio['cpu']}, RSS {ratio['rss_mb']}, PSS {ratio['pss_mb']}, "
                 f"resident {ratio['resident_mb']}")
    bus = r.get("bus_driver_alone")
    if bus is not None:
        loop = sum(c["cpu"] for c in r["container"]["processes"] if c["name"].endswith("_loop"))
        lines.append(f"  the bus driver alone (reads, SYNC_WRITE and waits at {bus['control_rate']:g} Hz; no ROS, the "
                     f"same emulator): {bus['cpu']:.3f} of a core, {_share(bus['cpu'], loop)} of the hardware loop's, "
                     f"{_share(bus['cpu'], r['container']['total']['cpu'])} of the graph's")
    return "\n".join(lines)


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.2f}" if whole else "n/a"
