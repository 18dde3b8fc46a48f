"""A chain of emulated Dynamixel servos behind a pseudo-terminal.

The driver (or the maker's SDK, or any Dynamixel tool) opens :attr:`BusEmulator.port`
as it would open ``/dev/ttyUSB0`` and talks the real byte protocol to it. A thread
serves the pseudo-terminal; tests and tools inject faults through methods (and
``humanoid emulate`` through commands on its standard input, :mod:`.commands`):

- :meth:`BusEmulator.silence` - a servo stops answering (unplugged, dead);
- :meth:`BusEmulator.corrupt_replies` - status packets with a bad checksum/CRC (noise);
- :meth:`BusEmulator.inject_errors` - error bits such as overload or overheating;
- :meth:`BusEmulator.delay_replies` - a servo answering late;
- :meth:`BusEmulator.vanish` / :meth:`BusEmulator.reappear` - the USB adapter unplugged
  and plugged back. Give a ``link`` path: the pseudo-terminal gets a new name when it
  reappears and the link follows it, as a /dev/serial/by-id/ link follows a real adapter.
  The link replaces only a link an emulator made (:func:`is_emulator_link`, one left by an
  emulator that was killed) and is removed only while it still names this emulator's
  pseudo-terminal: no file or link of anyone else is replaced or deleted.

Bytes in: the pseudo-terminal's master is read in packet mode (``TIOCPKT``), so that a
client discarding its own unsent output (``tcflush(TCOFLUSH)``, pyserial's
``reset_output_buffer``) is seen: the kernel hands a pseudo-terminal's written bytes to
the master asynchronously, and such a flush can discard a packet before any process can
read it, where a USB adapter would already have sent it. The emulator cannot stop that;
it counts those flushes (:attr:`BusEmulator.output_flushes`) and says so once through
its ``warn`` callable (docs/bus_emulator.md).

Timing: a servo waits its Return Delay Time (2 us per unit) before answering. With
``timing=True`` the emulator also charges wire time at the baud rate (10 bits per byte,
half duplex: one packet on the bus at a time), so that loop rates measured against it
are those of a real bus. A pseudo-terminal itself has no baud rate: this is the
emulator sleeping. ``clock`` and ``sleep`` can be replaced (a hand-advanced clock in
tests makes motion and answer times exact).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import select
import struct
import termios
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path

from humanoid_hw.control_tables import RETURN_DELAY_UNIT_S, ControlTable, control_table
from humanoid_hw.emulator.packets import (
    BROADCAST_ID,
    Instruction,
    InstructionPacket,
    PacketParser,
    status_packet,
)
from humanoid_hw.emulator.servo import EmulatedServo, Outcome

#: How many packets each capture log keeps (tests read them; a long run must not grow).
CAPTURE_LENGTH = 10_000
#: Seconds a served byte costs per baud: 8N1 framing = 10 bits.
BITS_PER_BYTE = 10
#: Said once when a client first discards its unsent output (see the module docstring).
OUTPUT_FLUSH_WARNING = (
    "the client discards its unsent output (tcflush TCOFLUSH, pyserial reset_output_buffer): a packet "
    "written just before such a flush can be dropped by the pseudo-terminal before the emulator reads it "
    "(a USB adapter would have sent it), so its writes may be lost; see docs/bus_emulator.md")


class LinkTakenError(FileExistsError):
    """The link path holds something an emulator did not make: it is left alone."""


def is_emulator_link(path: str | Path) -> bool:
    """Whether ``path`` is a link an emulator (of this user) made: a symbolic link to a
    pseudo-terminal's name, whether that terminal is still there or not."""
    try:
        return (os.path.islink(path) and os.lstat(path).st_uid == os.getuid()
                and re.fullmatch(r"/dev/pts/\d+", os.readlink(path)) is not None)
    except OSError:
        return False


def precise_sleep(seconds: float) -> None:
    """Sleep ``seconds`` on the monotonic clock, the last 0.2 ms by yielding (time.sleep overshoots)."""
    end = time.monotonic() + seconds
    while (remaining := end - time.monotonic()) > 0:
        time.sleep(remaining if remaining > 2e-4 else 0)


