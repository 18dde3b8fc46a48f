"""``humanoid bench sim``: real-time factor of the simulation node against raw PyBullet.

Both run in the same invocation, on the same machine, with the same URDF and physics
step (1 kHz), so their ratio is meaningful on a shared, noisy machine:

- raw: a bare PyBullet loop (the robot standing, default motors holding), as fast as
  possible — the ceiling for any node built on PyBullet;
- node: the real simulation node (``humanoid_sim``) in its own process, running as
  fast as possible with its servo models, control loop, ``joint_states`` at 100 Hz
  and one subscriber (this process), measured by the simulated time its
  ``joint_states`` stamps advance per wall-clock second. The node fills and publishes
  only topics someone subscribes to (``humanoid_control.ros.matched_publisher``): here
  ``joint_states`` alone. ``--subscribe-all`` subscribes to everything it publishes
  per cycle (IMU, feet, /clock, ground truth, fallen), the cost of a full graph.

Raw and node runs alternate (raw, node, raw, node, ..., raw) and each side reports its
best run: on a shared machine other load only ever slows a run down, so the best of a
few interleaved runs is the fairest estimate of each, and the ratio compares like
with like. Beside that best-of ``ratio``, ``ratio_median`` is the median over the
rounds of each node run against the mean of the two raw runs around it: the best-of
ratio takes each side's luckiest run, which may come from different moments of the
machine's load, while a round compares runs seconds apart (both are printed, the runs
too, so neither hides the spread).

The raw loop builds its world by hand (plane, URDF, home pose, position motors at the
model's effort limits) rather than with the node's driver (ground friction, solver
settings, servo gains from the robot's parameter file): measured 2026-11-24, bare
stepping of the driver's world and of this one run at the same rate (3.02 / 2.98,
3.11 / 3.12, 3.16 / 2.92 times real time, alternating), so the ceiling is the same.

On a machine so busy that wall-clock rates mean little, the CPU time each side spends
per simulated second is the steadier figure: ``cpu_ratio`` = raw CPU seconds / node CPU
seconds per simulated second (the node's whole process: every thread, DDS included),
the share of the node's CPU that goes into physics.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from humanoid_control.ros import topics
from humanoid_core.processes import Graph
from humanoid_description import ROBOTS
from humanoid_experiments.bench.cpu_time import process_cpu_seconds
from humanoid_sim import sim_nodes

if TYPE_CHECKING:
    from collections.abc import Iterator

    from humanoid_sim import SimParameters

# PyBullet, Pinocchio and rclpy are imported where they are used: the `humanoid` command
# builds its parser from this module and must start fast, also without PyBullet.

PHYSICS_RATE = 1000.0
PUBLISH_RATE = 100.0


@dataclass(frozen=True)
class Run:
    """One run: simulated seconds per wall second, and CPU seconds per simulated second."""

    real_time_factor: float
    cpu_per_sim_second: float


def raw_real_time_factor(robot: str, sim_seconds: float, physics: SimParameters | None = None,
                          count: int = 1) -> Run:
    """Bare PyBullet stepping of the robot's URDF: at 1 kHz with PyBullet's engine defaults, or
    at the rate and with the engine settings of ``physics`` (a physics profile's); ``count``
    robots in one world, seated as ``humanoid sim --count`` seats them (:func:`raw_world`)."""
    import pybullet

    rate = PHYSICS_RATE if physics is None else physics.physics_rate
    with raw_world(robot, physics, count) as client:
        steps = int(sim_seconds * rate)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            pybullet.stepSimulation(physicsClientId=client)
        simulated = steps / rate
        return Run(simulated / (time.perf_counter() - start), (time.process_time() - cpu) / simulated)


@contextlib.contextmanager
def raw_world(robot: str, physics: SimParameters | None = None, count: int = 1) -> Iterator[int]:
    """A bare PyBullet world (its client), ground and ``count`` robots standing in the home
    pose on position motors, each at its seat of a world (:class:`~humanoid_sim.WorldSeat`,
    the default spacing): what the simulation node steps, with none of its servo models, loop
    or publishing."""
    import pinocchio as pin
    import pybullet

    from humanoid_description import load_model, urdf_xml
    from humanoid_sim import DEFAULT_SPACING, WorldSeat

    model = load_model(robot)
    rate = PHYSICS_RATE if physics is None else physics.physics_rate
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        pybullet.setTimeStep(1.0 / rate, physicsClientId=client)
        if physics is not None:
            pybullet.setPhysicsEngineParameter(**physics.engine_settings(), physicsClientId=client)
        plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
        pybullet.createMultiBody(0.0, plane, physicsClientId=client)
        home = model.home_positions()
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{robot}.urdf"
            path.write_text(urdf_xml(robot))
            bodies = [pybullet.loadURDF(str(path), flags=pybullet.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
                      for _ in range(count)]
        # the same URDF each time: one standing placement and one joint order serve every robot
        info = pybullet.getDynamicsInfo(bodies[0], -1, physicsClientId=client)
        inertial = pin.XYZQUATToSE3(list(info[3]) + list(info[4]))
        placement = pin.SE3ToXYZQUAT(model.standing_base(home) * inertial)
        ids = {pybullet.getJointInfo(bodies[0], i, physicsClientId=client)[1].decode(): i
               for i in range(pybullet.getNumJoints(bodies[0], physicsClientId=client))}
        joint_ids = [ids[name] for name in model.joints.names]
        for index, body in enumerate(bodies):
            x, y = WorldSeat(index, count, DEFAULT_SPACING).offset
            position = [placement[0] + x, placement[1] + y, placement[2]]
            pybullet.resetBasePositionAndOrientation(body, position, placement[3:], physicsClientId=client)
            for joint_id, value in zip(joint_ids, home, strict=True):
                pybullet.resetJointState(body, joint_id, float(value), physicsClientId=client)
            pybullet.setJointMotorControlArray(body, joint_ids, pybullet.POSITION_CONTROL, targetPositions=home,
                                               forces=list(model.joints.effort), physicsClientId=client)
        yield client
    finally:
        pybullet.disconnect(physicsClientId=client)


def subscribe_all(node, robot: str) -> list[str]:
    """Subscribe ``node`` to every topic the simulation node publishes per control cycle
    besides joint_states; returns the topic names."""
    from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu
    from std_msgs.msg import Bool

    from humanoid_description import load_config

    topics = {"imu/data": Imu, "clock": Clock, "ground_truth/base_pose": PoseStamped,
              "ground_truth/base_twist": TwistStamped, "fallen": Bool}
    for side in load_config(robot).feet:
        topics |= {f"{side}_foot/wrench": WrenchStamped, f"{side}_foot/contact": Bool}
    for topic, kind in topics.items():
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT) if topic == "clock" else 10
        node.create_subscription(kind, topic, lambda _msg: None, qos)
    return sorted(topics)


def node_real_time_factor(robot: str, sim_seconds: float, log_dir: Path, every_topic: bool = False,
                          namespace: str = "/") -> Run:
    """The simulation node, seen by one subscriber (records the wall time and stamp of
    every joint_states message; the node process's CPU time between two of them), which
    also subscribes to every per-cycle topic if ``every_topic``; both in ``namespace``."""
    import rclpy
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import seconds

    samples: list[tuple[float, float]] = []

    def spin_until(node, done, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no progress of the simulation node within {timeout:g} s")
            rclpy.spin_once(node, timeout_sec=0.1)

    nodes = sim_nodes(robot, real_time_factor=0.0, publish_rate=PUBLISH_RATE, namespace=namespace)
    nodes = [n for n in nodes if n.name == "humanoid_sim"]  # the simulation node alone
    rclpy.init()
    try:
        with Graph(nodes, log_dir=log_dir) as graph:
            pid = graph.processes[nodes[0].name].pid
            node = rclpy.create_node("humanoid_bench", namespace=namespace)
            node.create_subscription(JointState, topics.JOINT_STATES,
                                     lambda msg: samples.append((time.perf_counter(), seconds(msg.header.stamp))), 10)
            if every_topic:
                subscribe_all(node, robot)
            spin_until(node, lambda: samples and samples[-1][1] > 1.0, 120.0)  # warm up
            wall0, stamp0 = samples[-1]
            cpu0 = process_cpu_seconds(pid)
            spin_until(node, lambda: samples[-1][1] >= stamp0 + sim_seconds, 600.0)
            wall1, stamp1 = samples[-1]
            cpu1 = process_cpu_seconds(pid)
            node.destroy_node()
            return Run((stamp1 - stamp0) / (wall1 - wall0), (cpu1 - cpu0) / (stamp1 - stamp0))
    finally:
        rclpy.try_shutdown()


def median_round_ratio(node_runs: list[float], raw_runs: list[float]) -> float:
    """Median over the rounds of node run i / the mean of raw runs i and i + 1 (the runs
    alternate raw, node, raw, ..., so each node run sits between two raw runs)."""
    if len(raw_runs) != len(node_runs) + 1:
        raise ValueError(f"{len(node_runs)} node runs need {len(node_runs) + 1} raw runs around them, "
                         f"got {len(raw_runs)}")
    return statistics.median(node / (0.5 * (before + after))
                             for node, before, after in zip(node_runs, raw_runs[:-1], raw_runs[1:], strict=True))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace

    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per run (10)")
    parser.add_argument("--rounds", type=int, default=3, help="node runs, each between two raw runs (3)")
    parser.add_argument("--subscribe-all", action="store_true",
                        help="subscribe to every topic the node publishes per cycle, not joint_states alone")
    add_own_robot_namespace(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 1 or args.seconds <= 0:
        print("humanoid bench sim: error: --rounds must be >= 1 and --seconds > 0", file=sys.stderr)
        return 2
    from humanoid_bringup import free_namespace

    namespace = free_namespace(args.namespace)  # the node runs there (refused there if taken)
    raw_runs = [raw_real_time_factor(args.robot, args.seconds)]
    node_runs = []
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_") as logs:
        for round_ in range(args.rounds):
            node_runs.append(node_real_time_factor(args.robot, args.seconds, Path(logs) / str(round_),
                                                   args.subscribe_all, namespace))
            raw_runs.append(raw_real_time_factor(args.robot, args.seconds))
    raw, node = max(r.real_time_factor for r in raw_runs), max(r.real_time_factor for r in node_runs)
    ratio_median = median_round_ratio([r.real_time_factor for r in node_runs],
                                      [r.real_time_factor for r in raw_runs])
    cpu_raw = min(r.cpu_per_sim_second for r in raw_runs)
    cpu_node = min(r.cpu_per_sim_second for r in node_runs)
    # a run shorter than a few clock ticks (/proc counts CPU in 10 ms ticks) may count none
    cpu_ratio = round(cpu_raw / cpu_node, 3) if cpu_node > 0.0 else None
    result = {"robot": args.robot, "physics_rate_hz": PHYSICS_RATE, "publish_rate_hz": PUBLISH_RATE,
              "subscribed": "every per-cycle topic" if args.subscribe_all else "joint_states",
              "rtf_node": round(node, 3), "rtf_raw": round(raw, 3), "ratio": round(node / raw, 3),
              "ratio_median": round(ratio_median, 3),
              "rtf_node_runs": [round(r.real_time_factor, 3) for r in node_runs],
              "rtf_raw_runs": [round(r.real_time_factor, 3) for r in raw_runs],
              "cpu_node_per_sim_s": round(cpu_node, 4), "cpu_raw_per_sim_s": round(cpu_raw, 4),
              "cpu_ratio": cpu_ratio}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{args.robot}: physics {PHYSICS_RATE:g} Hz, joint_states {PUBLISH_RATE:g} Hz, one subscriber "
              f"({'to every per-cycle topic' if args.subscribe_all else 'to joint_states alone'})")
        print(f"  raw PyBullet stepping   real-time factor {raw:7.2f}  (runs: "
              f"{', '.join(f'{r.real_time_factor:.2f}' for r in raw_runs)}), CPU {cpu_raw:.3f} s per simulated s")
        print(f"  simulation node         real-time factor {node:7.2f}  (runs: "
              f"{', '.join(f'{r.real_time_factor:.2f}' for r in node_runs)}), CPU {cpu_node:.3f} s per simulated s")
        print(f"  node / raw              {node / raw:7.3f}   (best run of each; median of the rounds "
              f"{ratio_median:.3f}; CPU raw / node {'n/a' if cpu_ratio is None else f'{cpu_ratio:.3f}'})")
    return 0
