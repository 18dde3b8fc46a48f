"""The two sides of ``humanoid bench messages``, each run as its own process:

- ``receiver``: one node taking ``--topic`` on rclpy's EventsExecutor (as every node of the
  stack does), counting the messages; it prints ``ready``, then answers each ``count`` line
  on its standard input with the number taken so far;
- ``sender``: one node publishing ``--count`` messages on ``--topic`` once ``--receivers``
  subscriptions are matched, first one every ``--period`` seconds (``isolated``), then back
  to back (``burst``); it prints ``start PHASE`` and ``done PHASE CPU_SECONDS`` (its own CPU
  time in its ``publish`` calls, summed: the pauses between them left out) and waits for a
  ``next`` line before the next phase.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import threading
import time

#: Joints of the JointState messages sent (the HOAP-2 has 25).
JOINTS = 25
PHASES = ("isolated", "burst")
#: The message types sent, by the name the command line gives them.
TYPES = ("bool", "joint_state")


def message_type(name: str):
    if name == "bool":
        from std_msgs.msg import Bool

        return Bool
    from sensor_msgs.msg import JointState

    return JointState


def qos():
    """Reliable and deep enough for a burst: every message is taken."""
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=10000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def receive(topic: str, type_name: str) -> int:
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node

    from humanoid_control.ros import spin_while

    rclpy.init()
    node = Node("bench_message_receiver", enable_rosout=False)
    taken = [0]

    def take(_msg) -> None:
        taken[0] += 1

    node.create_subscription(message_type(type_name), topic, take, qos())
    executor = EventsExecutor()
    executor.add_node(node)

    def answer_counts() -> None:
        for line in sys.stdin:
            if line.strip() == "count":
                print(f"{taken[0]} {cpu_seconds():.6f}", flush=True)
        os._exit(0)  # stdin closed: the benchmark is over

    threading.Thread(target=answer_counts, daemon=True).start()
    print("ready", flush=True)
    spin_while(executor, lambda: True)  # until stdin closes (the stack's nodes spin the same way)
    return 0


def send(topic: str, type_name: str, receivers: int, count: int, period: float) -> int:
    import rclpy
    from rclpy.node import Node

    rclpy.init()
    node = Node("bench_message_sender", enable_rosout=False)
    kind = message_type(type_name)
    publisher = node.create_publisher(kind, topic, qos())
    deadline = time.monotonic() + 60.0
    while publisher.get_subscription_count() < receivers:
        if time.monotonic() > deadline:
            print(f"only {publisher.get_subscription_count()} of {receivers} receivers matched", flush=True)
            return 1
        time.sleep(0.05)
    time.sleep(1.0)  # discovery settles
    msg = kind()
    if type_name == "joint_state":
        msg.name = [f"joint_{i}" for i in range(JOINTS)]
        msg.position = msg.velocity = msg.effort = [0.0] * JOINTS
    for phase in PHASES:
        print(f"start {phase}", flush=True)
        pause = period if phase == "isolated" else 0.0
        spent = 0.0
        for _ in range(count):
            started = cpu_seconds()
            publisher.publish(msg)
            spent += cpu_seconds() - started
            if pause:
                time.sleep(pause)
        print(f"done {phase} {spent:.6f}", flush=True)
        if sys.stdin.readline().strip() != "next":
            return 0
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("role", choices=("receiver", "sender"))
    parser.add_argument("--topic", default="/bench/messages")
    parser.add_argument("--type", choices=TYPES, default="bool")
    parser.add_argument("--receivers", type=int, default=1)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--period", type=float, default=0.01)
    args = parser.parse_args(argv)
    if args.role == "receiver":
        return receive(args.topic, args.type)
    return send(args.topic, args.type, args.receivers, args.count, args.period)


if __name__ == "__main__":
    sys.exit(main())
