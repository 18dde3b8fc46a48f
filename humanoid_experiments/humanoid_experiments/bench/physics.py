"""``humanoid bench physics``: a physics profile's speed and fidelity against the reference, in one run.

Speed, reference and profile measured alternately in the same invocation:

- ``rtf_reference`` / ``rtf_fast``: raw PyBullet stepping of the standing robot
  (:func:`humanoid_experiments.bench.sim.raw_real_time_factor`, the ``bench sim`` baseline, with
  each profile's physics rate and engine settings), best of ``--rounds`` runs each;
- ``rtf_walk_reference`` / ``rtf_walk_fast``: the simulation driver's stepping (servo
  references and physics) while the robot walks 1 m, in simulated seconds per wall second
  spent stepping; the walk itself runs in-process (:mod:`humanoid_experiments.walk_in_process`).
  Beside each wall-clock figure the same per CPU second (``cpu_rtf_*``): on a shared machine
  the wall clock measures the load, the CPU time the work.

Fidelity, the profile against the reference (1 kHz, the parameter file's own values):

- the postures protocol (``humanoid postures``' tests, in-process on the robot's clock:
  :mod:`humanoid_experiments.postures.in_process`): each test's limit under both, the error in
  degrees, ``postures_max_error_deg`` the largest |error| (a test finding a limit under one
  and none under the other: infinite, printed as null);
- the 1 m walk: ``walk_distance_error_m`` and ``walk_drift_error_m``, |profile - reference|
  of the distance reached and of the lateral drift; and whether either fell.

Both runs are deterministic (no ROS, no pacing): the fidelity figures are the same on any
load, only the speed figures vary. ``--reference-from FILE`` takes the reference's
fidelity results from an earlier run's JSON (a sweep of settings need not repeat the
reference's postures, the longest part); ``--set NAME=VALUE`` changes the profile's values
(to try settings before naming them in the parameter file).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from humanoid_core import integer_in, positive_number
from humanoid_experiments.bench.cpu_time import load_average

# PyBullet, Pinocchio and the simulation are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.

#: The walk of the benchmark: the README's 1 m.
WALK_DISTANCE = 1.0
#: A robot with gaits (the quadruped) neither walks 1 m nor takes the postures protocol: its
#: fidelity runs are the flat-path trot ``humanoid bench world`` plays and the report's IK gaits
#: that stand at 1 Hz on the rules-of-thumb path (docs/quadruped.md's chart): (gait, foot path,
#: frequency Hz, seconds), each played in-process as the gait chart plays it.
GAIT_RUNS = (("trot", "flat", 0.5, 10.0), ("trot", "rules_of_thumb", 1.0, 32.0), ("amble", "rules_of_thumb", 1.0, 32.0),
             ("pace", "rules_of_thumb", 1.0, 32.0), ("pronk", "rules_of_thumb", 1.0, 32.0))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_description import ROBOTS

    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--physics", default="fast", metavar="PROFILE",
                        help="the physics profile to measure against the reference (default: fast)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="change a value of the profile for this run, e.g. physics_rate=250 (repeatable)")
    parser.add_argument("--seconds", type=positive_number, default=5.0,
                        help="simulated seconds of each raw stepping run (5)")
    parser.add_argument("--rounds", type=integer_in(1), default=3, help="raw stepping runs of each profile (3)")
    parser.add_argument("--tests", default=None, metavar="LIST",
                        help="postures tests to compare, e.g. 1,3,5 or 1-4 (default: all)")
    parser.add_argument("--reference-from", type=Path, default=None, metavar="JSON",
                        help="take the reference's postures and walk from this earlier --json output")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def parse_values(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` items, each value read as YAML (numbers, true/false); NAME must be one a
    physics profile may set (UsageError names the close ones)."""
    import yaml

    from humanoid_experiments.postures import parse_overrides
    from humanoid_sim import allowed_parameters

    return {name: yaml.safe_load(value) for name, value in parse_overrides(items, sorted(allowed_parameters())).items()}


