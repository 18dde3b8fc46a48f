"""``humanoid postures``: the postures protocol, in simulation or on the real robot.

In simulation the command starts a headless simulation of the robot (as fast as it can
run, unless ``--real-time-factor`` says otherwise), runs the tests through the robot
interface and stops the simulation; in lockstep (the default) the simulation waits for the
command at each state it acts at, so every run gives the same steps at the same times.
With ``--real`` it starts nothing: it drives the robot already running in this ROS domain
(any graph serving the robot interface): the operator says ``ready`` before each test (on
stdin, or scripted with ``--answers``); a robot that publishes foot wrenches or an IMU stops
each test at the first foot lift, and on one that publishes neither (the Bioloids' hardware
node) the operator says after each step whether it stood or fell
(:mod:`humanoid_experiments.postures.operator`). ``--compare`` sets two results files side
by side (:mod:`humanoid_experiments.postures.compare`).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from humanoid_core import UsageError, file_or_stdout, host_and_port, integer_in, non_negative_number

if TYPE_CHECKING:
    from humanoid_control.ros import RobotClient
    from humanoid_description import RobotModel
    from humanoid_experiments.postures.operator import Operator

# rclpy, Pinocchio and the robot client are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.


def parse_tests(text: str) -> list[int]:
    """``1,3,5`` or ranges ``1-4,9``: test numbers, in the order given, without repeats."""
    numbers: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                low, high = (int(v) for v in part.split("-", 1))
                if low > high:
                    raise ValueError
                values = list(range(low, high + 1))
            else:
                values = [int(part)]
        except ValueError:
            raise UsageError(f"--tests: {part!r} is not a test number or a range like 1-4") from None
        numbers += [v for v in values if v not in numbers]
    return numbers


def parse_overrides(items: list[str], known: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` items as ROS parameter overrides (values in ROS's own syntax), each NAME
    one of ``known``: ROS ignores an override of a parameter nobody declares, so a typo
    would run the tests with the value it meant to change."""
    overrides = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise UsageError(f"--set: {item!r} is not NAME=VALUE")
        if name not in known:
            close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
            hint = (f"did you mean {' or '.join(close)}?" if close
                    else f"the simulation's parameters: {', '.join(sorted(known))}")
            raise UsageError(f"--set: the simulation has no parameter {name!r} ({hint})")
        overrides[name] = value
    return overrides


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_sim import params_file, physics_profiles

    parser.add_argument("--robot", default=None,
                        help="the robot whose protocol to run (humanoid_description/robots/<robot>/postures.yaml: "
                             "hoap2, bioloid_quadruped); required but with --compare")
    parser.add_argument("--tests", default=None, metavar="LIST",
                        help="tests to run, e.g. 1,3,5 or 1-4 (default: all, in order)")
    parser.add_argument("--json", default=None, metavar="OUT", type=file_or_stdout, nargs="?", const="-",
                        help="also write the results to OUT as JSON (a list, one object per test, written after "
                             "each test; - or nothing for stdout); with --compare, the comparison; with "
                             "--experiments, {\"experiments\": [...]}")
    parser.add_argument("--experiments", default=None, metavar="WHICH",
                        help="the reference's own static experiments instead of our tests: 'reference' (all of "
                             "them) or numbers like 5,7; each candidate servo (the hinted ones, else every servo) "
                             "stepped both ways from the experiment's starting posture, in simulation "
                             "(docs/postures.md)")
    parser.add_argument("--servos", default=None, metavar="LIST",
                        help="with --experiments: only these candidate servos (the reference's names, e.g. "
                             "PELVIS,N1; PELVIS- for one way), for a quick look")
    parser.add_argument("--workers", type=integer_in(0), default=None,
                        help="with --experiments: candidate runs at once on a local Ray instance (default: every "
                             "CPU); 0: one after the other in this process")
    parser.add_argument("--address", type=host_and_port(("ray",)), default=None, metavar="RAY_ADDRESS",
                        help="with --experiments: an existing Ray cluster for the candidate runs")
    parser.add_argument("--real", action="store_true",
                        help="drive the real robot already running (no simulator services): the operator says "
                             "ready before each test; with foot sensors or an IMU each test stops at the first "
                             "foot lift, without them the operator says stood or fell after each step")
    parser.add_argument("--answers", type=Path, default=None, metavar="FILE",
                        help="--real: the operator's answers scripted, one a line (ready, stood, fell, abort), "
                             "instead of standard input")
    parser.add_argument("--compare", nargs=2, type=Path, default=None, metavar=("A.json", "B.json"),
                        help="compare two results files (--json of two runs, e.g. simulation and real robot): "
                             "per test, B's limit minus A's")
    parser.add_argument("--protocol", type=Path, default=None,
                        help="protocol file (default: humanoid_description/robots/<robot>/postures.yaml)")
    parser.add_argument("--real-time-factor", type=non_negative_number, default=0.0,
                        help="simulation only: 0 = as fast as possible (default), 1 = real time")
    parser.add_argument("--no-lockstep", dest="lockstep", action="store_false",
                        help="simulation only: let the simulation run on its own clock instead of waiting for "
                             "this command at every state (lockstep, the default: each step at the same simulated "
                             "time in every run, as fast as the machine allows)")
    add_own_robot_namespace(parser, "in simulation: run the simulated robot under NAME (/NAME/joint_states, "
                                    "/NAME/clock), and this command's client there, beside other robots on the DDS "
                                    "domain (refused when a robot already runs there); with --real: the namespace "
                                    "of the running robot to drive (humanoid real --namespace NAME)")
    physics_profiles.add_argument(parser)
    params_file.add_argument(parser)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="simulation only: override a parameter of the simulation node, e.g. "
                             "transmission.stiffness=50 or transmission.backlash=0 (repeatable)")


