"""``humanoid optimize-gait``: the particle-swarm search of CPG gait parameters, on Ray.

``--experiment N`` runs one of the quadruped report's six experiments (the robot's
``cpg.yaml``, or ``--config FILE``): its model's oscillator network with the report's free
parameters, encoded in [0, 1], its swarm (geometric neighbourhood, decreasing inertia) and its
fitness (eq 17 over 32 s); ``--describe`` prints the experiment's free parameters and exits.
``--structure`` runs one of our own coupling structures instead (7 parameters, our fitness).
The report ran 50 particles x 240 iterations of 32 s (the defaults for an experiment); after
the first iteration the command prints how long that budget would take on 50 cores.

The evaluations run on Ray: a local instance (this machine's cores, bound to 127.0.0.1)
unless ``--address`` names an existing cluster; ``--workers 0`` runs them in this process
instead. Progress is printed per iteration; the search directory (``--output``) holds the
swarm after every iteration (``search.json``), the history (``history.jsonl``) and the
convergence plot (``convergence.png``: best and mean fitness per iteration, as the report's
Figs 46-51), and ``--resume`` goes on from there after an interruption.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace
from pathlib import Path

from humanoid_core import UsageError, host_and_port, integer_in, positive_number

DEFAULT_OUTPUT = "gait_search"
#: The defaults of a search of one of our structures (an experiment's come from cpg.yaml).
DEFAULTS = {"structure": "paired", "particles": 50, "iterations": 240, "seconds": 32.0, "seed": 0}
#: The cores the full budget's time is projected on (the report's 50 machines).
PROJECTED_CORES = 50
CONVERGENCE_PLOT = "convergence.png"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="bioloid_quadruped", help="a robot with CPG gaits (bioloid_quadruped)")
    # Defaults not here: with --resume, what is not given comes from the saved search.
    parser.add_argument("--experiment", help="one of the report's experiments (1-6, cpg.yaml): its model, free "
                                             "parameters, swarm and fitness (eq 17)")
    parser.add_argument("--structure", help="one of our coupling structures instead: independent, paired "
                                            "(the default without --experiment), symmetric")
    parser.add_argument("--config", type=Path, default=None,
                        help="the CPG configuration (default: humanoid_description/robots/<robot>/cpg.yaml)")
    parser.add_argument("--describe", action="store_true",
                        help="print the experiment's free parameters (count, names, ranges) and exit")
    parser.add_argument("--particles", type=integer_in(1), help="particles (50, as the reference)")
    parser.add_argument("--iterations", type=integer_in(1), help="iterations (240, as the reference)")
    parser.add_argument("--seconds", type=positive_number,
                        help="simulated seconds per evaluation (32, as the reference)")
    parser.add_argument("--neighbourhood", choices=("geometric", "global"),
                        help="whose best a particle follows: its nearest particles' (the report's; an "
                             "experiment's default) or the whole swarm's (a structure's default)")
    parser.add_argument("--seed", type=integer_in(0), help="random seed of the swarm (0)")
    parser.add_argument("--address", type=host_and_port(("ray",)), default=None, metavar="RAY_ADDRESS",
                        help="an existing Ray cluster (e.g. ray://head:10001 or host:6379); default: a local "
                             "Ray instance on this machine")
    parser.add_argument("--workers", type=integer_in(0), default=None,
                        help="simulations at once (default: every CPU of the Ray instance); 0: in this process, "
                             "without Ray")
    parser.add_argument("--output", type=Path, default=Path(DEFAULT_OUTPUT),
                        help=f"search directory: swarm state, history, best gait, convergence plot ({DEFAULT_OUTPUT})")
    parser.add_argument("--resume", action="store_true", help="go on with the search saved in --output")
    parser.add_argument("--overwrite", action="store_true", help="start afresh in a non-empty --output")
    parser.add_argument("--json", action="store_true",
                        help="print the best gait and its outcome as JSON at the end (with --describe: the free "
                             "parameters)")


def describe(experiment, as_json: bool) -> None:
    """The experiment's free parameters: count, names and ranges."""
    parameters = [{"name": p.name, "low": p.low, "high": p.high} for p in experiment.parameters]
    model = experiment.model
    if as_json:
        print(json.dumps({"experiment": int(experiment.name), "model": model.number, "count": len(parameters),
                          "names": experiment.names, "parameters": parameters,
                          "oscillators": list(model.oscillators), "report": experiment.report}))
        return
    print(f"experiment {experiment.name}: model {model.number} ({model.description}); {len(parameters)} free "
          f"parameters (the report's: {experiment.reported_count})")
    for p in parameters:
        print(f"  {p['name']:28s} {p['low']:+.3f} .. {p['high']:+.3f}")


