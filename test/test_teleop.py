"""``humanoid walk --teleop SECONDS``: the Bioloid walked on cmd_vel with a seeded schedule of
varied commands, in lockstep, as the command runs it (its own graph, the default one): it
walks the whole span without a fall, covers ground, and says so. A short span here; the
minutes-long runs and their figures are the command's (docs/walking.md).

5 s of seed 7's schedule: sideways, backward, then forward, three segments that each walk
(seed 1's 10 s stood still for its first 5.4 s, then turned): half the robot time, the same
checks, and more of it walking."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.system

SECONDS = 5.0


def test_a_short_teleoperated_walk_covers_ground_without_a_fall():
    done = subprocess.run(["humanoid", "walk", "--robot", "bioloid", "--teleop", f"{SECONDS:g}", "--seed", "7",
                           "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    report = json.loads(done.stdout[done.stdout.index("{"):])
    assert report["falls"] == 0 and report["falls_at"] == []
    assert report["segments"] >= 2
    assert report["distance_m"] > 0.02  # it walked, not stood (5 s of slow steps sideways, back and forth)
    assert report["minutes_before_a_fall"] == pytest.approx(SECONDS / 60.0)
