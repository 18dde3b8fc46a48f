"""Playing a quadruped gait without ROS: the set-point generator the gait controller node and
the headless evaluation share, one play of a gait (lead-in, gait, return to the stance, a
stop), and the gait files ``play_gait`` takes (a CPG or IK gait in YAML, a gait search's best).

What users rely on: a gait's set-points depend only on the gait, the frequency and the
step, however often and whenever they are asked; a run starts where the robot stands and
always ends at rest in the stance, within the joints' limits and speeds; a bad gait file is
refused with its file and line.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from humanoid_core.quadruped_gaits import (
    CPGGait,
    CPGParameters,
    GaitControllerParameters,
    GaitError,
    GaitPlayer,
    GaitRun,
    IKGait,
    RunTiming,
    Stage,
    default_parameters,
    gaited_robot,
    load_gait,
)
from humanoid_description import load_model

ROBOT = "bioloid_quadruped"
REPO = Path(__file__).resolve().parents[2]
PERIOD = 0.01
TIMING = RunTiming(start_duration=0.5, stop_duration=0.5, transition_speed=1.0)


@pytest.fixture(scope="module")
def model():
    return load_model(ROBOT)


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def play(run: GaitRun, until: int | None = None) -> list:
    """Every set-point of a run, step by step, to its end (or to ``until``)."""
    points, step = [], 0
    while True:
        point = run.setpoint(step)
        points.append(point)
        if point.stage is Stage.DONE or step == until:
            return points
        step += 1


def test_a_gaits_set_points_are_a_function_of_the_step_alone(model):
    """Asked at every step, or at every fifth, or twice, a CPG (which integrates) gives the same
    set-point for the same step as the gait's own positions at that time."""
    every = load_gait(model, "trot", PERIOD)
    assert every.name == "trot" and every.frequency == 1.0  # robot.yaml's own
    for k in (0, 7, 33):
        np.testing.assert_array_equal(every.setpoint(k), every.gait.positions(k * PERIOD))
    params = CPGParameters(frequency=1.3, structure="paired")
    one, other = (GaitPlayer(CPGGait(model, params), PERIOD, "cpg") for _ in range(2))
    steps = [one.setpoint(k) for k in range(301)]
    for k in range(0, 301, 5):
        np.testing.assert_array_equal(other.setpoint(k), steps[k])
        np.testing.assert_array_equal(other.setpoint(k), steps[k])  # asked again
    assert one.phase(150) == pytest.approx((1.3 * 1.5) % 1.0)


def test_a_requested_frequency_replaces_the_gaits_own_within_the_reference_range(model):
    assert load_gait(model, "pace", PERIOD, 2.0).frequency == 2.0
    with pytest.raises(GaitError, match=r"2\.5 Hz is outside 0\.5-2 Hz"):
        load_gait(model, "pace", PERIOD, 2.5)
    with pytest.raises(GaitError, match="finite number of Hz"):
        load_gait(model, "pace", PERIOD, math.nan)


def test_a_run_starts_where_the_robot_stands_plays_the_gait_and_ends_in_the_stance(model):
    player = load_gait(model, "trot", PERIOD)
    stance = model.home_positions()
    start = stance + 0.3  # far from the gait's first set-point: the lead-in is lengthened
    run = GaitRun(player, start, stance, duration=1.0, timing=TIMING)
    points = play(run)
    np.testing.assert_allclose(points[0].positions, start)
    assert run.gait_start * PERIOD >= 1.5 * 0.3 / TIMING.transition_speed  # the cubic's peak within 1 rad/s
    gait = [p for p in points if p.stage is Stage.PLAYING]
    assert len(gait) == 101 and gait[0].step == run.gait_start
    reference = load_gait(model, "trot", PERIOD)
    for point in gait:
        k = point.step - run.gait_start
        np.testing.assert_array_equal(point.positions, reference.setpoint(k))
        assert point.elapsed == pytest.approx(k * PERIOD)
    final = points[-1]
    assert final.stage is Stage.DONE and final.step == run.end
    np.testing.assert_allclose(final.positions, stance, atol=1e-12)
    assert not np.any(final.velocities)
    positions = np.array([p.positions for p in points])
    assert np.all(positions >= model.joints.lower - 1e-9) and np.all(positions <= model.joints.upper + 1e-9)
    speeds = np.abs(np.diff(positions, axis=0)) / PERIOD
    assert speeds.max() < 0.95 * model.joints.velocity.min()
    assert run.played == pytest.approx(1.0) and not run.stopped_early


