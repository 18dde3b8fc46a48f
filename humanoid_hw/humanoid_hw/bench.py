"""``humanoid bench bus``: what one control cycle costs on the Dynamixel bus.

Runs the driver free (no deadline wait) against the timing-accurate emulator in its
own process, and reports per cycle: bytes on the wire in both directions, the bus
time they take at the baud rate (10 bits per byte), the theoretical minimum for the
protocol, and the loop rate achieved. ``bus_limit_hz`` is 1 / minimum bus time: no
loop on this bus can be faster, whatever the computer (return delays and USB latency
only lower it).

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
import sys
import time
from dataclasses import asdict, dataclass

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
    retries: int


def bus_time_s(byte_count: float, baud: int) -> float:
    return byte_count * BITS_PER_BYTE / baud


def run_benchmark(robot: str = "bioloid", protocol: int = 1, baud: int = 1_000_000, cycles: int = 300,
                  warmup: int = 20) -> BusBenchmark:
    """Start the timing-accurate emulator, run the driver ``warmup + cycles`` times, measure."""
    from humanoid_control.driver import JointCommand
    from humanoid_description.model import load_model
    from humanoid_hw.driver import DynamixelDriver
    from humanoid_hw.emulator.process import emulator_process
    from humanoid_hw.hardware_config import load_hardware_config
    from humanoid_hw.servo_models import stand_in_joint_map

    model = load_model(robot)
    if model.config.joint_map is None:
        raise ValueError(f"robot {robot!r} has no Dynamixel joint map")
    joint_map = stand_in_joint_map(model.config.joint_map, protocol)
    with emulator_process(robot, protocol, baud, timing=True) as port:
        config = load_hardware_config(robot, port=port, protocol=protocol, baud=baud)
        driver = DynamixelDriver.from_model(model, config, joint_map=joint_map)
        driver.start()
        try:
            command = JointCommand(position=model.home_positions())
            for _ in range(warmup):
                driver.read()
                driver.write(command)
            first = driver.bus.traffic.snapshot()
            started = time.monotonic()
            for _ in range(cycles):
                driver.read()
                driver.write(command)
            elapsed = time.monotonic() - started
            traffic = driver.bus.traffic.since(first)
        finally:
            driver.close()
    model_entry = driver.model
    cost = BusCost(protocol, len(joint_map), model_entry.state_block.length, model_entry.command_block.length)
    per_cycle = traffic.bytes_total / cycles
    return BusBenchmark(
        robot=robot, protocol=protocol, servos=len(joint_map), baud=baud, cycles=cycles,
        bytes_per_cycle=per_cycle, bytes_out_per_cycle=traffic.bytes_out / cycles,
        bytes_in_per_cycle=traffic.bytes_in / cycles, instructions_per_cycle=traffic.instructions / cycles,
        min_bytes_per_cycle=cost.bytes, min_bytes_formula=cost.formula,
        bus_time_ms=round(1000.0 * bus_time_s(per_cycle, baud), 4),
        min_bus_time_ms=round(1000.0 * bus_time_s(cost.bytes, baud), 4),
        bus_limit_hz=round(1.0 / bus_time_s(cost.bytes, baud), 2), loop_hz=round(cycles / elapsed, 2),
        retries=traffic.retries)


def format_text(result: BusBenchmark) -> str:
    return "\n".join([
        f"Dynamixel bus benchmark: {result.robot}, protocol {result.protocol}.0, {result.servos} servos, "
        f"{result.baud} baud (timing-accurate emulator)",
        f"  bytes per cycle     {result.bytes_per_cycle:.1f} (out {result.bytes_out_per_cycle:.1f}, "
        f"in {result.bytes_in_per_cycle:.1f}), {result.instructions_per_cycle:.1f} instruction packets",
        f"  minimum             {result.min_bytes_formula}",
        f"  bus time per cycle  {result.bus_time_ms:.2f} ms (minimum {result.min_bus_time_ms:.2f} ms, "
        f"bus limit {result.bus_limit_hz:.1f} Hz)",
        f"  loop rate achieved  {result.loop_hz:.1f} Hz over {result.cycles} cycles ({result.retries} retries)",
    ])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``humanoid bench bus``."""
    parser.add_argument("--robot", default="bioloid", help="robot whose joint map gives the servos (bioloid)")
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=1,
                        help="1: the joint map's AX-12s; 2: XL430s with the same IDs (default 1)")
    parser.add_argument("--baud", type=int, default=1_000_000, help="bus speed in bit/s (default 1000000)")
    parser.add_argument("--cycles", type=int, default=300, help="measured control cycles (default 300)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def run(args: argparse.Namespace) -> int:
    if args.cycles < 1:
        print("humanoid bench bus: error: --cycles must be at least 1", file=sys.stderr)
        return 2
    try:
        result = run_benchmark(args.robot, args.protocol, args.baud, args.cycles)
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
