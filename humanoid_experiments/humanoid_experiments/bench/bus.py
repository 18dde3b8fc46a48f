"""``humanoid bench bus``: what one control cycle costs on the Dynamixel bus.

Runs the driver free (no deadline wait) against the timing-accurate emulator in its
own process, and reports per cycle: bytes on the wire in both directions, the bus
time they take at the baud rate (10 bits per byte), the theoretical minimum for the
protocol, and the loop rate achieved. ``bus_limit_hz`` is 1 / minimum bus time: no
loop on this bus can be faster, whatever the computer (return delays and USB latency
only lower it).

Baseline, same run, same emulator: a bare dynamixel-sdk loop doing the same
transactions (the same READs or SYNC_READ, the same SYNC_WRITE bytes) with the
maker's own PortHandler, nothing else. Driver and SDK runs alternate ``--rounds``
times and each side's best run counts (the machine is shared: load only ever slows a
run); ``loop_vs_sdk`` = driver / SDK, every run's rate is listed too. Beside it,
``loop_vs_sdk_median`` is the median over the rounds of each driver run against the SDK
run right after it (seconds apart, so under the same load; the best-of ratio may pair
runs from different moments).

The SDK waits for a status packet by polling the line for the whole wait; the driver
sleeps in ``select()`` and polls only in a window of ``answer_poll_us`` (the robot's
bus.yaml, or ``--answer-poll-us``; 0: never) on each side of the answer's due time. On
an idle computer a sleeping thread is woken late (an idle virtual CPU halts), once per
answer: without the window, that, not the driver's CPU, is most of what separates the
two loops there. ``loop_cpu_us_per_cycle`` is the driver's own CPU time per cycle (its
thread, polling included, least of the runs), a figure the load moves much less than rates.

Minimum bytes per cycle for N servos, a state block of R bytes read from each and a
command of W bytes written to each (Bioloid: N = 18, R = 8, W = 4):

- protocol 1.0 (no SYNC_READ): N READ round trips, instruction 8 bytes + status
  (6 + R) bytes each, plus one SYNC_WRITE of 8 + N (1 + W) bytes;
  N (14 + R) + 8 + N (1 + W) = 494 bytes for the Bioloid (4.94 ms at 1 Mbps).
- protocol 2.0: one SYNC_READ instruction of 14 + N bytes, N status packets of
  11 + R bytes, one SYNC_WRITE of 14 + N (1 + W) bytes (byte stuffing can add a few).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass

from humanoid_core import integer_in, non_negative_number
from humanoid_hw.emulator import dynamixel_robot

BITS_PER_BYTE = 10


@dataclass(frozen=True)
class BusCost:
    """Theoretical minimum wire cost of one cycle (see the module docstring)."""

    protocol: int
    servos: int
    read_length: int
    write_length: int

    @property
    def bytes(self) -> int:
        n, r, w = self.servos, self.read_length, self.write_length
        if self.protocol == 1:
            return n * (8 + 6 + r) + 8 + n * (1 + w)
        return (14 + n) + n * (11 + r) + 14 + n * (1 + w)

    @property
    def formula(self) -> str:
        n, r, w = self.servos, self.read_length, self.write_length
        if self.protocol == 1:
            return (f"{n} READ round trips x (8 + 6 + {r}) + SYNC_WRITE (8 + {n} x (1 + {w})) "
                    f"= {n * (14 + r)} + {8 + n * (1 + w)} = {self.bytes} bytes")
        return (f"SYNC_READ (14 + {n}) + {n} statuses x (11 + {r}) + SYNC_WRITE (14 + {n} x (1 + {w})) "
                f"= {14 + n} + {n * (11 + r)} + {14 + n * (1 + w)} = {self.bytes} bytes")


@dataclass(frozen=True)
class BusBenchmark:
    """Result of one benchmark run (the JSON output)."""

    robot: str
    protocol: int
    servos: int
    baud: int
    cycles: int
    bytes_per_cycle: float
    bytes_out_per_cycle: float
    bytes_in_per_cycle: float
    instructions_per_cycle: float
    min_bytes_per_cycle: int
    min_bytes_formula: str
    bus_time_ms: float
    min_bus_time_ms: float
    bus_limit_hz: float
    loop_hz: float
    sdk_baseline_hz: float
    loop_vs_sdk: float
    loop_vs_sdk_median: float
    loop_hz_runs: list[float]
    sdk_baseline_hz_runs: list[float]
    loop_cpu_us_per_cycle: float
    answer_poll_us: float
    retries: int


def bus_time_s(byte_count: float, baud: int) -> float:
    return byte_count * BITS_PER_BYTE / baud


def run_benchmark(robot: str = "bioloid", protocol: int = 1, baud: int = 1_000_000, cycles: int = 300,
                  warmup: int = 20, rounds: int = 3, answer_poll_us: float | None = None) -> BusBenchmark:
    """Start the timing-accurate emulator; ``rounds`` times, run the driver then the bare SDK
    loop ``warmup + cycles`` times each; measure."""
    from humanoid_core.loop import JointCommand
    from humanoid_description import load_model
    from humanoid_hw import DynamixelDriver, Traffic, load_hardware_config, stand_in_joint_map
    from humanoid_hw.emulator import emulator_process

    model = load_model(robot)
    if model.config.joint_map is None:
        raise ValueError(f"robot {robot!r} has no Dynamixel joint map")
    joint_map = stand_in_joint_map(model.config.joint_map, protocol)
    command = JointCommand(position=model.home_positions())
    loop_runs: list[float] = []
    loop_cpu: list[float] = []
    sdk_runs: list[float] = []
    traffic = Traffic()
    with emulator_process(robot, protocol, baud, timing=True) as port:
        # "hold": the servos keep their torque between the runs, as in one long session
        poll = {} if answer_poll_us is None else {"answer_poll_us": answer_poll_us}
        config = load_hardware_config(robot, port=port, protocol=protocol, baud=baud, on_shutdown="hold", **poll)
        for _ in range(rounds):
            driver = DynamixelDriver.from_model(model, config, joint_map=joint_map)
            driver.start()
            try:
                for _ in range(warmup):
                    driver.read()
                    driver.write(command)
                first = driver.bus.traffic.snapshot()
                started, cpu_started = time.monotonic(), time.thread_time()
                for _ in range(cycles):
                    driver.read()
                    driver.write(command)
                loop_runs.append(cycles / (time.monotonic() - started))
                loop_cpu.append((time.thread_time() - cpu_started) / cycles)
                run = driver.bus.traffic.since(first)
            finally:
                driver.close()
            traffic = traffic + run
            table = driver.control_table
            payload = {s.servo_id: driver.io.command_bytes(s, command.position[s.index], 0.0) for s in driver.servos}
            sdk_runs.append(sdk_loop_hz(port, baud, protocol, list(payload), table.state_block.start,
                                        table.state_block.length, table.command_block.start,
                                        table.command_block.length, payload, warmup, cycles))
    measured = cycles * rounds
    cost = BusCost(protocol, len(joint_map), table.state_block.length, table.command_block.length)
    per_cycle = traffic.bytes_total / measured
    loop_hz, sdk_hz = round(max(loop_runs), 2), round(max(sdk_runs), 2)  # the ratio of the figures shown
    return BusBenchmark(
        robot=robot, protocol=protocol, servos=len(joint_map), baud=baud, cycles=cycles,
        bytes_per_cycle=per_cycle, bytes_out_per_cycle=traffic.bytes_out / measured,
        bytes_in_per_cycle=traffic.bytes_in / measured, instructions_per_cycle=traffic.instructions / measured,
        min_bytes_per_cycle=cost.bytes, min_bytes_formula=cost.formula,
        bus_time_ms=round(1000.0 * bus_time_s(per_cycle, baud), 4),
        min_bus_time_ms=round(1000.0 * bus_time_s(cost.bytes, baud), 4),
        bus_limit_hz=round(1.0 / bus_time_s(cost.bytes, baud), 2), loop_hz=loop_hz,
        sdk_baseline_hz=sdk_hz, loop_vs_sdk=round(loop_hz / sdk_hz, 3),
        loop_vs_sdk_median=round(statistics.median(d / s for d, s in zip(loop_runs, sdk_runs, strict=True)), 3),
        loop_hz_runs=[round(r, 2) for r in loop_runs], sdk_baseline_hz_runs=[round(r, 2) for r in sdk_runs],
        loop_cpu_us_per_cycle=round(1e6 * min(loop_cpu), 1), answer_poll_us=config.answer_poll_us,
        retries=traffic.retries)


@dataclass(frozen=True)
class PacedDriver:
    """The bus driver alone at the robot's control rate (:func:`paced_driver_cost`)."""

    control_rate: float  # Hz, the robot's hw.yaml
    cycles: int
    seconds: float  # wall
    cpu: float  # share of one core: the driver's thread over the wall time