def test_a_stop_returns_to_the_stance_from_where_the_gait_is(model):
    """A cancel 0.37 s into the gait: the set-points computed beyond the stop's step are not
    played; the return leaves from the stop's set-point and ends at rest in the stance."""
    stance = model.home_positions()
    run = GaitRun(load_gait(model, "pace", PERIOD), stance, stance, duration=5.0, timing=TIMING)
    ahead = play(run, until=run.gait_start + 60)  # computed 0.6 s into the gait
    step = run.gait_start + 37
    assert run.stop(step, ahead[step].positions)
    assert not run.stop(step + 5, ahead[step + 5].positions)  # once
    rest = [run.setpoint(s) for s in range(step + 1, step + 200)]
    assert rest[0].stage is Stage.STOPPING and rest[-1].stage is Stage.DONE
    np.testing.assert_allclose(rest[-1].positions, stance, atol=1e-12)
    moved = np.abs(rest[0].positions - ahead[step].positions).max()
    assert moved < 0.01  # leaves from the stop's set-point, at rest
    assert run.stopped_early and run.played == pytest.approx(0.37)
    with pytest.raises(GaitError, match="goes forward"):
        run.setpoint(step)


def test_a_gait_too_fast_for_the_servos_is_refused(model):
    """On our flat foot path, at 2 Hz an IK gait's knee moves 5.39 rad/s between two set-points:
    beyond the AX-12's 5.34 rad/s, which the robot interface would refuse; at 1.5 Hz, 4.04 rad/s.
    On the rules of thumb' path (the default) the knee swings from straight to 90 deg in a
    quarter cycle: 4.47 rad/s at 1 Hz, beyond the limit at 1.5 Hz."""
    limits = 0.95 * model.joints.velocity
    fast = GaitPlayer(CPGGait(model, CPGParameters(frequency=6.0, hip_amplitude=0.5)), PERIOD, "cpg fast")
    with pytest.raises(GaitError, match=r"cpg fast at 6 Hz drives \w+ at [\d.]+ rad/s, beyond its limit"):
        fast.check_speeds(limits, model.joints.names)
    def flat(frequency: float) -> GaitPlayer:
        params = default_parameters(model, frequency=frequency, foot_path="flat")
        return GaitPlayer(IKGait(model, "transverse_gallop", params), PERIOD, "gallop")

    with pytest.raises(GaitError, match=r"gallop at 2 Hz drives fr_knee at 5.39 rad/s, beyond its limit of 5.07"):
        flat(2.0).check_speeds(limits, model.joints.names)
    flat(1.5).check_speeds(limits, model.joints.names)
    load_gait(model, "transverse_gallop", PERIOD, 1.0).check_speeds(limits, model.joints.names)
    with pytest.raises(GaitError, match=r"transverse_gallop at 1.5 Hz drives \w+_knee at [\d.]+ rad/s"):
        load_gait(model, "transverse_gallop", PERIOD, 1.5).check_speeds(limits, model.joints.names)


def test_a_cpg_gait_file_is_read_and_played(model, tmp_path):
    path = write(tmp_path, "gait.yaml", "robot: bioloid_quadruped\ncpg:\n  structure: independent\n"
                 "  frequency: 1.2\n  hip_amplitude: 0.3\n  initial_phases: [0.0, 3.14159, 3.14159, 0.0]\n")
    player = load_gait(model, str(path), PERIOD)
    assert player.frequency == 1.2 and player.name == f"cpg independent ({path})"
    expected = CPGGait(model, CPGParameters(frequency=1.2, hip_amplitude=0.3, structure="independent",
                                            initial_phases=(0.0, 3.14159, 3.14159, 0.0)))
    np.testing.assert_array_equal(player.setpoint(10), expected.positions(10 * PERIOD))
    assert load_gait(model, str(path), PERIOD, 0.8).frequency == 0.8


