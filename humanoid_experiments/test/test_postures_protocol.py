"""The postures protocol file, the command's arguments and the results table (no robot needed)."""

import json
import math

import pytest

from humanoid_bringup import main
from humanoid_core import UsageError
from humanoid_core.motion import MotionError
from humanoid_description import load_model
from humanoid_experiments.postures import (
    PostureResult,
    PostureTest,
    average_error,
    load_protocol,
    parse_overrides,
    parse_tests,
    protocol_path,
    to_json,
)
from humanoid_experiments.postures.report import table
from humanoid_sim import parameter_names

#: The reference's table (Cominoli 2005): real limits (rad) of the odd tests.
REAL = {1: 0.4676, 3: -0.3424, 5: 0.5189, 7: 0.1545, 9: -0.1050, 11: 0.2422, 13: -0.2505, 15: 0.2672}


@pytest.fixture(scope="module")
def model():
    return load_model("hoap2")


def test_the_hoap2_protocol_has_the_references_sixteen_tests(model):
    protocol = load_protocol(model)
    assert [t.number for t in protocol.tests] == list(range(1, 17))
    assert {t.number: t.real_limit for t in protocol.tests if t.real_limit is not None} == REAL
    for test in protocol.tests:
        # even tests repeat the odd one before them with the arms lowered ("L Arm")
        twin = protocol.tests[test.number - 2] if test.number % 2 == 0 else test
        assert (test.joints, test.direction, test.falls) == (twin.joints, twin.direction, twin.falls)
        assert test.start == ("arms_lowered" if test.number % 2 == 0 else "zero")
        if test.real_limit is not None:  # the table's signs carried over unchanged
            assert math.copysign(1.0, test.real_limit) == test.direction
    assert protocol.parameters.step == pytest.approx(math.radians(0.5))


def write(tmp_path, text: str):
    path = tmp_path / "protocol.yaml"
    path.write_text(text)
    return path


GOOD_TEST = "{name: t, joints: [rleg_joint5], direction: 1, start: zero, falls: backward}"


@pytest.mark.parametrize(("body", "problem"), [
    (f"robot: bioloid\nparameters: {{}}\ntests: {{1: {GOOD_TEST}}}", ":1: this protocol is for 'bioloid'"),
    (f"robot: hoap2\nparameters: {{stepp: 1}}\ntests: {{1: {GOOD_TEST}}}", ":2: parameters: unknown key 'stepp'"),
    (f"robot: hoap2\nparameters: {{step: 0}}\ntests: {{1: {GOOD_TEST}}}", ":2: parameters: step must be > 0"),
    ("robot: hoap2\nparameters: {}\ntests:\n  1: {name: t, joints: [knee], direction: 1, start: zero, "
     "falls: backward}", ":4: test 1: unknown joint 'knee'"),
    ("robot: hoap2\nparameters: {}\ntests:\n  1: {name: t, joints: [rleg_joint5], direction: 2, start: zero, "
     "falls: backward}", ":4: test 1: direction must be 1 or -1"),
    ("robot: hoap2\nparameters: {}\ntests:\n  1: {name: t, joints: [rleg_joint5], direction: 1, start: squat, "
     "falls: backward}", ":4: test 1: start: the robot has no pose 'squat'"),
    ("robot: hoap2\nparameters: {}\ntests:\n  1: {name: t, joints: [rleg_joint5], direction: 1, start: zero, "
     "falls: up}", ":4: test 1: falls must be one of"),
    ("robot: hoap2\nparameters: {}\ntests:\n  x: " + GOOD_TEST, ":4: tests: 'x' is not a test number"),
    ("robot: hoap2\nparameters: {}\ntests: {1: [", "malformed YAML"),
])
def test_a_bad_protocol_file_is_refused_naming_file_line_and_problem(tmp_path, model, body, problem):
    path = write(tmp_path, body)
    with pytest.raises(MotionError) as error:
        load_protocol(model, path)
    assert str(error.value).startswith(str(path))
    assert problem in str(error.value)


