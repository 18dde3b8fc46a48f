"""``humanoid postures --real`` with an operator, on the Bioloid quadruped's hardware graph
(the hardware node on the emulated Dynamixel bus, with every node `humanoid real` starts):
the robot has no foot sensor and no IMU, so a scripted operator (``--answers``) says
``ready`` before the test and ``stood``/``fell``/``abort`` after each step.

What users rely on: the steps reach the servos one at a time, in order, and only as far as
the operator lets them; ``fell`` at step k gives step k's angle as the limit (the angle at
which the robot fell: the reference's "equilibrium value"), in the results file of the
simulation; ``abort`` leaves the robot holding its pose with a partial results file; an answer
that does not fit its question stops the run with one precise line (exit 2).

The command runs through its entry point in the test's process (``cli_entry``): what is
checked is its exit status, what it writes and what reaches the servos, which the graph's
own processes (the hardware node on the bus) carry either way; an interpreter start and the
command's imports (a few CPU-s) are saved per run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from subprocess import CompletedProcess

import numpy as np
import pytest
import yaml
from cli_entry import entry_point
from sensor_msgs.msg import JointState
from system_support import on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_control.ros import RobotClient, seconds
from humanoid_core.processes import Graph
from humanoid_description import load_config
from humanoid_experiments.postures import protocol_path
from humanoid_hw.emulator import emulator_process

pytestmark = pytest.mark.system

#: Steps of 2 deg, short holds: a few steps in a few seconds, each a clear plateau. A step is
#: held twice HOLD_TIME: with a settle of 0.25 s a loaded machine (two CPU hogs beside the suite)
#: once left a step in the band below HOLD_TIME, the servo reaching it late in its move.
STEP_DEG = 2.0
SHORT = {"step": STEP_DEG, "step_time": 0.25, "settle_time": 0.4, "start_settle_time": 0.25}
#: A reading this close (deg) to a step's angle is the joint held there (an AX-12 reads in 0.29 deg).
HELD_DEG = 0.4
#: Robot seconds a joint stays at a step's angle when held there (half a step's settle time);
#: a move of 10 deg/s back to the start pose passes through a step's window in 0.08 s.
HOLD_TIME = 0.2
JOINT = "fl_hip_pitch"  # the protocol's test 1, from the `zero` pose (0 rad)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """The quadruped's hardware graph on the emulated bus, for the whole module (each test
    goes on from where the previous one left the robot)."""
    with emulator_process("bioloid_quadruped") as port:
        graph = Graph(on_emulated_bus(real_nodes("bioloid_quadruped", port=port)),
                      log_dir=tmp_path_factory.mktemp("operator_graph")).start()
        robot = RobotClient("operator_test_client")
        try:
            robot.wait_for_joint_states(60.0)
            yield robot
        finally:
            robot.close()
            graph.stop()
            print({name: graph.log_text(name)[-3000:] for name in (spec.name for spec in graph.nodes)})


@pytest.fixture
def protocol(tmp_path) -> str:
    data = yaml.safe_load(protocol_path("bioloid_quadruped").read_text())
    data["parameters"].update(SHORT)
    path = tmp_path / "protocol.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def postures(tmp_path, protocol: str, answers: list[str]) -> tuple[CompletedProcess, str, str]:
    """Run test 1 with these answers: (the process, the answers file, the results file)."""
    script, out = tmp_path / "answers.txt", tmp_path / "results.json"
    script.write_text("".join(f"{a}\n" for a in answers))
    run = entry_point("postures", "--robot", "bioloid_quadruped", "--real", "--tests", "1",
                      "--protocol", protocol, "--answers", script, "--json", out)
    return run, str(script), str(out)


def held_on(client: RobotClient) -> list[JointState]:
    """The recording, continued for 2 * HOLD_TIME of robot time after the command returned:
    the command ends as soon as the operator answers, and the readings of the step it left
    held reach this client later than that (a loaded machine delivers them late)."""
    client.wait_until(client.now() + 2 * HOLD_TIME)
    return client.stop_recording()


def held_steps(states, hold: float = HOLD_TIME) -> list[int]:
    """The steps (k for k * STEP_DEG from the start) at which JOINT stayed for ``hold`` s or
    more, in order: a move passes through the others."""
    runs: list[list] = []  # [k, first stamp, last stamp]
    for state in states:
        value = math.degrees(dict(zip(state.name, state.position, strict=True))[JOINT])
        if not math.isfinite(value):
            continue  # a reading the bus missed
        k = round(value / STEP_DEG) if abs(value - round(value / STEP_DEG) * STEP_DEG) <= HELD_DEG else None
        stamp = seconds(state.header.stamp)
        if runs and runs[-1][0] == k:
            runs[-1][2] = stamp
        else:
            runs.append([k, stamp, stamp])
    sequence: list[int] = []
    for k, first, last in runs:
        if k is not None and last - first >= hold and (not sequence or sequence[-1] != k):
            sequence.append(k)
    return sequence


def joint(client: RobotClient, name: str = JOINT) -> np.ndarray:
    """A second of readings of one joint (deg, finite ones)."""
    values = np.degrees([dict(zip(s.name, s.position, strict=True))[name] for s in client.record(1.0)])
    return values[np.isfinite(values)]


def test_the_operator_judges_each_step_and_fell_at_step_k_gives_step_ks_angle(client, protocol, tmp_path):
    client.start_recording()
    client.wait_until(client.now() + 2 * HOLD_TIME)  # the start pose held in the recording first
    run, _, out = postures(tmp_path, protocol, ["ready", "stood", "stood", "fell"])
    states = held_on(client)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "you judge each step (stood or fell)" in run.stderr
    assert "test 1 (FL swing back) step 2: +4.00 deg: did the robot stand or fall? [stood/fell/abort] stood" \
        in run.stderr
    # the results file of the simulation (the same fields), the limit at the step it fell
    (entry,) = json.loads(Path(out).read_text())
    limit = math.radians(3 * STEP_DEG)
    assert entry["test"] == 1 and entry["joints"] == [JOINT] and entry["steps"] == 3
    assert entry["limit_rad"] == pytest.approx(limit) and entry["limit_deg"] == pytest.approx(3 * STEP_DEG)
    assert entry["limit_raw"] == [load_config("bioloid_quadruped").joint_map[JOINT].radians_to_raw(limit)]
    assert entry["stopped_by"] == "the operator saw it fall at step 3: +6.00 deg"
    assert entry["tipped"] == "unknown"  # nothing measured it
    assert set(entry) == {"test", "name", "joints", "direction", "start", "limit_rad", "limit_deg", "limit_raw",
                          "real_rad", "error_deg", "stopped_by", "expected_fall", "tipped", "steps",
                          "range_end_rad"}
    assert "  7: ours from the same posture (zero): test 1 (fl_hip_pitch) raw" in run.stdout  # the reference's table
    # on the bus: the start pose, then each step held in turn, no further than the third
    assert held_steps(states) == [0, 1, 2, 3]
    others = [name for name in states[-1].name if name != JOINT]
    last = dict(zip(states[-1].name, states[-1].position, strict=True))
    assert max(abs(math.degrees(last[name])) for name in others if math.isfinite(last[name])) < 1.0
    held = joint(client)
    assert np.all(np.abs(held - 3 * STEP_DEG) <= HELD_DEG)  # standing where it fell


def test_abort_after_a_step_leaves_the_robot_holding_and_a_partial_results_file(client, protocol, tmp_path):
    client.start_recording()
    # the pose the previous test left held in the recording before the command moves (run in
    # this process, the command starts at once: no interpreter start to wait through)
    client.wait_until(client.now() + 2 * HOLD_TIME)
    run, script, out = postures(tmp_path, protocol, ["ready", "stood", "abort"])
    states = held_on(client)
    assert run.returncode == 1, run.stdout + run.stderr
    assert (f"humanoid postures: aborted by the operator ({script}:3) after test 1 (FL swing back) step 2: "
            "+4.00 deg: the robot holds its last pose; 0 of 1 tests done") in run.stderr
    assert json.loads(Path(out).read_text()) == []
    # back to the start pose from where the previous test left it, then two steps, no third; the
    # move back may show a step it passes through as held (a loaded machine stalled the sender),
    # and the start pose may be held less than HOLD_TIME (the settle counts from the move's
    # result, which a loaded bus loop reached late): the start is reached, the steps are held
    steps, reached = held_steps(states), held_steps(states, hold=0.0)
    assert steps[0] == 3 and steps[-2:] == [1, 2], steps
    back = len(reached) - 1 - reached[::-1].index(0) if 0 in reached else None
    assert back is not None and reached[back:] == [0, 1, 2], reached
    held = joint(client)
    assert np.all(np.abs(held - 2 * STEP_DEG) <= HELD_DEG)


def test_an_answer_out_of_step_with_the_run_stops_it_with_one_precise_line(client, protocol, tmp_path):
    run, script, out = postures(tmp_path, protocol, ["ready", "ready"])
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"humanoid: error: {script}:2: 'ready' after test 1 (FL swing back) step 1: +2.00 deg, where stood, fell or "
        "abort was expected: the robot holds its last pose; 0 of 1 tests done")
    assert json.loads(Path(out).read_text()) == []
    assert np.all(np.abs(joint(client) - STEP_DEG) <= HELD_DEG)

    run, script, _ = postures(tmp_path, protocol, ["ready"])
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        f"humanoid: error: {script}: no answer left after test 1 (FL swing back) step 1: +2.00 deg (stood, fell or "
        "abort expected): the robot holds its last pose; 0 of 1 tests done")