@pytest.mark.parametrize(("text", "message"), [
    ("cpg:\n  frequency: 1.0\n  hip_amplitud: 0.2\n", r"gait.yaml:3: cpg: unknown key 'hip_amplitud'"),
    ("cpg:\n  frequency: 1.0\n  leg_coupling: 0.9\n", r"gait.yaml:3: leg_coupling 0.9 is outside \[-0.7, 0.7\]"),
    ("cpg:\n  structure: crossed\n", r"gait.yaml:2: unknown coupling structure 'crossed'"),
    ("cpg:\n  hip_amplitude: wide\n", r"gait.yaml:2: cpg: hip_amplitude must be a finite number"),
    ("cpg:\n  initial_phases: [0, 1]\n", r"gait.yaml:2: cpg: initial_phases has 2 values, expected 4"),
    ("robot: bioloid\ncpg: {}\n", r"gait.yaml:1: this gait is for 'bioloid', not 'bioloid_quadruped'"),
    ("gait: trot\n", r"gait.yaml:1: a gait file: unknown key 'gait' \(known: cpg, ik, robot, transition\)"),
    ("transition: hop\nik:\n  gait: trot\n", r"gait.yaml:1: transition: 'hop' is not one of glide, step"),
    ("robot: bioloid_quadruped\n", r"gait.yaml:1: a gait file: one section, cpg or ik; found none"),
    ("cpg: [1, 2\n", r"gait.yaml:2: malformed YAML"),
    ("ik:\n  foot_path: flat\n", r"gait.yaml:2: ik: missing gait"),
    ("ik:\n  gait: gallop\n", r"gait.yaml:2: ik: unknown gait 'gallop' \(walk, trot"),
    ("ik:\n  gait: trot\n  stride: 0.02\n", r"gait.yaml:3: ik: unknown key 'stride'"),
    ("ik:\n  gait: trot\n  foot_path: curly\n", r"gait.yaml:3: unknown foot path 'curly'"),
    ("ik:\n  gait: trot\n  frequency: 3\n", r"gait.yaml:3: gait frequency 3 Hz is outside 0.5-2 Hz"),
    ("ik:\n  gait: trot\n  lift: high\n", r"gait.yaml:3: ik: lift must be a finite number"),
    ("ik:\n  gait: trot\n  points_per_cycle: 2.5\n", r"gait.yaml:3: ik: points_per_cycle must be an integer"),
    ("robot: hoap2\nik:\n  gait: trot\n", r"gait.yaml:1: this gait is for 'hoap2', not 'bioloid_quadruped'"),
    ("ik:\n  gait: trot\ncpg: {}\n", r"gait.yaml:1: a gait file: one section, cpg or ik; found cpg and ik"),
])
def test_a_bad_gait_file_is_refused_with_its_file_and_line(model, tmp_path, text, message):
    path = write(tmp_path, "gait.yaml", text)
    with pytest.raises(GaitError, match=message):
        load_gait(model, str(path), PERIOD)


def test_an_ik_gait_file_plays_a_robot_gait_on_its_own_foot_path(model, tmp_path):
    path = write(tmp_path, "trot.yaml", "robot: bioloid_quadruped\nik:\n  gait: trot\n  foot_path: flat\n"
                 "  frequency: 0.5\n  lift: 0.01\n  points_per_cycle: 40\n")
    player = load_gait(model, str(path), PERIOD)
    assert player.name == f"trot ({path})" and player.frequency == 0.5
    params = default_parameters(model, foot_path="flat", frequency=0.5, lift=0.01, points_per_cycle=40)
    assert player.gait.params == params
    expected = IKGait(model, "trot", params)
    for step in (0, 7, 123):
        np.testing.assert_array_equal(player.setpoint(step), expected.positions(step * PERIOD))
    assert load_gait(model, str(path), PERIOD, 0.8).gait.params == default_parameters(
        model, foot_path="flat", frequency=0.8, lift=0.01, points_per_cycle=40)


