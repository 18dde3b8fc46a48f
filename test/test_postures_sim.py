"""``humanoid postures`` on the simulated HOAP-2 and Bioloid quadruped, as users run it: a
short subset of each protocol in coarse steps, and the ``--real`` mode against a running robot.

What users rely on: the limits found stay within a stated band around the real
robot's (the reference's table) or, for the quadruped, whose reference does not say which servo it stepped,
around the model's quasi-static limit; the robot tips the way the protocol says (which
checks the mapping of the table's signs onto our joint axes by physics); the quadruped's
limit comes as its servo's AX-12 register value too, next to the reference's own values;
and ``--real`` on a robot with foot sensors waits for the operator's ``ready`` before moving,
stops at the first foot event and never calls a simulator service (on a robot without them,
test_postures_operator.py).

Every run is the command's entry point in the test's process (the property is the limits,
tipping and output, not the command's process; the simulation node a run starts, or the one
``--real`` drives, is a process of its own all the same, over DDS). ``--real`` reads its
operator's answers from standard input: the entry point's standard input (descriptor and
``sys.stdin``) is the answers' text, as a pipe would carry it; an interpreter start and the
command's imports (a few CPU-s) are saved per run.
"""

from __future__ import annotations

import json
import math

import pytest
import yaml
from cli_entry import entry_point

from humanoid_description import load_config
from humanoid_experiments.postures import protocol_path
from humanoid_sim.sim_node_spec import sim_node_spec

pytestmark = pytest.mark.system

#: Coarse steps: a first pass in 6 deg steps, then again from its last step that stood in 2 deg
#: steps (the runner's own two-pass search, as the full protocol's 2 / 0.5 deg): the subset runs
#: in well under a minute of robot time, and the limit found is a 2 deg step's all the same.
#: Each step keeps the protocol's step_time (the quasi-static moves of postures.yaml: a faster
#: move tips the HOAP-2 a step early or late); the hold after it is half the protocol's 1 s,
#: which finds the same limits and tipping (HOAP-2 tests 1, 9, 13 and the quadruped's 1 each
#: gave the same step and direction with 0.5 s and 1 s) for a fifth less robot time.
COARSE = {"step": 2.0, "coarse_step": 6.0, "start_settle_time": 0.5, "settle_time": 0.5}
#: Band (deg) around the real robot's limit that a coarse run must land in: the protocol's
#: target (within 5 deg of the real robot on average) plus one 2 deg step (the fine pass's),
#: by which a coarse search can overshoot the limit a fine one finds.
BAND_DEG = 7.0


def coarse_protocol(tmp_path, robot: str = "hoap2") -> str:
    protocol = yaml.safe_load(protocol_path(robot).read_text())
    protocol["parameters"].update(COARSE)
    path = tmp_path / "coarse.yaml"
    path.write_text(yaml.safe_dump(protocol))
    return str(path)