#: The command's node (a lockstep participant in simulation).
CLIENT = "humanoid_postures"
def publishes_balance_sensors(client: RobotClient, model: RobotModel) -> bool:
    """Does the robot publish a foot wrench or its IMU (what the watch needs to stop a test)?
    Its robot_state says what it measures (the client has taken one by now); a sensor another
    node publishes counts once discovered. (It waited 5 s for discovery on robots without.)"""
    topics = [f"{side}_foot/wrench" for side in model.config.feet] + ["imu/data"]
    return any(t in client.carried or client.node.count_publishers(t) for t in topics)


def operator_for(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> Operator:
    """The operator of a --real run: the --answers script (checked whole now, before anything
    moves) or standard input."""
    from humanoid_description import DataFileError
    from humanoid_experiments.postures.operator import Operator, ScriptedAnswers, StreamAnswers

    if args.answers is None:
        return Operator(StreamAnswers(stdin), out)
    try:
        return Operator(ScriptedAnswers(args.answers), out)
    except DataFileError as error:
        raise UsageError(f"--answers: {error}") from None


def check_options(args: argparse.Namespace) -> None:
    """Options that exclude each other, before anything starts."""
    if args.experiments is None and (args.servos or args.workers is not None or args.address):
        raise UsageError("--servos, --workers and --address go with --experiments")
    if args.experiments is not None:
        given = [name for name, value in (("--tests", args.tests), ("--real", args.real), ("--answers", args.answers),
                                          ("--compare", args.compare), ("--set", args.set),
                                          ("--real-time-factor", args.real_time_factor),
                                          ("--namespace", args.namespace != "/")) if value]
        if given:
            raise UsageError(f"--experiments runs the reference's experiments in simulation: {', '.join(given)} "
                             "cannot go with it")
    if args.compare is not None:
        given = [name for name, value in (("--robot", args.robot), ("--tests", args.tests), ("--real", args.real),
                                          ("--answers", args.answers), ("--protocol", args.protocol),
                                          ("--set", args.set), ("--physics", args.physics), ("--params", args.params),
                                          ("--real-time-factor", args.real_time_factor),
                                          ("--namespace", args.namespace != "/")) if value]
        if given:
            raise UsageError(f"--compare reads two results files: {', '.join(given)} cannot go with it")
        return
    if args.robot is None:
        raise UsageError("--robot is required (but with --compare A.json B.json)")
    if args.real and (args.set or args.real_time_factor or args.physics is not None or args.params is not None):
        raise UsageError("--set, --params, --real-time-factor and --physics are for the simulation, not with --real")
    if args.answers is not None and not args.real:
        raise UsageError("--answers is the operator's, for --real")


def save_results(target: str | None, results: list) -> None:
    """The results so far into the --json file (all or nothing), when there is one."""
    from humanoid_description import write_text_atomically
    from humanoid_experiments.postures.report import to_json

    if target and target != "-":
        write_text_atomically(target, to_json(results) + "\n")


def run(args: argparse.Namespace, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    """``stdin`` and ``out`` (None: the process's standard input and error as they are when
    called, not when this module was imported: a run through the entry point in another
    process's capture reads and writes that capture)."""
    import contextlib

    stdin = sys.stdin if stdin is None else stdin
    out = sys.stderr if out is None else out

    from humanoid_control.ros import RobotClient, RobotClientError
    from humanoid_description import ROBOTS, load_model, resolve_robot
    from humanoid_experiments.postures.operator import AnswerError, OperatorStopError, ScriptedAnswers
    from humanoid_experiments.postures.protocol import load_protocol
    from humanoid_experiments.postures.report import table, to_json
    from humanoid_experiments.postures.runner import PosturesRunner

    check_options(args)
    if args.compare is not None:
        from humanoid_experiments.postures.compare import compare_command

        return compare_command(*args.compare, args.json)
    if args.robot not in ROBOTS:
        raise UsageError(f"unknown robot {args.robot!r} (known robots: {', '.join(ROBOTS)})")
    robot = resolve_robot(args.robot)  # once: the option checks below ask this object
    if args.physics is not None:
        from humanoid_sim import physics_profiles

        physics_profiles.chosen(robot, args.physics)
    from humanoid_sim import params_file

    params = params_file.chosen(robot, args.params)
    overrides = {}
    if args.set:
        from humanoid_sim import parameter_names

        overrides = parse_overrides(args.set, parameter_names())
    model = load_model(args.robot)
    try:
        protocol = load_protocol(model, args.protocol)
        tests = protocol.select(None if args.tests is None else parse_tests(args.tests))
    except (FileNotFoundError, ValueError) as error:
        raise UsageError(str(error)) from None
    if args.experiments is not None:
        return run_reference(args, model, protocol, params, out)
    operator = operator_for(args, stdin, out) if args.real else None

    # the simulated robot goes into a free namespace; --real drives the robot running in the one given
    if args.real:
        namespace = args.namespace
    else:
        from humanoid_bringup import free_namespace

        namespace = free_namespace(args.namespace)
    results = []
    out_of_step: AnswerError | None = None
    with contextlib.ExitStack() as stack:
        if not args.real:
            from humanoid_core.processes import Graph, in_namespace
            from humanoid_sim.sim_node_spec import sim_node_spec

            log_dir = Path(tempfile.mkdtemp(prefix="humanoid_postures_"))
            physics = {} if args.physics is None else {"physics_profile": args.physics}
            physics |= {} if params is None else {"params_file": str(params)}
            from humanoid_experiments.postures.in_process import protocol_simulation

            simulation = protocol_simulation(protocol, model, params)
            lockstep = {"lockstep": True, "lockstep_participants": CLIENT} if args.lockstep else {}
            node = sim_node_spec(args.robot, {"real_time_factor": args.real_time_factor, **simulation,
                                              **physics, **lockstep, **overrides})
            print(f"starting the {args.robot} simulation (logs: {log_dir}) ...", file=out, flush=True)
            stack.enter_context(Graph(in_namespace([node], namespace), log_dir=log_dir))
        client = stack.enter_context(RobotClient(CLIENT, namespace=namespace, lockstep=args.lockstep and not args.real))
        try:
            client.wait_for_joint_states(60.0)
        except RobotClientError as error:
            print(f"humanoid postures: {error}", file=out)
            return 1
        robots = client.node.count_publishers("joint_states")
        if robots > 1:  # commands and resets would reach the other robot too
            where = "" if namespace == "/" else f"namespace {namespace} of "
            print(f"humanoid postures: {robots} robots publish joint_states in {where}ROS domain "
                  f"{os.environ.get('ROS_DOMAIN_ID', '0')}: stop the others, or use another ROS_DOMAIN_ID or "
                  "--namespace", file=out)
            return 1
        judges = args.real and not publishes_balance_sensors(client, model)
        if judges:
            print(f"the robot publishes no foot wrench (<side>_foot/wrench, sides {', '.join(model.config.feet)}) "
                  f"and no imu/data: you judge each step (stood or fell)", file=out, flush=True)
        runner = PosturesRunner(client, model, protocol, real=args.real, operator=operator, operator_judges=judges,
                                out=out)
        try:
            for i, test in enumerate(tests, start=1):
                print(f"[{i}/{len(tests)}] {test}: joints {', '.join(test.joints)} "
                      f"{'+' if test.direction > 0 else '-'}, from {test.start}", file=out, flush=True)
                result = runner.run(test)
                results.append(result)
                save_results(args.json, results)
                limit = "no limit" if result.limit is None else f"limit {result.limit:+.4f} rad"
                print(f"[{i}/{len(tests)}] {test}: {limit} ({result.stopped_by}; tipped {result.tipped})",
                      file=out, flush=True)
        except OperatorStopError as error:
            if isinstance(error, AnswerError):
                out_of_step = error
            else:
                print(f"humanoid postures: {error}: the robot holds its last pose; {len(results)} of {len(tests)} "
                      "tests done", file=out)
        except RobotClientError as error:
            print(f"humanoid postures: {error}", file=out)
            return 1
    if results:
        print(table(results, protocol.reference))
    if args.json == "-":
        print(to_json(results))
    elif args.json:
        save_results(args.json, results)
        print(f"{len(results)} results written to {args.json}", file=out)
    if out_of_step is not None:
        raise UsageError(f"{out_of_step}: the robot holds its last pose; {len(results)} of {len(tests)} tests done")
    if operator is not None and isinstance(operator.source, ScriptedAnswers) and (left := operator.source.left()):
        print(f"note: {left} answer(s) of {args.answers} were not asked for", file=out)
    return 0 if len(results) == len(tests) else 1


def run_reference(args: argparse.Namespace, model: RobotModel, protocol, params, out: TextIO) -> int:
    """``--experiments``: the reference's own experiments, each candidate servo in simulation."""
    from humanoid_experiments.postures import reference as experiments
    from humanoid_sim import physics_profiles

    if protocol.reference is None:
        raise UsageError(f"{protocol.source} keeps no reference experiments (reference: experiments)")
    try:
        numbers = experiments.parse_experiments(args.experiments, protocol.reference)
    except ValueError as error:
        raise UsageError(str(error)) from None
    only = None
    if args.servos:
        only = [name.strip() for name in args.servos.split(",")]
        unknown = [name for name in only if name.rstrip("+-") not in protocol.reference.servos]
        if unknown:
            raise UsageError(f"--servos: unknown servo {', '.join(map(repr, unknown))} (servos: "
                             f"{', '.join(protocol.reference.servos)})")
    profile = args.physics or physics_profiles.REFERENCE
    params_text = None if params is None else str(params)

    def progress(text: str) -> None:
        print(text, file=out, flush=True)

    def mapper(tasks):
        if args.workers == 0:
            return experiments.in_process(tasks, model.name, profile, params_text, progress)
        return experiments.on_ray(tasks, model.name, profile, params_text, args.workers, args.address, progress)

    outcomes = experiments.run_experiments(model, protocol, numbers, only, mapper, progress)
    if args.json == "-":
        print(experiments.write_json(None, outcomes))
        return 0
    print(experiments.table(outcomes, protocol.reference))
    if args.json:
        experiments.write_json(Path(args.json), outcomes)
        print(f"{len(outcomes)} experiments written to {args.json}", file=out)
    return 0