def _experiment_settings(args: argparse.Namespace, given: dict):
    """The search settings of one of the report's experiments (cpg.yaml's swarm and fitness, then
    the options given); also the experiment."""
    from humanoid_core.quadruped_gaits import FitnessSettings, GaitError, load_cpg
    from humanoid_description import load_model
    from humanoid_experiments.gait_search.particle_swarm import SwarmError, SwarmSettings
    from humanoid_experiments.gait_search.search import SearchSettings

    try:
        configuration = load_cpg(load_model(args.robot), args.config)
        if not args.experiment.isdigit() or int(args.experiment) not in configuration.experiments:
            raise GaitError(f"unknown experiment {args.experiment!r} (experiments of {configuration.source}: "
                            f"{', '.join(map(str, configuration.experiments))})")
        experiment = configuration.experiments[int(args.experiment)]
        swarm = SwarmSettings(**configuration.sections.get("swarm", {}))
        fitness = FitnessSettings.from_section(configuration.sections.get("fitness", {}))
    except (GaitError, SwarmError, TypeError, ValueError) as error:
        raise UsageError(str(error)) from None
    swarm = replace(swarm, **{k: given[k] for k in ("particles", "iterations", "neighbourhood") if k in given})
    fitness = replace(fitness, seconds=given.get("seconds", fitness.seconds))
    settings = SearchSettings(args.robot, None, fitness.seconds, given.get("seed", 0), swarm,
                              experiment.name, None if args.config is None else str(args.config.resolve()), fitness)
    return settings, experiment


def _structure_settings(args: argparse.Namespace, given: dict):
    from humanoid_experiments.gait_search.particle_swarm import SwarmSettings
    from humanoid_experiments.gait_search.search import SearchSettings

    chosen = DEFAULTS | given
    swarm = SwarmSettings(particles=chosen["particles"], iterations=chosen["iterations"],
                          **({"neighbourhood": given["neighbourhood"]} if "neighbourhood" in given else {}))
    return SearchSettings(args.robot, chosen["structure"], chosen["seconds"], chosen["seed"], swarm)


def _given(args: argparse.Namespace) -> dict:
    names = ("structure", "particles", "iterations", "seconds", "seed", "neighbourhood", "experiment")
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


def _saved(settings) -> dict:
    """The values a resumed search is compared on."""
    return {"robot": settings.robot, "structure": settings.structure, "experiment": settings.experiment,
            "seconds": settings.seconds, "seed": settings.seed, "particles": settings.swarm.particles,
            "iterations": settings.swarm.iterations, "neighbourhood": settings.swarm.neighbourhood,
            "config": settings.config}


