"""``humanoid bench balance``: the balance monitor's cost against bare Pinocchio, and the node
answering a 1 kHz joint_states stream over DDS.

Both parts use one sequence of configurations, measured in the same invocation:

- core: the monitor's whole per-update computation
  (:meth:`~humanoid_control.balance.estimator.BalanceEstimator.update`: CoM, soles,
  support, polygon, margin, filter, cart-table ZMP) against bare
  ``pinocchio.centerOfMass`` on the same configurations, in the same process.
  Rounds alternate (bare, core, bare, core, ..., bare) and each side keeps its best
  round (other load only slows a round down). ``core_ratio`` = core throughput / bare
  throughput. The motion moves the upper body with the feet still (the support
  polygon is reused, as while standing or waving); ``core_ratio_stepping`` moves the
  legs too, so that the polygon is rebuilt at every update (as while stepping).
- node: the real ``balance_monitor`` node in its own process, fed ``joint_states`` at
  ``--rate`` Hz (1000) for ``--seconds`` (10) by this process (no simulator: it could
  not publish that fast), stamped with the system clock. ``answered_ratio`` =
  balance_state messages carrying a sent stamp / messages sent; latency = arrival of the
  answer - the input's stamp (DDS both ways + the node's work), p50 and p99.

Only the joint positions are published, so the node runs its hardware path (flat
feet, no foot sensors), like the core part.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from humanoid_description.robots import ROBOTS

# rclpy, Pinocchio and the monitor are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.

#: Sampling period of the configuration sequence (s): the node part's input rate.
MOTION_PERIOD = 0.001


def motion(robot: str, count: int, stepping: bool = False) -> np.ndarray:
    """``count`` configurations (canonical order) of a smooth motion sampled at 1 kHz: every
    joint of the upper body (arms, waist, head) sways around the home pose at its own
    frequency, within its limits; the legs too when ``stepping``, else they hold still."""
    from humanoid_description.model import load_model

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


# -- core ---------------------------------------------------------------------------------
def core_ratio(robot: str, configurations: np.ndarray, rounds: int) -> dict[str, float]:
    """Best-round seconds per update of bare Pinocchio CoM and of the monitor core."""
    import pinocchio as pin

    from humanoid_control.balance.estimator import BalanceEstimator
    from humanoid_control.balance.parameters import BalanceParameters
    from humanoid_description.model import RobotModel

    model = RobotModel(robot)
    params = BalanceParameters.for_robot(robot)
    full = [model.configuration(q) for q in configurations]
    stamps = [float(i) * MOTION_PERIOD for i in range(len(configurations))]
    rows = list(configurations)
    pin_model, data = model.model, model.model.createData()

    def bare() -> float:
        start = time.perf_counter()
        for q in full:
            pin.centerOfMass(pin_model, data, q, False)
        return time.perf_counter() - start

    def core() -> float:
        estimator = BalanceEstimator(model, params)
        start = time.perf_counter()
        for stamp, q in zip(stamps, rows, strict=True):
            estimator.update(stamp, q)
        return time.perf_counter() - start

    bare_runs, core_runs = [bare()], []
    for _ in range(rounds):
        core_runs.append(core())
        bare_runs.append(bare())
    count = len(rows)
    return {"bare_us": min(bare_runs) / count * 1e6, "core_us": min(core_runs) / count * 1e6,
            "ratio": min(bare_runs) / min(core_runs)}


# -- node over DDS ------------------------------------------------------------------------
def node_answers(robot: str, configurations: np.ndarray, rate: float, seconds: float,
                 log_dir: Path) -> dict[str, float]:
    """Feed the balance_monitor node joint_states at ``rate`` for ``seconds``; count answers."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    from humanoid_control.nodes.specs import balance_monitor_node_spec
    from humanoid_control.processes.node_graph import Graph
    from humanoid_control.ros.ros_time import seconds as to_seconds
    from humanoid_control.ros.ros_time import to_time
    from humanoid_description.model import load_model
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
        with Graph([balance_monitor_node_spec(robot)], log_dir=log_dir) as graph:
            node = rclpy.create_node("humanoid_bench_balance")
            publisher = node.create_publisher(JointState, "joint_states", qos)
            node.create_subscription(BalanceState, "balance_state", on_state, qos)
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
            executor.shutdown(timeout_sec=1.0)
            node.destroy_node()
    finally:
        rclpy.try_shutdown()
    with lock:
        latencies = np.array([answers[s] - s for s in sent if s in answers]) * 1000.0
    answered = len(latencies)
    return {"sent": len(sent), "answered": answered, "answered_ratio": answered / len(sent),
            "input_rate_hz": len(sent) / wall,
            "latency_p50_ms": float(np.percentile(latencies, 50)) if answered else float("nan"),
            "latency_p99_ms": float(np.percentile(latencies, 99)) if answered else float("nan")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--configurations", type=int, default=5000,
                        help="configurations of the core comparison (5000, 5 s of motion at 1 kHz)")
    parser.add_argument("--rounds", type=int, default=3, help="core rounds, each between two bare rounds (3)")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate fed to the node, Hz (1000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the node is fed, s (10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.rounds < 1 or args.configurations < 10 or args.rate <= 0 or args.seconds <= 0:
        print("humanoid bench balance: error: --rounds >= 1, --configurations >= 10, --rate and --seconds > 0",
              file=sys.stderr)
        return 2
    standing = motion(args.robot, args.configurations)
    core = core_ratio(args.robot, standing, args.rounds)
    stepping = core_ratio(args.robot, motion(args.robot, args.configurations, stepping=True), args.rounds)
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_balance_") as logs:
        node = node_answers(args.robot, standing, args.rate, args.seconds, Path(logs))
    result = {"robot": args.robot,
              "core_ratio": round(core["ratio"], 3), "core_us": round(core["core_us"], 2),
              "bare_com_us": round(core["bare_us"], 2), "core_ratio_stepping": round(stepping["ratio"], 3),
              "core_stepping_us": round(stepping["core_us"], 2),
              "answered_ratio": round(node["answered_ratio"], 4), "sent": node["sent"], "answered": node["answered"],
              "input_rate_hz": round(node["input_rate_hz"], 1),
              "latency_p50_ms": round(node["latency_p50_ms"], 3), "latency_p99_ms": round(node["latency_p99_ms"], 3)}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.robot}: balance monitor core vs bare Pinocchio CoM ({args.configurations} configurations, "
          f"best of {args.rounds} rounds)")
    print(f"  bare pinocchio.centerOfMass   {core['bare_us']:8.2f} us per configuration")
    print(f"  monitor core (feet still)     {core['core_us']:8.2f} us   core_ratio {core['ratio']:.3f}")
    print(f"  monitor core (legs stepping)  {stepping['core_us']:8.2f} us   core_ratio_stepping "
          f"{stepping['ratio']:.3f}")
    print(f"node fed joint_states at {node['input_rate_hz']:.0f} Hz for {args.seconds:g} s over DDS")
    print(f"  answered {node['answered']} of {node['sent']}   answered_ratio {node['answered_ratio']:.4f}")
    print(f"  latency (input stamp to answer)  p50 {node['latency_p50_ms']:.3f} ms   "
          f"p99 {node['latency_p99_ms']:.3f} ms")
    return 0
