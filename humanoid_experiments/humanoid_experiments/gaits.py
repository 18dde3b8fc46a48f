"""``humanoid gaits``: IK gaits of the quadruped measured in a headless simulation.

``--sweep`` runs every gait of the robot (robot.yaml ``gaits.phases``: the nine of the report's
Fig 29) at every frequency of ``--frequencies`` for ``--seconds`` (the report's 32 s) and prints,
per run, the distance covered along the initial heading, the sideways drift, the turn of the
heading, the report's fitness (eq 17, the robot's cpg.yaml ``fitness``), whether the robot fell
(when, and onto what) and the run's outcome as the report's Fig 30 classes it: moves forward,
walks backward, falls (on its head, side or back), stays on the spot. Then the best gait (eq 17
among the runs that did not fall) and whether it is the trot, as the report found. ``--chart
FILE`` draws the outcomes (gaits x frequencies) as a PNG and writes them as JSON beside it.
``--gait NAME --frequency F`` runs one; ``--gait FILE`` a gait file (a CPG gait, or a gait
search's best: what ``play_gait`` takes). ``--cpg`` runs CPG gaits of our structures
(:mod:`humanoid_core.quadruped_gaits.cpg`) instead. Each run is a fresh start in the
simulation node's physics (no ROS, as fast as the machine goes), so runs are independent and
reproducible. The set-points are those the gait controller node sends for the same gait and
frequency (:class:`~humanoid_core.quadruped_gaits.player.GaitPlayer`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from humanoid_core import UsageError, positive_number

if TYPE_CHECKING:
    from humanoid_sim import GaitOutcome

#: The reference's range, 0.5-2 Hz, in steps of 0.5 Hz.
DEFAULT_FREQUENCIES = (0.5, 1.0, 1.5, 2.0)
#: The report's Fig 30 classes of a run.
OUTCOMES = ("moves forward", "walks backward", "falls", "stays on the spot")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="bioloid_quadruped", help="a robot with legs and gaits in robot.yaml "
                        "(bioloid_quadruped)")
    parser.add_argument("--sweep", action="store_true", help="every gait at every frequency of --frequencies")
    parser.add_argument("--gait", default=None,
                        help="one gait: walk, trot, transverse_gallop, rotary_gallop, canter, amble, pace, bound, "
                             "pronk, or a gait file (a CPG gait .yaml, a gait search's search.json or directory), "
                             "as play_gait takes it")
    parser.add_argument("--frequency", type=positive_number, default=None,
                        help="Hz, with --gait (default: the gait's own; robot.yaml's gaits: 1.0)")
    parser.add_argument("--frequencies", type=positive_number, nargs="+", default=list(DEFAULT_FREQUENCIES),
                        metavar="HZ", help="Hz, with --sweep (0.5 1.0 1.5 2.0; the reference's range 0.5-2)")
    parser.add_argument("--seconds", type=positive_number, default=None,
                        help="simulated seconds each gait runs (default: the report's, cpg.yaml fitness: 32)")
    parser.add_argument("--foot-path", choices=("rules_of_thumb", "flat"), default=None,
                        help="IK gaits' foot path: the report's rules of thumb (robot.yaml's default) or our flat "
                             "stance")
    parser.add_argument("--chart", type=Path, default=None, metavar="FILE",
                        help="with --sweep: the outcome chart (the report's Fig 30) as a PNG in FILE and JSON "
                             "beside it (FILE with .json)")
    parser.add_argument("--cpg", action="store_true",
                        help="CPG gaits of our structures instead of IK gaits: --gait and --sweep then name "
                             "coupling structures (independent, paired, symmetric), the oscillators started in a "
                             "trot's phases")
    parser.add_argument("--as-played", action="store_true",
                        help="write each set-point with the velocity the gait controller (play_gait) sends with it, "
                             "which the AX-12 takes as its moving speed; default: positions alone, approached at "
                             "full speed, as the gait search evaluates")
    parser.add_argument("--odometry", action="store_true",
                        help="feed the kinematic odometry (the odometry node's, the robot's control.yaml parameters) "
                             "every cycle's joint readings and print its drift against the simulator's base: "
                             "position error (mm) and heading error (deg)")
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    from humanoid_bringup import add_refused_namespace
    from humanoid_sim import params_file

    params_file.add_argument(parser)
    add_refused_namespace(parser, "gaits runs its simulations in this process, without ROS: there is no graph to "
                                  "put in a namespace (humanoid play-gait --namespace NAME plays a gait on a robot "
                                  "running in one)")


def classify(outcome: GaitOutcome, spot_distance: float) -> str:
    """The report's Fig 30 class of a run: a fall first, else where its end lies along the
    initial heading."""
    if outcome.fell:
        return "falls"
    if outcome.distance >= spot_distance:
        return "moves forward"
    if outcome.distance <= -spot_distance:
        return "walks backward"
    return "stays on the spot"


def _fitness_settings(robot: str):
    """Eq 17's settings: the robot's cpg.yaml ``fitness``, or the report's defaults."""
    from humanoid_core.quadruped_gaits import FitnessSettings, cpg_path

    if not cpg_path(robot).exists():
        return FitnessSettings()
    import yaml

    return FitnessSettings.from_section((yaml.safe_load(cpg_path(robot).read_text()) or {}).get("fitness") or {})