def run(args: argparse.Namespace) -> int:
    from humanoid_core.quadruped_gaits import STRUCTURES, GaitError, gait_phases
    from humanoid_description import UnknownRobotError, load_model
    from humanoid_experiments.gait_search.search import (
        InProcessEvaluation,
        RayEvaluation,
        SearchDirectory,
        SearchError,
        check_reachable,
        new_swarm,
        run_search,
    )

    if args.structure is not None and args.structure not in STRUCTURES:
        raise UsageError(f"unknown coupling structure {args.structure!r} ({', '.join(STRUCTURES)})")
    if args.structure is not None and args.experiment is not None:
        raise UsageError("give --experiment (the report's) or --structure (ours), not both")
    if args.describe and args.experiment is None:
        raise UsageError("--describe describes an --experiment")
    if args.config is not None and args.structure is not None:
        raise UsageError("--config holds the report's experiments, not our structures")
    if args.resume and args.overwrite:
        raise UsageError("give --resume or --overwrite, not both")
    try:
        if not gait_phases(load_model(args.robot)):
            raise GaitError(f"robot {args.robot} has no legs to drive with a CPG (robot.yaml gaits)")
    except (GaitError, UnknownRobotError) as error:
        raise UsageError(str(error).strip('"')) from None
    given = _given(args)
    if args.experiment is not None:
        settings, experiment = _experiment_settings(args, given)
        if args.describe:
            describe(experiment, args.json)
            return 0
    directory = SearchDirectory(args.output)
    try:
        if args.address and args.workers != 0:
            check_reachable(args.address)
        if args.resume:
            settings, swarm, best = directory.load()
            saved = _saved(settings)
            if args.config is not None:
                given["config"] = str(args.config.resolve())
            differ = {name: value for name, value in given.items() | {"robot": args.robot}.items()
                      if saved[name] != value}
            if differ:
                raise SearchError(f"{directory.state_path} is another search ({saved}); not resumed with {differ}")
            directory.keep_history(swarm.iteration)
        else:
            if args.experiment is None:
                settings = _structure_settings(args, given)
            directory.create(args.overwrite)
            swarm, best = new_swarm(settings), None
    except (SearchError, OSError) as error:
        raise UsageError(str(error)) from None

    evaluation = InProcessEvaluation(settings) if args.workers == 0 else RayEvaluation(settings, args.workers,
                                                                                      args.address)
    where = "in this process" if args.workers == 0 else (f"on Ray at {args.address}" if args.address
                                                         else f"on a local Ray instance ({evaluation.session_dir})")
    total = settings.swarm.iterations
    dimensions = swarm.lower.size
    print(f"{settings.robot}: PSO of {settings.name} ({dimensions} parameters, {settings.swarm.neighbourhood} "
          f"neighbourhood), {settings.swarm.particles} particles x {total} iterations of {settings.seconds:g} s, "
          f"seed {settings.seed}, {evaluation.workers} worker(s) {where}; saved in {directory.path}"
          + (f" (resumed at iteration {swarm.iteration})" if swarm.iteration else ""), flush=True)

    def report(entry: dict, best) -> None:
        fitness = entry["fitness"]
        print(f"iteration {entry['iteration']:>{len(str(total))}}/{total}: best {best.fitness:.3f} m "
              f"(distance {best.outcome['distance']:.3f} m, fell {'yes' if best.outcome['fell'] else 'no'}); "
              f"this iteration max {max(fitness):.3f}, mean {sum(fitness) / len(fitness):.3f}, "
              f"{sum(entry['fell'])} fell, {entry['wall_seconds']:.1f} s", flush=True)
        if entry["iteration"] == swarm_start + 1:
            print(projection(settings, entry, evaluation.workers), flush=True)

    swarm_start = swarm.iteration
    try:
        best = run_search(settings, swarm, best, evaluation, directory, report)
    except KeyboardInterrupt:
        print(f"interrupted: resume with --resume --output {directory.path}", flush=True)
        return 130
    finally:
        evaluation.close()
    plot = directory.path / CONVERGENCE_PLOT
    plot_convergence(directory.history(), plot, f"{settings.robot}: {settings.name}")
    if args.json:
        names = [name for name in best.parameters if name != "experiment"]
        print(json.dumps({"settings": settings.as_dict(), "best": asdict(best), "fitness": best.fitness,
                          "free_parameters": {"count": dimensions, "names": names}, "plot": str(plot)}))
    else:
        parameters = ", ".join(f"{k} {v:.3f}" for k, v in best.parameters.items() if isinstance(v, float))
        print(f"best gait: fitness {best.fitness:.3f} m, {best.outcome['distance']:.3f} m forward in "
              f"{best.outcome['seconds']:g} s; {parameters}")
        print(f"convergence plot: {plot}")
    return 0


def projection(settings, entry: dict, workers: int) -> str:
    """How long the report's budget (50 particles x 240 iterations of 32 s) would take, from the
    first iteration's pace: each worker's seconds per evaluation, scaled to 32 s runs."""
    evaluations = len(entry["fitness"])
    per_evaluation = entry["wall_seconds"] * min(workers, evaluations) / evaluations * 32.0 / settings.seconds
    full = 50 * 240 * per_evaluation
    return (f"pace: {per_evaluation:.1f} s of one worker per 32 s evaluation; the report's 50 particles x 240 "
            f"iterations: {full / 3600:.1f} h on one core, {full / PROJECTED_CORES / 3600:.2f} h on "
            f"{PROJECTED_CORES} cores (a cluster: --address)")


def plot_convergence(history: list[dict], path: Path, title: str) -> None:
    """Best-so-far and mean fitness per iteration (the report's Figs 46-51), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    iterations = [entry["iteration"] for entry in history]
    figure, axes = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    axes.plot(iterations, [entry["best_fitness"] for entry in history], label="best so far")
    axes.plot(iterations, [max(entry["fitness"]) for entry in history], ":", label="best of the iteration")
    axes.plot(iterations, [sum(entry["fitness"]) / len(entry["fitness"]) for entry in history], "--",
              label="mean of the iteration")
    axes.set_xlabel("iteration")
    axes.set_ylabel("fitness (m)")
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