def stepping_runs(robot: str, seconds: float, rounds: int, profiles: dict[str, Any]) -> dict[str, list]:
    """Raw stepping runs of each profile's world, alternating profile after profile."""
    from humanoid_experiments.bench.sim import raw_real_time_factor

    runs: dict[str, list] = {name: [] for name in profiles}
    for _ in range(rounds):
        for name, settings in profiles.items():
            runs[name].append(raw_real_time_factor(robot, seconds, settings.sim))
    return runs


def walk(robot: str, profile: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The 1 m walk in-process, with the driver's stepping time."""
    from humanoid_experiments.walk_in_process import SETTLE_TIME, InProcessWalker
    from humanoid_sim import SimulatedRobot

    with SimulatedRobot(robot, profile, overrides) as simulated:
        walker = InProcessWalker(simulated)
        simulated.run_for(SETTLE_TIME)
        wall0, cpu0, sim0 = simulated.driver.stepping_wall, simulated.driver.stepping_cpu, simulated.now()
        report = walker.walk(WALK_DISTANCE)
        simulated_time = simulated.now() - sim0
        driver = simulated.driver
        return {"distance_m": report.distance_m, "lateral_drift_m": report.lateral_drift_m,
                "heading_error_deg": math.degrees(report.heading_error_rad), "fell": report.fell,
                "result": report.result, "simulated_s": simulated_time,
                "rtf_stepping": simulated_time / (driver.stepping_wall - wall0),
                "cpu_rtf_stepping": simulated_time / (driver.stepping_cpu - cpu0),
                "rtf_run": report.real_time_factor, "messages": walker.messages[:5]}


def gait_runs(robot: str, profile: str, overrides: dict[str, Any]) -> list[dict[str, Any]]:
    """Each of :data:`GAIT_RUNS` in-process: where the body went, whether it fell, eq 17's
    fitness, and the driver's stepping per CPU second."""
    from humanoid_core.quadruped_gaits import ik_player
    from humanoid_sim import HeadlessSimulation

    runs = []
    with HeadlessSimulation(robot, profile, overrides=overrides) as simulation:
        for gait, foot_path, frequency, seconds in GAIT_RUNS:
            player = ik_player(simulation.model, gait, simulation.control_period, foot_path=foot_path,
                               frequency=frequency)
            cpu = simulation.driver.stepping_cpu
            outcome = simulation.run(player, seconds)
            runs.append({"gait": gait, "foot_path": foot_path, "frequency_hz": frequency, "seconds": seconds,
                         "distance_m": outcome.distance, "lateral_m": outcome.lateral,
                         "heading_deg": outcome.heading_deg, "fitness_m": outcome.fitness, "fell": outcome.fell,
                         "cpu_rtf_stepping": seconds / (simulation.driver.stepping_cpu - cpu)})
    return runs


def postures(robot: str, profile: str, overrides: dict[str, Any], tests: list[int] | None) -> dict[str, Any]:
    from humanoid_experiments.postures import run_postures

    cpu = time.process_time()
    results = run_postures(robot, tests, profile, overrides)
    return {"limits_deg": {str(r.test.number): None if r.limit is None else math.degrees(r.limit) for r in results},
            "tipped": {str(r.test.number): r.tipped for r in results}, "cpu_s": time.process_time() - cpu}


def compare(reference: dict[str, Any], fast: dict[str, Any]) -> dict[str, Any]:
    """Per-test errors (deg, fast - reference) and the largest |error| (inf: one found no limit)."""
    errors: dict[str, float | None] = {}
    worst = 0.0
    for test, ref in reference["limits_deg"].items():
        got = fast["limits_deg"].get(test)
        if test not in fast["limits_deg"]:
            continue
        if ref is None and got is None:
            errors[test] = 0.0
        elif ref is None or got is None:
            errors[test], worst = None, math.inf
            continue
        else:
            errors[test] = got - ref
        worst = max(worst, abs(errors[test] or 0.0))
    return {"errors_deg": errors, "max_error_deg": worst}


def run(args: argparse.Namespace) -> int:
    from humanoid_core import UsageError
    from humanoid_core.quadruped_gaits import gaited_robot
    from humanoid_description import load_model, resolve_robot
    from humanoid_experiments.postures import parse_tests
    from humanoid_sim import physics_profiles, simulation_settings

    try:
        physics_profiles.check_name(resolve_robot(args.robot), args.physics)
        overrides = parse_values(args.set)
        tests = None if args.tests is None else parse_tests(args.tests)
        model = load_model(args.robot)
        profiles = {"reference": simulation_settings(model),
                    args.physics: simulation_settings(model, args.physics, overrides)}
        previous = json.loads(args.reference_from.read_text()) if args.reference_from else None
    except (UsageError, ValueError, OSError) as error:
        print(f"humanoid bench physics: error: {error}", file=sys.stderr)
        return 2
    fast_name = args.physics
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if not args.json else (lambda _text: None)
    say(f"{args.robot}: raw stepping, reference and {fast_name} alternately ({args.rounds} x {args.seconds:g} s) ...")
    runs = stepping_runs(args.robot, args.seconds, args.rounds,
                         {"reference": profiles["reference"], "fast": profiles[fast_name]})
    best = {name: max(runs[name], key=lambda r: r.real_time_factor) for name in runs}
    result = {
        "robot": args.robot, "profile": fast_name, "overrides": overrides,
        "profile_settings": profile_settings(profiles[fast_name]),
        "reference_settings": profile_settings(profiles["reference"]),
        "rtf_fast": round(best["fast"].real_time_factor, 3),
        "rtf_reference": round(best["reference"].real_time_factor, 3),
        "speedup": round(best["fast"].real_time_factor / best["reference"].real_time_factor, 3),
        "cpu_rtf_fast": round(1.0 / min(r.cpu_per_sim_second for r in runs["fast"]), 3),
        "cpu_rtf_reference": round(1.0 / min(r.cpu_per_sim_second for r in runs["reference"]), 3),
        "rtf_fast_runs": [round(r.real_time_factor, 3) for r in runs["fast"]],
        "rtf_reference_runs": [round(r.real_time_factor, 3) for r in runs["reference"]],
    }
    if gaited_robot(args.robot):
        result.update(gait_fidelity(args.robot, fast_name, overrides, previous, say))
    else:
        result.update(walk_fidelity(args.robot, fast_name, overrides, tests, previous, say))
    result["load_average"] = load_average()
    if args.json:
        print(json.dumps(result))
    else:
        print(text(result))
    return 0


def walk_fidelity(robot: str, fast_name: str, overrides: dict[str, Any], tests: list[int] | None,
                  previous: dict[str, Any] | None, say) -> dict[str, Any]:
    """A walking robot's fidelity: the 1 m walk and the postures protocol under both."""
    if previous is not None:
        ref_walk, ref_postures = previous["walk_reference"], previous["postures_reference"]
    else:
        say("1 m walk in-process, reference ...")
        ref_walk = walk(robot, "reference", {})
    say(f"1 m walk in-process, {fast_name} ...")
    fast_walk = walk(robot, fast_name, overrides)
    if previous is None:
        say("postures protocol in-process, reference ...")
        ref_postures = postures(robot, "reference", {}, tests)
    say(f"postures protocol in-process, {fast_name} ...")
    fast_postures = postures(robot, fast_name, overrides, tests)
    compared = compare(ref_postures, fast_postures)
    return {
        "rtf_walk_fast": round(fast_walk["rtf_stepping"], 3), "rtf_walk_reference": round(ref_walk["rtf_stepping"], 3),
        "cpu_rtf_walk_fast": round(fast_walk["cpu_rtf_stepping"], 3),
        "cpu_rtf_walk_reference": round(ref_walk["cpu_rtf_stepping"], 3),
        "postures_max_error_deg": (None if math.isinf(compared["max_error_deg"])
                                   else round(compared["max_error_deg"], 3)),
        "postures_errors_deg": {k: None if v is None else round(v, 3) for k, v in compared["errors_deg"].items()},
        "walk_distance_error_m": round(abs(fast_walk["distance_m"] - ref_walk["distance_m"]), 4),
        "walk_drift_error_m": round(abs(fast_walk["lateral_drift_m"] - ref_walk["lateral_drift_m"]), 4),
        "walk_fell": {"reference": ref_walk["fell"], "fast": fast_walk["fell"]},
        "walk_reference": ref_walk, "walk_fast": fast_walk,
        "postures_reference": ref_postures, "postures_fast": fast_postures,
    }


def gait_fidelity(robot: str, fast_name: str, overrides: dict[str, Any], previous: dict[str, Any] | None,
                  say) -> dict[str, Any]:
    """A robot with gaits: :data:`GAIT_RUNS` under both."""
    if previous is not None:
        reference = previous["gaits_reference"]
    else:
        say("gaits in-process, reference ...")
        reference = gait_runs(robot, "reference", {})
    say(f"gaits in-process, {fast_name} ...")
    return {"gaits_reference": reference, "gaits_fast": gait_runs(robot, fast_name, overrides)}


def profile_settings(settings) -> dict[str, Any]:
    """The values in force of what a profile may change."""
    from humanoid_sim import values_in_force

    return values_in_force(settings.sim, settings.servo)


def text(r: dict[str, Any]) -> str:
    changed = {k: v for k, v in r["profile_settings"].items() if r["reference_settings"].get(k) != v}
    changes = ", ".join(f"{k} {v}" for k, v in changed.items()) or "as the reference"
    lines = [
        f"{r['robot']}: physics profile {r['profile']} ({changes}) vs reference, "
        f"load average {r['load_average'][0]:.1f}",
        f"  raw stepping, standing    real-time factor {r['rtf_fast']:7.2f} vs {r['rtf_reference']:7.2f}  "
        f"(x {r['speedup']:.2f}; per CPU second {r['cpu_rtf_fast']:.2f} vs {r['cpu_rtf_reference']:.2f})",
    ]
    if "gaits_fast" in r:
        return "\n".join(lines + gait_lines(r))
    worst = r["postures_max_error_deg"]
    worst_text = "no limit found by one of them" if worst is None else f"{worst:.2f} deg"
    walk, ref = r["walk_fast"], r["walk_reference"]
    lines += [
        f"  stepping while walking    real-time factor {r['rtf_walk_fast']:7.2f} vs {r['rtf_walk_reference']:7.2f}  "
        f"(per CPU second {r['cpu_rtf_walk_fast']:.2f} vs {r['cpu_rtf_walk_reference']:.2f})",
        f"  postures                  largest |error| {worst_text} over {len(r['postures_errors_deg'])} tests",
        "    " + ", ".join(f"{k}: {'-' if v is None else f'{v:+.1f}'}" for k, v in r["postures_errors_deg"].items()),
        f"  1 m walk                  distance {walk['distance_m']:.4f} vs {ref['distance_m']:.4f} m "
        f"(error {r['walk_distance_error_m'] * 1000:.1f} mm), drift {walk['lateral_drift_m'] * 1000:+.1f} vs "
        f"{ref['lateral_drift_m'] * 1000:+.1f} mm (error {r['walk_drift_error_m'] * 1000:.1f} mm), "
        f"fell: {'yes' if walk['fell'] else 'no'} vs {'yes' if ref['fell'] else 'no'}",
    ]
    return "\n".join(lines)


def gait_lines(r: dict[str, Any]) -> list[str]:
    """Each gait run: the profile's figures, then the reference's."""
    lines = ["  gaits (profile vs reference): distance along the start heading, lateral, heading, eq 17, fell"]
    for fast, ref in zip(r["gaits_fast"], r["gaits_reference"], strict=True):
        lines.append(
            f"    {fast['gait']} ({fast['foot_path']}) {fast['frequency_hz']:g} Hz {fast['seconds']:g} s: "
            f"{fast['distance_m'] * 1000:.0f} vs {ref['distance_m'] * 1000:.0f} mm, "
            f"{fast['lateral_m'] * 1000:+.0f} vs {ref['lateral_m'] * 1000:+.0f} mm, "
            f"{fast['heading_deg']:+.1f} vs {ref['heading_deg']:+.1f} deg, "
            f"{fast['fitness_m']:.2f} vs {ref['fitness_m']:.2f} m, "
            f"{'yes' if fast['fell'] else 'no'} vs {'yes' if ref['fell'] else 'no'} "
            f"(stepping per CPU second {fast['cpu_rtf_stepping']:.1f} vs {ref['cpu_rtf_stepping']:.1f})")
    return lines