class BusEmulator:
    """Servos with the given IDs and models on one emulated bus (one protocol)."""

    def __init__(self, servos: Mapping[int, str], baud: int = 1_000_000, timing: bool = False,
                 link: str | Path | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] | None = None, warn: Callable[[str], None] | None = None) -> None:
        models = {servo_id: control_table(name) for servo_id, name in servos.items()}
        protocols = {m.protocol for m in models.values()}
        if len(protocols) != 1:
            raise ValueError(f"one bus speaks one protocol; these servos need {sorted(protocols)}")
        self.protocol = protocols.pop()
        self.baud = baud
        self.timing = timing
        self.link = Path(link) if link is not None else None
        self._clock = clock
        self._sleep = sleep or precise_sleep
        self._warn = warn
        self._servos = {i: EmulatedServo(i, models[i], baud, clock()) for i in sorted(models)}
        self._parser = PacketParser(self.protocol)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._corrupt: dict[int | None, int] = {}
        self._delays: dict[int, float] = {}
        self._bus_free_at = 0.0
        self._master: int | None = None
        self._slave: int | None = None
        self._pts_name = ""
        self._wake_read, self._wake_write = os.pipe()
        self._stopping = False
        self._thread: threading.Thread | None = None
        #: Raw instruction packets received and status packets sent, oldest first.
        self.received: deque[bytes] = deque(maxlen=CAPTURE_LENGTH)
        self.sent: deque[bytes] = deque(maxlen=CAPTURE_LENGTH)
        self.packets_handled = 0
        #: How many times a client discarded its unsent output (each may have dropped a packet).
        self.output_flushes = 0
        #: Packets the emulator could not handle, with the reason (it keeps serving).
        self.handler_errors: deque[str] = deque(maxlen=100)

    # -- life cycle --------------------------------------------------------------------
    def start(self) -> BusEmulator:
        """Open the pseudo-terminal and serve it from a thread."""
        with self._lock:
            self._open_pty()
        self._thread = threading.Thread(target=self._serve, name="dynamixel-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and remove the pseudo-terminal (and the link)."""
        self._stopping = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        with self._lock:
            self._close_pty()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> BusEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> str:
        """The path to open: the link when one was asked for, else the pseudo-terminal."""
        return str(self.link) if self.link is not None else self._pts_name

    @property
    def pts_name(self) -> str:
        return self._pts_name

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line discipline: a serial line carries raw bytes
        fcntl.ioctl(master, termios.TIOCPKT, struct.pack("i", 1))  # each read: a status byte or data
        self._master, self._slave = master, slave
        self._pts_name = os.ttyname(slave)
        self._parser = PacketParser(self.protocol)
        if self.link is not None:
            try:
                self._point_link()
            except OSError:
                self._close_pty()
                raise

    def _point_link(self) -> None:
        """Make the link name the pseudo-terminal: a new link, renamed over an emulator's old one."""
        assert self.link is not None
        temporary = self.link.with_name(f".{self.link.name}.{secrets.token_hex(4)}.new")
        temporary.symlink_to(self._pts_name)
        if os.path.lexists(self.link) and not is_emulator_link(self.link):
            temporary.unlink()
            raise LinkTakenError(f"{self.link} exists and is not a link an emulator made: not replacing it")
        temporary.replace(self.link)

    def _link_is_ours(self) -> bool:
        """Whether the link names this emulator's pseudo-terminal now."""
        try:
            return self.link is not None and os.readlink(self.link) == self._pts_name
        except OSError:  # gone, or not a link
            return False

    def _close_pty(self) -> None:
        if self._link_is_ours():  # whatever took the link's place since is left alone
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"\0")

    # -- serving -----------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._stopping:
            master = self._master
            watched = [self._wake_read] + ([master] if master is not None else [])
            try:
                ready, _, _ = select.select(watched, [], [], 0.5)
            except (OSError, ValueError):
                continue  # the pseudo-terminal was closed under us (vanish)
            if self._wake_read in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake_read, 1024)
            if master is None or master not in ready:
                continue
            with self._lock:
                if master != self._master:
                    continue
                try:
                    data = self._received_bytes(os.read(master, 4096))
                except OSError:
                    continue
                if not data:
                    continue  # a status change of the client (a queue flushed), no bytes
                seen_at = self._clock()
                for packet in self._parser.feed(data):
                    try:
                        self._handle(packet, seen_at)
                    except Exception as error:  # a malformed packet must not stop the bus
                        self.handler_errors.append(f"{packet.raw.hex(' ')}: {error!r}")
                    self.packets_handled += 1
                    self._changed.notify_all()

    def _received_bytes(self, chunk: bytes) -> bytes:
        """The client's bytes in one packet-mode read (none when it reports a status change)."""
        if not chunk or chunk[0] == termios.TIOCPKT_DATA:
            return chunk[1:]
        if chunk[0] & termios.TIOCPKT_FLUSHWRITE:
            self.output_flushes += 1
            if self.output_flushes == 1 and self._warn is not None:
                self._warn(OUTPUT_FLUSH_WARNING)
            self._changed.notify_all()
        return b""

    def _handle(self, packet: InstructionPacket, seen_at: float) -> None:
        self.received.append(packet.raw)
        wire_done = self._occupy_bus(seen_at, len(packet.raw))
        now = self._clock()
        for servo in self._servos.values():
            servo.advance(now)
        for servo, outcome in self._execute(packet):
            self._answer(servo, outcome, wire_done)

    def _occupy_bus(self, seen_at: float, size: int) -> float:
        """When the instruction has crossed the wire (timing mode), one packet at a time.

        No sleep here: the answer, if any, is held back until its own last byte would
        have arrived, which includes this packet's time (one sleep, one overshoot).
        """
        if not self.timing:
            return seen_at
        ends = max(seen_at, self._bus_free_at) + size * BITS_PER_BYTE / self.baud
        self._bus_free_at = ends
        return ends

    def _answer(self, servo: EmulatedServo, outcome: Outcome, after: float) -> None:
        packet = status_packet(self.protocol, servo.servo_id, servo.status_error(outcome.errors), outcome.data)
        packet = self._maybe_corrupt(servo.servo_id, packet)
        start = (max(after, self._bus_free_at) + servo.get("return_delay_time") * RETURN_DELAY_UNIT_S
                 + self._delays.get(servo.servo_id, 0.0))
        ends = start + (len(packet) * BITS_PER_BYTE / self.baud if self.timing else 0.0)
        self._bus_free_at = ends
        self._sleep_until(ends)
        if self._master is None:
            return
        self.sent.append(packet)  # logged first: once the client has the bytes, the log has them
        with contextlib.suppress(OSError):
            os.write(self._master, packet)

    def _maybe_corrupt(self, servo_id: int, packet: bytes) -> bytes:
        for key in (servo_id, None):
            if self._corrupt.get(key, 0) > 0:
                self._corrupt[key] -= 1
                return packet[:-1] + bytes([packet[-1] ^ 0xFF])
        return packet

    def _sleep_until(self, deadline: float) -> None:
        remaining = deadline - self._clock()
        if remaining > 0:
            self._sleep(remaining)

    # -- instructions ------------------------------------------------------------------
    def _execute(self, packet: InstructionPacket) -> list[tuple[EmulatedServo, Outcome]]:
        """Apply an instruction; return the (servo, outcome) pairs that send a status, in order."""
        if packet.servo_id == BROADCAST_ID:
            return self._execute_broadcast(packet) if packet.intact else []
        servo = self._servos.get(packet.servo_id)
        if servo is None or servo.silent:
            return []
        if not packet.intact:
            return [(servo, Outcome(("checksum",) if self.protocol == 1 else ("CRC",)))]
        answers = self._answers(servo, packet.instruction)  # the level in force when the packet came
        outcome = self._execute_addressed(servo, packet)
        return [(servo, outcome)] if answers else []

    def _answers(self, servo: EmulatedServo, instruction: int) -> bool:
        """Status Return Level: 0 = PING only, 1 = PING and READ, 2 = every instruction."""
        level = servo.get("status_return_level")
        if instruction == Instruction.PING:
            return True
        if instruction in (Instruction.READ, Instruction.SYNC_READ):
            return level >= 1
        return level >= 2

    def _address_and_rest(self, params: bytes) -> tuple[int, bytes]:
        width = 1 if self.protocol == 1 else 2
        return int.from_bytes(params[:width], "little"), params[width:]

    def _execute_addressed(self, servo: EmulatedServo, packet: InstructionPacket) -> Outcome:
        params = packet.params
        match packet.instruction:
            case Instruction.PING:
                if self.protocol == 1:
                    return Outcome()
                model = servo.get("model_number").to_bytes(2, "little")
                return Outcome(data=model + bytes([servo.get("firmware_version")]))
            case Instruction.READ:
                address, rest = self._address_and_rest(params)
                return servo.read(address, int.from_bytes(rest, "little"))
            case Instruction.WRITE:
                address, data = self._address_and_rest(params)
                return servo.write(address, data)
            case Instruction.REG_WRITE:
                address, data = self._address_and_rest(params)
                return servo.register(address, data)
            case Instruction.ACTION:
                return servo.action()
            case Instruction.REBOOT if self.protocol == 2:
                return servo.reboot()
        return Outcome(("instruction",))

    def _execute_broadcast(self, packet: InstructionPacket) -> list[tuple[EmulatedServo, Outcome]]:
        """Broadcast: nobody answers, except PING and SYNC_READ of protocol 2.0 (in ID order)."""
        servos = [s for s in self._servos.values() if not s.silent]
        match packet.instruction:
            case Instruction.SYNC_WRITE:
                self._sync_write(packet.params)
            case Instruction.SYNC_READ if self.protocol == 2:
                return self._sync_read(packet.params)
            case Instruction.PING if self.protocol == 2:
                return [(s, self._execute_addressed(s, packet)) for s in servos]
            case Instruction.ACTION:
                for servo in servos:
                    servo.action()
            case Instruction.WRITE | Instruction.REG_WRITE:
                for servo in servos:
                    self._execute_addressed(servo, packet)
        return []

    def _block_header(self, params: bytes) -> tuple[int, int, bytes]:
        """SYNC_WRITE / SYNC_READ parameters: start address, data length, the rest."""
        width = 1 if self.protocol == 1 else 2
        address = int.from_bytes(params[:width], "little")
        length = int.from_bytes(params[width:2 * width], "little")
        return address, length, params[2 * width:]

    def _sync_write(self, params: bytes) -> None:
        address, length, rest = self._block_header(params)
        for offset in range(0, len(rest) - length, length + 1):
            servo = self._servos.get(rest[offset])
            if servo is not None and not servo.silent:
                servo.write(address, rest[offset + 1:offset + 1 + length])

    def _sync_read(self, params: bytes) -> list[tuple[EmulatedServo, Outcome]]:
        address, length, ids = self._block_header(params)
        answers = []
        for servo_id in ids:
            servo = self._servos.get(servo_id)
            if servo is not None and not servo.silent and self._answers(servo, Instruction.SYNC_READ):
                answers.append((servo, servo.read(address, length)))
        return answers

    # -- inspection and fault injection (thread-safe) -----------------------------------
    @property
    def servo_ids(self) -> list[int]:
        return list(self._servos)

    def table_of(self, servo_id: int) -> ControlTable:
        """The control table of one servo."""
        return self._servos[servo_id].table

    def register(self, servo_id: int, name: str) -> int:
        """A control-table item of one servo, as the servo holds it now."""
        with self._lock:
            servo = self._servos[servo_id]
            servo.advance(self._clock())
            return servo.get(name)

    def set_register(self, servo_id: int, name: str, value: int) -> None:
        """Force a register (present load, temperature ...) as the physical world would."""
        with self._lock:
            self._servos[servo_id].set(name, value)

    def place(self, servo_id: int, raw_position: int) -> None:
        """Move a horn by hand to ``raw_position`` (its goal follows, so it stays there)."""
        with self._lock:
            self._servos[servo_id].place(raw_position)

    def silence(self, servo_id: int, silent: bool = True) -> None:
        """The servo stops answering (and stops listening) until ``silence(id, False)``."""
        with self._lock:
            self._servos[servo_id].silent = silent

    def corrupt_replies(self, count: int, servo_id: int | None = None) -> None:
        """Flip the checksum/CRC of the next ``count`` status packets (of one servo, or any)."""
        with self._lock:
            self._corrupt[servo_id] = self._corrupt.get(servo_id, 0) + count

    def delay_replies(self, servo_id: int, seconds: float) -> None:
        """Every answer of this servo comes ``seconds`` late, on top of its return delay (0: on time)."""
        if not seconds >= 0.0:
            raise ValueError(f"a reply delay must be >= 0 s, not {seconds!r}")
        if servo_id not in self._servos:
            raise KeyError(servo_id)
        with self._lock:
            self._delays[servo_id] = seconds

    def faults(self) -> dict[str, object]:
        """The faults in force: silent servos, pending corruptions, error names, reply delays, port."""
        with self._lock:
            return {"silent": [i for i, s in self._servos.items() if s.silent],
                    "corrupt": {("any" if k is None else k): v for k, v in self._corrupt.items() if v > 0},
                    "errors": {i: sorted(s.injected_errors) for i, s in self._servos.items() if s.injected_errors},
                    "delays": {i: d for i, d in self._delays.items() if d > 0},
                    "present": self._master is not None}

    def inject_errors(self, servo_id: int, *names: str) -> None:
        """Error bits on every status of this servo (e.g. "overload", "overheating")."""
        with self._lock:
            self._servos[servo_id].inject_errors(*names)

    def clear_errors(self, servo_id: int) -> None:
        with self._lock:
            self._servos[servo_id].clear_errors()

    def vanish(self) -> None:
        """The adapter is unplugged: the pseudo-terminal (and the link) disappear."""
        with self._lock:
            self._close_pty()
        self._wake()

    def reappear(self) -> None:
        """The adapter is plugged back: a new pseudo-terminal, the link points to it."""
        with self._lock:
            if self._master is None:
                self._open_pty()
        self._wake()

    @property
    def present(self) -> bool:
        return self._master is not None

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until ``predicate()`` holds (checked after every handled packet) or timeout."""
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def packets_to(self, servo_id: int) -> int:
        """How many received instruction packets were addressed to ``servo_id``."""
        with self._lock:
            return sum(1 for raw in self.received if self._packet_id(raw) == servo_id)

    def _packet_id(self, raw: bytes) -> int:
        return raw[2] if self.protocol == 1 else raw[4]