def paced_driver_cost(robot: str, seconds: float) -> PacedDriver:
    """What the hardware loop's bus work costs without anything else: the driver reads every
    servo, writes the goals and waits for the next deadline (``sync``, so answers are polled
    only as the loop would poll them) at the robot's ``control_rate``, against the emulator as
    ``humanoid real --emulate`` starts it, with no ROS, no state publishing and no front. The
    floor under the hardware loop's share of a core while the bus is read this way."""
    from humanoid_core import node_parameters
    from humanoid_core.loop import JointCommand
    from humanoid_description import HW_NODE_PARAMETERS, load_model
    from humanoid_hw import NODE_NAME, DynamixelDriver, load_hardware_config
    from humanoid_hw.emulator import emulator_process

    rate = float(node_parameters(HW_NODE_PARAMETERS.path(robot), NODE_NAME)["control_rate"])
    model = load_model(robot)
    command = JointCommand(position=model.home_positions())
    config = load_hardware_config(robot, on_shutdown="hold")
    with emulator_process(robot, config.protocol, config.baud) as port:
        driver = DynamixelDriver.from_model(model, config.replace(port=port))

        def cycle() -> None:
            driver.sync(1.0 / rate)
            driver.read()
            driver.write(command)

        driver.start()
        try:
            for _ in range(int(rate)):  # a second to settle, as the graph's loop had before its window
                cycle()
            cycles, started, cpu_started = 0, time.monotonic(), time.thread_time()
            while time.monotonic() - started < seconds:
                cycle()
                cycles += 1
            wall, cpu = time.monotonic() - started, time.thread_time() - cpu_started
        finally:
            driver.close()
    return PacedDriver(rate, cycles, round(wall, 3), round(cpu / wall, 4))