def test_a_coarse_subset_finds_the_real_robots_limits_and_tips_the_right_way(tmp_path):
    out = tmp_path / "postures.json"
    result = entry_point("postures", "--robot", "hoap2", "--tests", "1,9,13",
                         "--protocol", coarse_protocol(tmp_path), "--json", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[1/3] test 1 (leg3 Back)" in result.stderr and "step 1: +6.00 deg" in result.stderr  # progress
    # each limit from the fine pass: again from the last coarse step that stood, in 2 deg steps
    assert result.stderr.count("in steps of 2 deg") == 3, result.stderr
    assert "average |error| over the 3 tests with a real value" in result.stdout
    found = {entry["test"]: entry for entry in json.loads(out.read_text())}
    assert sorted(found) == [1, 9, 13]
    for entry in found.values():
        assert entry["limit_rad"] is not None, entry
        assert abs(math.degrees(entry["limit_rad"] - entry["real_rad"])) <= BAND_DEG, entry
    # the reference's "leg3 Back: positive = falls backward", the ankle forward, by physics;
    # the ankle roll to the right (negative) tips the robot sideways: it stands on its right
    # foot long before, and that sole then pivots about its outer or its inner edge from one
    # run to the next (a few ms of command timing decide; docs/postures.md)
    assert found[1]["limit_rad"] > 0.0 and found[1]["tipped"] == "backward"
    assert found[9]["limit_rad"] < 0.0 and found[9]["tipped"] == "forward"
    assert found[13]["limit_rad"] < 0.0 and found[13]["tipped"] in ("right", "left")


def test_real_mode_asks_first_stops_at_the_first_foot_event_and_uses_no_simulator_service(
        robot_graph, tmp_path):
    # the simulated robot runs free (``--real`` does not lockstep) at twice real time: the command
    # steps, holds and watches the feet by the robot's clock (its stamps), so what is checked here
    # (the question first, the stop at the first foot event, no simulator service) is the same at
    # any rate the machine keeps; the robot's seconds of the run cost half as many wall seconds
    graph, client = robot_graph([sim_node_spec("hoap2", {"real_time_factor": 2.0})])
    command = ["postures", "--robot", "hoap2", "--real", "--tests", "9", "--protocol", coarse_protocol(tmp_path)]
    before = client.current_positions()
    refused = entry_point(*command, input="abort\n")
    assert refused.returncode == 1
    assert "it stops at the first foot lift (it should tip forward). Stand by to catch it. [ready/abort]" \
        in refused.stderr
    assert "aborted by the operator (standard input line 1) before test 9 (leg5 Front)" in refused.stderr
    after = client.current_positions()
    assert max(abs(after[j] - before[j]) for j in before) < math.radians(0.1)  # nothing moved

    run = entry_point(*command, input="ready\n")
    assert run.returncode == 0, run.stdout + run.stderr
    row = next(line for line in run.stdout.splitlines() if line.strip().startswith("9 "))
    assert "left the ground" in row or "tipped" in row or "fell" in row, row
    steps = [line for line in run.stderr.splitlines() if "test 9 (leg5 Front) step" in line]
    assert steps and ";" in steps[-1] and all(";" not in line for line in steps[:-1])  # stopped at the first event
    assert "robot reset" not in graph.log_text("humanoid_sim")  # the reset service was never called


#: The quadruped's test 1 (front left foot swung back from `zero`): the rigid model's
#: quasi-static limit, where the CoM leaves the triangle of the feet it rests on, is 17.5 deg
#: (docs/postures.md); a coarse run lands on the first 2 deg step past it. Band: two coarse steps
#: either side.
QUADRUPED_BAND_DEG = (13.5, 21.5)


def test_the_quadruped_falls_forward_within_the_band_and_its_limit_reads_as_an_ax12_value(tmp_path):
    out = tmp_path / "postures.json"
    result = entry_point("postures", "--robot", "bioloid_quadruped", "--tests", "1",
                         "--protocol", coarse_protocol(tmp_path, "bioloid_quadruped"), "--json", out)
    assert result.returncode == 0, result.stdout + result.stderr
    # the four ball feet are read: each step's progress line has four loads, none missing
    step = next(line for line in result.stderr.splitlines() if "test 1 (FL swing back) step 1:" in line)
    loads = step.split("feet ")[1].split()[0].split("/")
    assert len(loads) == 4 and all(math.isfinite(float(v)) for v in loads), step
    (entry,) = json.loads(out.read_text())
    assert entry["test"] == 1 and entry["limit_rad"] is not None, entry
    low, high = QUADRUPED_BAND_DEG
    assert low <= math.degrees(entry["limit_rad"]) <= high, entry
    assert entry["tipped"] == "forward", entry  # over the front feet, as the protocol says
    servo = load_config("bioloid_quadruped").joint_map["fl_hip_pitch"]
    assert entry["limit_raw"] == [servo.radians_to_raw(entry["limit_rad"])]  # from `zero`: the limit is the angle
    assert 513 + low / 0.2932 <= entry["limit_raw"][0] <= 513 + high / 0.2932
    # the reference's experiments, ours beside the one that starts in `zero` (7), and why not the others
    assert "   1   571        531   11.7 deg  accepted" in result.stdout
    assert f"  7: ours from the same posture (zero): test 1 (fl_hip_pitch) raw {entry['limit_raw'][0]}, " \
           in result.stdout
    assert "the servo the reference stepped is not known" in result.stdout
    # E1 turns both front thighs 90 deg, one into the body (the collision model's proven limit);
    # E5 now fits within the mechanism's limits, though no test of ours starts there
    assert "  1: ours: none, the starting posture is beyond our model's joint limits" in result.stdout
    assert "  5: ours: no test of ours starts there (our model can take the posture)" in result.stdout