def _players(args: argparse.Namespace, model, period: float) -> list:
    from humanoid_core.quadruped_gaits import (
        STRUCTURES,
        CPGParameters,
        GaitError,
        cpg_player,
        gait_phases,
        ik_player,
        load_gait,
    )

    phases = gait_phases(model)
    if not phases:
        raise GaitError(f"robot {args.robot} has no gaits (robot.yaml gaits.phases): it walks on two legs "
                        "or not at all; IK gaits are for the quadruped")
    if args.cpg:
        if args.gait is not None and args.gait not in STRUCTURES:
            raise GaitError(f"unknown coupling structure {args.gait!r} ({', '.join(STRUCTURES)})")
        plan = ([(g, f) for g in STRUCTURES for f in args.frequencies] if args.sweep
                else [(args.gait, args.frequency or CPGParameters().frequency)])
        return [cpg_player(model, CPGParameters(frequency=f, structure=g), period) for g, f in plan]
    plan = [(g, f) for g in phases for f in args.frequencies] if args.sweep else [(args.gait, args.frequency or 0.0)]
    path = {} if args.foot_path is None else {"foot_path": args.foot_path}
    if not path:
        return [load_gait(model, g, period, f) for g, f in plan]
    players = []
    for gait, frequency in plan:
        if gait not in phases:
            raise GaitError(f"--foot-path is an IK gait's; {gait!r} is not one of {', '.join(phases)}")
        players.append(ik_player(model, gait, period, **path, **({"frequency": frequency} if frequency else {})))
    return players


