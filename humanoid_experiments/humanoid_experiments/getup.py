"""``humanoid getup``: the fall manager gets the simulated robot up, trial after trial.

Brings up the default simulation graph in lockstep (the simulation as fast as its nodes
allow) with the fall manager getting the robot up (``auto_getup``), and per start asked:

- ``back`` / ``belly`` / ``left`` / ``right``: the simulator lays the robot down (the ``reset`` service's
  ``lying``) in its home pose with every joint moved by up to ``--jitter`` degrees
  (seeded: trial k of a run draws the same angles every run);
- ``push``: the robot stands, then a push at the trunk (an impulse giving the whole robot
  ``--push`` m/s, twice and more what it stands) topples it, forward and backward in turn.

The fall manager sees the robot lying, plays the side's get-up motion (``getup_<side>`` of
the robot's motion library) and decides when it is up. A trial succeeds when the manager
says ``controllable`` after a get-up, within ``--timeout`` s of robot time; it fails when the
manager gives up (its attempts spent) or the time runs out. Per start: trials, successes,
the mean and worst **time to stand** (robot time from the first get-up attempt's start to
the manager's ``controllable``, retries included) and the **current** the energy monitor
estimates while getting up (the ODE paper's stand-up figure): the peak over the trials, the
mean, and the mean energy per get-up. ``--record BAG`` keeps a bag of the whole run, whose
``energy_state`` ``humanoid plot`` draws over time.

``--json`` prints ``{"robot": R, "back": {"trials": n, "succeeded": k, "mean_time_s": t,
"worst_time_s": t, "peak_current_a": i, "mean_current_a": i, "energy_j": e}, ...}`` (the
starts asked for; the time and current figures are null without a success).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# rclpy and the clients are imported where they are used: the `humanoid` command builds its
# parser from this module and must start fast.

#: The experiment's node.
CLIENT = "humanoid_getup"
#: The starts a trial can take.
STARTS = ("back", "belly", "left", "right", "push")
#: Push directions in the world frame (the robot faces +x after a reset), taken in turn.
PUSH_DIRECTIONS = ((1.0, 0.0), (-1.0, 0.0))
#: s of robot time the robot stands after a reset before a push.
SETTLE = 1.0
#: s the push lasts.
PUSH_DURATION = 0.1
#: s of robot time within which the robot is down (laid down: at once; pushed: it falls).
DOWN_WITHIN = 5.0
#: Wall seconds allowed for one service call or wait on the graph (a loaded machine), and for
#: the simulation to go one state further during a trial: a lockstep simulation that stops (a
#: participant silent) ends the run with that error, not after the trial's whole wall budget.
WAIT = 120.0
#: Wall seconds between two looks at robot time and the graph while a trial waits for its end.
LOOK_PERIOD = 0.5
#: s of robot time the lockstep simulation runs on after the last trial before the graph stops:
#: the recorder, in the graph's container, writes the last messages (the manager's
#: ``controllable``) before it is stopped.
RECORD_TAIL = 0.5


@dataclass
class TrialResult:
    """One get-up: whether the manager said the robot is up, when, and the current meanwhile."""

    succeeded: bool
    why: str  # the manager's last cause (a failure's reason)
    time_s: float | None = None  # from the first get-up attempt's start to controllable
    peak_current_a: float | None = None
    mean_current_a: float | None = None
    energy_j: float | None = None
    attempts: int = 0


@dataclass
class StartSummary:
    """The trials from one start, summed up as the JSON reports them."""

    trials: list[TrialResult] = field(default_factory=list)

    def as_dict(self) -> dict:
        up = [t for t in self.trials if t.succeeded]
        times = [t.time_s for t in up if t.time_s is not None]
        peaks = [t.peak_current_a for t in up if t.peak_current_a is not None]
        means = [t.mean_current_a for t in up if t.mean_current_a is not None]
        energies = [t.energy_j for t in up if t.energy_j is not None]
        return {"trials": len(self.trials), "succeeded": len(up),
                "mean_time_s": _mean(times), "worst_time_s": _round(max(times)) if times else None,
                "peak_current_a": _round(max(peaks)) if peaks else None, "mean_current_a": _mean(means),
                "energy_j": _mean(energies)}


def _round(value: float) -> float:
    return round(float(value), 3)


def _mean(values: list[float]) -> float | None:
    return _round(sum(values) / len(values)) if values else None


class GetupWatch:
    """The fall manager's states and the energy estimates, by robot time (subscriptions on the
    client's node, spun by its executor)."""

    def __init__(self, client) -> None:
        from humanoid_control.ros import FALL_STATE_QOS, topics
        from humanoid_interfaces.msg import EnergyState, FallManagerState

        self._changed = threading.Condition()
        self._states: list = []  # FallManagerState, as received
        self._energy: list[tuple[float, float, float]] = []  # (stamp, total current A, energy J)
        client.node.create_subscription(FallManagerState, topics.FALL_MANAGER_STATE, self._on_state,
                                        FALL_STATE_QOS)
        client.node.create_subscription(EnergyState, topics.ENERGY_STATE, self._on_energy, 1000)

    def _on_state(self, msg) -> None:
        with self._changed:
            self._states.append(msg)
            self._changed.notify_all()

    def _on_energy(self, msg) -> None:
        from humanoid_control.ros import seconds

        with self._changed:
            self._energy.append((seconds(msg.header.stamp), msg.total_current, msg.energy))

    def forget(self) -> None:
        """Start a trial: the states and estimates received so far are dropped."""
        with self._changed:
            self._states.clear()
            self._energy.clear()

    def outcome(self, since: float, timeout: float, wall_timeout: float, now: Callable[[], float],
                exited: Callable[[], dict[str, int]], stall: float = WAIT) -> TrialResult:
        """Wait for the get-up that follows ``since`` (robot time, ``now``) to end, and measure
        it. Raises :class:`~humanoid_control.ros.RobotClientError` when a node of the graph
        exits (``exited``: name -> status) or robot time stands still for ``stall`` wall
        seconds: a broken graph, not a get-up that failed."""
        import time

        from humanoid_control.ros import RobotClientError, seconds
        from humanoid_interfaces.msg import FallManagerState as S

        deadline = time.monotonic() + wall_timeout
        reached, moved = now(), time.monotonic()
        with self._changed:
            while True:
                states = [m for m in self._states if seconds(m.header.stamp) >= since]
                started = next((m for m in states if m.state == S.GETTING_UP), None)
                last = states[-1] if states else None
                manager = f"the manager: {last.state_name}, {last.cause}" if last is not None else \
                    "no state of the fall manager received"
                if started is not None and last is not None and last.state == S.CONTROLLABLE:
                    start, end = seconds(started.since), seconds(last.since)
                    return self._measured(start, end, last.cause, max(m.attempt for m in states))
                if last is not None and last.state == S.FALLEN and last.attempt >= last.max_attempts > 0 \
                        and started is not None:
                    return TrialResult(False, f"the fall manager gave up: {last.cause}", attempts=last.attempt)
                robot_time = now()
                if last is not None and robot_time - since > DOWN_WITHIN \
                        and all(m.state == S.CONTROLLABLE for m in states):
                    return TrialResult(False, f"the robot was not down {DOWN_WITHIN:g} s after the start (the "
                                              "push did not topple it: a larger --push)")
                if robot_time - since > timeout:
                    return TrialResult(False, f"not up {timeout:g} s after the start ({manager})",
                                       attempts=last.attempt if last is not None else 0)
                if gone := exited():
                    raise RobotClientError(f"{', '.join(f'{name} (status {code})' for name, code in gone.items())} "
                                           f"exited at t = {robot_time:.3f} s during the trial ({manager})")
                if robot_time > reached:
                    reached, moved = robot_time, time.monotonic()
                elif time.monotonic() - moved > stall:
                    raise RobotClientError(f"the simulation stopped at t = {reached:.3f} s: no new state for {stall:g} "
                                           f"wall seconds ({manager}); the simulator's log names a lockstep "
                                           "participant that stopped answering")
                left = deadline - time.monotonic()
                if left <= 0:
                    return TrialResult(False, f"no outcome within {wall_timeout:g} wall seconds ({manager})")
                self._changed.wait(min(left, LOOK_PERIOD))

    def _measured(self, start: float, end: float, cause: str, attempts: int) -> TrialResult:
        span = [(t, i, e) for t, i, e in self._energy if start <= t <= end]
        if len(span) < 2:
            return TrialResult(True, cause, end - start, attempts=attempts)
        currents = [i for _t, i, _e in span]
        return TrialResult(True, cause, end - start, peak_current_a=max(currents),
                           mean_current_a=sum(currents) / len(currents), energy_j=span[-1][2] - span[0][2],
                           attempts=attempts)