def test_tests_are_selected_by_number_in_the_order_given(model):
    protocol = load_protocol(model)
    assert [t.number for t in protocol.select([9, 1, 2])] == [9, 1, 2]
    with pytest.raises(ValueError, match="no test 17, 0"):
        protocol.select([1, 17, 0])


def test_test_lists_and_ranges_are_read():
    assert parse_tests("1,3,5") == [1, 3, 5]
    assert parse_tests("1-4,9, 2") == [1, 2, 3, 4, 9]
    for bad in ("1,,3", "a", "4-1", "1-"):
        with pytest.raises(UsageError, match="--tests"):
            parse_tests(bad)


def test_simulation_overrides_are_name_value_pairs_of_the_simulation_s_parameters():
    known = parameter_names()
    assert parse_overrides(["transmission.stiffness=50", "transmission.backlash = 0"], known) == {
        "transmission.stiffness": "50", "transmission.backlash": "0"}
    with pytest.raises(UsageError, match="'stiffness' is not NAME=VALUE"):
        parse_overrides(["stiffness"], known)
    with pytest.raises(UsageError, match=r"no parameter 'transmission.stifness' \(did you mean transmission.stiffness"):
        parse_overrides(["transmission.stifness=50"], known)
    with pytest.raises(UsageError, match=r"no parameter 'servo.max_velocty' \(did you mean servo.max_velocity"):
        parse_overrides(["servo.max_velocty=5"], known)