def run(args: argparse.Namespace) -> int:
    from humanoid_core.quadruped_gaits import GaitError, IKGait
    from humanoid_description import UnknownRobotError, load_model, resolve_robot
    from humanoid_sim import control_period, params_file

    try:
        robot = resolve_robot(args.robot)  # once: the option check and the simulation's period below ask it
    except UnknownRobotError as error:
        raise UsageError(str(error).strip('"')) from None
    params = params_file.chosen(robot, args.params)
    if args.sweep == (args.gait is not None):
        raise UsageError("give either --sweep or --gait NAME")
    if args.sweep and args.frequency is not None:
        raise UsageError("--frequency goes with --gait; a sweep takes --frequencies")
    if args.chart is not None and (not args.sweep or args.cpg):
        raise UsageError("--chart draws a sweep of IK gaits (--sweep without --cpg)")
    if args.foot_path is not None and args.cpg:
        raise UsageError("--foot-path is for IK gaits, not with --cpg")
    if args.chart is not None and not args.chart.parent.resolve().is_dir():
        raise UsageError(f"--chart: {args.chart}: no folder {args.chart.parent}")
    try:
        model = load_model(args.robot)
        period = control_period(robot)  # one set-point per control cycle of the simulation node
        players = _players(args, model, period)
        fitness = _fitness_settings(args.robot)
        spot = float(((model.config.sections.get("gaits") or {}).get("chart") or {}).get("spot_distance", 0.05))
    except (GaitError, UnknownRobotError, KeyError, ValueError) as error:
        raise UsageError(str(error).strip('"')) from None
    seconds = args.seconds if args.seconds is not None else fitness.seconds

    from humanoid_sim import HeadlessSimulation

    outcomes = []
    if not args.json:
        kind = "CPG" if args.cpg or not isinstance(players[0].gait, IKGait) else "IK"
        print(f"{args.robot}: {kind} gaits, {seconds:g} s each in the simulation (headless); eq 17 with alpha "
              f"{fitness.alpha:g}, beta {fitness.beta:g}, sampled every {fitness.sample_period:g} s")
        odometry_columns = (f" {'odom err':>8s} {'odom hdg':>8s}", f" {'(mm)':>8s} {'(deg)':>8s}") \
            if args.odometry else ("", "")
        print(f"{'gait':18s} {'Hz':>4s} {'distance':>9s} {'lateral':>8s} {'heading':>8s}{odometry_columns[0]} "
              f"{'eq 17':>6s}  {'outcome':18s} fell")
        print(f"{'':18s} {'':4s} {'(mm)':>9s} {'(mm)':>8s} {'(deg)':>8s}{odometry_columns[1]} {'(m)':>6s}")
    odometry = None
    if args.odometry:
        from humanoid_core.odometry import KinematicOdometry, OdometryParameters

        odometry = KinematicOdometry(model, OdometryParameters.for_robot(robot.name))
    with HeadlessSimulation(args.robot, params_file=params) as simulation:
        if params is not None:
            print(simulation.settings.describe_params_file(params), file=sys.stderr, flush=True)
        for player in players:
            outcome = simulation.run(player, seconds, args.as_played, stop_at_fall=fitness.stop_at_fall,
                                     sample_period=fitness.sample_period, odometry=odometry)
            outcomes.append(outcome)
            if not args.json:
                fell = (f"yes, at {outcome.fall_time:.2f} s, on its {outcome.fall_kind}"
                        + (", lying at the end" if outcome.lying else ", up again at the end")) if outcome.fell \
                    else "no"
                drift = (f" {outcome.odometry_error_m * 1000:8.1f} {outcome.odometry_heading_error_deg:8.1f}"
                         if outcome.odometry_error_m is not None else "")
                print(f"{player.name:18s} {player.frequency:4.1f} {outcome.distance * 1000:9.1f} "
                      f"{outcome.lateral * 1000:8.1f} {outcome.heading_deg:8.1f}{drift} "
                      f"{outcome.path_fitness(fitness.alpha, fitness.beta):6.3f}  {classify(outcome, spot):18s} "
                      f"{fell}", flush=True)
    runs = [{**o.as_dict(), "fitness": o.path_fitness(fitness.alpha, fitness.beta), "outcome": classify(o, spot)}
            for o in outcomes]
    standing = [r for r in runs if not r["fell"]]
    best = max(standing, key=lambda r: r["fitness"], default=None)
    summary = {"robot": args.robot, "seconds": seconds, "spot_distance": spot, "fitness": fitness.__dict__,
               "runs": runs, "best": best}
    if args.chart is not None:
        write_chart(args.chart, summary)
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    if best is None:
        print("best: none (every run fell)")
    else:
        print(f"best (eq 17, among the runs that did not fall): {best['gait']} at {best['frequency']:g} Hz, "
              f"{best['fitness']:.3f} m, {best['distance'] * 1000:.0f} mm forward in {best['seconds']:g} s")
        if args.sweep and not args.cpg:
            verdict = "agrees" if best["gait"] == "trot" else "does not agree"
            print(f"the report found the trot best by far: this sweep {verdict}")
    if args.chart is not None:
        print(f"outcome chart: {args.chart} and {args.chart.with_suffix('.json')}")
    sys.stdout.flush()
    return 0


#: Fill colour per outcome in the chart.
COLOURS = {"moves forward": "#4caf50", "walks backward": "#2196f3", "falls": "#e53935",
           "stays on the spot": "#bdbdbd"}
#: The legend's words for each outcome (the cell says where a fall went: head, side or back).
LEGEND = {"moves forward": "moves forward", "walks backward": "walks backward",
          "falls": "falls (on its head, side or back)", "stays on the spot": "stays on the spot"}


def write_chart(path: Path, summary: dict) -> None:
    """The outcome per gait and frequency (the report's Fig 30) as a PNG, and the runs as JSON
    (``path`` with .json)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    runs = summary["runs"]
    gaits = list(dict.fromkeys(r["gait"] for r in runs))
    frequencies = sorted({r["frequency"] for r in runs})
    figure, axes = plt.subplots(figsize=(1.6 * len(frequencies) + 2.6, 0.5 * len(gaits) + 1.6), dpi=100)
    for r in runs:
        x, y = frequencies.index(r["frequency"]), gaits.index(r["gait"])
        axes.add_patch(plt.Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, color=COLOURS[r["outcome"]]))
        label = f"{r['fitness']:.2f} m" + (f"\n{r['fall_kind']}" if r["fell"] else "")
        axes.text(x, y, label, ha="center", va="center", fontsize=7)
    axes.set_xticks(range(len(frequencies)), [f"{f:g} Hz" for f in frequencies])
    axes.set_yticks(range(len(gaits)), gaits)
    axes.set_xlim(-0.5, len(frequencies) - 0.5)
    axes.set_ylim(len(gaits) - 0.5, -0.5)
    axes.set_title(f"{summary['robot']}: each gait's outcome\n{summary['seconds']:g} s runs, eq 17 in the cells",
                   fontsize=9)
    axes.legend(handles=[Patch(color=c, label=LEGEND[o]) for o, c in COLOURS.items()], loc="upper left",
                bbox_to_anchor=(1.01, 1.0), fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)
    path.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
