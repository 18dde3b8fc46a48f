"""``humanoid bench lockstep``: the 1 m walk through the full node graph in lockstep, its
rate beside raw PyBullet stepping of the same model, and the same walk in real time.

- lockstep: the simulation node, the walk controller, the trajectory generator, the balance
  monitor, the self-collision checker and the recorder (into a temporary bag), every one a
  lockstep participant, and this command's client (``humanoid walk``'s measurements);
  ``rtf_lockstep`` is the walk's robot time over its wall time (from the goal to its result);
- raw: bare PyBullet stepping of the same URDF (:func:`humanoid_experiments.bench.sim.raw_real_time_factor`,
  at the profile's rate and engine settings with ``--physics``), once before and once after the
  walk; ``rtf_raw`` is the better run (other load only slows a run down), ``ratio`` =
  ``rtf_lockstep`` / ``rtf_raw``;
- real time: the same graph and walk without lockstep at ``--real-time-factor`` (default 1),
  the whole walk; ``drift_m`` = |distance in lockstep - distance in real time|.

``--runs N`` measures all three N times in a row and adds each ratio's median and range over
the runs (``spread``): on a shared machine one run's ratios vary by a tenth and more, as much
as many a change they would be used to judge (docs/graph_cost.md).

Where the lockstep run's time goes: CPU seconds of each node's process tree per simulated
second (``cpu_per_sim_s``), and the simulation's wait for its participants (the lockstep
entry of its diagnostics, read before and after the walk: states waited at, wall seconds
waiting; the diagnostics go out once a wall second, so a reading before the walk is there
only when the nodes took that long to come up; the longest wait is the whole run's), and each
participant's answer time (``answer_ms``: median over its latest answers, from a state's
publication to its answer reaching the simulation's loop). ``rtf_cpu_bound`` is what the
graph's CPU allows at best: the ``cores`` this process may run on, over the CPU seconds all
the nodes (and this client) take per simulated second; the rate can approach it only as far
as the participants' answers and the physics run side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from humanoid_control.ros import topics
from humanoid_core import integer_in, positive_number
from humanoid_experiments.bench.cpu_time import load_average

# rclpy, PyBullet and the graph are imported where they are used: the `humanoid` command
# builds its parser from this module and must start fast.

ROBOT = "hoap2"
#: The benchmark's client (a lockstep participant in the lockstep run).
CLIENT = "humanoid_bench_lockstep"
#: Seconds of raw stepping per run.
RAW_SECONDS = 10.0
#: What the walk controller logs when its pattern falls behind the robot's clock.
BEHIND = "behind the robot's clock"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_sim import physics_profiles

    parser.add_argument("--robot", default=ROBOT, choices=[ROBOT], help="the robot that walks (hoap2)")
    parser.add_argument("--distance", type=positive_number, default=1.0, help="metres to walk (1)")
    parser.add_argument("--real-time-factor", type=positive_number, default=1.0,
                        help="of the comparison run without lockstep (1: real time)")
    physics_profiles.add_argument(parser)
    add_own_robot_namespace(parser)
    parser.add_argument("--runs", type=integer_in(1), default=1,
                        help="measure this many times in a row and print each ratio's median and range (1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def graph_walk(robot: str, distance: float, physics: str | None, lockstep: bool, real_time_factor: float,
               folder: Path, namespace: str = "/") -> dict[str, Any]:
    """The walk through the full graph (recorder included), with the CPU time of each node and,
    in lockstep, the simulation's waits; the graph and the client in ``namespace``."""
    from humanoid_bringup import with_recorder
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph, process_tree
    from humanoid_experiments.bench.cpu_time import own_cpu_seconds
    from humanoid_experiments.bench.graph import log_tails_on_failure, named_processes
    from humanoid_experiments.walk import walk
    from humanoid_sim import sim_nodes

    nodes = sim_nodes(robot, real_time_factor=None if lockstep else real_time_factor, physics_profile=physics,
                      lockstep=lockstep, participants=(CLIENT,) if lockstep else (), namespace=namespace)
    folder.mkdir(parents=True)
    nodes = with_recorder(nodes, folder / "bag", lockstep=lockstep)
    with Graph(nodes, log_dir=folder / "logs") as graph, \
            RobotClient(CLIENT, namespace=namespace, lockstep=lockstep) as client:
        gate = GateWatch(client.node)
        with log_tails_on_failure(graph):
            client.wait_for_joint_states(120.0)
        members = named_processes([pid for p in graph.processes.values() for pid in process_tree(p.pid)])
        cpu0 = {pid: own_cpu_seconds(pid) for pid in members}
        own0, robot0 = time.process_time(), client.now()
        gate0 = gate.latest
        report = walk(client, robot, distance, stay_in_lockstep=False)
        simulated = client.now() - robot0
        cpu = {name: round(((own_cpu_seconds(pid) or cpu0[pid]) - cpu0[pid]) / simulated, 4)
               for pid, name in members.items() if cpu0[pid] is not None}
        cpu[CLIENT] = round((time.process_time() - own0) / simulated, 4)
        waits = gate_during(gate0, gate.latest) if lockstep else None
    behind = any(BEHIND in graph.log_text(spec.name) for spec in nodes)
    return {"distance_m": report.distance_m, "lateral_drift_m": report.lateral_drift_m, "fell": report.fell,
            "result": report.result, "walk_s": report.duration_s, "rtf": report.real_time_factor,
            "cpu_per_sim_s": cpu, "gate": waits, "walk_controller_behind": behind,
            "nodes": [name for spec in nodes for name in (spec.name, *spec.hosted)]}