def jittered_home(robot: str, jitter_deg: float, seed: int) -> dict[str, float]:
    """The robot's home pose, every joint moved by a uniform draw within ``jitter_deg``,
    kept within the joint limits."""
    import numpy as np

    from humanoid_description import load_model

    model = load_model(robot)
    draw = np.random.default_rng(seed).uniform(-1.0, 1.0, len(model.joints.names)) * math.radians(jitter_deg)
    positions = np.clip(model.home_positions() + draw, model.joints.lower, model.joints.upper)
    return dict(zip(model.joints.names, map(float, positions), strict=True))


def trial(client, graph, watch: GetupWatch, robot: str, start: str, index: int,
          args: argparse.Namespace) -> TrialResult:
    """One trial from ``start``: the robot laid down or pushed over, then got up."""
    watch.forget()
    if start == "push":
        client.reset(timeout=WAIT)
        client.wait_until(client.now() + SETTLE, timeout=WAIT)
        from humanoid_description import load_model

        dx, dy = PUSH_DIRECTIONS[index % len(PUSH_DIRECTIONS)]
        force = args.push * load_model(robot).total_mass / PUSH_DURATION
        answer = client.apply_push((dx * force, dy * force, 0.0), PUSH_DURATION, timeout=WAIT)
        if not answer.success:
            return TrialResult(False, f"the push was refused: {answer.message}")
    else:
        client.reset(jittered_home(robot, args.jitter, args.seed + index), lying=start, timeout=WAIT)
    return watch.outcome(client.now(), args.timeout, WAIT + 10.0 * args.timeout, client.now, graph.exited)


