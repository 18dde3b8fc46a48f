"""``humanoid emulate``: serve a robot's servo chain on a pseudo-terminal until stopped.

The first line printed is the path to open (flushed at once), so that a script can
start the emulator, read one line and point the driver at it::

    port=$(humanoid emulate --robot bioloid | head -1)

Faults are injected by commands on standard input (``silence 3``, ``corrupt 5 4``,
``error 9 overload``, ``vanish`` ...; see :mod:`.commands`), each answered by one line
on standard output after it took effect. End of input changes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import sys
from collections.abc import Sequence
from typing import TextIO

from humanoid_core import integer_in, new_link
from humanoid_core.loop import InterfaceParameters
from humanoid_core.processes import RECHECK, StopRequest, leads_session, set_priority, stop_on_signals
from humanoid_hw.control_tables import stand_in_joint_map
from humanoid_hw.emulator.chain import BusEmulator, LinkTakenError, is_emulator_link
from humanoid_hw.emulator.commands import COMMANDS_HELP, FaultCommands

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The emulator's scheduling priority unless told: a driver's control loop's (``loop_nice``).
#: Real servos answer from controllers of their own whatever the host's load; an emulator at
#: the default priority, on a busy machine, went unanswered for half a second and passed for
#: a servo that stopped answering.
EMULATOR_NICE = InterfaceParameters().loop_nice


def robot_servos(robot: str, protocol: int) -> dict[int, str]:
    """Servo ID -> model for the robot's joint map; on a bus of the other protocol each
    servo is replaced by that protocol's reference model (AX-12 / XL430), same IDs."""
    from humanoid_description import load_config

    joint_map = load_config(robot).joint_map
    if joint_map is None:
        raise ValueError(f"robot {robot!r} has no Dynamixel joint map (joint_map.yaml)")
    return {servo.servo_id: servo.model for servo in stand_in_joint_map(joint_map, protocol).values()}


def dynamixel_robot(name: str) -> str:
    """A robot with a Dynamixel joint map (an ``argparse`` type: a bad name is a usage error)."""
    try:
        robot_servos(name, 1)
    except (ValueError, KeyError) as error:
        raise argparse.ArgumentTypeError(str(error).strip('"')) from None
    return name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``humanoid emulate`` (and the fault commands, in the help's epilog)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (COMMANDS_HELP + "\n\nexample (two terminals):\n"
                     "  humanoid emulate --robot bioloid --link /tmp/ttyDXL       # then type: silence 3\n"
                     "  humanoid real --robot bioloid --port /tmp/ttyDXL")
    parser.add_argument("--robot", default="bioloid", type=dynamixel_robot,
                        help="robot whose joint map gives the servos (bioloid)")
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=1,
                        help="1: the joint map's AX-12s; 2: XL430s with the same IDs (default 1)")
    parser.add_argument("--baud", type=integer_in(1), default=1_000_000, help="bus speed in bit/s (default 1000000)")
    parser.add_argument("--timing", action="store_true",
                        help="charge wire time at the baud rate (10 bits per byte), like a real bus")
    parser.add_argument("--link", type=new_link(is_emulator_link, "a link an emulator made"), default=None,
                        help="also make this symlink to the pseudo-terminal, and print it instead; an existing "
                             "path is refused unless it is an emulator's link (one left by a killed emulator)")
    parser.add_argument("--nice", type=integer_in(-20, 19), default=EMULATOR_NICE, metavar="N",
                        help=f"scheduling priority (nice, -20..19; default {EMULATOR_NICE}, a driver's control "
                             "loop's): the servos answer however busy the machine; their session's too when the "
                             "emulator leads its session (as `humanoid real --emulate` starts it). Raising it "
                             "needs CAP_SYS_NICE (root); without, a warning and the default priority")
    parser.add_argument("--return-delay", type=integer_in(0, 254), default=None, metavar="UNITS",
                        help="Return Delay Time of every servo at power-up, 2 us units (factory: 250)")


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM; the first output line is the port path."""
    try:
        servos = robot_servos(args.robot, args.protocol)
    except (ValueError, KeyError) as error:
        print(f"humanoid emulate: error: {error}", file=sys.stderr)
        return 2
    emulator = BusEmulator(servos, baud=args.baud, timing=args.timing, link=args.link, warn=_warn)
    if args.return_delay is not None:
        for servo_id in servos:
            emulator.set_register(servo_id, "return_delay_time", args.return_delay)
    set_priority(args.nice, _warn, "the emulator", session=leads_session())
    with stop_on_signals(*STOP_SIGNALS) as stop:
        return _serve(emulator, servos, args, stop)


def _warn(text: str) -> None:
    """A warning from the serving thread: one line on standard error (none if nobody reads it)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"humanoid emulate: warning: {text}", file=sys.stderr, flush=True)


def _serve(emulator: BusEmulator, servos: dict[int, str], args: argparse.Namespace, stop: StopRequest) -> int:
    try:
        emulator.start()
    except LinkTakenError as error:  # taken since the arguments were checked
        print(f"humanoid emulate: error: {error}", file=sys.stderr)
        return 2
    try:
        print(emulator.port, flush=True)
        models = sorted(set(servos.values()))
        print(f"emulating {len(servos)} {'/'.join(models)} servos (IDs {min(servos)}..{max(servos)}), "
              f"protocol {args.protocol}.0, {args.baud} baud{', wire timing' if args.timing else ''}; "
              f"pseudo-terminal {emulator.pts_name}", file=sys.stderr, flush=True)
        serve_until(stop, FaultCommands(emulator), sys.stdin, sys.stdout)
    finally:
        emulator.stop()
    return 0


def serve_until(stop: StopRequest, commands: FaultCommands, lines: TextIO, answers: TextIO) -> None:
    """Apply each input line and print its answer until ``stop`` (a signal); end of input,
    or nobody reading the answers, ends the commands, not the serving.

    Read in this thread with ``select`` on the input and the stop request together (no
    thread left reading standard input at exit, no polling)."""
    try:
        fd: int | None = lines.fileno()
    except (AttributeError, ValueError, OSError):  # no standard input at all
        fd = None
    pending = b""
    while not stop.is_set():
        if fd is None:
            stop.wait(None)
            continue
        ready, _, _ = select.select([fd, stop], [], [], RECHECK)  # a held-back signal: see RECHECK
        if fd not in ready:
            continue
        data = os.read(fd, 4096)
        if not data:
            fd = None  # end of input: the faults stay, the bus is served
            continue
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            answer = commands.execute(line.decode(errors="replace"))
            if answer is None:
                continue
            try:
                print(answer, file=answers, flush=True)
            except (BrokenPipeError, ValueError, OSError):
                fd = None  # nobody reads the answers (``| head -1``): no more commands
                break



def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="humanoid emulate", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
