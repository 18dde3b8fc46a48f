"""``humanoid bench messages``: the CPU one ROS message costs its sender and each of its
receivers on this machine (rclpy, Fast DDS over shared memory, the EventsExecutor every node
of the stack spins), sent one at a time at a lockstep state's pace, against the same messages
sent back to back.

One sender process publishes ``--count`` messages to ``--receivers`` receiver processes, first
one every ``--period`` seconds (``isolated``: each message wakes every process it touches, as a
lockstep state's messages do), then in a burst (the wake-ups shared by many messages). The
sender's CPU per message is its own CPU time in its ``publish`` calls, read around each (the
pauses' cost, once estimated apart and subtracted from the phase's, outweighed the cost of
40 messages beside busy processes and left nothing); a receiver's is its own CPU time from
the phase's start until it has taken every message.
``isolated / burst`` says how much of a message's cost is waking processes rather than
moving data. With the number of messages a lockstep state makes (docs/lockstep.md, "Speed"),
this says how much of the lockstep graph's CPU its messages take.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass

from humanoid_core.processes import tethered_child
from humanoid_experiments.bench import message_peer
from humanoid_experiments.bench.message_peer import PHASES, TYPES

PEER = message_peer.__name__

#: s the receivers may take to have every message of a phase.
PATIENCE = 120.0


@dataclass(frozen=True)
class PhaseCost:
    """CPU per message (µs) of one phase."""

    sender_us: float
    receiver_us: float  # the median over the receivers
    receiver_us_each: list[float]


@dataclass(frozen=True)
class MessageCost:
    """The JSON output, for one message type."""

    type: str
    receivers: int
    count: int
    period_s: float
    isolated: PhaseCost
    burst: PhaseCost
    isolated_over_burst_sender: float
    isolated_over_burst_receiver: float
    load_before: float  # 1-minute load average when the run started


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", choices=(*TYPES, "both"), default="both",
                        help="std_msgs/Bool, a 25-joint sensor_msgs/JointState, or both in turn (both)")
    parser.add_argument("--receivers", type=int, default=4,
                        help="receiver processes (4; a lockstep state's joint_states has 7)")
    parser.add_argument("--count", type=int, default=1000, help="messages per phase (1000)")
    parser.add_argument("--period", type=float, default=0.01,
                        help="s between two isolated messages (0.01: a state of the 100 Hz joint_states)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per message type")


def per_message_us(cpu_seconds: float, count: int) -> float:
    return cpu_seconds / count * 1e6


def ratio(isolated: float, burst: float) -> float:
    return round(isolated / burst, 2) if burst > 0.0 else float("inf")


def _start(stack: ExitStack, arguments: list[str]) -> subprocess.Popen:
    command, env = tethered_child(PEER, arguments)
    process = subprocess.Popen(command, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stack.callback(_stop, process)
    return process


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.stdin.close()
        try:
            process.wait(10.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _line(process: subprocess.Popen, what: str) -> str:
    line = process.stdout.readline().strip()
    if not line:
        raise RuntimeError(f"{what}: the process ended (exit {process.wait()})")
    return line


def _taken(receiver: subprocess.Popen) -> tuple[int, float]:
    """The messages a receiver has taken so far, and its CPU seconds."""
    receiver.stdin.write("count\n")
    receiver.stdin.flush()
    taken, cpu = _line(receiver, "a receiver's count").split()
    return int(taken), float(cpu)


def _wait_for_all(receivers: list[subprocess.Popen], expected: int) -> list[float]:
    """Each receiver's CPU seconds once it has taken ``expected`` messages in all."""
    deadline = time.monotonic() + PATIENCE
    cpu: list[float | None] = [None] * len(receivers)
    while None in cpu:
        for i, receiver in enumerate(receivers):
            if cpu[i] is None:
                taken, seconds = _taken(receiver)
                if taken >= expected:
                    cpu[i] = seconds
        if None in cpu:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the receivers did not take {expected} messages within {PATIENCE:g} s")
            time.sleep(0.02)
    return cpu


def measure(type_name: str, receivers: int, count: int, period: float) -> MessageCost:
    load_before = os.getloadavg()[0]
    topic = f"/bench/messages_{os.getpid()}"
    with ExitStack() as stack:
        peers = [_start(stack, ["receiver", "--topic", topic, "--type", type_name]) for _ in range(receivers)]
        for peer in peers:
            if _line(peer, "a receiver") != "ready":
                raise RuntimeError("a receiver did not start")
        sender = _start(stack, ["sender", "--topic", topic, "--type", type_name, "--receivers", str(receivers),
                                "--count", str(count), "--period", str(period)])
        phases: dict[str, PhaseCost] = {}
        for number, phase in enumerate(PHASES, start=1):
            started = _line(sender, "the sender")
            if started != f"start {phase}":
                raise RuntimeError(f"the sender did not start the {phase} phase: {started}")
            before = [_taken(peer)[1] for peer in peers]
            done = _line(sender, "the sender").split()
            sender_cpu = float(done[2])
            after = _wait_for_all(peers, number * count)
            each = [per_message_us(a - b, count) for a, b in zip(after, before, strict=True)]
            phases[phase] = PhaseCost(sender_us=round(per_message_us(sender_cpu, count), 1),
                                      receiver_us=round(statistics.median(each), 1),
                                      receiver_us_each=[round(e, 1) for e in each])
            sender.stdin.write("next\n")
            sender.stdin.flush()
    isolated, burst = phases["isolated"], phases["burst"]
    return MessageCost(type=type_name, receivers=receivers, count=count, period_s=period, isolated=isolated,
                       burst=burst, isolated_over_burst_sender=ratio(isolated.sender_us, burst.sender_us),
                       isolated_over_burst_receiver=ratio(isolated.receiver_us, burst.receiver_us),
                       load_before=round(load_before, 2))


def text(result: MessageCost) -> str:
    i, b = result.isolated, result.burst
    return "\n".join([
        f"{result.type}: {result.count} messages to {result.receivers} receivers (load {result.load_before:.2f})",
        f"  sender     {i.sender_us:7.1f} us CPU per message, one every {result.period_s * 1000:g} ms;  "
        f"{b.sender_us:6.1f} us back to back  (x{result.isolated_over_burst_sender:g})",
        f"  receiver   {i.receiver_us:7.1f} us CPU per message (median), one every {result.period_s * 1000:g} ms;  "
        f"{b.receiver_us:6.1f} us back to back  (x{result.isolated_over_burst_receiver:g})",
    ])


def run(args: argparse.Namespace) -> int:
    if args.receivers < 1 or args.count < 1 or args.period <= 0.0:
        print("humanoid bench messages: --receivers and --count must be at least 1, --period positive",
              file=sys.stderr)
        return 2
    for type_name in TYPES if args.type == "both" else (args.type,):
        try:
            result = measure(type_name, args.receivers, args.count, args.period)
        except RuntimeError as error:
            print(f"humanoid bench messages: {error}", file=sys.stderr)
            return 1
        print(json.dumps(asdict(result)) if args.json else text(result), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="humanoid bench messages", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
