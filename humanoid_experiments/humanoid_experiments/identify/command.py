"""``humanoid identify``: fit simulation parameters to measurements of the robot.

From a recorded bag (``--bag``: ``humanoid record``, ``humanoid real --record``), the bag's
commands are replayed in the in-process simulation and the RMS difference of simulated and
recorded joint positions is minimised; from postures results (``--postures``: ``humanoid
postures --json`` of the real robot, or ``reference``: the real limits in the robot's
protocol; or ``humanoid postures --experiments ... --json`` of the Bioloid quadruped's static
experiments: each experiment's servo, the one its run inferred, stepped until the robot falls),
the RMS difference of the simulated limits or equilibria (deg); ``--hold-out`` keeps some tests or
experiments out of the fit and reports each one's error before and after. ``--fit`` names the parameters, with
bounds (defaults for the usual ones, ``NAME=LOW:HIGH`` otherwise). The fit
(:mod:`humanoid_experiments.identify.search`: scipy's differential evolution, seeded) runs its
evaluations as Ray tasks (a local instance, or ``--address``'s cluster; ``--workers 0``: in
this process), prints its progress per generation and keeps every evaluation in a state file
(``--resume`` goes on after an interruption). It writes the fitted values as a simulation
parameter file (``--output``, :mod:`humanoid_sim.params_file`) and reports (on stdout and in
``OUTPUT.report.json``) the values, their
sensitivity, the fit error and, with ``--validate``, the error on held-out measurements
before and after the fit. ``--demo DIR`` runs the proof where the truth is known
(:mod:`humanoid_experiments.identify.proof`). ``--current BAG`` fits the energy monitor's
current model instead (:mod:`humanoid_experiments.identify.current`).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from humanoid_core import UsageError, host_and_port, integer_in, non_negative_number

#: The optimiser's defaults: points per generation per parameter (scipy's popsize), generations,
#: evaluations of the local polish.
POPULATION = 6
GENERATIONS = 12
POLISH = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_sim import params_file, physics_profiles

    parser.add_argument("--robot", default=None, help="the robot whose simulation is fitted")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--bag", type=Path, default=None, help="a recorded bag: its commands are replayed")
    source.add_argument("--postures", default=None, metavar="RESULTS",
                        help="postures results (humanoid postures --json), or 'reference': the protocol's real limits")
    source.add_argument("--demo", type=Path, default=None, metavar="DIR",
                        help="the proof where the truth is known, in DIR: a simulated robot with a truth parameter "
                             "file records two motions, the fit uses one and is checked on the other")
    source.add_argument("--current", type=Path, default=None, metavar="BAG",
                        help="fit the energy monitor's current model (K and the idle current) to a bag with joint "
                             "efforts and a measured supply current; --output writes its parameter file")
    parser.add_argument("--current-topic", default=None, metavar="TOPIC",
                        help="with --current: the measured current, sensor_msgs/BatteryState (default /battery_state)")
    parser.add_argument("--fit", default=None, metavar="NAMES",
                        help="parameters to fit, comma-separated, each NAME or NAME=LOW:HIGH "
                             "(e.g. servo.max_velocity,transmission.backlash=0:3)")
    parser.add_argument("--output", type=Path, default=None, help="the parameter file to write (the fitted values)")
    parser.add_argument("--validate", action="append", default=[], metavar="PATH",
                        help="held-out measurements (more bags, or postures results), repeatable")
    parser.add_argument("--hold-out", default=None, metavar="NUMBERS",
                        help="with --postures: tests or static experiments (comma-separated numbers) the fit never "
                             "sees, reported before and after the fit (e.g. 3,5,8)")
    parser.add_argument("--imu-weight", type=non_negative_number, default=None, metavar="W",
                        help="with --bag: weight of the trunk tilt's RMS (rad; roll and pitch of imu/data) in the "
                             "cost, beside the joints' RMS (rad) (default 1; 0: off; off for a bag without imu/data)")
    parser.add_argument("--wrench-weight", type=non_negative_number, default=None, metavar="W",
                        help="with --bag: weight (rad/m) of the ground reaction's RMS (m; the feet's summed "
                             "<side>_foot/wrench) in the cost (default 1; 0: off; off for a bag without them)")
    parser.add_argument("--demo-sensors", action="store_true",
                        help="with --demo: the proof of the IMU and wrench terms (a Bioloid squat with a hidden "
                             "trunk centre of mass offset and gear stiffness) instead of the servo's")
    parser.add_argument("--no-sensitivity", action="store_true",
                        help="skip the curvature at the optimum (three evaluations per parameter)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--seed", type=integer_in(0), default=0, help="random seed of the optimiser (0)")
    parser.add_argument("--population", type=integer_in(2), default=POPULATION,
                        help=f"points per generation, per fitted parameter ({POPULATION})")
    parser.add_argument("--generations", type=integer_in(0), default=GENERATIONS,
                        help=f"generations of the optimiser ({GENERATIONS}; 0: no evolution, the polish alone "
                             "from the bounds' centres)")
    parser.add_argument("--polish", type=integer_in(0), default=POLISH,
                        help=f"evaluations of the local search from the evolution's best ({POLISH}; 0: none)")
    parser.add_argument("--address", type=host_and_port(("ray",)), default=None, metavar="RAY_ADDRESS",
                        help="an existing Ray cluster; default: a local Ray instance on this machine")
    parser.add_argument("--workers", type=integer_in(0), default=None,
                        help="simulations at once (default: every CPU of the Ray instance); 0: in this process")
    parser.add_argument("--state", type=Path, default=None,
                        help="the fit's state file (default: OUTPUT with .state.jsonl)")
    parser.add_argument("--resume", action="store_true", help="go on with the fit saved in the state file")
    parser.add_argument("--overwrite", action="store_true", help="start afresh over an existing state file")
    physics_profiles.add_argument(parser)
    params_file.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    if args.current_topic is not None and args.current is None:
        raise UsageError("--current-topic goes with --current BAG")
    if args.current is not None:
        from humanoid_control.ros import absolute
        from humanoid_experiments.identify.current import CURRENT_TOPIC, run_current

        if args.fit is not None or args.validate:
            raise UsageError("--current fits the current model's constants: --fit and --validate are for the "
                             "simulation's parameters")
        args.current_topic = absolute(args.current_topic or CURRENT_TOPIC)
        return run_current(args)
    if args.demo_sensors and args.demo is None:
        raise UsageError("--demo-sensors goes with --demo DIR")
    if args.demo is not None:
        from humanoid_experiments.identify.proof import run_proof

        return run_proof(args)
    if args.robot is None or args.fit is None or args.output is None or (args.bag is None and args.postures is None):
        raise UsageError("give --robot, --bag BAG or --postures RESULTS, --fit NAMES and --output FILE "
                         "(or --demo DIR)")
    if args.resume and args.overwrite:
        raise UsageError("give --resume or --overwrite, not both")
    request = checked_request(args)
    report = identify(request, args)
    print(json.dumps(report, indent=2) if args.json else report_text(report))
    return 0


def checked_request(args: argparse.Namespace) -> dict[str, Any]:
    """The problem, its data and held-out data, checked: a UsageError (one line) otherwise."""
    from humanoid_description import UnknownRobotError, load_model, resolve_robot
    from humanoid_experiments.identify.motion import MotionError, read_bag
    from humanoid_experiments.identify.problem import FitError, Problem, parse_fit, read_postures, split_held_out
    from humanoid_sim import params_file, physics_profiles

    try:
        robot = resolve_robot(args.robot)  # once: the option checks below ask this object
        model = load_model(args.robot)
    except UnknownRobotError as error:
        raise UsageError(str(error).strip('"')) from None
    profile = physics_profiles.chosen(robot, args.physics) or physics_profiles.REFERENCE
    base = params_file.chosen(robot, args.params)
    links = params_file.link_names(model.urdf)
    if getattr(args, "hold_out", None) is not None and args.postures is None:
        raise UsageError("--hold-out: held-out tests or experiments are of --postures data (with --bag: --validate)")
    numbers = _numbers(args.hold_out) if getattr(args, "hold_out", None) is not None else []
    targets: Any = None
    try:
        parameters = parse_fit(args.fit, links)
        if args.bag is not None:
            data: Any = (read_bag(args.bag, model.joints),)
            held_out = [(str(path), (read_bag(Path(path), model.joints),)) for path in args.validate]
        else:
            data = read_postures(args.postures, args.robot)
            held_out = [(str(path), read_postures(path, args.robot)) for path in args.validate]
            if numbers:
                data, held = split_held_out(data, numbers, str(args.postures))
                held_out.insert(0, (_held_out_name(numbers), held))
            targets = {"fitted": data, "held_out": held if numbers else ()}
    except (FitError, MotionError) as error:
        raise UsageError(str(error)) from None
    weights, notes = _sensor_terms(args, data if args.bag is not None else None)
    problem = Problem(args.robot, profile, None if base is None else str(base), tuple(parameters), *weights)
    sources = (str(args.bag if args.bag is not None else args.postures)
               + (f" less {_held_out_name(numbers)}" if numbers else ""),)
    return {"problem": problem, "data": data, "held_out": held_out, "sources": sources, "targets": targets,
            "notes": notes}


def _sensor_terms(args: argparse.Namespace, motions: Any) -> tuple[tuple[float, float], list[str]]:
    """The IMU and wrench terms' weights (--imu-weight, --wrench-weight, default
    :data:`~humanoid_experiments.identify.problem.IMU_WEIGHT` and ``WRENCH_WEIGHT``) and what to
    say of each: on, off (weight 0), or off for a bag without the readings. Postures data has no
    such terms: weights 0, nothing said (unless a weight was given: refused)."""
    from humanoid_experiments.identify.motion import FOOT_WRENCHES, IMU
    from humanoid_experiments.identify.problem import IMU_WEIGHT, WRENCH_WEIGHT

    given = (getattr(args, "imu_weight", None), getattr(args, "wrench_weight", None))
    if motions is None:
        if any(weight is not None for weight in given):
            raise UsageError("--imu-weight and --wrench-weight weigh a bag's readings: they go with --bag")
        return (0.0, 0.0), []
    weights = tuple(default if weight is None else weight for weight, default in zip(given, (IMU_WEIGHT, WRENCH_WEIGHT),
                                                                                      strict=True))
    notes = []
    for (term, topic, present), weight in zip((
            ("IMU (trunk tilt)", IMU, all(m.imu is not None for m in motions)),
            ("wrench (ground reaction)", " and ".join(FOOT_WRENCHES.values()), all(m.wrenches is not None
                                                                               for m in motions))), weights,
            strict=True):
        if weight == 0.0:
            notes.append(f"{term} term off (weight 0)")
        elif not present:
            notes.append(f"{term} term off: {args.bag} holds no {topic}")
        else:
            notes.append(f"{term} term on, weight {weight:g}")
    return weights, notes


def _numbers(text: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(f"--hold-out: {text!r} is not test or experiment numbers like 3,5,8") from None
    if len(set(numbers)) != len(numbers):
        raise UsageError(f"--hold-out: {text!r} names a number twice")
    return numbers


def _held_out_name(numbers: list[int]) -> str:
    return "held out " + ",".join(map(str, numbers))


def say(text: str) -> None:
    """Progress, at once (also into a pipe or a file)."""
    print(text, flush=True)


def identify(request: dict[str, Any], args: argparse.Namespace, progress=say) -> dict[str, Any]:
    """Fit, write the parameter file, evaluate the held-out data: the report."""
    from humanoid_experiments.identify.search import Evaluations, Settings, StateError, fit
    from humanoid_sim import params_file

    problem = request["problem"]
    settings = Settings(problem, request["sources"], args.seed, args.population, args.generations, args.polish)
    state = args.state or args.output.with_suffix(".state.jsonl")
    evaluations = Evaluations(settings, request["data"], state, args.workers, args.address, progress)
    for note in request.get("notes", ()):
        progress(note)
    try:
        known = evaluations.open(args.resume, args.overwrite)
        where = ("in this process" if args.workers == 0 else
                 f"on Ray at {args.address}" if args.address else
                 f"on a local Ray instance ({evaluations.session_dir})")
        progress(f"{problem.robot}: fitting {', '.join(problem.names)} to {', '.join(request['sources'])} "
                 f"(physics {problem.profile}{', base ' + problem.params_file if problem.params_file else ''}); "
                 + (f"differential evolution (population {args.population} per parameter, {args.generations} "
                    f"generations) then {args.polish} evaluations of Nelder-Mead" if args.generations > 0 else
                    f"no evolution: {args.polish} evaluations of Nelder-Mead from the bounds' centres")
                 + f", seed {args.seed}, "
                 f"{evaluations.workers} worker(s) {where}; state {state}"
                 + (f" (resumed: {known} evaluations known)" if args.resume else ""))
        result = fit(settings, evaluations, sensitivity=not getattr(args, "no_sensitivity", False))
        fitted_values = problem.values(result.values)
        targets = request.get("targets")
        per_target = None
        if targets is not None:  # each test's or experiment's error before and after, held out or not
            chosen = (*targets["fitted"], *targets["held_out"])
            progress(f"each of {len(chosen)} tests or experiments before and after the fit")
            per_target = evaluations.per_target([None, fitted_values], chosen)
            held = [t.test for t in targets["held_out"]]
            report_targets = {str(t.test): {"held_out": t.test in held, "real": _real(t), "before": before,
                                            "after": after}
                              for t, before, after in zip(chosen, *per_target, strict=True)}
        for path, data in request["held_out"]:
            if per_target is not None and data is targets["held_out"]:
                errors = [(e["before"], e["after"]) for e in report_targets.values() if e["held_out"]]
                base_error, fitted_error = (math.sqrt(sum(e[i] ** 2 for e in errors) / len(errors)) for i in (0, 1))
            else:
                base_error, fitted_error = evaluations.other([None, fitted_values], data)
            result.held_out[path] = fitted_error
            result.held_out[path + " (base)"] = base_error
    except StateError as error:
        raise UsageError(str(error)) from None
    finally:
        evaluations.close()
    fitted = problem.values(result.values)
    base = {} if problem.params_file is None else params_file.load(
        problem.params_file, params_file.link_names(_urdf(problem.robot)))
    params_file.write(args.output, {**base, **fitted},
                      f"humanoid identify: {problem.robot}, {', '.join(problem.names)} fitted to "
                      f"{', '.join(request['sources'])}; fit error {result.error:.6g} (base {result.base_error:.6g})")
    unit = "deg" if args.postures is not None else "rad"
    report = {"robot": problem.robot, "output": str(args.output), "sources": list(request["sources"]), "unit": unit,
              "bounds": {p.name: [p.low, p.high] for p in problem.parameters}, **result.as_dict()}
    if args.postures is None:
        report["weights"] = {"imu": problem.imu_weight, "wrench": problem.wrench_weight}
        report["terms"] = list(request.get("notes", ()))
    if per_target is not None:
        report["targets"] = report_targets
    report_path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    return report


def _real(target: Any) -> float:
    """The real robot's value of a postures test (deg) or static experiment (raw)."""
    return float(target.real) if hasattr(target, "real") else math.degrees(target.limit)