def measure(client, graph, robot: str, starts: list[str], args: argparse.Namespace, progress) -> dict:
    watch = GetupWatch(client)
    report: dict = {"robot": robot}
    for start in starts:
        summary = StartSummary()
        for index in range(args.trials):
            result = trial(client, graph, watch, robot, start, index, args)
            summary.trials.append(result)
            took = f" in {result.time_s:.2f} s" if result.time_s is not None else ""
            progress(f"{start} {index + 1}/{args.trials}: {'up' if result.succeeded else 'FAILED'}{took} "
                     f"({result.why})")
        report[start] = summary.as_dict()
    return report


def text(report: dict) -> str:
    lines = [f"get-ups of the simulated {report['robot']} (the fall manager, auto_getup)"]
    for start in STARTS:
        if start not in report:
            continue
        r = report[start]
        line = f"  {start:5s}: {r['succeeded']} of {r['trials']} up"
        if r["mean_time_s"] is not None:
            line += f", time to stand mean {r['mean_time_s']:.2f} s, worst {r['worst_time_s']:.2f} s"
        if r["peak_current_a"] is not None:
            line += (f"; current peak {r['peak_current_a']:.2f} A, mean {r['mean_current_a']:.2f} A, "
                     f"{r['energy_j']:.1f} J per get-up")
        lines.append(line)
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_core import integer_in, new_folder, positive_number
    from humanoid_sim import physics_profiles

    parser.add_argument("--robot", required=True, choices=("hoap2", "bioloid"), help="the humanoid to get up")
    parser.add_argument("--trials", type=integer_in(1, 1000), default=10, help="trials per start (default 10)")
    parser.add_argument("--from", dest="starts", action="append", choices=STARTS, default=None,
                        help="a start: back, belly, left, right (laid down on that side) or push (pushed over "
                             "from standing, forward and backward in turn); repeat for several (default: back and "
                             "belly)")
    parser.add_argument("--jitter", type=float, default=3.0,
                        help="deg, each joint of a laid-down robot is moved by up to this from home (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="the first trial's jitter seed (default 0)")
    parser.add_argument("--push", type=positive_number, default=1.0,
                        help="m/s, the push at the trunk for --from push, as the speed its impulse gives the "
                             "whole robot (default 1: twice and more what either humanoid stands)")
    parser.add_argument("--timeout", type=positive_number, default=120.0,
                        help="s of robot time a trial may take to get up (default 120: three attempts)")
    parser.add_argument("--motions", type=Path, default=None, metavar="DIR",
                        help="play the get-up motions getup_<side>.yaml of this folder instead of the robot's "
                             "library (the fall manager's getup_directory): to try a motion of your own")
    add_own_robot_namespace(parser)
    physics_profiles.add_argument(parser)
    parser.add_argument("--record", type=new_folder, default=None, metavar="BAG",
                        help="record the run into this new bag (humanoid plot draws its current over time)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--log-dir", type=new_folder, default=None, help="keep the nodes' logs here")


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import free_namespace, with_recorder
    from humanoid_control.nodes import FALL_MANAGER, with_node_parameters
    from humanoid_control.ros import RobotClient, RobotClientError
    from humanoid_core import UsageError
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot
    from humanoid_sim import physics_profiles, sim_nodes

    robot = resolve_robot(args.robot)  # once: the option check and the graph below ask this object
    physics_profiles.chosen(robot, args.physics)
    if args.motions is not None and not args.motions.is_dir():
        raise UsageError(f"--motions {args.motions}: not a folder")
    starts = list(dict.fromkeys(args.starts or ["back", "belly"]))
    namespace = free_namespace(args.namespace)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="humanoid_getup_"))
    out = sys.stderr if args.json else sys.stdout
    print(f"starting the {args.robot} simulation (logs: {log_dir}) ...", file=out, flush=True)
    # the recorder, hosted in the graph's container, answers the lockstep with the container
    nodes = sim_nodes(robot, real_time_factor=0.0, lockstep=True, auto_getup=True, physics_profile=args.physics,
                      namespace=namespace)
    if args.motions is not None:
        nodes = with_node_parameters(nodes, FALL_MANAGER, {"getup_directory": str(args.motions.resolve())})
    try:
        with Graph(with_recorder(nodes, args.record, lockstep=True), log_dir=log_dir) as graph, \
                RobotClient(CLIENT, namespace=namespace) as client:
            client.wait_for_joint_states(WAIT)
            report = measure(client, graph, args.robot, starts, args,
                             progress=lambda line: print(line, file=out, flush=True))
            if args.record is not None:
                client.wait_until(client.now() + RECORD_TAIL)
    except RobotClientError as error:
        print(f"humanoid getup: {error} (the nodes' logs: {log_dir})", file=sys.stderr)
        return 1
    print(json.dumps(report, indent=2) if args.json else text(report))
    return 0