def sdk_loop_hz(port_name: str, baud: int, protocol: int, ids: list[int], read_address: int, read_length: int,
                write_address: int, write_length: int, goals: dict[int, bytes], warmup: int, cycles: int) -> float:
    """Cycles per second of a bare dynamixel-sdk loop: the driver's transactions, nothing else.

    Per cycle: protocol 1.0, one READ of the state block per servo; protocol 2.0, one
    SYNC_READ of it (GroupSyncRead); then one SYNC_WRITE of the same goal bytes
    (GroupSyncWrite). A failed transaction is counted, not retried.
    """
    from dynamixel_sdk import COMM_SUCCESS, GroupSyncRead, GroupSyncWrite, PacketHandler, PortHandler

    port = PortHandler(port_name)
    if not port.openPort() or not port.setBaudRate(baud):
        raise RuntimeError(f"the SDK cannot open {port_name} at {baud} baud")
    try:
        packets = PacketHandler(float(protocol))
        writer = GroupSyncWrite(port, packets, write_address, write_length)
        for servo_id, data in goals.items():
            writer.addParam(servo_id, list(data))
        reader = GroupSyncRead(port, packets, read_address, read_length) if protocol == 2 else None
        for servo_id in ids if reader is not None else ():
            reader.addParam(servo_id)

        def cycle() -> None:
            if reader is not None:
                if reader.txRxPacket() == COMM_SUCCESS:
                    for servo_id in ids:
                        reader.getData(servo_id, read_address, 4)
            else:
                for servo_id in ids:
                    packets.readTxRx(port, servo_id, read_address, read_length)
            writer.txPacket()

        for _ in range(warmup):
            cycle()
        started = time.monotonic()
        for _ in range(cycles):
            cycle()
        return cycles / (time.monotonic() - started)
    finally:
        port.closePort()