def report_path(output: Path) -> Path:
    """Where the report is written beside the parameter file."""
    return output.with_suffix(".report.json")


def _urdf(robot: str) -> str:
    from humanoid_description import urdf_xml

    return urdf_xml(robot)


def report_text(report: dict[str, Any]) -> str:
    unit = report["unit"]
    lines = [f"{report['robot']}: fitted to {', '.join(report['sources'])}; parameter file {report['output']} "
             f"(report: {report_path(Path(report['output']))})",
             f"{'parameter':36s} {'value':>12s} {'bounds':>20s} {'+-(10% error)':>14s}"]
    for name, entry in report["parameters"].items():
        low, high = report["bounds"][name]
        change = entry["change_for_10_percent_error"]
        shown = "-" if math.isnan(change) else "unbounded" if math.isinf(change) else f"{change:.3g}"
        lines.append(f"{name:36s} {entry['value']:12.6g} {f'{low:g}..{high:g}':>20s} {shown:>14s}")
    lines.append(f"fit error (RMS, {unit}): {report['fit_error']:.6g} (before the fit: {report['base_error']:.6g}); "
                 f"{report['evaluations']} evaluations, {report['generations']} generations")
    for path, error in report["held_out"].items():
        if not path.endswith(" (base)"):
            base = report["held_out"][path + " (base)"]
            ratio = base / error if error > 0 else math.inf
            label = path if path.startswith("held out") else f"held out {path}"
            lines.append(f"{label}: RMS {error:.6g} {unit} (before the fit: {base:.6g}, "
                         f"{ratio:.1f} times better)")
    if "targets" in report:
        lines.append(f"{'test':>4} {'':8s} {'real':>8s} {'error before':>13s} {'error after':>12s} "
                     f"({unit}, simulated - real)")
        for number, entry in report["targets"].items():
            lines.append(f"{number:>4} {'held out' if entry['held_out'] else 'fitted':8s} {entry['real']:8.5g} "
                         f"{entry['before']:+13.2f} {entry['after']:+12.2f}")
    return "\n".join(lines)
