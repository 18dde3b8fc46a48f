"""``scripts/stall_processes.py``, the starved machine on demand (docs/testing.md, "Stalls"):
a process of the run is stopped for the time drawn and logged, the robot's own processes are
spared when asked, and a process stopped when the script ends is let go."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

from humanoid_control.ros import poll_until
from humanoid_core.processes import tethered_program

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "stall_processes.py"
#: Writes its monotonic time every 10 ms until its standard input closes; ``{mark}`` names it
#: in its command line (a control loop's process is known by ``multiprocessing.spawn``).
TICKER = ("import os, sys, threading, time  # {mark}\n"
          "threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()\n"
          "while True:\n    print(time.monotonic(), flush=True)\n    time.sleep(0.01)")
STOP = 0.4


def ticker(tmp_path: Path, mark: str) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / f"{mark.replace(' ', '_')}.txt"
    process = subprocess.Popen([sys.executable, "-c", TICKER.format(mark=mark)], cwd=tmp_path,
                               stdin=subprocess.PIPE, stdout=out.open("w"))
    return process, out


def largest_gap(out: Path) -> float:
    times = [float(line) for line in out.read_text().split()]
    return max(b - a for a, b in itertools.pairwise(times))


def test_a_process_of_the_run_is_stopped_and_logged_and_the_robot_spared(tmp_path):
    """Stops every 50-100 ms: the log names the victim alone, each of its stops shows as a gap in
    its ticks, and it ticks on once the script has ended (a stop under way let go)."""
    log = tmp_path / "stalls.log"
    victim, victim_out = ticker(tmp_path, "victim")
    robot, _ = ticker(tmp_path, "multiprocessing.spawn stand-in")
    prefix, env = tethered_program()  # it dies with this process
    staller = subprocess.Popen([*prefix, sys.executable, str(SCRIPT), str(log), "--under", str(tmp_path), "--stop",
                                str(STOP), str(STOP), "--every", "0.05", "0.1", "--spare-robot", "--seed", "1"],
                               env=os.environ | env)
    try:
        poll_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2, "two stops logged", 60.0)
    finally:
        staller.send_signal(signal.SIGTERM)
        assert staller.wait(30) == 0
    try:
        lines = [line.split("\t") for line in log.read_text().splitlines()]
        assert {int(pid) for _, _, pid, _ in lines} == {victim.pid}, lines
        assert all(float(seconds) == STOP and "victim" in command for _, seconds, _, command in lines)
        assert largest_gap(victim_out) >= STOP - 0.05
        before = len(victim_out.read_text().split())  # the last stop was let go: it ticks on
        poll_until(lambda: len(victim_out.read_text().split()) > before + 5, "the victim ticking again", 30.0)
    finally:
        for process in (victim, robot):
            process.kill()
            process.wait(30)


def test_bad_spans_are_refused_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "log"), "--under", str(tmp_path),
                             "--stop", "2", "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--stop and --every need 0 < MIN <= MAX" in result.stderr