class GateWatch:
    """The latest values of the simulation's lockstep diagnostics entry (``diagnostics`` carries
    every node's entries, each node's in messages of its own)."""

    def __init__(self, node) -> None:
        from diagnostic_msgs.msg import DiagnosticArray

        self.latest: dict[str, str] | None = None
        node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 50)

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name.endswith(": lockstep"):
                self.latest = {value.key: value.value for value in status.values}


def gate_during(before: dict[str, str] | None, after: dict[str, str] | None) -> dict[str, Any] | None:
    """The simulation's waits between two readings of its lockstep diagnostics (``before`` None:
    since the start, the nodes' coming up included); the longest wait is the run's so far."""
    if after is None:
        return None
    counts = ("waits", "wait_s", "silent_reports")
    start = {key: float(before[key]) if before else 0.0 for key in counts}
    return {**{key: round(float(after[key]) - start[key], 3) for key in counts},
            "longest_wait_s": float(after["longest_wait_s"]), "participants": after["participants"],
            "answer_ms": answer_times(after.get("answer_ms", ""))}


def answer_times(value: str) -> dict[str, float]:
    """The gate's ``answer_ms`` diagnostics value (``name=ms,...``) as a dict."""
    pairs = (item.split("=", 1) for item in value.split(",") if "=" in item)
    return {name: float(ms) for name, ms in pairs}


def raw_run(robot: str, physics: str | None):
    """Raw PyBullet stepping of the robot, at the profile's settings with ``physics``."""
    from humanoid_experiments.bench.sim import raw_real_time_factor

    settings = None
    if physics is not None:
        from humanoid_description import load_model
        from humanoid_sim import simulation_settings

        settings = simulation_settings(load_model(robot), physics).sim
    return raw_real_time_factor(robot, RAW_SECONDS, settings)


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import free_namespace
    from humanoid_description import resolve_robot
    from humanoid_experiments.walk import check_goal
    from humanoid_sim import physics_profiles

    robot = resolve_robot(args.robot)  # once: the option checks ask this object
    check_goal(robot, args.distance)
    physics = physics_profiles.chosen(robot, args.physics)
    namespace = free_namespace(args.namespace)  # the two graphs below, one after the other, run there
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if not args.json else (lambda _text: None)
    results = []
    for k in range(args.runs):
        if args.runs > 1:
            say(f"run {k + 1} of {args.runs}")
        results.append(measure(args, physics, namespace, say))
    if args.runs == 1:
        print(json.dumps(results[0]) if args.json else text(results[0]))
    else:
        ratios = spread(results)
        print(json.dumps({"runs": results, "spread": ratios}) if args.json
              else "\n\n".join(text(r) for r in results) + "\n\n" + spread_text(ratios) + "\n" + falls_text(results))
    return 0 if not any(r["fell"] or r["realtime"]["fell"] for r in results) else 1


