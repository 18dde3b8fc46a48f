"""``humanoid optimize-gait``: the particle-swarm search of CPG gait parameters, on Ray.

Each particle is a CPG gait (:data:`humanoid_control.quadruped_gaits.cpg.SEARCH_BOUNDS`: frequency,
amplitudes, offsets, couplings) of one coupling structure; each evaluation runs it for
``--seconds`` in a headless simulation with the simulation node's physics and scores the
report's fitness (distance plus the path sampled every second; a fall scales it by the
share of the time the robot stood). The reference ran 50 particles x 240 iterations of
32 s: ``--particles 50 --iterations 240 --seconds 32``.

The evaluations run on Ray: a local instance (this machine's cores, bound to 127.0.0.1)
unless ``--address`` names an existing cluster; ``--workers 0`` runs them in this process
instead. Progress is printed per iteration; the search directory (``--output``) holds the
swarm after every iteration (``search.json``) and the history (``history.jsonl``), and
``--resume`` goes on from there after an interruption.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from humanoid_control.command_line import UsageError, host_and_port, integer_in, positive_number

DEFAULT_OUTPUT = "gait_search"
#: The search's defaults: the reference's run.
DEFAULTS = {"structure": "paired", "particles": 50, "iterations": 240, "seconds": 32.0, "seed": 0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="bioloid_quadruped", help="a robot with CPG gaits (bioloid_quadruped)")
    # Defaults in DEFAULTS, not here: with --resume, what is not given comes from the saved search.
    parser.add_argument("--structure", help="coupling structure: independent, paired (default), symmetric")
    parser.add_argument("--particles", type=integer_in(1), help="particles (50, as the reference)")
    parser.add_argument("--iterations", type=integer_in(1), help="iterations (240, as the reference)")
    parser.add_argument("--seconds", type=positive_number,
                        help="simulated seconds per evaluation (32, as the reference)")
    parser.add_argument("--seed", type=integer_in(0), help="random seed of the swarm (0)")
    parser.add_argument("--address", type=host_and_port(("ray",)), default=None, metavar="RAY_ADDRESS",
                        help="an existing Ray cluster (e.g. ray://head:10001 or host:6379); default: a local "
                             "Ray instance on this machine")
    parser.add_argument("--workers", type=integer_in(0), default=None,
                        help="simulations at once (default: every CPU of the Ray instance); 0: in this process, "
                             "without Ray")
    parser.add_argument("--output", type=Path, default=Path(DEFAULT_OUTPUT),
                        help=f"search directory: swarm state, history, best gait ({DEFAULT_OUTPUT})")
    parser.add_argument("--resume", action="store_true", help="go on with the search saved in --output")
    parser.add_argument("--overwrite", action="store_true", help="start afresh in a non-empty --output")
    parser.add_argument("--json", action="store_true", help="print the best gait and its outcome as JSON at the end")


def run(args: argparse.Namespace) -> int:
    from humanoid_control.quadruped_gaits.cpg import STRUCTURES
    from humanoid_control.quadruped_gaits.particle_swarm import SwarmSettings
    from humanoid_control.quadruped_gaits.patterns import GaitError, gait_phases
    from humanoid_description.model import load_model
    from humanoid_description.robots import UnknownRobotError
    from humanoid_experiments.gait_search.search import (
        InProcessEvaluation,
        RayEvaluation,
        SearchDirectory,
        SearchError,
        SearchSettings,
        check_reachable,
        new_swarm,
        run_search,
    )

    if args.structure is not None and args.structure not in STRUCTURES:
        raise UsageError(f"unknown coupling structure {args.structure!r} ({', '.join(STRUCTURES)})")
    if args.resume and args.overwrite:
        raise UsageError("give --resume or --overwrite, not both")
    try:
        if not gait_phases(load_model(args.robot)):
            raise GaitError(f"robot {args.robot} has no legs to drive with a CPG (robot.yaml gaits)")
    except (GaitError, UnknownRobotError) as error:
        raise UsageError(str(error).strip('"')) from None
    given = {name: getattr(args, name) for name in DEFAULTS if getattr(args, name) is not None}
    directory = SearchDirectory(args.output)
    try:
        if args.address and args.workers != 0:
            check_reachable(args.address)
        if args.resume:
            settings, swarm, best = directory.load()
            saved = {"robot": settings.robot, "structure": settings.structure, "seconds": settings.seconds,
                     "seed": settings.seed, "particles": settings.swarm.particles,
                     "iterations": settings.swarm.iterations}
            differ = {name: value for name, value in given.items() | {"robot": args.robot}.items()
                      if saved[name] != value}
            if differ:
                raise SearchError(f"{directory.state_path} is another search ({saved}); not resumed with {differ}")
            directory.keep_history(swarm.iteration)
        else:
            chosen = DEFAULTS | given
            settings = SearchSettings(args.robot, chosen["structure"], chosen["seconds"], chosen["seed"],
                                      SwarmSettings(particles=chosen["particles"], iterations=chosen["iterations"]))
            directory.create(args.overwrite)
            swarm, best = new_swarm(settings), None
    except (SearchError, OSError) as error:
        raise UsageError(str(error)) from None

    evaluation = InProcessEvaluation(settings) if args.workers == 0 else RayEvaluation(settings, args.workers,
                                                                                      args.address)
    where = "in this process" if args.workers == 0 else (f"on Ray at {args.address}" if args.address
                                                         else "on a local Ray instance")
    total = settings.swarm.iterations
    print(f"{settings.robot}: PSO of {settings.structure} CPG gaits, {settings.swarm.particles} particles x {total} "
          f"iterations of {settings.seconds:g} s, seed {settings.seed}, {evaluation.workers} worker(s) {where}; "
          f"saved in {directory.path}" + (f" (resumed at iteration {swarm.iteration})" if swarm.iteration else ""),
          flush=True)

    def report(entry: dict, best) -> None:
        fitness = entry["fitness"]
        print(f"iteration {entry['iteration']:>{len(str(total))}}/{total}: best {best.fitness:.3f} m "
              f"(distance {best.outcome['distance']:.3f} m, fell {'yes' if best.outcome['fell'] else 'no'}); "
              f"this iteration max {max(fitness):.3f}, mean {sum(fitness) / len(fitness):.3f}, "
              f"{sum(entry['fell'])} fell, {entry['wall_seconds']:.1f} s", flush=True)

    try:
        best = run_search(settings, swarm, best, evaluation, directory, report)
    except KeyboardInterrupt:
        print(f"interrupted: resume with --resume --output {directory.path}", flush=True)
        return 130
    finally:
        evaluation.close()
    if args.json:
        print(json.dumps({"settings": settings.as_dict(), "best": asdict(best), "fitness": best.fitness}))
    else:
        parameters = ", ".join(f"{k} {v:.3f}" for k, v in best.parameters.items() if isinstance(v, float))
        print(f"best gait: fitness {best.fitness:.3f} m, {best.outcome['distance']:.3f} m forward in "
              f"{best.outcome['seconds']:g} s; {parameters}")
    return 0
