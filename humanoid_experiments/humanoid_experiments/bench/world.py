"""``humanoid bench world``: quadrupeds trotting side by side in one physics world (``humanoid
sim --count N``), the real-time factor with each number of robots beside one robot's, in
real-time mode and in lockstep.

For each count (``--counts``, default 1, 2 and 4) and mode: the graph (the world's process and
a control container per robot), every robot given the same gait (``play_gait``: ``--gait``,
default trot, ``--frequency`` Hz) of ``--seconds`` of robot time at once. ``rtf`` is the robot
time over the wall time from the goals' acceptance until ``--seconds`` of robot time have
passed, falls or not (in real-time mode at most 1); ``vs_one`` its ratio to the same mode's
single robot in this run; ``cpu_per_sim_s`` the CPU seconds every process of the graph took per
simulated second; ``fell`` the robots whose gait ended in a fall (the fall manager stops a gait
it sees falling and holds the robot; the world runs on). A graph's start and stop are outside
the window. ``--physics`` names the world's physics profile (the quadruped's ``fast``: 500 Hz,
docs/physics_profiles.md); ``--any-cpu`` lets the kernel spread the world's loop process over
the CPUs, as before ``world_on_one_cpu``, to compare.

Beside each count, its ceiling in the same run: bare PyBullet stepping of as many robots
standing in one world at the world's physics (:func:`humanoid_experiments.bench.sim.raw_world`,
no servo model, loop, graph or publishing; ``raw_rtf``, ``raw_cpu_per_sim_s``), and the graph's
rate against it (``vs_raw``). One process steps the whole world, so a ``raw_rtf`` near 1 says
the physics alone fills a core: no lighter graph keeps that world in real time.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from humanoid_core import positive_number
from humanoid_experiments.bench.cpu_time import load_average

# rclpy, PyBullet and the graph are imported where they are used: the `humanoid` command
# builds its parser from this module and must start fast.

ROBOT = "bioloid_quadruped"
#: The benchmark's clients, one per robot: NAME_1, NAME_2 ...
CLIENT = "humanoid_bench_world"
#: s (wall) a graph may take to come up.
START_TIMEOUT = 180.0
#: Simulated seconds of each count's bare stepping.
RAW_SECONDS = 5.0


def counts(text: str) -> list[int]:
    """``--counts``: robot counts, comma-separated, each one a world may hold."""
    from humanoid_sim import robot_count

    return [robot_count(item) for item in text.split(",") if item.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_sim import physics_profiles

    parser.add_argument("--robot", default=ROBOT, choices=[ROBOT], help="the robots of the world (bioloid_quadruped)")
    parser.add_argument("--counts", type=counts, default=[1, 2, 4], metavar="N,N,...",
                        help="robot counts to measure, comma-separated (1,2,4)")
    parser.add_argument("--seconds", type=positive_number, default=10.0, help="robot seconds of trot per run (10)")
    parser.add_argument("--gait", default="trot",
                        help="the gait every robot plays (trot; any of play_gait's: a gait name or a gait file)")
    parser.add_argument("--frequency", type=positive_number, default=1.0, help="the gait's frequency, Hz (1)")
    physics_profiles.add_argument(parser)
    parser.add_argument("--any-cpu", action="store_true",
                        help="let the kernel place the world's loop process on any CPU (world_on_one_cpu and "
                             "unpaced_loop_on_one_cpu false), to compare with the default: one CPU")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def world_trot(robot: str, count: int, lockstep: bool, seconds: float, frequency: float,
               folder: Path, gait: str = "trot", physics: str | None = None,
               one_cpu: bool = True) -> dict[str, Any]:
    """``count`` robots of one world playing ``gait`` at once: rate, CPU and falls; ``one_cpu``
    False lets the world's loop process run on any CPU."""
    import rclpy

    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph, process_tree
    from humanoid_experiments.bench.cpu_time import own_cpu_seconds
    from humanoid_experiments.bench.graph import log_tails_on_failure
    from humanoid_sim import sim_nodes, world_namespaces

    # each graph in namespaces of its own: nothing a graph stopped before leaves in DDS (its
    # participants' leases) mixes with the next one's
    base = f"/bench_world_{count}_{'lockstep' if lockstep else 'real_time'}"
    namespaces = [base] if count == 1 else world_namespaces(robot, base, count)
    own_context = not rclpy.ok()
    if own_context:
        rclpy.init()
    clients: list[RobotClient] = []
    try:
        nodes = sim_nodes(robot, count=count, lockstep=lockstep, namespace=base, physics_profile=physics)
        if not one_cpu:
            nodes[0].parameters.update(world_on_one_cpu=False, unpaced_loop_on_one_cpu=False)
        with Graph(nodes, log_dir=folder / "logs") as graph:
            clients = [RobotClient(f"{CLIENT}_{index}", namespace=namespace.strip("/"))
                       for index, namespace in enumerate(namespaces, 1)]
            with log_tails_on_failure(graph):
                for client in clients:
                    client.wait_for_joint_states(START_TIMEOUT)
                    client.wait_for_gait_controller(START_TIMEOUT)
            members = [pid for process in graph.processes.values() for pid in process_tree(process.pid)]
            cpu0 = {pid: own_cpu_seconds(pid) for pid in members}
            robot0, wall0 = clients[0].now(), time.monotonic()
            handles = [client.send_gait(gait, frequency, seconds) for client in clients]
            clients[0].wait_until(robot0 + seconds, timeout=100 * seconds + START_TIMEOUT)
            wall, simulated = time.monotonic() - wall0, clients[0].now() - robot0
            cpu = sum((own_cpu_seconds(pid) or start) - start for pid, start in cpu0.items() if start is not None)
            results = [client.wait_result(handle, START_TIMEOUT, "play_gait result").result
                       for client, handle in zip(clients, handles, strict=True)]
            fallen = [bool(client.fallen) for client in clients]
    finally:
        for client in clients:
            client.close()
        if own_context:
            rclpy.try_shutdown()
    from humanoid_interfaces.action import PlayGait

    fell = sum(down or result.error_code == PlayGait.Result.FELL for down, result in zip(fallen, results, strict=True))
    failed = [result.error_string for result in results
              if result.error_code not in (PlayGait.Result.SUCCESSFUL, PlayGait.Result.FELL)]
    return {"rtf": round(simulated / wall, 3), "robot_s": round(simulated, 3),
            "cpu_per_sim_s": round(cpu / simulated, 3), "fell": fell, "failed": failed}