def test_the_shipped_flat_trot_is_the_trot_on_the_flat_path(model):
    player = load_gait(model, str(REPO / "docs/examples/trot_flat.yaml"), PERIOD)
    assert player.gait.name == "trot"
    assert player.gait.params == default_parameters(model, foot_path="flat", frequency=0.5)
    assert player.transition == "step"  # it steps into its first set-point (docs/walking.md)
    assert load_gait(model, "trot", PERIOD).transition is None  # a robot.yaml gait: the controller's parameter


def test_stepping_moves_the_feet_together_or_one_alone_and_ends_in_the_target(model):
    """Between two set-points of a stepped transition either every foot moves by the same
    distance along the body (a shift: the body goes over feet that stay) or one foot moves and
    the others stay (a swing): no standing foot moves against another, which is what made the
    glide turn the body. The front legs swing with the feet shifted forward (the body back)."""
    stepper = GaitControllerParameters.for_robot(ROBOT).stepper(model, "step")
    stance = model.home_positions()
    target = load_gait(model, str(REPO / "docs/examples/trot_flat.yaml"), PERIOD).setpoint(0)
    path = np.vstack([stance, stepper.path(stance, target)])
    np.testing.assert_array_equal(path[-1], target)
    shifts = swings = 0
    shift = 0.0
    for a, b in itertools.pairwise(path):
        before, after = stepper.feet(a), stepper.feet(b)
        dx = {n: after[n][0] - before[n][0] for n in before}
        dz = {n: after[n][1] - before[n][1] for n in before}
        moving = [n for n in before if abs(dx[n]) > 1e-9 or abs(dz[n]) > 1e-9]
        together = max(dx.values()) - min(dx.values()) < 1e-9 and max(map(abs, dz.values())) < 1e-9
        assert together or len(moving) == 1, f"feet moving against each other: {moving}"
        if together and moving:
            shifts += 1
            shift += dx[moving[0]]
        elif moving:
            swings += 1
            assert (shift > 0.0) == moving[0].startswith("front"), f"{moving[0]} swings with the feet shifted {shift}"
    assert shifts > 0 and swings > 0
    speeds = np.max(np.abs(np.diff(path, axis=0)), axis=0) / PERIOD
    limits = np.array([joint.limits.velocity for joint in model.joints])
    assert np.all(speeds < limits), "a stepped transition faster than a joint's limit"


