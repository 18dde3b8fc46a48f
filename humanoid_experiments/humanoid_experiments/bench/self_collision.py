"""``humanoid bench self-collision``: the per-cycle self-collision check against bare Coal.

The method measured is what the command guard runs every control cycle and the checker
node for every joint_states message:
:meth:`~humanoid_description.collision.CollisionTracker.first_violation` (is any checked
pair within the safety distance, and which), whose precomputation (per pair, the joints
that can move it and how far per radian) lets it recompute only the pairs that may have
come that close since they were last computed. Its baselines, on the same configurations
in the same run: bare Pinocchio/Coal over the same pairs (the SRDF's), the configuration
converted and the kinematics included as the method must do too:

- ``computeCollisions`` with the safety distance as security margin (the same question);
- ``computeDistances`` (the same information: every pair's distance).

Two sets of configurations:

- **control stream**: what a 1 kHz control loop checks: every motion of the robot's
  library played as the robot plays it, sampled every 1 ms, and a random walk that
  swings every joint at up to 2 rad/s (it comes close to or into collision again and
  again), cut into 1 s pieces of which ``--stream-seconds`` (30) are drawn at random and
  played in order. ``speedup_vs_coal`` = bare ``computeCollisions`` time per
  configuration / the method's, here; ``period_fraction_1khz`` = the method's mean time
  per check / 1 ms (its 99th percentile is printed too).
- **random**: ``--configurations`` (10 000) configurations drawn uniformly within the joint
  limits, checked in a random order, so that nothing carries over from one to the next
  (the method's worst case; its speed there is printed as ``speedup_vs_coal_random``).

``missed_collisions``: configurations of both sets where the brute-force reference (every
pair of links not joined by a joint, SRDF ignored, exact distances) finds a pair within the
safety distance and the method finds none. Times are CPU seconds of the checking thread
per check (wall-clock time on a shared machine counts the other processes too; the p99 is
of wall-clock times). Timing rounds alternate (bare, method, bare, ...) and each keeps its
best round: other load on the machine only slows a round down.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

import numpy as np

from humanoid_description import ROBOTS

# Pinocchio and the models are imported where they are used: the `humanoid` command builds
# its parser from this module and must start fast.

#: The control stream's sampling period (s): one check per cycle of a 1 kHz loop.
PERIOD = 0.001


def library_stream(robot: str) -> np.ndarray:
    """Every library motion of ``robot`` as the robot plays it, every ``PERIOD`` s."""
    from humanoid_core.loop import Law, Spline
    from humanoid_core.motion import list_motions, load_motion, plan_playback
    from humanoid_description import load_model

    model = load_model(robot)
    home = model.home_positions()
    parts = []
    for name in list_motions(robot):
        samples = plan_playback(load_motion(robot, name), current=model.joints.to_dict(home)).trajectory
        spline = Spline.build(samples.times, samples.positions, samples.velocities, samples.accelerations,
                              Law.QUINTIC)
        times = np.arange(samples.times[0], samples.times[-1], PERIOD)
        rows = np.tile(home, (len(times), 1))
        rows[:, [model.joints.index(j) for j in samples.joint_names]] = spline.sample_many(times)[0]
        parts.append(rows)
    return np.vstack(parts)


def random_walk(robot: str, seconds: float, seed: int, speed: float = 2.0) -> np.ndarray:
    """Every joint swinging between random targets within its limits at up to ``speed`` rad/s."""
    from humanoid_description import load_model

    model = load_model(robot)
    rng = np.random.default_rng(seed)
    lower, upper = model.joints.lower, model.joints.upper
    q, target = model.home_positions(), rng.uniform(lower, upper)
    rows = []
    for _ in range(int(seconds / PERIOD)):
        step = np.clip(target - q, -speed * PERIOD, speed * PERIOD)
        q = q + step
        reached = np.abs(target - q) < 1e-9
        target[reached] = rng.uniform(lower[reached], upper[reached])
        rows.append(q)
    return np.array(rows)


def control_stream(robot: str, seconds: float, walk_seconds: float, seed: int) -> np.ndarray:
    """``seconds`` 1 s pieces, drawn at random and kept in order, of the library motions and
    the random walk at 1 kHz."""
    everything = np.vstack([library_stream(robot), random_walk(robot, walk_seconds, seed)])
    piece = round(1.0 / PERIOD)
    pieces = len(everything) // piece
    chosen = np.sort(np.random.default_rng(seed).choice(pieces, size=min(pieces, int(seconds)), replace=False))
    return np.vstack([everything[k * piece:(k + 1) * piece] for k in chosen])


def brute_force_within(robot: str, configurations: np.ndarray, threshold: float) -> np.ndarray:
    """Per configuration: does any pair of links not joined by a joint come within ``threshold``?"""
    from humanoid_description import CollisionModel, RobotModel

    reference = CollisionModel(RobotModel(robot), use_srdf=False)
    return np.array([reference.pair_distances(q).min() <= threshold for q in configurations])


def method_answers(robot: str, configurations: np.ndarray, safety: float) -> tuple[np.ndarray, float]:
    """The method's answer per configuration (a pair within the safety distance?), and the
    exact pair distances it computed per check."""
    from humanoid_description import CollisionModel, CollisionTracker, RobotModel

    tracker = CollisionTracker(CollisionModel(RobotModel(robot)), safety)
    found = np.array([tracker.first_violation(q) is not None for q in configurations])
    return found, tracker.exact_evaluations / len(configurations)


@dataclass(frozen=True)
class Timing:
    """One method's best round: the CPU seconds per check (the figure: unlike wall-clock time
    it leaves out the time other processes took the core) and each check's wall-clock time
    (for its distribution)."""

    cpu_per_check: float
    wall: np.ndarray


def timings(robot: str, configurations: np.ndarray, safety: float, rounds: int) -> dict[str, Timing]:
    """Each method's best round (least CPU time; the rounds alternate between the methods)."""
    import pinocchio as pin

    from humanoid_description import CollisionModel, CollisionTracker, RobotModel

    robot_model = RobotModel(robot)
    bare = CollisionModel(robot_model)
    for request in bare.data.collisionRequests:
        request.security_margin = safety
    model, data, geometry, geometry_data = robot_model.model, robot_model.data, bare.geometry, bare.data
    # joint positions into Pinocchio's configuration as cheaply as the method does it (the base fixed)
    fixed, index = robot_model.configuration(robot_model.home_positions()), robot_model.q_index

    def configuration(q: np.ndarray) -> np.ndarray:
        full = fixed.copy()
        full[index] = q
        return full

    def collisions(q: np.ndarray) -> object:
        return pin.computeCollisions(model, data, geometry, geometry_data, configuration(q), False)

    def distances(q: np.ndarray) -> object:
        return pin.computeDistances(model, data, geometry, geometry_data, configuration(q))

    def method_round() -> Timing:
        tracker = CollisionTracker(CollisionModel(RobotModel(robot)), safety)  # nothing carried over
        return per_check(tracker.first_violation)

    def per_check(check) -> Timing:
        out = np.empty(len(configurations))
        clock = time.perf_counter
        cpu_started = time.thread_time()
        for k, q in enumerate(configurations):
            started = clock()
            check(q)
            out[k] = clock() - started
        return Timing((time.thread_time() - cpu_started) / len(configurations), out)

    best: dict[str, Timing] = {}
    plan = [("coal_collisions", lambda: per_check(collisions)), ("coal_distances", lambda: per_check(distances)),
            ("method", method_round)]
    for _ in range(rounds):
        for name, measure in plan:
            timing = measure()
            if name not in best or timing.cpu_per_check < best[name].cpu_per_check:
                best[name] = timing
    return best


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--configurations", type=int, default=10000,
                        help="random configurations checked against the brute-force reference (10000)")
    parser.add_argument("--stream-seconds", type=float, default=30.0,
                        help="seconds of the 1 kHz control stream checked and timed (30)")
    parser.add_argument("--walk-seconds", type=float, default=10.0,
                        help="seconds of the random walk the control stream is drawn from, with the library (10)")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds per method, the best kept (3)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.configurations < 100 or args.rounds < 1 or args.walk_seconds <= 0 or args.stream_seconds < 1:
        print("humanoid bench self-collision: error: --configurations >= 100, --rounds >= 1, --walk-seconds > 0, "
              "--stream-seconds >= 1", file=sys.stderr)
        return 2
    from humanoid_description import CollisionModel, RobotModel

    robot = args.robot
    safety = RobotModel(robot).config.safety_distance
    stream = control_stream(robot, args.stream_seconds, args.walk_seconds, args.seed)
    lower, upper = RobotModel(robot).joints.lower, RobotModel(robot).joints.upper
    random_set = np.random.default_rng(args.seed + 1).uniform(lower, upper, (args.configurations, len(lower)))

    missed = {}
    collisions = {}
    exact = {}
    for name, configurations in (("stream", stream), ("random", random_set)):
        truth = brute_force_within(robot, configurations, safety)
        found, exact[name] = method_answers(robot, configurations, safety)
        missed[name] = int(np.count_nonzero(truth & ~found))
        collisions[name] = int(np.count_nonzero(truth))
        if np.any(found & ~truth):  # the method reports only pairs it computed exactly: none expected
            print(f"warning: {int(np.count_nonzero(found & ~truth))} configurations reported within the safety "
                  "distance that the reference does not find", file=sys.stderr)
    stream_times = timings(robot, stream, safety, args.rounds)
    random_times = timings(robot, random_set, safety, args.rounds)
    mean = {name: t.cpu_per_check for name, t in stream_times.items()}
    mean_random = {name: t.cpu_per_check for name, t in random_times.items()}
    checked = CollisionModel(RobotModel(robot))
    result = {
        "robot": robot,
        "safety_distance_mm": safety * 1000.0,
        "link_pairs_checked": len(checked.link_pairs),
        "link_pairs_brute_force": len(CollisionModel(RobotModel(robot), use_srdf=False).link_pairs),
        "configurations_stream": len(stream),
        "configurations_random": len(random_set),
        "within_safety_distance_stream": collisions["stream"],
        "within_safety_distance_random": collisions["random"],
        "missed_collisions": missed["stream"] + missed["random"],
        "missed_collisions_random": missed["random"],
        "method_us": round(mean["method"] * 1e6, 2),
        "method_p99_us": round(float(np.percentile(stream_times["method"].wall, 99)) * 1e6, 2),
        "coal_collisions_us": round(mean["coal_collisions"] * 1e6, 2),
        "coal_distances_us": round(mean["coal_distances"] * 1e6, 2),
        "speedup_vs_coal": round(mean["coal_collisions"] / mean["method"], 3),
        "speedup_vs_coal_distances": round(mean["coal_distances"] / mean["method"], 3),
        "period_fraction_1khz": round(mean["method"] / PERIOD, 6),
        "exact_pairs_per_check": round(exact["stream"], 3),
        "method_random_us": round(mean_random["method"] * 1e6, 2),
        "coal_collisions_random_us": round(mean_random["coal_collisions"] * 1e6, 2),
        "speedup_vs_coal_random": round(mean_random["coal_collisions"] / mean_random["method"], 3),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"self-collision check of {robot}: {result['link_pairs_checked']} link pairs (SRDF), safety distance "
          f"{result['safety_distance_mm']:g} mm")
    print(f"control stream ({len(stream)} configurations at 1 kHz, pieces of the library motions and a random "
          "walk): "
          f"method {result['method_us']:.1f} us per check (p99 {result['method_p99_us']:.1f} us, "
          f"{result['exact_pairs_per_check']:.2f} exact pair distances), bare Coal computeCollisions "
          f"{result['coal_collisions_us']:.1f} us, computeDistances {result['coal_distances_us']:.1f} us")
    print(f"  speedup vs bare Coal: {result['speedup_vs_coal']:.2f} (collisions), "
          f"{result['speedup_vs_coal_distances']:.2f} (distances); "
          f"{result['period_fraction_1khz'] * 100:.2f} % of a 1 kHz period")
    print(f"random set ({len(random_set)} configurations, no coherence): method {result['method_random_us']:.1f} us, "
          f"bare computeCollisions {result['coal_collisions_random_us']:.1f} us: speedup "
          f"{result['speedup_vs_coal_random']:.2f}")
    print(f"missed collisions against the brute force over {result['link_pairs_brute_force']} link pairs: "
          f"{result['missed_collisions']} ({collisions['random']} random and {collisions['stream']} stream "
          "configurations within the safety distance)")
    return 0