def measure(args: argparse.Namespace, physics: str | None, namespace: str, say) -> dict[str, Any]:
    """One run of the three measurements: raw stepping, the walk in lockstep, raw stepping
    again, the walk in real time."""
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_lockstep_") as folder:
        say(f"{args.robot}: raw PyBullet stepping ({RAW_SECONDS:g} s) ...")
        raw_runs = [raw_run(args.robot, physics)]
        say(f"{args.distance:g} m walk, full graph, lockstep ...")
        lockstep = graph_walk(args.robot, args.distance, physics, True, 0.0, Path(folder) / "lockstep", namespace)
        say(f"{args.robot}: raw PyBullet stepping ({RAW_SECONDS:g} s) ...")
        raw_runs.append(raw_run(args.robot, physics))
        say(f"{args.distance:g} m walk, full graph, real-time factor {args.real_time_factor:g} ...")
        realtime = graph_walk(args.robot, args.distance, physics, False, args.real_time_factor,
                              Path(folder) / "realtime", namespace)
    raw = max(r.real_time_factor for r in raw_runs)
    raw_cpu = min(r.cpu_per_sim_second for r in raw_runs)
    graph_cpu = sum(lockstep["cpu_per_sim_s"].values())
    cores = len(os.sched_getaffinity(0))
    result = {"robot": args.robot, "physics": physics or "reference", "distance_asked_m": args.distance,
              "rtf_lockstep": round(lockstep["rtf"], 3), "rtf_raw": round(raw, 3),
              "ratio": round(lockstep["rtf"] / raw, 3), "distance_m": round(lockstep["distance_m"], 4),
              "drift_m": round(abs(lockstep["distance_m"] - realtime["distance_m"]), 4),
              "graph_cpu_per_sim_s": round(graph_cpu, 4), "raw_cpu_per_sim_s": round(raw_cpu, 4),
              "cost_vs_physics": round(graph_cpu / raw_cpu, 3), "rtf_realtime": round(realtime["rtf"], 3),
              "fell": lockstep["fell"], "rtf_raw_runs": [round(r.real_time_factor, 3) for r in raw_runs],
              "realtime": {"real_time_factor_asked": args.real_time_factor, **rounded(realtime)},
              "lockstep": rounded(lockstep), "cores": cores,
              "rtf_cpu_bound": round(cpu_bound(lockstep["cpu_per_sim_s"], cores), 3),
              "load": load_average()}
    return result


#: The ratios whose spread over several runs is printed, with their goals.
SPREAD = {"ratio": "lockstep / raw (goal >= 0.5)", "cost_vs_physics": "graph CPU / physics (goal <= 2)",
          "rtf_realtime": "real time (goal >= 0.98)"}


