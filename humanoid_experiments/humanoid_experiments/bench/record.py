"""``humanoid bench record``: does the recorder keep up with a 1 kHz topic, and what does
it cost next to a bare rosbags write loop of the same messages?

- recorder: the real ``humanoid record`` command in its own process records one topic
  while this process publishes ``JointState`` messages of the robot's joints (positions,
  velocities, efforts; header stamp and frame_id carry the sequence number) at ``rate``
  for ``seconds``, with the robot interface's QoS (reliable, depth 10). When the last
  one is acknowledged the recorder is stopped (SIGTERM, as a user's Ctrl-C) and the bag is
  read back with rosbags: ``written`` messages, in order, of ``sent``.
  ``written_ratio`` = written / sent (goal 1.0).
- baseline: the same serialized messages written by a bare rosbags ``Writer`` loop in
  this process. ``cost_ratio`` = the recorder process's CPU time / the bare loop's CPU
  time: what subscribing, queueing and the writer thread add to the writing itself.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from humanoid_description import ROBOTS
from humanoid_experiments.bench.cpu_time import process_cpu_seconds

TOPIC = "/bench/joint_states"
START_TIMEOUT = 60.0  # s for the recorder to come up and subscribe (a loaded machine)
STOP_TIMEOUT = 60.0


@dataclass(frozen=True)
class RecordBenchmark:
    """The JSON output."""

    sent: int
    written: int
    written_ratio: float
    received: int  # as the recorder counted
    in_order: bool
    publish_rate_hz: float  # achieved
    recorder_cpu_s: float  # while recording (from its subscription to its exit): start-up excluded
    recorder_startup_cpu_s: float
    bare_write_cpu_s: float
    bare_write_wall_s: float
    cost_ratio: float  # recorder_cpu_s / bare_write_cpu_s


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="hoap2", choices=ROBOTS, help="whose joints the messages carry (hoap2)")
    parser.add_argument("--rate", type=float, default=1000.0, help="publishing rate, Hz (1000)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to publish (10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def messages(robot: str, count: int) -> list:
    from sensor_msgs.msg import JointState

    from humanoid_description import load_config

    joints = list(load_config(robot).joints)
    result = []
    for i in range(count):
        msg = JointState(name=joints, position=[0.001 * i] * len(joints), velocity=[0.1] * len(joints),
                         effort=[0.5] * len(joints))
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 1_000_000, 1_000_000_000)
        msg.header.frame_id = str(i)
        result.append(msg)
    return result


def bare_write(serialized: list[bytes], folder: Path) -> tuple[float, float]:
    """(CPU s, wall s) of a bare rosbags Writer loop writing ``serialized`` as JointState."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from humanoid_tools.recording import message_type

    kind = message_type("sensor_msgs/msg/JointState")
    cpu, wall = time.process_time(), time.perf_counter()
    with Writer(folder / "bare", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection(TOPIC, kind.name, msgdef=kind.definition, rihs01=kind.type_hash)
        for i, data in enumerate(serialized):
            writer.write(connection, i * 1_000_000, data)
    return time.process_time() - cpu, time.perf_counter() - wall


def read_back(bag: Path) -> tuple[list[int], int]:
    """Sequence numbers of the messages in the bag (rosbags), and the recorder's received count."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    from humanoid_tools.recording import custom_data

    store = get_typestore(Stores.ROS2_KILTED)
    with Reader(bag) as reader:
        connections = [c for c in reader.connections if c.topic == TOPIC]
        sequence = [int(store.deserialize_cdr(raw, c.msgtype).header.frame_id)
                    for c, _t, raw in reader.messages(connections=connections)]
    received = json.loads(custom_data(bag).get("received_messages", "{}")).get(TOPIC, 0)
    return sequence, received


def run(args: argparse.Namespace) -> int:
    import rclpy
    from rclpy.node import Node
    from rclpy.serialization import serialize_message

    if not (args.rate > 0 and args.seconds > 0):
        print("humanoid bench record: --rate and --seconds must be positive", file=sys.stderr)
        return 2
    count = round(args.rate * args.seconds)
    batch = messages(args.robot, count)
    serialized = [serialize_message(m) for m in batch]
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_record_") as folder:
        bag = Path(folder) / "recorded"
        bare_cpu, bare_wall = bare_write(serialized, Path(folder))
        recorder = subprocess.Popen(
            [sys.executable, "-m", "humanoid_bringup.cli", "record", "--output", str(bag), "--topics", TOPIC],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        output: list[str] = []
        reader = threading.Thread(target=lambda: output.extend(recorder.stdout), daemon=True)
        reader.start()
        rclpy.init()
        try:
            node = Node("bench_record_publisher")
            publisher = node.create_publisher(type(batch[0]), TOPIC, 10)
            deadline = time.monotonic() + START_TIMEOUT
            while publisher.get_subscription_count() == 0:
                if time.monotonic() > deadline or recorder.poll() is not None:
                    raise RuntimeError(f"the recorder did not subscribe within {START_TIMEOUT:g} s: "
                                       f"{recorder.stderr.read() if recorder.poll() is not None else ''}")
                time.sleep(0.01)
            startup_cpu = process_cpu_seconds(recorder.pid)
            start = time.perf_counter()
            for i, msg in enumerate(batch):
                delay = start + i / args.rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                publisher.publish(msg)
            elapsed = time.perf_counter() - start
            publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=STOP_TIMEOUT))
            node.destroy_node()
        finally:
            rclpy.try_shutdown()
            recorder.send_signal(signal.SIGTERM)
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        recorder.wait(STOP_TIMEOUT)
        reader.join(5.0)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        total_cpu = (usage.ru_utime + usage.ru_stime) - (usage_before.ru_utime + usage_before.ru_stime)
        recorder_cpu = total_cpu - startup_cpu
        if recorder.returncode != 0:
            print("".join(output) + recorder.stderr.read(), file=sys.stderr)
            print(f"humanoid bench record: the recorder exited with status {recorder.returncode}", file=sys.stderr)
            return 1
        sequence, received = read_back(bag)
    result = RecordBenchmark(
        sent=count, written=len(sequence), written_ratio=round(len(sequence) / count, 6), received=received,
        in_order=sequence == sorted(sequence) and len(set(sequence)) == len(sequence),
        publish_rate_hz=round(count / elapsed, 1), recorder_cpu_s=round(recorder_cpu, 3),
        recorder_startup_cpu_s=round(startup_cpu, 3),
        bare_write_cpu_s=round(bare_cpu, 3), bare_write_wall_s=round(bare_wall, 3),
        cost_ratio=round(recorder_cpu / bare_cpu, 2) if bare_cpu > 0 else float("inf"))
    if args.json:
        print(json.dumps(asdict(result)))
    else:
        print(f"recorder: {result.written} of {result.sent} messages in the bag (written_ratio "
              f"{result.written_ratio:.4f}), {result.received} received, in order: {result.in_order}; "
              f"published at {result.publish_rate_hz:.0f} Hz")
        print(f"cost: the recorder used {result.recorder_cpu_s:.2f} s CPU while recording ("
              f"{1e6 * result.recorder_cpu_s / max(result.written, 1):.0f} us per message; start-up "
              f"{result.recorder_startup_cpu_s:.2f} s not counted); a bare rosbags write loop of the same messages "
              f"{result.bare_write_cpu_s:.3f} s CPU ({1e6 * result.bare_write_cpu_s / count:.0f} us per message, "
              f"{result.bare_write_wall_s:.3f} s wall): cost_ratio {result.cost_ratio:.1f}")
    return 0 if result.written == result.sent else 1