def test_a_stepped_run_joins_the_gait_at_rest_and_returns_to_the_stance(model):
    stepper = GaitControllerParameters.for_robot(ROBOT).stepper(model, "step")
    player = load_gait(model, str(REPO / "docs/examples/trot_flat.yaml"), PERIOD)
    stance = model.home_positions()
    run = GaitRun(player, stance, stance, duration=1.0, timing=TIMING, stepper=stepper)
    points = [run.setpoint(step) for step in range(run.gait_start + 1)]
    np.testing.assert_array_equal(points[0].positions, stance)
    np.testing.assert_array_equal(points[-1].positions, player.setpoint(0))
    assert not points[-1].velocities.any() and points[-1].stage is Stage.PLAYING
    assert all(p.stage is Stage.STARTING for p in points[:-1])
    step = run.gait_start + 1
    while (point := run.setpoint(step)).stage is not Stage.DONE:
        step += 1
    np.testing.assert_array_equal(point.positions, stance)
    # a cancel in the middle of the lead-in steps back to the stance from where the legs are
    canceled = GaitRun(player, stance, stance, duration=5.0, timing=TIMING, stepper=stepper)
    middle = canceled.gait_start // 2
    for step in range(middle + 1):
        at = canceled.setpoint(step)
    assert canceled.stop(middle, at.positions)
    step = middle + 1
    while (point := canceled.setpoint(step)).stage is not Stage.DONE:
        step += 1
    np.testing.assert_allclose(point.positions, stance, rtol=0.0, atol=1e-12)
    assert canceled.stopped_early and canceled.played == 0.0
    # ... gliding: a second shift from within the lead-in's would tip the body over
    assert canceled.end - middle == TIMING.steps(TIMING.stop_duration, stance - at.positions, PERIOD)
    # a gait stopped with a pair of feet lifted glides back too; stopped on four feet, it steps
    trot = GaitRun(player, stance, stance, duration=5.0, timing=TIMING, stepper=stepper)
    quarter = trot.gait_start + round(0.25 / (player.frequency * PERIOD))  # a quarter cycle: a pair lifted
    for step in range(quarter + 1):
        at = trot.setpoint(step)
    assert not stepper.level(at.positions)
    trot.stop(quarter, at.positions)
    assert trot.end - quarter == TIMING.steps(TIMING.stop_duration, stance - at.positions, PERIOD)
    assert stepper.level(player.setpoint(0))
    assert run.end - run.gait_end > TIMING.steps(TIMING.stop_duration, stance - player.setpoint(0), PERIOD)


def test_a_gait_searchs_best_is_played_from_its_file_or_directory(model, tmp_path):
    best = {"frequency": 1.7, "alpha": 0.7, "hip_amplitude": 0.06, "knee_amplitude": 0.3, "hip_offset": 0.01,
            "knee_offset": -0.1, "knee_coupling": -0.2, "leg_coupling": 0.3, "structure": "paired",
            "initial_phases": [0.0, math.pi, math.pi, 0.0]}
    search = {"settings": {"robot": ROBOT, "structure": "paired"}, "swarm": {}, "best": {"parameters": best}}
    write(tmp_path, "search.json", json.dumps(search))
    for given in (tmp_path, tmp_path / "search.json"):
        player = load_gait(model, str(given), PERIOD)
        assert player.gait.params == CPGParameters(**{**best, "initial_phases": tuple(best["initial_phases"])})
        assert player.name == f"cpg paired (best of {tmp_path / 'search.json'})"
    write(tmp_path, "search.json", json.dumps({**search, "best": None}))
    with pytest.raises(GaitError, match="the search has no best gait yet"):
        load_gait(model, str(tmp_path), PERIOD)
    write(tmp_path, "search.json", json.dumps({**search, "settings": {"robot": "hoap2"}}))
    with pytest.raises(GaitError, match="a search for 'hoap2', not 'bioloid_quadruped'"):
        load_gait(model, str(tmp_path), PERIOD)
    write(tmp_path, "search.json", "{not json")
    with pytest.raises(GaitError, match=r"not a gait search's search\.json"):
        load_gait(model, str(tmp_path), PERIOD)


def test_an_unknown_gait_names_the_robots_gaits(model, tmp_path):
    with pytest.raises(GaitError, match=r"unknown gait 'tolt': not a gait of bioloid_quadruped \(walk, trot, "
                                        r"transverse_gallop, rotary_gallop, canter, amble, pace, bound, pronk\) nor "
                                        r"an existing gait file"):
        load_gait(model, "tolt", PERIOD)
    with pytest.raises(GaitError, match="not a gait file"):
        load_gait(model, str(write(tmp_path, "gait.txt", "cpg: {}\n")), PERIOD)


def test_only_robots_with_gaits_get_a_gait_controller_and_its_parameters_are_the_files():
    assert gaited_robot(ROBOT) and not gaited_robot("hoap2") and not gaited_robot("bioloid")
    params = GaitControllerParameters.for_robot(ROBOT)
    assert params.period == 0.01 and params.stance == "home"
    with pytest.raises(ValueError, match="parameter period must be > 0"):
        GaitControllerParameters(period=0.0)