@pytest.mark.parametrize(("args", "message"), [
    (["--tests", "1,99"], "no test 99"),
    (["--tests", "one"], "--tests: 'one' is not a test number"),
    (["--set", "oops"], "--set: 'oops' is not NAME=VALUE"),
    (["--real", "--set", "transmission.stiffness=1"], "not with --real"),
    (["--real-time-factor", "-1"], "must be a finite number >= 0"),
    (["--json", "/no/such/folder/out.json"], "no folder '/no/such/folder'"),
])
def test_bad_arguments_are_refused_before_anything_starts(capsys, args, message):
    assert main(["postures", "--robot", "hoap2", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "starting" not in err  # no simulation was started


def test_the_protocol_file_is_installed():
    assert protocol_path("hoap2").is_file()


def result(number: int, limit: float | None, real: float | None, tipped: str = "backward") -> PostureResult:
    test = PostureTest(number, f"t{number}", ("rleg_joint5",), 1, "zero", "backward", real)
    return PostureResult(test, limit, "fell", tipped, 3, 0.5)


def test_the_average_error_counts_only_tests_with_a_real_value():
    results = [result(1, 0.20, 0.15), result(2, 0.30, None), result(3, 0.10, 0.15)]
    mean, count, open_ended = average_error(results)
    assert (count, open_ended) == (2, 0)
    assert mean == pytest.approx(math.degrees(0.05))


def test_a_test_without_limit_counts_with_its_range_end_and_is_shown_as_such():
    results = [result(1, None, 0.15), result(3, 0.15, 0.15)]
    mean, count, open_ended = average_error(results)
    assert (count, open_ended) == (2, 1)
    assert mean == pytest.approx(math.degrees(0.35) / 2)
    text = table(results)
    assert "none" in text and ">28.6" in text
    assert "at least" in text and "1 of them found no limit" in text


def test_the_table_flags_a_robot_that_tipped_the_wrong_way():
    text = table([result(1, 0.2, 0.15, tipped="forward")])
    assert "forward!" in text
    assert "tipped the other way than the protocol says: test 1 (forward, expected backward)" in text


def test_json_has_one_object_per_test_with_number_and_limit():
    data = json.loads(to_json([result(1, 0.2, 0.15), result(2, None, None)]))
    assert [(d["test"], d["limit_rad"]) for d in data] == [(1, 0.2), (2, None)]
    assert data[0]["error_deg"] == pytest.approx(math.degrees(0.05))


# -- the Bioloid quadruped's static validation (AX-12 register values) ----------------------

#: The reference's nine experiments (bioloid_quadruped.md): the raw value where the real robot
#: fell, and where its Webots model did (None: 2 and 3 fell while being put in the starting
#: posture, 4 is lost in the text).
QUADRUPED_REAL = (571, 482, 479, 535, 261, 274, 478, 537, 542)
QUADRUPED_WEBOTS = (531, None, None, None, 363, 375, 466, 527, 531)


@pytest.fixture(scope="module")
def quadruped():
    return load_model("bioloid_quadruped")


def test_the_quadruped_protocol_keeps_the_references_nine_experiments(quadruped):
    protocol = load_protocol(quadruped)
    assert protocol_path("bioloid_quadruped").is_file()
    assert protocol.tests and all(len(test.joints) == 1 for test in protocol.tests)
    assert all(test.real_limit is None for test in protocol.tests)  # no test of ours is one of the reference's
    reference = protocol.reference
    assert reference is not None and reference.accepted_deg == 15.0 and reference.neutral_raw == 513
    experiments = reference.experiments
    assert [e.number for e in experiments] == list(range(1, 10))
    assert tuple(e.real for e in experiments) == QUADRUPED_REAL
    assert tuple(e.simulated for e in experiments) == QUADRUPED_WEBOTS
    assert all(e.stepped is None for e in experiments)  # lost in every experiment
    assert [e.simulated_missing.startswith("the simulated robot fell") for e in experiments[1:3]] == [True, True]
    assert "lost" in experiments[3].simulated_missing
    # the reference's differences: 40 (11.7 deg), 102 (29.9), 101 (29.6), 12 (3.5), 10 (2.9), 11 (3.2)
    differences = [reference.difference_deg(e) for e in experiments]
    assert differences[1:4] == [None, None, None]
    assert [differences[0], *differences[4:]] == pytest.approx([11.73, 29.91, 29.62, 3.52, 2.93, 3.23], abs=0.01)
    assert [reference.accepted(e) for e in experiments] == [True, None, None, None, False, False, True, True, True]
    assert experiments[2].start_raw == {"PELVIS": 205, "FL2": 819, "BR1": 573, "BR2": 819}
    assert experiments[6].start_raw == {} and experiments[6].start_pose == "zero"
    # raw values 261 and 274 are 74 and 70 deg from neutral: not "near it"
    assert [round(abs(reference.scale.raw_to_degrees(e.real) - reference.scale.raw_to_degrees(513)))
            for e in experiments[4:6]] == [74, 70]


def test_which_starting_postures_our_model_can_take(quadruped):
    """The joint limits are the servos' range less the narrowings the collision model proves:
    every starting posture can be set but experiment 1's, whose front legs turn 90 deg inward
    (raw 205 and 819 through the joint map) beyond the 32 deg where the thighs meet the body."""
    experiments = load_protocol(quadruped).reference.experiments
    assert [bool(e.beyond_limits) for e in experiments] == [True] + [False] * 8
    assert experiments[0].beyond_limits == ("fr_hip_roll +89.7 deg (limits -149.5 to +32.0)",
                                            "fl_hip_roll -90.3 deg (limits -32.0 to +149.5)")
    assert experiments[7].start["neck_yaw"] == pytest.approx(math.radians((819 - 513) * 0.2932))
    # the reference's hints at the servo stepped
    assert [e.candidates for e in experiments] == [(), ("FL1",), ("FL1",), ("FL1", "BL1", "N1", "N2", "HEAD"),
                                                   (), (), (), (), ()]
    assert all(e.hint for e in experiments[1:4])


def write_quadruped(tmp_path, reference: str):
    return write(tmp_path, "robot: bioloid_quadruped\nparameters: {}\ntests:\n"
                           "  1: {name: t, joints: [fl_hip_pitch], direction: 1, start: zero, falls: forward}\n"
                           "reference:\n  accepted_deg: 15\n  neutral_raw: 513\n"
                           "  servos: {FL1: fl_hip_pitch, N2: neck_yaw}\n"
                           f"  experiments:\n{reference}")


@pytest.mark.parametrize(("experiments", "problem"), [
    ("    1: {start_raw: {}, stepped: unknown, real: 2000, simulated: 531}\n",
     ":10: reference: experiment 1: real: 2000 outside the AX-12 register [0, 1023]"),
    ("    1: {start_raw: {FL9: 300}, stepped: unknown, real: 571, simulated: 531}\n",
     "experiment 1: start_raw: unknown servo 'FL9' (servos: FL1, N2)"),
    ("    1: {start_raw: {}, stepped: FL7, real: 571, simulated: 531}\n",
     "experiment 1: stepped must be a servo (FL1, N2) or unknown, got 'FL7'"),
    ("    1: {start_raw: {}, stepped: unknown, real: 571}\n",
     "experiment 1: give either simulated (a register value) or simulated_missing"),
    ("    1: {start_raw: {}, stepped: unknown, real: 571.5, simulated: 531}\n",
     "experiment 1: real must be an integer"),
    ("    1: {start_raw: {}, real: 571, simulated: 531}\n", "reference: experiment 1: missing stepped"),
    ("    {}\n", "reference: experiments: at least one"),
])
def test_a_bad_reference_section_is_refused(tmp_path, quadruped, experiments, problem):
    path = write_quadruped(tmp_path, experiments)
    with pytest.raises(MotionError) as error:
        load_protocol(quadruped, path)
    assert problem in str(error.value)


def test_register_values_need_a_robot_with_a_joint_map(tmp_path, model):
    path = write(tmp_path, f"robot: hoap2\nparameters: {{}}\ntests: {{1: {GOOD_TEST}}}\n"
                           "reference: {accepted_deg: 15, neutral_raw: 513, servos: {}, experiments: {}}\n")
    with pytest.raises(MotionError, match="hoap2 has no joint map"):
        load_protocol(model, path)


def quadruped_result(quadruped, number: int, limit: float | None) -> PostureResult:
    """A result of the quadruped's protocol, with the servos and start angles the runner gives."""
    test = load_protocol(quadruped).select([number])[0]
    start = quadruped.config.pose(test.start)
    servos = tuple(quadruped.config.joint_map[j] for j in test.joints)
    return PostureResult(test, limit, "fell", test.falls, 3, 1.5, tuple(start[j] for j in test.joints), servos)


def test_limits_are_given_as_the_servos_register_values_at_the_limit(quadruped):
    by_name = {t.name: t.number for t in load_protocol(quadruped).tests}
    limit = math.radians(17.5)
    # neutral 513 (joint angle 0) plus 17.5 deg at 0.2932 deg per unit; the right legs' servos
    # are mounted the other way (joint_map.yaml direction -1): the same angle reads below 513
    assert quadruped_result(quadruped, by_name["FL swing back"], limit).limit_raw == (573,)
    assert quadruped_result(quadruped, by_name["FR swing back"], limit).limit_raw == (453,)
    # from `home` the register value is the joint's position there (27.66 deg) plus the limit
    home = quadruped_result(quadruped, by_name["FL swing back home"], math.radians(22.5))
    assert home.limit_raw == (513 + round((27.66 + 22.5) / 0.2932),)
    assert quadruped_result(quadruped, by_name["FL swing back"], None).limit_raw is None


def test_json_gives_register_values_only_for_robots_with_servos(quadruped):
    results = [quadruped_result(quadruped, 1, math.radians(17.5)), quadruped_result(quadruped, 2, None)]
    data = json.loads(to_json(results))
    assert [(d["test"], d["limit_raw"]) for d in data] == [(1, [573]), (2, None)]
    assert data[0]["limit_rad"] == pytest.approx(math.radians(17.5))
    assert "limit_raw" not in json.loads(to_json([result(1, 0.2, 0.15)]))[0]  # the HOAP-2: no joint map


def test_the_table_compares_per_experiment_where_it_can_and_says_why_where_it_cannot(quadruped):
    protocol = load_protocol(quadruped)
    results = [quadruped_result(quadruped, 1, math.radians(17.5)), quadruped_result(quadruped, 2, math.radians(17.5)),
               quadruped_result(quadruped, 4, math.radians(22.5))]
    text = table(results, protocol.reference)
    rows = text.splitlines()
    assert "raw" in rows[0] and "573" in rows[1] and "453" in rows[2]
    # every experiment's real and Webots values, the difference and the reference's verdict
    first = next(i for i, row in enumerate(rows) if row.split()[:3] == ["exp", "real", "simulated"]) + 1
    experiment = {int(row.split()[0]): " ".join(row.split()) for row in rows[first:first + 9]}
    assert experiment[1] == "1 571 531 11.7 deg accepted FL2 205, FR2 819, BL2 580, BR2 444"
    assert experiment[2] == "2 482 - - - FL2 819, FR2 205, BL2 444, BR2 580"
    assert experiment[3] == "3 479 - - - PELVIS 205, FL2 819, BR1 573, BR2 819"
    assert experiment[4] == "4 535 - - - PELVIS 819, FL2 819, BR2 819"
    assert experiment[5] == "5 261 363 29.9 deg not accepted FL2 867, BL2 166"
    assert experiment[6] == "6 274 375 29.6 deg not accepted FR2 166, BR2 867"
    assert experiment[7] == "7 478 466 3.5 deg accepted all 513"
    assert experiment[8] == "8 537 527 2.9 deg accepted N2 819"
    assert experiment[9] == "9 542 531 3.2 deg accepted N2 205"
    notes = {int(line.split(":")[0]): line for line in rows if line.startswith("  ") and line[2].isdigit()}
    assert "no simulated value: the simulated robot fell while being put in the starting posture" in notes[2]
    assert "no simulated value: lost in the reference's text" in notes[4]
    assert "ours: none, the starting posture is beyond our model's joint limits" in notes[1]
    for number in (2, 3, 4, 5, 6, 8, 9):
        assert "ours: no test of ours starts there (our model can take the posture)" in notes[number]
    assert "ours from the same posture (zero): test 1 (fl_hip_pitch) raw 573, 27.9 deg from the real 478, " \
           "test 2 (fr_hip_pitch) raw 453, 7.3 deg from the real 478" in notes[7]
    assert "the servo the reference stepped is not known" in notes[7]
    assert "ours: no test of ours starts there" in notes[8]
    assert "Ours from postures of no experiment: test 4 from 'home' raw 684" in text
    assert "Not known: the servo stepped in each of the nine experiments (marked by a grey cell, lost)" in text
    assert "raw" not in table([result(1, 0.2, 0.15)]).splitlines()[0]  # the HOAP-2's table is unchanged


def test_the_hoap2_protocols_simulation_is_the_joint_fit_rounded(model):
    """docs/postures.md adopts the joint fit (docs/data/hoap2_postures_fit_all.*) as the
    protocol's default, rounded and without its 0.4 mm torso CoM offset (a model correction,
    which the protocol's node parameters cannot carry): each other fitted value is in
    postures.yaml within 0.5 % of the fit's own (three significant figures), and every name
    there is the simulation's."""
    from pathlib import Path

    report = json.loads((Path(__file__).resolve().parents[2] / "docs" / "data"
                         / "hoap2_postures_fit_all.report.json").read_text())
    simulation = load_protocol(model).simulation
    fitted = {name: entry["value"] for name, entry in report["parameters"].items()
              if not name.startswith("model.")}
    assert set(fitted) <= set(simulation)
    for name, value in fitted.items():
        assert simulation[name] == pytest.approx(value, rel=5e-3), name
    assert set(simulation) <= set(parameter_names())
