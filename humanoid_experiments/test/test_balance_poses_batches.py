"""`humanoid balance-poses` on batches: a verdict per pose (a pose beyond the thesis'
joint-limit table is reported, not fatal), progress on long batches, bounded memory."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest
import yaml

from humanoid_description import robot_files

BALANCED = yaml.safe_load(robot_files("bioloid").config_file("balanced_poses.yaml").read_text())["poses"]


def line(label: str, angles) -> str:
    return ",".join([label, *map(str, angles)]) + "\n"


def balance_poses(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["humanoid", "balance-poses", "--robot", "bioloid", *args], capture_output=True,
                          text=True, timeout=600)


def test_a_pose_beyond_the_limit_table_is_reported_and_the_batch_goes_on(tmp_path):
    """The thesis notes a balanced pose with J14 = 84.40 deg, beyond its own table's
    J14 range (raw 377..738 = -39.58..66.26 deg) yet within the AX-12's 300 deg."""
    p3, p12 = BALANCED["P3"]["angles"], BALANCED["P12"]["angles"]
    beyond_table = list(p3)
    beyond_table[13] = 84.40
    beyond_servo = list(p3)
    beyond_servo[1] = 160.0  # J2 has no table limit: only the servo's +-150 deg
    path = tmp_path / "poses.csv"
    path.write_text(line("P3", p3) + line("J14 high", beyond_table) + line("J2 beyond", beyond_servo)
                    + line("P12", p12))
    result = balance_poses("--poses", str(path), "--json", "-")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert [e["pose"] for e in entries] == ["P3", "J14 high", "J2 beyond", "P12"]
    assert entries[0]["outside_limits"] == [] and entries[3]["outside_limits"] == []
    (j14,) = entries[1]["outside_limits"]
    assert (j14["joint"], j14["value_deg"], j14["within_servo_range"]) == ("J14", 84.40, True)
    assert j14["limits_deg"] == pytest.approx([-39.58, 66.26], abs=0.01)
    (j2,) = entries[2]["outside_limits"]
    assert (j2["joint"], j2["value_deg"], j2["within_servo_range"]) == ("J2", 160.0, False)
    assert j2["limits_deg"] == pytest.approx([-150.12, 149.83], abs=0.01)  # the AX-12's range is J2's table
    assert all(len(e["com_mm"]) == 3 for e in entries)  # every pose analysed
    assert "4 poses analysed (2 outside the thesis' limit table)" in result.stderr


def random_poses(count: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(line(f"r{i}", [round(rng.uniform(-20.0, 20.0), 2) for _ in range(18)]) for i in range(count))


def peak_memory_mb(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    """The command's peak resident memory, measured in a child of its own (getrusage of children)."""
    probe = textwrap.dedent(f"""
        import resource, subprocess, sys
        result = subprocess.run({["humanoid", "balance-poses", "--robot", "bioloid", *args]!r},
                                capture_output=True, text=True)
        sys.stderr.write(result.stderr)
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0)
        sys.exit(result.returncode)
    """)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    return float(result.stdout.strip() or "nan"), result


def test_a_long_batch_shows_progress_and_keeps_its_memory(tmp_path):
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    small.write_text(random_poses(100))
    large.write_text(random_poses(2000, seed=1))
    small_mb, _ = peak_memory_mb("--poses", str(small), "--json", str(tmp_path / "small.json"))
    large_mb, result = peak_memory_mb("--poses", str(large), "--json", str(tmp_path / "large.json"),
                                      "--progress", "0.2")
    assert result.returncode == 0, result.stderr
    assert len(json.loads((tmp_path / "large.json").read_text())) == 2000
    progress = [ln for ln in result.stderr.splitlines() if ln.startswith("balance-poses: ")]
    counts = [int(ln.split()[1].split("/")[0]) for ln in progress]
    assert counts and counts == sorted(counts) and counts[-1] < 2000
    assert all("/2000 poses analysed" in ln and "left" in ln for ln in progress)
    # 20 times the poses, the same memory: results are streamed, not kept (measured: streamed
    # +0.0 MB; keeping the 2000 entries +9 MB)
    assert large_mb < small_mb + 4.0, (small_mb, large_mb)


def test_an_interrupted_batch_leaves_the_previous_output(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("previous\n")
    bad = tmp_path / "bad.csv"
    bad.write_text(random_poses(5) + "1,2,3\n")  # found by the checking pass: nothing analysed, nothing written
    result = balance_poses("--poses", str(bad), "--json", str(out))
    assert result.returncode == 2 and "bad.csv:6: expected 18 angles" in result.stderr
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "out.json"]  # no partial file left