def format_text(result: BusBenchmark) -> str:
    return "\n".join([
        f"Dynamixel bus benchmark: {result.robot}, protocol {result.protocol}.0, {result.servos} servos, "
        f"{result.baud} baud (timing-accurate emulator)",
        f"  bytes per cycle     {result.bytes_per_cycle:.1f} (out {result.bytes_out_per_cycle:.1f}, "
        f"in {result.bytes_in_per_cycle:.1f}), {result.instructions_per_cycle:.1f} instruction packets",
        f"  minimum             {result.min_bytes_formula}",
        f"  bus time per cycle  {result.bus_time_ms:.2f} ms (minimum {result.min_bus_time_ms:.2f} ms, "
        f"bus limit {result.bus_limit_hz:.1f} Hz)",
        f"  loop rate achieved  {result.loop_hz:.1f} Hz (best of {len(result.loop_hz_runs)} runs of {result.cycles} "
        f"cycles: {', '.join(f'{r:.1f}' for r in result.loop_hz_runs)}; {result.retries} retries)",
        f"  bare SDK baseline   {result.sdk_baseline_hz:.1f} Hz (same transactions, same emulator; runs: "
        f"{', '.join(f'{r:.1f}' for r in result.sdk_baseline_hz_runs)})",
        f"  driver / SDK        {result.loop_vs_sdk:.3f} (best runs; median of the rounds "
        f"{result.loop_vs_sdk_median:.3f})",
        f"  driver CPU          {result.loop_cpu_us_per_cycle:.0f} us per cycle (its thread, best run; "
        f"answers polled for {result.answer_poll_us:g} us each side of their due time)",
    ])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``humanoid bench bus``."""
    parser.add_argument("--robot", default="bioloid", type=dynamixel_robot,
                        help="robot whose joint map gives the servos (bioloid)")
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=1,
                        help="1: the joint map's AX-12s; 2: XL430s with the same IDs (default 1)")
    parser.add_argument("--baud", type=integer_in(1), default=1_000_000, help="bus speed in bit/s (default 1000000)")
    parser.add_argument("--cycles", type=integer_in(1), default=300,
                        help="measured control cycles per run (default 300)")
    parser.add_argument("--rounds", type=integer_in(1), default=3,
                        help="driver and SDK runs, alternating; the best of each counts (default 3)")
    parser.add_argument("--answer-poll-us", type=non_negative_number, default=None, metavar="US",
                        help="the driver polls for a status packet this long on each side of its due time "
                             "(default: the robot's bus.yaml answer_poll_us)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    try:
        result = run_benchmark(args.robot, args.protocol, args.baud, args.cycles, rounds=args.rounds,
                               answer_poll_us=args.answer_poll_us)
    except (ValueError, RuntimeError) as error:
        print(f"humanoid bench bus: error: {error}", file=sys.stderr)
        return 1
    print(json.dumps(asdict(result)) if args.json else format_text(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="humanoid bench bus", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
