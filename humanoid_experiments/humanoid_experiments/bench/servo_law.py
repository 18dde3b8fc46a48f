"""``humanoid bench servo-law``: PyBullet's position motors against Lima et al.'s PD torque servo, side by side.

One run, both laws (``servo.law``: ``position_motor``, the reference profile; ``pd_torque``, the
robot's ``pd_torque`` physics profile, 4 kHz), in-process on the robot's clock (deterministic:
the figures do not depend on the load, only the CPU seconds do):

- **tracking**: the robot's library motions (default ``squat`` and ``wave``) played from the
  home pose as one trajectory each (the keyframes, at rest at each, cubic), the joint readings
  at the publish rate against the set-points the robot interface wrote to the driver
  (interpolated to the readings' stamps): RMS and largest error over the joints the motion
  moves, in degrees (``still_rms_deg``: the joints it does not move, their sag under load);
  and the driver's stepping CPU per simulated second;
- **postures** (robots with a postures protocol, ``--tests``, default 1, 9, 13): each test's
  limit under both laws, and against the real robot's where the protocol knows it, with the
  way the robot tipped.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from humanoid_core import UsageError
from humanoid_experiments.bench.cpu_time import load_average

#: The laws compared, each with the physics profile it runs under.
LAWS = {"position_motor": "reference", "pd_torque": "pd_torque"}
#: Postures tests of the comparison by default: a hip pitch, an ankle pitch and an ankle roll
#: test, each with the real robot's limit (the HOAP-2's 8 tests with one take about 4 times as long).
DEFAULT_TESTS = "1,9,13"
#: s of standing before a motion, and after it (the error of the settling counts too).
SETTLE = 0.5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_description import ROBOTS

    parser.add_argument("--robot", default="bioloid", choices=ROBOTS)
    parser.add_argument("--motions", default="squat,wave", metavar="LIST",
                        help="library motions tracked, comma-separated (default: squat,wave)")
    parser.add_argument("--tests", default=DEFAULT_TESTS, metavar="LIST",
                        help=f"postures tests (robots with a protocol), e.g. 1,3,5 or 1-4; 'none' to skip "
                             f"(default: {DEFAULT_TESTS})")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="change a value of the pd_torque law's profile for this run, e.g. servo.bus_rate=4000 "
                             "or servo.k_theta_legs=200 (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def standard_motion(simulated: Any, name: str) -> tuple[list[float], list[Any]]:
    """A library motion as one trajectory of every joint from the home pose's set-points (where
    the robot stands after a reset; not its readings, which a servo's sag moves off them): each
    keyframe (and the end of its hold) a point at rest."""
    import numpy as np

    from humanoid_core.motion import load_motion

    motion = load_motion(simulated.model.name, name)
    columns = [simulated.model.joints.index(joint) for joint in motion.joint_names]
    base = simulated.model.home_positions()
    times: list[float] = []
    positions: list[np.ndarray] = []
    for i, t in enumerate(motion.times):
        pose = base.copy()
        pose[columns] = motion.positions[i]
        times.append(float(t))
        positions.append(pose)
        if motion.holds is not None and motion.holds[i] > 0.0:
            times.append(float(t + motion.holds[i]))
            positions.append(pose.copy())
    if times[0] <= 0.0:  # from the current positions to the first keyframe
        shift = 1.0 - times[0]
        times = [t + shift for t in times]
    return [0.0, *times], [base, *positions]


def tracking(robot: str, profile: str, motions: list[str], overrides: dict[str, Any]) -> dict[str, Any]:
    """Each motion's tracking error (deg) against the set-points written, under ``profile``
    and ``overrides``."""
    import numpy as np

    from humanoid_sim import SimulatedRobot

    results: dict[str, Any] = {}
    with SimulatedRobot(robot, profile, overrides) as simulated:
        driver = simulated.driver
        written: list[tuple[float, np.ndarray]] = []
        write = driver.write

        def recorded(command: Any) -> None:
            written.append((driver.now(), np.array(command.position, dtype=float)))
            write(command)
        driver.write = recorded  # type: ignore[method-assign]
        readings: list[tuple[float, np.ndarray]] = []
        simulated.listen(lambda reading: readings.append((reading.state.stamp, reading.state.position.copy())))
        simulated.run_for(SETTLE)
        for name in motions:
            simulated.reset()
            simulated.run_for(SETTLE)
            times, positions = standard_motion(simulated, name)
            first_write, first_reading = len(written), len(readings)
            cpu0, sim0 = driver.stepping_cpu, simulated.now()
            run, _ = simulated.follow(times, positions)
            simulated.run_for(SETTLE)
            command_t = np.array([t for t, _ in written[first_write:]])
            command_p = np.array([p for _, p in written[first_write:]])
            stamps = np.array([t for t, _ in readings[first_reading:]])
            measured = np.array([p for _, p in readings[first_reading:]])
            inside = (stamps >= command_t[0]) & (stamps <= command_t[-1])
            moved = np.ptp(command_p, axis=0) > 1e-6
            wanted = np.column_stack([np.interp(stamps[inside], command_t, command_p[:, j])
                                      for j in np.flatnonzero(moved)])
            error = measured[inside][:, moved] - wanted
            still = measured[inside][:, ~moved] - command_p[0, ~moved]
            per_joint = np.sqrt(np.mean(error**2, axis=0))
            worst = int(np.argmax(per_joint))
            results[name] = {
                "rms_deg": round(math.degrees(float(np.sqrt(np.mean(error**2)))), 4),
                "max_deg": round(math.degrees(float(np.max(np.abs(error)))), 4),
                "worst_joint": [simulated.model.joints.names[j] for j in np.flatnonzero(moved)][worst],
                "worst_joint_rms_deg": round(math.degrees(float(per_joint[worst])), 4),
                "joints": int(np.count_nonzero(moved)), "result": run.state.name.lower(),
                "still_rms_deg": round(math.degrees(float(np.sqrt(np.mean(still**2)))), 4) if still.size else None,
                "fell": simulated.fell_at is not None,
                "cpu_per_simulated_s": round((driver.stepping_cpu - cpu0) / (simulated.now() - sim0), 3)}
    return results


def postures(robot: str, profile: str, tests: list[int], overrides: dict[str, Any]) -> dict[str, Any]:
    from humanoid_experiments.postures import run_postures

    cpu = time.process_time()
    found = {}
    for result in run_postures(robot, tests, profile, overrides):
        test = result.test
        limit = None if result.limit is None else math.degrees(result.limit)
        real = None if test.real_limit is None else math.degrees(test.real_limit)
        found[str(test.number)] = {
            "name": test.name, "limit_deg": None if limit is None else round(limit, 2),
            "real_deg": None if real is None else round(real, 2),
            "error_deg": None if limit is None or real is None else round(limit - real, 2),
            "tipped": result.tipped, "expected": test.falls}
    return {"tests": found, "cpu_s": round(time.process_time() - cpu, 1)}


def run(args: argparse.Namespace) -> int:
    from humanoid_core.motion import list_motions
    from humanoid_description import resolve_robot
    from humanoid_experiments.bench.physics import parse_values
    from humanoid_experiments.postures import parse_tests
    from humanoid_sim import physics_profiles

    try:
        physics_profiles.check_name(resolve_robot(args.robot), LAWS["pd_torque"])
        changes = {"position_motor": {}, "pd_torque": parse_values(args.set)}
        _settings(args.robot, LAWS["pd_torque"], changes["pd_torque"])  # a bad value refused here
        motions = [m.strip() for m in args.motions.split(",") if m.strip()]
        unknown = [m for m in motions if m not in list_motions(args.robot)]
        if not motions or unknown:
            raise UsageError(f"--motions: {', '.join(unknown) or 'none given'}: the {args.robot} library has "
                             f"{', '.join(list_motions(args.robot))}")
        tests = [] if args.tests.strip() == "none" else parse_tests(args.tests)
        has_protocol = _has_protocol(args.robot)
        if tests and has_protocol:  # unknown test numbers refused before anything runs
            from humanoid_description import load_model
            from humanoid_experiments.postures import load_protocol

            load_protocol(load_model(args.robot)).select(tests)
    except (UsageError, ValueError) as error:
        print(f"humanoid bench servo-law: error: {error}", file=sys.stderr)
        return 2
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if not args.json else (lambda _text: None)
    result: dict[str, Any] = {"robot": args.robot, "laws": {}, "set": changes["pd_torque"],
                              "load_average_start": load_average()}
    for law, profile in LAWS.items():
        say(f"{args.robot}, {law} (profile {profile}): tracking {', '.join(motions)} ...")
        entry: dict[str, Any] = {"profile": profile, "settings": _settings(args.robot, profile, changes[law]),
                                 "tracking": tracking(args.robot, profile, motions, changes[law])}
        if tests and has_protocol:
            say(f"{args.robot}, {law}: postures tests {', '.join(map(str, tests))} ...")
            entry["postures"] = postures(args.robot, profile, tests, changes[law])
        result["laws"][law] = entry
    result["postures_note"] = (None if has_protocol or not tests
                               else f"{args.robot} has no postures protocol (humanoid_description/robots/"
                                    f"{args.robot}/postures.yaml): tracking only")
    result["load_average_end"] = load_average()
    print(json.dumps(result) if args.json else text(result))
    return 0


def _has_protocol(robot: str) -> bool:
    from humanoid_description import robot_files

    return robot_files(robot).config_file("postures.yaml").exists()


def _settings(robot: str, profile: str, overrides: dict[str, Any]) -> dict[str, Any]:
    from humanoid_description import load_model
    from humanoid_sim import simulation_settings

    settings = simulation_settings(load_model(robot), profile, overrides)
    servo = settings.servo
    values = {"physics_rate": settings.sim.physics_rate, "law": servo.law, "max_torque": servo.max_torque}
    if servo.law == "pd_torque":
        values |= {"bus_rate": servo.bus_rate, "k_theta_legs": servo.k_theta_legs,
                   "k_omega_legs": servo.k_omega_legs, "k_theta_others": servo.k_theta_others,
                   "k_omega_others": servo.k_omega_others}
    else:
        values |= {"position_gain": servo.position_gain, "velocity_gain": servo.velocity_gain}
    return values


def text(r: dict[str, Any]) -> str:
    laws = list(r["laws"])
    lines = [f"{r['robot']}: servo laws side by side (load average {r['load_average_start'][0]:.1f} at the start, "
             f"{r['load_average_end'][0]:.1f} at the end)"]
    for law in laws:
        settings = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                             for k, v in r["laws"][law]["settings"].items())
        lines.append(f"  {law}: {settings}")
    lines.append(f"  {'tracking vs set-points (deg)':34s}" + "".join(f"{law:>34s}" for law in laws))
    for motion in r["laws"][laws[0]]["tracking"]:
        cells = []
        for law in laws:
            t = r["laws"][law]["tracking"][motion]
            cells.append(f"RMS {t['rms_deg']:.3f} max {t['max_deg']:.3f}{' FELL' if t['fell'] else ''}")
        lines.append(f"    {motion:32s}" + "".join(f"{c:>34s}" for c in cells))
        cells = [f"{r['laws'][law]['tracking'][motion]['cpu_per_simulated_s']:.2f}" for law in laws]
        lines.append(f"    {'  stepping CPU s / simulated s':32s}" + "".join(f"{c:>34s}" for c in cells))
    if "postures" in r["laws"][laws[0]]:
        lines.append(f"  {'postures limit (deg), error vs real':34s}" + "".join(f"{law:>34s}" for law in laws)
                     + f"{'real':>8s}")
        for test, first in r["laws"][laws[0]]["postures"]["tests"].items():
            cells = []
            for law in laws:
                p = r["laws"][law]["postures"]["tests"][test]
                limit = "none" if p["limit_deg"] is None else f"{p['limit_deg']:+.1f}"
                error = "" if p["error_deg"] is None else f" ({p['error_deg']:+.1f})"
                tipped = "" if p["tipped"] == p["expected"] else f" tipped {p['tipped']}"
                cells.append(f"{limit}{error}{tipped}")
            real = "-" if first["real_deg"] is None else f"{first['real_deg']:+.1f}"
            lines.append(f"    {test + ' ' + first['name']:32s}" + "".join(f"{c:>34s}" for c in cells) + f"{real:>8s}")
        for law in laws:
            found = r["laws"][law]["postures"]["tests"].values()
            errors = [p["error_deg"] for p in found if p["error_deg"] is not None]
            if errors:
                lines.append(f"    {law}: mean |error| {sum(map(abs, errors)) / len(errors):.2f} deg over "
                             f"{len(errors)} tests with a real value; CPU {r['laws'][law]['postures']['cpu_s']:.0f} s")
    elif r.get("postures_note"):
        lines.append(f"  postures: {r['postures_note']}")
    return "\n".join(lines)
