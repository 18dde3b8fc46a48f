"""``scripts/cpu_by_process.py``, the suite's CPU by process kind (docs/testing.md): a process
that burns a second of CPU while it samples is counted under its kind, and the sums are written
when it is stopped."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "cpu_by_process.py"
#: Burns a second of CPU, says so, and lives on until its standard input closes.
BURN = "import sys, time\nend = time.process_time() + 1.0\nwhile time.process_time() < end: pass\n" \
       "print('burnt', flush=True)\nsys.stdin.read()"


def test_a_busy_process_is_counted_under_its_kind(tmp_path):
    output = tmp_path / "cpu.txt"
    sampler = subprocess.Popen([sys.executable, str(SCRIPT), str(output), "--period", "0.1"], stdout=subprocess.PIPE,
                               text=True)
    burner = None
    try:
        assert sampler.stdout.readline().startswith("sampling every 0.1 s")  # its first sample is taken
        burner = subprocess.Popen([sys.executable, "-c", BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        assert burner.stdout.readline().strip() == "burnt"
    finally:
        sampler.send_signal(signal.SIGTERM)  # its last sample sees the burner still there
        assert sampler.wait(30) == 0
        if burner is not None:
            burner.communicate(timeout=30)
    sums = {line.split(None, 1)[1]: float(line.split(None, 1)[0]) for line in output.read_text().splitlines()}
    assert 0.9 <= sums.get("other python (-c import)", 0.0) <= 1.3, sums