def spread(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Each ratio's median, lowest and highest over the runs."""
    return {key: {"median": round(statistics.median(r[key] for r in results), 3),
                  "min": min(r[key] for r in results), "max": max(r[key] for r in results)} for key in SPREAD}


def spread_text(ratios: dict[str, dict[str, float]]) -> str:
    lines = ["over the runs: median (lowest - highest)"]
    for key, label in SPREAD.items():
        v = ratios[key]
        lines.append(f"  {label:32s} {v['median']:6.3f}  ({v['min']:.3f} - {v['max']:.3f})")
    return "\n".join(lines)


def falls_text(results: list[dict[str, Any]]) -> str:
    """How many of the runs' walks fell, in lockstep and in real time (a walk at real time on a
    machine short of CPU may fall where its lockstep twin does not)."""
    locked = sum(bool(r["fell"]) for r in results)
    timed = sum(bool(r["realtime"]["fell"]) for r in results)
    return f"  {'walks that fell':32s} {locked} of {len(results)} in lockstep, {timed} of {len(results)} in real time"


def cpu_bound(cpu_per_sim_s: dict[str, float], cores: int) -> float:
    """The fastest the graph could run on ``cores`` cores however it were scheduled (robot
    seconds per wall second): every core busy all the time with its CPU seconds per robot second."""
    total = sum(cpu_per_sim_s.values())
    return cores / total if total > 0.0 else math.inf


def answers(times: dict[str, float]) -> str:
    """Each participant's answer time, slowest first."""
    return ", ".join(f"{name} {ms:.2f}" for name, ms in sorted(times.items(), key=lambda item: -item[1])) or "?"


def rounded(walked: dict[str, Any]) -> dict[str, Any]:
    return {key: round(value, 4) if isinstance(value, float) and math.isfinite(value) else value
            for key, value in walked.items()}


def text(r: dict[str, Any]) -> str:
    ls, rt = r["lockstep"], r["realtime"]
    cpu = ", ".join(f"{name} {value:.3f}" for name, value in sorted(ls["cpu_per_sim_s"].items(),
                                                                   key=lambda item: -item[1]))
    gate = ls["gate"] or {}
    return "\n".join([
        f"{r['robot']} ({r['physics']} physics): {r['distance_asked_m']:g} m walk, full graph "
        f"({', '.join(ls['nodes'])})",
        f"  lockstep                real-time factor {r['rtf_lockstep']:6.2f}  (walk of {ls['walk_s']:.1f} s "
        f"robot time)",
        f"  raw PyBullet stepping   real-time factor {r['rtf_raw']:6.2f}  (runs: "
        f"{', '.join(f'{v:.2f}' for v in r['rtf_raw_runs'])})",
        f"  lockstep / raw          {r['ratio']:6.3f}   (goal >= 0.5)",
        f"  graph CPU / physics     {r['cost_vs_physics']:6.2f}   ({r['graph_cpu_per_sim_s']:.3f} CPU s per "
        f"simulated s in all, raw PyBullet {r['raw_cpu_per_sim_s']:.3f}; goal <= 2)",
        f"  real time               real-time factor {rt['rtf']:6.2f} at {rt['real_time_factor_asked']:g} asked "
        f"(goal >= 0.98), walk controller behind its clock: {'YES' if rt['walk_controller_behind'] else 'no'}",
        f"  distance                {r['distance_m']:.4f} m in lockstep, {rt['distance_m']:.4f} m at real-time "
        f"factor {rt['real_time_factor_asked']:g} (achieved {rt['rtf']:.2f}): drift {r['drift_m'] * 1000:.1f} mm",
        f"  fell                    {'YES' if r['fell'] else 'no'} in lockstep, "
        f"{'YES' if rt['fell'] else 'no'} in real time",
        f"  walk result             {ls['result']} in lockstep; {rt['result']} in real time",
        f"  CPU s per simulated s   {cpu}",
        f"  CPU bound               {sum(ls['cpu_per_sim_s'].values()):.3f} CPU s per simulated s in all: at most "
        f"{r['rtf_cpu_bound']:.2f} times real time on {r['cores']} cores, however scheduled",
        f"  the simulation waited   {gate.get('wait_s', '?')} s (wall) for its participants at "
        f"{gate.get('waits', '?')} states, the longest wait {gate.get('longest_wait_s', '?')} s "
        f"(the nodes coming up, when no diagnostics came before the walk)",
        f"  answers (ms, median)    {answers(gate.get('answer_ms') or {})}",
        f"  load average            {', '.join(f'{v:.2f}' for v in r['load'])}"])
