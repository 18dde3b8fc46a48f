"""``humanoid bench balance``: does the balance monitor answer every ``joint_states`` message
at 1 kHz, and how soon.

Both parts use one sequence of configurations, measured in the same invocation:

- node (what users see): the real ``balance_monitor`` node in its own process, fed
  ``joint_states`` at ``--rate`` Hz (1000) for ``--seconds`` (10) by
  this process (no simulator: it could not publish that fast), stamped with the system
  clock. ``answered_ratio`` = balance_state messages carrying a sent stamp / messages
  sent; latency = arrival of the answer - the input's stamp (DDS both ways + the node's
  work), p50 and p99; ``node_cpu_us_per_message`` = the node process's CPU time while it
  is fed / messages answered (steadier than latencies on a busy machine: waiting for a
  core costs no CPU time).
- estimator alone: :meth:`~humanoid_core.balance.estimator.BalanceEstimator.update`
  (CoM, soles, support, polygon, margin, filter, cart-table ZMP) in this process, as
  updates per second of this thread's CPU time (waiting for a core does not count), best
  of ``--rounds`` rounds, beside the input rate. The motion moves the upper body with the
  feet still (the support is held, as while standing or waving); the ``_stepping``
  figure moves the legs too, so that the support polygon is worked out at every update
  (as while stepping).

Only the joint positions are published, so the node runs its hardware path (flat
feet, no foot sensors), like the estimator part. The load average is printed with the
figures: on a shared machine the latencies follow it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from humanoid_control.ros import topics
from humanoid_description import ROBOTS
from humanoid_experiments.bench.cpu_time import process_cpu_seconds

# rclpy, Pinocchio and the monitor are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.

#: Sampling period of the configuration sequence (s): the node part's input rate.
MOTION_PERIOD = 0.001


def motion(robot: str, count: int, stepping: bool = False) -> np.ndarray:
    """``count`` configurations (canonical order) of a smooth motion sampled at 1 kHz: every
    joint of the upper body (arms, waist, head) sways around the home pose at its own
    frequency, within its limits; the legs too when ``stepping``, else they hold still."""
    from humanoid_description import load_model

    model = load_model(robot)
    home = model.home_positions()
    t = np.arange(count)[:, None] * MOTION_PERIOD
    joints = len(home)
    frequency = 0.3 + 0.05 * np.arange(joints)
    amplitude = np.full(joints, 0.15)
    if not stepping:
        amplitude[[i for i, name in enumerate(model.joints.names) if _moves_a_foot(model, name)]] = 0.0
    return np.clip(home + amplitude * np.sin(2.0 * np.pi * frequency * t), model.joints.lower, model.joints.upper)


def _moves_a_foot(model, joint: str) -> bool:
    """Is the joint on the chain from the root to a foot?"""
    import pinocchio as pin

    pin_model = model.model
    joint_id = pin_model.getJointId(joint)
    for foot in model.config.feet.values():
        frame = pin_model.frames[pin_model.getFrameId(foot.link, pin.FrameType.BODY)]
        if joint_id in pin_model.supports[frame.parentJoint]:
            return True
    return False


# -- estimator alone ----------------------------------------------------------------------
def estimator_rate(robot: str, configurations: np.ndarray, rounds: int) -> float:
    """Best-round updates per CPU second of a fresh estimator over ``configurations``."""
    from humanoid_core.balance import BalanceEstimator, BalanceParameters
    from humanoid_description import RobotModel

    model = RobotModel(robot)
    params = BalanceParameters.for_robot(robot)
    stamps = [float(i) * MOTION_PERIOD for i in range(len(configurations))]
    rows = list(configurations)
    best = math.inf
    for _ in range(rounds):
        estimator = BalanceEstimator(model, params)
        start = time.thread_time()
        for stamp, q in zip(stamps, rows, strict=True):
            estimator.update(stamp, q)
        best = min(best, time.thread_time() - start)
    return len(rows) / best


# -- node over DDS ------------------------------------------------------------------------
def node_answers(robot: str, configurations: np.ndarray, rate: float, seconds: float,
                 log_dir: Path, namespace: str = "/") -> dict[str, float]:
    """Feed the balance_monitor node joint_states at ``rate`` for ``seconds``; count answers.
    The node and the feed run in ``namespace`` (its joint_states are not a robot's there)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from humanoid_control.nodes import balance_monitor_node_spec
    from humanoid_control.ros import seconds as to_seconds
    from humanoid_control.ros import to_time
    from humanoid_core.processes import Graph, in_namespace
    from humanoid_description import load_model
    from humanoid_interfaces.msg import BalanceState

    names = list(load_model(robot).joints.names)
    answers: dict[float, float] = {}  # input stamp -> wall time of the answer
    lock = threading.Lock()

    def on_state(msg: BalanceState) -> None:
        arrived = time.time()
        with lock:
            answers[to_seconds(msg.header.stamp)] = arrived

    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    rclpy.init()
    try:
        with Graph(in_namespace([balance_monitor_node_spec(robot)], namespace), log_dir=log_dir) as graph:
            node = rclpy.create_node("humanoid_bench_balance", namespace=namespace)
            publisher = node.create_publisher(JointState, topics.JOINT_STATES, qos)
            node.create_subscription(BalanceState, topics.BALANCE_STATE, on_state, qos)
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            spinner = threading.Thread(target=executor.spin, daemon=True)
            spinner.start()

            def publish(index: int) -> float:
                stamp = time.time()
                msg = JointState(name=names, position=configurations[index % len(configurations)].tolist())
                msg.header.stamp = to_time(stamp)
                publisher.publish(msg)
                return to_seconds(msg.header.stamp)

            # warm up: until the node answers (it loads its model first)
            deadline = time.monotonic() + 120.0
            while not answers:
                if graph.exited():
                    raise RuntimeError(f"the balance monitor exited: {graph.log_text('balance_monitor')[-2000:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError("the balance monitor did not answer within 120 s")
                publish(0)
                time.sleep(0.05)
            time.sleep(0.5)
            with lock:
                answers.clear()
            sent: list[float] = []
            period = 1.0 / rate
            monitor = graph.processes["balance_monitor"].pid
            cpu_start = process_cpu_seconds(monitor)
            start = time.perf_counter()
            for index in range(round(seconds * rate)):
                ahead = start + index * period - time.perf_counter()
                if ahead > 0.0:
                    time.sleep(ahead)
                sent.append(publish(index))
            wall = time.perf_counter() - start
            settle = time.monotonic() + 5.0
            while time.monotonic() < settle:  # stragglers
                with lock:
                    if all(s in answers for s in sent[-10:]):
                        break
                time.sleep(0.05)
            node_cpu = process_cpu_seconds(monitor) - cpu_start
            executor.shutdown(timeout_sec=1.0)
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    with lock:
        latencies = np.array([answers[s] - s for s in sent if s in answers]) * 1000.0
    answered = len(latencies)
    return {"sent": len(sent), "answered": answered, "answered_ratio": answered / len(sent),
            "input_rate_hz": len(sent) / wall, "node_cpu_us_per_message": node_cpu / max(answered, 1) * 1e6,
            "latency_p50_ms": float(np.percentile(latencies, 50)) if answered else float("nan"),
            "latency_p99_ms": float(np.percentile(latencies, 99)) if answered else float("nan")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace

    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--configurations", type=int, default=5000,
                        help="configurations of the estimator part (5000, 5 s of motion at 1 kHz)")
    parser.add_argument("--rounds", type=int, default=3, help="estimator rounds, the best one counts (3)")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate fed to the node, Hz (1000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the node is fed, s (10)")
    add_own_robot_namespace(parser, "run the balance monitor and the joint_states it is fed under NAME (they stand "
                                    "for a robot there: refused where a robot runs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 1 or args.configurations < 10 or args.rate <= 0 or args.seconds <= 0:
        print("humanoid bench balance: error: --rounds >= 1, --configurations >= 10, --rate and --seconds > 0",
              file=sys.stderr)
        return 2
    from humanoid_bringup import free_namespace

    namespace = free_namespace(args.namespace)
    standing = motion(args.robot, args.configurations)
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_balance_") as logs:
        node = node_answers(args.robot, standing, args.rate, args.seconds, Path(logs), namespace)
    still = estimator_rate(args.robot, standing, args.rounds)
    stepping = estimator_rate(args.robot, motion(args.robot, args.configurations, stepping=True), args.rounds)
    result = {"robot": args.robot,
              "answered_ratio": round(node["answered_ratio"], 4), "sent": node["sent"], "answered": node["answered"],
              "input_rate_hz": round(node["input_rate_hz"], 1),
              "latency_p50_ms": round(node["latency_p50_ms"], 3), "latency_p99_ms": round(node["latency_p99_ms"], 3),
              "node_cpu_us_per_message": round(node["node_cpu_us_per_message"], 1),
              "estimator_updates_per_s": round(still), "estimator_updates_per_s_stepping": round(stepping),
              "load_average": round(os.getloadavg()[0], 2)}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.robot}: balance_monitor node fed joint_states at {node['input_rate_hz']:.0f} Hz for "
          f"{args.seconds:g} s over DDS (load average {result['load_average']:.2f})")
    print(f"  answered {node['answered']} of {node['sent']}   answered_ratio {node['answered_ratio']:.4f}")
    print(f"  latency (input stamp to answer)  p50 {node['latency_p50_ms']:.3f} ms   "
          f"p99 {node['latency_p99_ms']:.3f} ms")
    print(f"  node CPU time                    {node['node_cpu_us_per_message']:.0f} us per message")
    print(f"estimator alone ({args.configurations} configurations, best of {args.rounds} rounds, CPU time), "
          f"against the {args.rate:g} Hz input")
    print(f"  feet still     {still:8.0f} updates/s   {still / args.rate:6.1f} x the input rate")
    print(f"  legs stepping  {stepping:8.0f} updates/s   {stepping / args.rate:6.1f} x the input rate")
    return 0