def run(args: argparse.Namespace) -> int:
    from humanoid_description import resolve_robot
    from humanoid_sim import physics_profiles
    from humanoid_tools import play_gait

    # checked before any graph starts, as play_gait's node checks it; a file by its absolute path
    gait = play_gait.checked_gait(args.robot, args.gait, args.frequency, args.seconds)
    physics = physics_profiles.chosen(resolve_robot(args.robot), args.physics)
    load = load_average()
    raw = raw_worlds(args.robot, args.counts, physics)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench_world_") as folder:
        for lockstep in (False, True):
            for count in args.counts:
                figures = world_trot(args.robot, count, lockstep, args.seconds, args.frequency,
                                     Path(folder) / f"{count}_{'lockstep' if lockstep else 'real_time'}", gait,
                                     physics, not args.any_cpu)
                rows.append({"count": count, "mode": "lockstep" if lockstep else "real time", **figures})
    for row in rows:
        one = next((r for r in rows if r["mode"] == row["mode"] and r["count"] == 1), None)
        row["vs_one"] = round(row["rtf"] / one["rtf"], 3) if one else None
        row["vs_raw"] = round(row["rtf"] / raw[row["count"]]["raw_rtf"], 3)
    report = {"robot": args.robot, "gait": args.gait, "seconds": args.seconds, "frequency_hz": args.frequency,
              "physics": physics or physics_profiles.REFERENCE, "world_on_one_cpu": not args.any_cpu,
              "load_before": load, "load_after": load_average(), "raw": [raw[count] for count in args.counts],
              "runs": rows}
    print(json.dumps(report, indent=2) if args.json else world_text(report))
    return 0 if not any(row["failed"] for row in rows) else 1  # a fall is a figure, not a failure


def raw_worlds(robot: str, counts: list[int], physics: str | None) -> dict[int, dict[str, Any]]:
    """Each count's bare stepping: ``count`` robots standing in one world at the physics of
    profile ``physics`` (the world's), :data:`RAW_SECONDS` of it."""
    from humanoid_description import load_model
    from humanoid_experiments.bench.sim import raw_real_time_factor
    from humanoid_sim import REFERENCE, simulation_settings

    settings = simulation_settings(load_model(robot), physics or REFERENCE).sim
    runs = {count: raw_real_time_factor(robot, RAW_SECONDS, settings, count) for count in dict.fromkeys(counts)}
    return {count: {"count": count, "raw_rtf": round(run.real_time_factor, 3),
                    "raw_cpu_per_sim_s": round(run.cpu_per_sim_second, 3)} for count, run in runs.items()}


def world_text(r: dict[str, Any]) -> str:
    lines = [f"{r['robot']}: {r['gait']} at {r['frequency_hz']:g} Hz for {r['seconds']:g} s of robot time, "
             f"every robot of one world at once, physics {r['physics']}, "
             f"{'the world on one CPU' if r['world_on_one_cpu'] else 'the world on any CPU'} "
             f"(load {r['load_before'][0]:.2f} before, {r['load_after'][0]:.2f} after)"]
    for raw in r["raw"]:
        lines.append(f"  {raw['count']} robot(s), bare PyBullet stepping: real-time factor {raw['raw_rtf']:.3f}, "
                     f"{raw['raw_cpu_per_sim_s']:.2f} CPU-s per simulated s (the ceiling: one process steps the world)")
    for row in r["runs"]:
        shares = ([f"{row['vs_one']:.2f} of one robot's"] if row["vs_one"] is not None else []) + [
            f"{row['vs_raw']:.2f} of bare stepping's"]
        lines.append(f"  {row['count']} robot(s), {row['mode']}: real-time factor {row['rtf']:.3f} "
                     f"({', '.join(shares)}) over {row['robot_s']:.1f} s, "
                     f"{row['cpu_per_sim_s']:.2f} CPU-s per simulated s, fell {row['fell']} of {row['count']}"
                     + (f"; goals failed: {'; '.join(row['failed'])}" if row["failed"] else ""))
    return "\n".join(lines)
