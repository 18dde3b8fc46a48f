"""``humanoid gaits``: IK gaits of the quadruped measured in a headless simulation.

``--sweep`` runs every gait of the robot (robot.yaml ``gaits.phases``) at every
frequency of ``--frequencies`` and prints, per run, the distance covered along the
initial heading, the sideways drift, the turn of the heading and whether the robot fell
(and when); then the best gait (the longest distance among the runs that did not fall)
and whether it is the trot, as the reference found. ``--gait NAME --frequency F`` runs
one; ``--gait FILE`` a gait file (a CPG gait, or a gait search's best: what ``play_gait``
takes). ``--cpg`` runs CPG gaits (:mod:`humanoid_control.quadruped_gaits.cpg`) instead, named
by their coupling structure (independent, paired, symmetric). Each run is a fresh start in
the simulation node's physics (no ROS, as fast as the machine goes), so runs are independent
and reproducible. The set-points are those the gait controller node sends for the same gait
and frequency (:class:`~humanoid_control.quadruped_gaits.player.GaitPlayer`).
"""

from __future__ import annotations

import argparse
import json
import sys

from humanoid_control.command_line import UsageError, positive_number

#: The reference's range, 0.5-2 Hz, in steps of 0.5 Hz.
DEFAULT_FREQUENCIES = (0.5, 1.0, 1.5, 2.0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="bioloid_quadruped", help="a robot with legs and gaits in robot.yaml "
                        "(bioloid_quadruped)")
    parser.add_argument("--sweep", action="store_true", help="every gait at every frequency of --frequencies")
    parser.add_argument("--gait", default=None,
                        help="one gait: walk, trot, pace, bound, gallop, or a gait file (a CPG gait .yaml, a gait "
                             "search's search.json or directory), as play_gait takes it")
    parser.add_argument("--frequency", type=positive_number, default=None,
                        help="Hz, with --gait (default: the gait's own; robot.yaml's gaits: 1.0)")
    parser.add_argument("--frequencies", type=positive_number, nargs="+", default=list(DEFAULT_FREQUENCIES),
                        metavar="HZ", help="Hz, with --sweep (0.5 1.0 1.5 2.0; the reference's range 0.5-2)")
    parser.add_argument("--seconds", type=positive_number, default=8.0,
                        help="simulated seconds each gait runs (8)")
    parser.add_argument("--cpg", action="store_true",
                        help="CPG gaits instead of IK gaits: --gait and --sweep then name coupling structures "
                             "(independent, paired, symmetric), the oscillators started in a trot's phases")
    parser.add_argument("--as-played", action="store_true",
                        help="write each set-point with the velocity the gait controller (play_gait) sends with it, "
                             "which the AX-12 takes as its moving speed; default: positions alone, approached at "
                             "full speed, as the gait search evaluates")
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    from humanoid_sim import params_file

    params_file.add_argument(parser)


def run(args: argparse.Namespace) -> int:
    from humanoid_control.quadruped_gaits.cpg import STRUCTURES, CPGParameters
    from humanoid_control.quadruped_gaits.gait_files import cpg_player, load_gait
    from humanoid_control.quadruped_gaits.patterns import GaitError, IKGait, gait_phases
    from humanoid_description.model import load_model
    from humanoid_description.robots import UnknownRobotError
    from humanoid_sim import params_file
    from humanoid_sim.sim_node_spec import control_period

    params = params_file.chosen(args.robot, args.params)
    if args.sweep == (args.gait is not None):
        raise UsageError("give either --sweep or --gait NAME")
    if args.sweep and args.frequency is not None:
        raise UsageError("--frequency goes with --gait; a sweep takes --frequencies")
    try:
        model = load_model(args.robot)
        phases = gait_phases(model)
        if not phases:
            raise GaitError(f"robot {args.robot} has no gaits (robot.yaml gaits.phases): it walks on two legs "
                            "or not at all; IK gaits are for the quadruped")
        period = control_period(args.robot)  # one set-point per control cycle of the simulation node
        if args.cpg:
            if args.gait is not None and args.gait not in STRUCTURES:
                raise GaitError(f"unknown coupling structure {args.gait!r} ({', '.join(STRUCTURES)})")
            plan = ([(g, f) for g in STRUCTURES for f in args.frequencies] if args.sweep
                    else [(args.gait, args.frequency or CPGParameters().frequency)])
            players = [cpg_player(model, CPGParameters(frequency=f, structure=g), period) for g, f in plan]
        else:
            plan = ([(g, f) for g in phases for f in args.frequencies] if args.sweep
                    else [(args.gait, args.frequency or 0.0)])
            players = [load_gait(model, g, period, f) for g, f in plan]
    except (GaitError, UnknownRobotError, KeyError) as error:
        raise UsageError(str(error).strip('"')) from None

    from humanoid_sim.gait_evaluation import HeadlessSimulation

    outcomes = []
    if not args.json:
        kind = "CPG" if args.cpg or not isinstance(players[0].gait, IKGait) else "IK"
        print(f"{args.robot}: {kind} gaits, {args.seconds:g} s each in the simulation (headless)")
        print(f"{'gait':16s} {'Hz':>4s} {'distance':>9s} {'lateral':>8s} {'heading':>8s}  fell")
        print(f"{'':16s} {'':4s} {'(mm)':>9s} {'(mm)':>8s} {'(deg)':>8s}")
    with HeadlessSimulation(args.robot, params_file=params) as simulation:
        if params is not None:
            print(simulation.settings.describe_params_file(params), file=sys.stderr, flush=True)
        for player in players:
            outcome = simulation.run(player, args.seconds, args.as_played)
            outcomes.append(outcome)
            if not args.json:
                fell = f"yes, at {outcome.fall_time:.2f} s" if outcome.fell else "no"
                print(f"{player.name:16s} {player.frequency:4.1f} {outcome.distance * 1000:9.1f} "
                      f"{outcome.lateral * 1000:8.1f} {outcome.heading_deg:8.1f}  {fell}", flush=True)
    standing = [o for o in outcomes if not o.fell]
    best = max(standing, key=lambda o: o.distance, default=None)
    if args.json:
        print(json.dumps({"robot": args.robot, "seconds": args.seconds, "runs": [o.as_dict() for o in outcomes],
                          "best": best.as_dict() if best else None}, indent=2))
        return 0
    if best is None:
        print("best: none (every run fell)")
    else:
        print(f"best: {best.gait} at {best.frequency:g} Hz, {best.distance * 1000:.0f} mm in {best.seconds:g} s "
              f"({best.distance / best.seconds * 1000:.0f} mm/s) without falling")
        if args.sweep and not args.cpg:
            verdict = "agrees" if best.gait == "trot" else "does not agree"
            print(f"the reference found the trot best: this sweep {verdict}")
    sys.stdout.flush()
    return 0
