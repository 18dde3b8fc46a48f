"""``humanoid bench gait-search``: gait evaluations per core-hour on Ray, the speed-up from one
worker to two, and what the quadruped report's full search would take on 50 cores.

One batch of ``--evaluations`` gaits (random points of the search box, seeded) of
``--seconds`` simulated seconds each is evaluated three times in the same run:

- **bare**: in this process, one after the other, no Ray (the baseline);
- **Ray, 1 worker** and **Ray, 2 workers**: the same batch as Ray tasks
  (:class:`~humanoid_experiments.gait_search.search.RayEvaluation`) on one local Ray instance
  of 2 CPUs, started once for both runs, one task in flight at a time, then two.

Random gaits often fall within a second, so evaluations differ in length: the batch must
hold several per worker for the speed-up to measure the parallelism, not the batch's tail.

``evaluations_per_core_hour``: 32-s evaluations (the report's) one Ray worker makes in an
hour (the batch's time scaled by 32 / ``--seconds``: simulation time is proportional to
simulated time); ``speedup_2_workers`` = 1-worker time / 2-worker time (goal >= 1.7 on two
cores); ``ray_vs_bare`` = bare time / 1-worker time (Ray's cost: 1.0 is none).
``projected_full_search_h_50_cores``: the report's 50 particles x 240 iterations of 32 s on
50 cores, each iteration's 50 evaluations at once, with the 2-worker parallel efficiency
(speedup / 2) measured here; the report took about 2 h on 50 machines (107 h on one).
The outcomes of the three runs must be identical (evaluations are deterministic), which is
checked and printed. Ray's start-up is not counted (a search pays it once).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from humanoid_core import integer_in, positive_number
from humanoid_core.quadruped_gaits import STRUCTURES

#: The report's search: particles, iterations, simulated seconds per evaluation.
REFERENCE_PARTICLES, REFERENCE_ITERATIONS, REFERENCE_SECONDS = 50, 240, 32.0
REFERENCE_CORES = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--evaluations", type=integer_in(2), default=16, help="gaits in the batch (16)")
    parser.add_argument("--seconds", type=positive_number, default=8.0,
                        help="simulated seconds per evaluation (8; scaled to the report's 32)")
    parser.add_argument("--structure", default="paired", choices=STRUCTURES,
                        help="coupling structure of the gaits (paired)")
    parser.add_argument("--seed", type=integer_in(0), default=0, help="seed of the batch's points (0)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def timed(evaluation, points: np.ndarray, at_once: int | None = None) -> tuple[float, list]:
    started = time.perf_counter()
    outcomes = evaluation.evaluate(points) if at_once is None else evaluation.evaluate(points, at_once=at_once)
    return time.perf_counter() - started, outcomes


def run(args: argparse.Namespace) -> int:
    from humanoid_core.quadruped_gaits import search_box
    from humanoid_experiments.gait_search import InProcessEvaluation, RayEvaluation, SearchSettings, SwarmSettings

    settings = SearchSettings("bioloid_quadruped", args.structure, args.seconds, args.seed,
                              SwarmSettings(particles=args.evaluations, iterations=1))
    rng = np.random.default_rng(args.seed)
    lower, upper = search_box()
    points = lower + rng.random((args.evaluations, lower.size)) * (upper - lower)

    bare = InProcessEvaluation(settings)
    try:
        bare_seconds, bare_outcomes = timed(bare, points)
    finally:
        bare.close()
    ray_seconds, same = {}, True
    # one local instance of 2 CPUs for both runs (one start-up, not one per run): 1 worker is
    # one evaluation in flight at a time, 2 workers two
    evaluation = RayEvaluation(settings, workers=2)
    try:
        evaluation.evaluate(points[:2], at_once=2)  # warm-up: both workers started and their models loaded
        for workers in (1, 2):
            ray_seconds[workers], outcomes = timed(evaluation, points, workers)
            same = same and outcomes == bare_outcomes
    finally:
        evaluation.close()

    scale = REFERENCE_SECONDS / args.seconds
    per_evaluation = ray_seconds[1] / args.evaluations * scale  # core-seconds per 32-s evaluation
    speedup = ray_seconds[1] / ray_seconds[2]
    efficiency = speedup / 2.0
    rounds = REFERENCE_ITERATIONS * np.ceil(REFERENCE_PARTICLES / REFERENCE_CORES)
    figures = {
        "evaluations": args.evaluations, "seconds_per_evaluation": args.seconds,
        "bare_s": bare_seconds, "ray_1_worker_s": ray_seconds[1], "ray_2_workers_s": ray_seconds[2],
        "evaluations_per_core_hour": 3600.0 / per_evaluation,
        "ray_vs_bare": bare_seconds / ray_seconds[1],
        "speedup_2_workers": speedup,
        "projected_full_search_h_50_cores": float(rounds * per_evaluation / efficiency / 3600.0),
        "projected_full_search_h_1_core": REFERENCE_PARTICLES * REFERENCE_ITERATIONS * per_evaluation / 3600.0,
        "outcomes_identical": same,
    }
    if args.json:
        print(json.dumps(figures))
        return 0 if same else 1
    print(f"{args.evaluations} CPG gaits ({args.structure}) of {args.seconds:g} s each, quadruped, headless:")
    print(f"  bare (this process, no Ray)  {bare_seconds:8.2f} s")
    print(f"  Ray, 1 worker                {ray_seconds[1]:8.2f} s   ray_vs_bare {figures['ray_vs_bare']:.2f}")
    print(f"  Ray, 2 workers               {ray_seconds[2]:8.2f} s   speedup_2_workers {speedup:.2f} "
          "(goal >= 1.7)")
    print(f"evaluations_per_core_hour (32 s each): {figures['evaluations_per_core_hour']:.0f}")
    print(f"the report's search (50 x 240 x 32 s): {figures['projected_full_search_h_1_core']:.1f} h on one core "
          f"(report: about 107 h), projected_full_search_h_50_cores {figures['projected_full_search_h_50_cores']:.2f}"
          " (report: about 2 h, goal: under it)")
    print(f"outcomes identical in the three runs: {'yes' if same else 'NO'}")
    return 0 if same else 1
