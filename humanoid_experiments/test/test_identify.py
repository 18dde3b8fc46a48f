"""``humanoid identify``, proved where the truth is known: a simulated HOAP-2 with a "truth"
parameter file records two motions into bags; the fit, from one of them, finds the truth's
values within the stated tolerances and predicts the other motion several times better than
the robot's own values (short settings: the fast physics profile, few evaluations, on a local
Ray instance of 2 workers that dies with the command). A resumed fit takes what it already
evaluated from its state file; bad input is one line and exit status 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ray_leftovers import said_session_dir, wait_until_gone

from humanoid_bringup import main
from humanoid_description import load_model
from humanoid_experiments.identify import FIT, FIT_GAIN, HELD_OUT_GAIN, TOLERANCES, TRUTH
from humanoid_sim import params_file

#: The proof's short settings (the full run: humanoid identify --demo DIR; docs/identification.md).
#: One generation: a second one found no better point (the same fitted values, held-out gain 64
#: and fit gain 164 with one or two), so it cost 8 evaluations for nothing; the polish's 24 are
#: needed (12 miss the gains: 28 and 43).
#: s of wall time the proof fit may take (118-350 s in clean-clone runs of the suite).
FIT_PATIENCE = 540
SHORT = ["--physics", "fast", "--population", "4", "--generations", "1", "--polish", "24", "--workers", "2"]


@pytest.fixture(scope="module")
def proof(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path, int]:
    directory = tmp_path_factory.mktemp("identify")
    process = subprocess.Popen(["humanoid", "identify", "--demo", str(directory), *SHORT, "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:  # within pytest-timeout's 600 s, so that a slow fit fails with its own output
        stdout, stderr = process.communicate(timeout=FIT_PATIENCE)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"the proof fit took over {FIT_PATIENCE} s: {stderr[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), directory, process.pid


def outcome(done: subprocess.CompletedProcess) -> dict:
    return json.loads(done.stdout[done.stdout.index("{"):])


def test_the_fit_finds_the_truths_values_within_the_tolerances(proof):
    done, directory, _ = proof
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = outcome(done)
    fitted = {name: entry["value"] for name, entry in result["report"]["parameters"].items()}
    for name, truth in TRUTH.items():
        assert abs(fitted[name] - truth) <= TOLERANCES[name] * truth, (name, fitted[name], truth)
    # the parameter file it wrote holds the fitted values, and the simulation loads it
    written = params_file.load(directory / "fitted.yaml", params_file.link_names(load_model("hoap2").urdf))
    assert written == pytest.approx(fitted)
    assert json.loads((directory / "fitted.report.json").read_text()) == result["report"]


def test_the_fitted_model_predicts_the_held_out_motion_several_times_better(proof):
    done, directory, _ = proof
    result = outcome(done)
    held_out = result["report"]["held_out"]
    fitted, base = held_out[str(directory / "motion_b")], held_out[f"{directory / 'motion_b'} (base)"]
    assert base >= HELD_OUT_GAIN * fitted, (base, fitted)
    assert result["report"]["fit_error"] < result["report"]["base_error"] / FIT_GAIN
    assert "2 worker(s) on a local Ray instance" in done.stdout
    assert "initial population: " in done.stdout and "generation 1: " in done.stdout  # progress
    assert "polish: " in done.stdout and result["report"]["generations"] == 1


def test_no_ray_process_outlives_the_fit(proof):
    done, _, pid = proof
    assert done.returncode == 0
    assert wait_until_gone(pid, [said_session_dir(done.stdout)]) == []


def test_a_resumed_fit_takes_its_evaluations_from_the_state_file(proof, tmp_path, capsys):
    done, directory, _ = proof
    state = directory / "fitted.state.jsonl"
    saved = state.read_text().splitlines()
    # the proof's own fit, resumed once it has finished: the same seeded search, every point known
    command = ["identify", "--robot", "hoap2", "--bag", str(directory / "motion_a"), "--fit", FIT,
               "--output", str(tmp_path / "fit.yaml"), "--state", str(state), *SHORT[:-2], "--workers", "0",
               "--resume", "--json"]
    assert main(command) == 0
    again = capsys.readouterr().out
    assert f"resumed: {len(saved) - 1} evaluations known" in again
    assert "generation 1: " in again and all(" 0 simulated" in line for line in again.splitlines()
                                              if line.startswith(("initial population", "generation")))
    assert state.read_text().splitlines() == saved  # nothing simulated again
    resumed = {name: entry["value"] for name, entry in json.loads(again[again.index("{"):])["parameters"].items()}
    assert resumed == {name: entry["value"] for name, entry in outcome(done)["report"]["parameters"].items()}


@pytest.mark.parametrize(("extra", "message"), [
    (["--fit", "servo.max_velocty"], "unknown parameter 'servo.max_velocty' (did you mean servo.max_velocity"),
    (["--fit", "servo.max_velocity=5:2"], "bounds 5:2 are not LOW < HIGH"),
    (["--fit", "servo.kind"], "servo.kind must be a string"),
    (["--fit", "transmission.breakaway_torque"], "has no default bounds: give them"),
    (["--fit", "servo.max_velocity", "--bag", "/nonexistent/bag"], "no bag at /nonexistent/bag"),
    (["--fit", "servo.max_velocity"], "cannot read bag"),
])
def test_bad_input_is_one_line_and_exit_2(extra, message, tmp_path, capsys):
    bag = ["--bag", str(tmp_path)] if "--bag" not in extra else []
    (tmp_path / "metadata.yaml").write_text("not a bag\n")
    assert main(["identify", "--robot", "hoap2", "--output", str(tmp_path / "out.yaml"), "--workers", "0",
                 *bag, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err, err


def test_a_state_file_is_resumed_or_overwritten_on_purpose_only(proof, tmp_path, capsys):
    _, directory, _ = proof
    command = ["identify", "--robot", "hoap2", "--bag", str(directory / "motion_a"), "--fit", "servo.max_velocity",
               "--output", str(tmp_path / "fit.yaml"), "--workers", "0"]
    assert main([*command, "--resume"]) == 2
    assert "no fit to resume: " in capsys.readouterr().err
    (tmp_path / "fit.state.jsonl").write_text("{}\n")
    assert main(command) == 2
    assert "exists: --resume the fit it holds, or --overwrite it" in capsys.readouterr().err
    assert main([*command, "--resume"]) == 2
    assert "is another fit" in capsys.readouterr().err


def test_values_under_which_the_robot_cannot_do_the_postures_moves_cost_the_penalty_not_a_crash():
    """A point of the search where a servo cannot reach its set-point within the goal
    tolerance (here: a tolerance no servo meets) is scored, and the fit goes on: it once ended
    a two-hour fit with a traceback."""
    from humanoid_experiments.identify import UNFIT_POSTURES_COST, PostureTarget, Problem, postures_cost

    problem = Problem("hoap2", "fast", None, ())  # the physics profile plays no part: the fast one costs less
    assert postures_cost(problem, (PostureTarget(7, 0.1545),), {"goal_position_tolerance": 1e-7}) \
        == UNFIT_POSTURES_COST


def test_a_command_the_robot_rejected_is_replayed_as_rejected_and_identify_fits_the_bag(tmp_path, capsys):
    """A bag holding a trajectory the robot refused (out of its limits: it said so and did not
    move) replays as the robot treated it, and ``identify`` fits the bag (it once ended in a
    traceback from the replay)."""
    from humanoid_experiments.identify import Motion, plan_commands, read_bag, record, replay
    from humanoid_sim import SimulatedRobot

    bag = tmp_path / "bag"
    commands = plan_commands([(0.1, {"rarm_joint1": 1.0}, 0.3), (0.2, {"larm_joint1": 10.0}, 0.3)])
    with SimulatedRobot("hoap2", "fast") as robot:
        record(robot, commands, 0.6, bag)
    motion = read_bag(bag, robot.model.joints)
    assert [command.joints for command in motion.commands] == [("rarm_joint1",), ("larm_joint1",)]
    replayed = []
    for commands in (motion.commands, motion.commands[:1]):  # a fresh robot each, as the fit replays
        with SimulatedRobot("hoap2", "fast") as robot:
            replayed.append(replay(robot, Motion(motion.start, commands, motion.times, motion.positions)))
    np.testing.assert_array_equal(*replayed)
    larm = robot.model.joints.names.index("larm_joint1")
    assert np.abs(motion.positions[:, larm] - motion.start[larm]).max() < 0.01  # the robot did not move it
    assert main(["identify", "--robot", "hoap2", "--bag", str(bag), "--fit", "servo.max_velocity",
                 "--output", str(tmp_path / "fit.yaml"), "--workers", "0", "--physics", "fast",
                 "--population", "2", "--generations", "1", "--polish", "0"]) == 0, capsys.readouterr().err
    assert (tmp_path / "fit.yaml").exists()


def test_a_bag_of_another_robot_is_refused_with_the_reason(tmp_path, capsys):
    from humanoid_experiments.identify import plan_commands, record
    from humanoid_sim import SimulatedRobot

    with SimulatedRobot("bioloid") as robot:
        record(robot, plan_commands([(0.05, {"r_shoulder_pitch": 0.5}, 0.1)]), 0.2, tmp_path / "bioloid_bag")
    assert main(["identify", "--robot", "hoap2", "--bag", str(tmp_path / "bioloid_bag"), "--fit",
                 "servo.max_velocity", "--output", str(tmp_path / "fit.yaml"), "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "name none of this robot's joints" in err and "recorded on another robot?" in err, err


def test_a_postures_fit_runs_the_tests_a_users_run_runs_before_each_target():
    """``identify --postures`` scores the targets but runs the protocol's tests in its order up to
    the last target, held-out and unmeasured tests included: a test's limit depends on those run
    before it, and ``humanoid postures`` runs them all in order (docs/postures.md)."""
    from humanoid_description import load_model
    from humanoid_experiments.identify import postures_run_order, read_postures
    from humanoid_experiments.postures import load_protocol

    targets = read_postures("reference", "hoap2")
    assert [t.test for t in targets] == [1, 3, 5, 7, 9, 11, 13, 15]  # the tests with a real limit
    protocol = [test.number for test in load_protocol(load_model("hoap2")).tests]
    assert postures_run_order("hoap2", [t.test for t in targets]) == protocol[:protocol.index(15) + 1]
    assert postures_run_order("hoap2", [3]) == protocol[:protocol.index(3) + 1]
