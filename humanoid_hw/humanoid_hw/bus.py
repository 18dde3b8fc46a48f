"""One Dynamixel bus (one serial port, one protocol) on top of the maker's SDK.

What this layer adds to ``dynamixel_sdk``:

- the fewest transactions the protocol allows for reading many servos: protocol 1.0
  has no SYNC_READ, so one READ of a contiguous block per servo; protocol 2.0 reads
  every servo with one SYNC_READ of the same block (GroupSyncRead);
- writing every servo's goal in one SYNC_WRITE packet;
- bounded retries on timeouts and corrupted status packets, counted; before a
  retry, an answer that missed its packet timeout but comes within the settle time
  is taken (the servo answered, late: a loaded machine, not a missing servo);
- answers checked against their request: the SDK matches a status packet to its
  request by ID only, so a late answer to an earlier request of the same servo would
  pass for the answer (a 1-byte value read as 2 bytes, checksum included); here a
  status whose parameter count differs from the request's is a corrupt answer;
- the serial device vanishing (USB adapter unplugged) as :class:`PortLostError`
  instead of an exception from deep inside the SDK, and a serial error on a device
  that is still there (a read woken with no data, as pyserial reports a line shared
  with another reader) as one failed attempt, retried like a timeout;
- bytes on the wire in both directions, counted (for the bus benchmark);
- a packet wait that sleeps in ``select()`` instead of spinning (optionally polling the
  line for a short window around the moment the answer is due), a monotonic clock, and
  the adapter's latency timer as a parameter instead of the SDK's constant 16 ms.
"""

from __future__ import annotations

import contextlib
import operator
import os
import select
import termios
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import serial
from dynamixel_sdk import (
    COMM_RX_CORRUPT,
    COMM_RX_TIMEOUT,
    COMM_SUCCESS,
    INST_PING,
    INST_READ,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
    PortHandler,
)

from humanoid_hw.control_tables import (
    PROTOCOL1_ERROR_BITS,
    PROTOCOL2_ALERT_BIT,
    PROTOCOL2_ERROR_NUMBERS,
    ControlItem,
    decode_bits,
)


class BusError(RuntimeError):
    """The bus cannot be used: the port does not open, or the baud rate is not supported."""


class PortLostError(BusError):
    """The serial device failed or vanished (USB adapter unplugged) during a transaction."""


class SerialGlitchError(BusError):
    """A serial error on a device that is still there and still a terminal: one failed attempt."""


#: SDK result code of an attempt that failed with a serial glitch (outside the SDK's codes).
SERIAL_GLITCH = -9000


@dataclass
class Traffic:
    """Cumulative counters of one bus; subtract two snapshots for one cycle's share."""

    bytes_out: int = 0
    bytes_in: int = 0
    instructions: int = 0
    timeouts: int = 0
    corrupt: int = 0
    #: Serial errors on a device that was still there (counted, retried like a timeout).
    glitches: int = 0
    #: Answers that missed their packet timeout but came within the settle time (taken).
    late: int = 0
    retries: int = 0

    @property
    def bytes_total(self) -> int:
        return self.bytes_out + self.bytes_in

    # snapshot and since run once per control cycle: the counters by a getter made once,
    # not by dataclasses.replace and fields(), which inspect the class at every call
    def snapshot(self) -> Traffic:
        return Traffic(*_counters(self))

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(*map(operator.add, _counters(self), _counters(other)))

    def since(self, earlier: Traffic) -> Traffic:
        return Traffic(*map(operator.sub, _counters(self), _counters(earlier)))


#: The counters of a Traffic, in field order.
_counters = operator.attrgetter(*(f.name for f in fields(Traffic)))


def _attempted(attempt: Callable[[], tuple[bytes, int, int]]) -> tuple[bytes, int, int]:
    """One attempt's (data, result, error); a serial glitch is a failed attempt."""
    try:
        return attempt()
    except SerialGlitchError:
        return b"", SERIAL_GLITCH, 0


class Reply(NamedTuple):
    """Outcome of one addressed exchange (after retries). A named tuple, not a frozen
    dataclass: one is made per servo per cycle, and a tuple is made in a third of the time."""

    servo_id: int
    data: bytes = b""
    #: Status ERR byte of the answer (0 without an answer).
    error: int = 0
    #: None when the servo answered; else "timeout", "corrupt" or the SDK's description.
    failure: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.failure is None


class CountingPortHandler(PortHandler):
    """The SDK's PortHandler with byte counting, a select() wait and a settable latency timer.

    The SDK polls a non-blocking port in a tight loop while it waits for a status
    packet, which burns a core and starves other threads; this handler sleeps in
    ``select()`` until a byte arrives or the packet times out. The SDK's timeout is
    ``tx time + 2 x 16 ms + 2 ms``, sized for an FTDI adapter at its default latency
    timer; here the latency timer is a parameter.

    Bytes go through the serial device's descriptor directly (pyserial opened it
    non-blocking): a read is one ``select`` and one ``read`` of whatever the line holds
    (pyserial's adds an ioctl and a second ``select``, and the SDK asks for a status
    packet in two reads, its header first), a write one ``write`` (pyserial's then waits
    in ``select`` for the device to be writable again). Bytes read beyond what the SDK
    asked for wait in a buffer for its next read; ``clearPort`` empties it with the
    device's input queue (flushed only when it holds bytes). Nineteen transactions a cycle on a Bioloid: this halves the
    system calls per cycle. Failures are pyserial's: ``SerialException`` for an I/O error
    and for a read woken with no data.

    ``answer_poll_us`` > 0: the wait sleeps until that long before the answer's last byte
    is due (the request and the answer at the baud rate, plus the servo's return delay),
    polls the line until that long after it, then sleeps for the rest of the timeout (see
    :attr:`~humanoid_hw.hardware_config.DynamixelConfig.answer_poll_us`).
    """

    #: Most bytes taken from the device at once (a status packet is at most a few dozen).
    READ_CHUNK = 1024
    #: Waits that only sleep after an answer came too late for the polling window ...
    POLL_PAUSE = 100
    #: ... by more than this (s): a USB adapter's latency timer is 1 ms or more.
    LATE_ANSWER = 0.001

    def __init__(self, port_name: str, traffic: Traffic, latency_timer_ms: float, answer_poll_us: float = 0.0,
                 return_delay_s: float = 0.0) -> None:
        super().__init__(port_name)
        self.traffic = traffic
        self.latency_timer_ms = latency_timer_ms
        self.answer_poll_s = answer_poll_us / 1e6
        self.return_delay_s = return_delay_s
        self._received = bytearray()  # read from the device, not yet asked for by the SDK
        self._request_on_wire = 0.0  # monotonic time the last request's last byte leaves the adapter
        self._answer_due = 0.0  # monotonic time the awaited answer's last byte should have come
        self._polls_paused = 0  # waits left that sleep without polling (see _readable)
        #: Whether the waits may poll at all (the driver turns it off while its cycles have
        #: time to spare: DynamixelConfig.answer_poll_slack).
        self.polling = True

    def getCurrentTime(self) -> float:  # noqa: N802 - SDK method name
        return time.monotonic() * 1000.0

    def setPacketTimeout(self, packet_length: int) -> None:  # noqa: N802 - SDK method name
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + 2.0 * self.latency_timer_ms + 2.0
        self._answer_due = (max(self._request_on_wire, self.packet_start_time / 1000.0) + self.return_delay_s
                            + self.tx_time_per_byte * packet_length / 1000.0)

    def readPort(self, length: int) -> bytes:  # noqa: N802 - SDK method name
        received = self._received
        if not received:
            remaining_ms = self.packet_timeout - self.getTimeSinceStart()
            received += self.receive(self.READ_CHUNK, max(0.0, remaining_ms) / 1000.0)
        data = bytes(received[:length])
        del received[:length]
        self.traffic.bytes_in += len(data)
        return data

    def clearPort(self) -> None:  # noqa: N802 - SDK method name
        """Drop what the line holds before a request (the SDK calls it before every packet).
        The device's input queue is flushed only when it holds bytes: ``tcflush`` on a
        pseudo-terminal whose other end is busy cost 100-200 us of this thread's CPU per call
        in a control cycle (docs/graph_cost.md), and flushing an empty queue does nothing
        (bytes that come after the check would have come after a flush too)."""
        self._received.clear()
        ser = self.ser
        if ser.is_open and select.select([ser.fd], [], [], 0.0)[0]:
            super().clearPort()

    def flush_input(self) -> None:
        """Flush the device's input queue whatever it seems to hold (before a retry: a late
        answer may still be on its way through the terminal's buffers)."""
        self._received.clear()
        super().clearPort()

    def receive(self, length: int, timeout: float) -> bytes:
        """Up to ``length`` bytes once the line has any (waiting at most ``timeout`` s), b"" if none came."""
        ser = self.ser
        if not ser.is_open:
            raise serial.PortNotOpenError()
        if not self._readable(ser.fd, timeout):
            return b""
        try:
            data = os.read(ser.fd, length)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as error:
            raise serial.SerialException(f"read failed: {error}") from error
        if not data:  # readable but empty: the device hung up, or another reader took the bytes
            raise serial.SerialException("device reports readiness to read but returned no data "
                                         "(device disconnected or multiple access on port?)")
        return data

    def _readable(self, fd: int, timeout: float) -> bool:
        """Whether the line has bytes within ``timeout`` s: slept for, and polled around the answer's due time.

        An answer that came more than ``LATE_ANSWER`` after the polling window (an adapter
        holding bytes back for its latency timer) turns polling off for the next
        ``POLL_PAUSE`` waits: the window would be CPU spent for nothing. Answers a little
        late (the other end's own wake-up) keep it on.
        """
        window = self.answer_poll_s
        if window <= 0.0 or not self.polling:
            return bool(select.select([fd], [], [], timeout)[0])
        if self._polls_paused > 0:
            self._polls_paused -= 1
            return bool(select.select([fd], [], [], timeout)[0])
        now = time.monotonic()
        deadline = now + timeout
        poll_from = min(self._answer_due - window, deadline)
        if now < poll_from and select.select([fd], [], [], poll_from - now)[0]:
            return True
        poll_until = min(self._answer_due + window, deadline)
        now = time.monotonic()
        while now < poll_until:
            if select.select([fd], [], [], 0.0)[0]:
                return True
            now = time.monotonic()
        readable = bool(select.select([fd], [], [], max(0.0, deadline - now))[0])
        if time.monotonic() > poll_until + self.LATE_ANSWER:
            self._polls_paused = self.POLL_PAUSE
        return readable

    def writePort(self, packet: list[int]) -> int:  # noqa: N802 - SDK method name
        ser = self.ser
        if not ser.is_open:
            raise serial.PortNotOpenError()
        data = bytes(packet)
        written = 0
        while written < len(data):
            try:
                written += os.write(ser.fd, data[written:])
            except BlockingIOError:
                pass
            except OSError as error:
                raise serial.SerialException(f"write failed: {error}") from error
            if written < len(data):  # the device's buffer is full: wait until it takes more
                select.select([], [ser.fd], [], None)
        # queued behind what is still on the wire (a SYNC_WRITE is followed at once by a READ)
        self._request_on_wire = (max(time.monotonic(), self._request_on_wire)
                                 + written * self.tx_time_per_byte / 1000.0)
        self.traffic.bytes_out += written
        self.traffic.instructions += 1
        return written


class DynamixelBus:
    """A serial port speaking one Dynamixel protocol, with retries and traffic counters."""

    def __init__(self, port: str, baud: int, protocol: int, retries: int = 3,
                 latency_timer_ms: float = 16.0, answer_poll_us: float = 0.0, return_delay_s: float = 0.0) -> None:
        if protocol not in (1, 2):
            raise ValueError(f"protocol must be 1 or 2, not {protocol!r}")
        self.port_name = port
        self.baud = baud
        self.protocol = protocol
        self.retries = retries
        self.latency_timer_ms = latency_timer_ms
        self.answer_poll_us = answer_poll_us
        self.return_delay_s = return_delay_s
        self.traffic = Traffic()
        self._answer_polling = True
        #: False once the servos are told to answer only PING and READ (status return level 1).
        self.writes_answered = True
        self._packets = PacketHandler(float(protocol))
        self._port: CountingPortHandler | None = None
        #: The last SYNC_WRITE's packet parameters and what they were made from (address, length, data).
        self._sync_write_group: GroupSyncWrite | None = None
        self._sync_write_of: tuple = ()

    # -- port ------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._port is not None

    @property
    def answer_polling(self) -> bool:
        """Whether answers are polled for around their due time (``answer_poll_us``) or only slept for."""
        return self._answer_polling

    @answer_polling.setter
    def answer_polling(self, on: bool) -> None:
        self._answer_polling = on
        if self._port is not None:
            self._port.polling = on

    def open(self) -> None:
        """Open the port at the bus's baud rate; BusError says why it cannot."""
        self.close()
        port = CountingPortHandler(self.port_name, self.traffic, self.latency_timer_ms, self.answer_poll_us,
                                   self.return_delay_s)
        port.polling = self._answer_polling
        try:
            if not port.setBaudRate(self.baud):
                raise BusError(f"baud rate {self.baud} is not supported by the Dynamixel SDK")
        except (serial.SerialException, OSError, termios.error) as error:
            raise BusError(f"cannot open {self.port_name}: {error}") from error
        self._port = port

    def close(self) -> None:
        """Close the port (never raises: it is also how a lost port is cleaned up)."""
        port, self._port = self._port, None
        if port is not None and port.ser is not None:
            with contextlib.suppress(serial.SerialException, OSError, termios.error):
                port.closePort()

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run one SDK call on the open port.

        A serial failure is a lost port (PortLostError, the port closed) unless the
        device is still there and still answers as a terminal: then it was a glitch of
        one attempt (SerialGlitchError), which the caller retries like a timeout.
        """
        port = self._port
        if port is None:
            raise PortLostError(f"{self.port_name} is not open")
        try:
            return function(port, *args)
        except (serial.SerialException, OSError, termios.error) as error:
            port.is_using = False  # the SDK leaves its port marked busy when a call raises
            if self._still_there(port):
                self.traffic.glitches += 1
                raise SerialGlitchError(f"{self.port_name}: {error}") from error
            self.close()
            raise PortLostError(f"{self.port_name} failed: {error}") from error

    def _still_there(self, port: CountingPortHandler) -> bool:
        """The open device is the one the path names and it still answers terminal requests.

        An unplugged USB adapter loses its device node and its open descriptor is hung
        up (terminal requests fail with EIO); so is an emulator's pseudo-terminal whose
        other end closed.
        """
        try:
            fd = port.ser.fileno()
            termios.tcgetattr(fd)
            return os.stat(self.port_name).st_rdev == os.fstat(fd).st_rdev
        except (OSError, termios.error, serial.SerialException, AttributeError):
            return False

    # -- addressed exchanges -----------------------------------------------------------
    def _failure(self, result: int) -> str:
        if result == COMM_RX_TIMEOUT:
            self.traffic.timeouts += 1
            return "timeout"
        if result == COMM_RX_CORRUPT:
            self.traffic.corrupt += 1
            return "corrupt"
        if result == SERIAL_GLITCH:
            return "serial error on a port still present"
        return self._packets.getTxRxResult(result) or f"SDK result {result}"

    def _exchange(self, servo_id: int, attempt: Callable[[], tuple[bytes, int, int]],
                  retries: int | None, answer_length: int | None = None,
                  first: tuple[bytes, int, int] | None = None) -> Reply:
        """Up to 1 + retries attempts of one exchange; ``attempt`` returns (data, result, error).

        After a timeout, an answer of ``answer_length`` parameters that comes within the
        settle time is taken (see :meth:`_late_answer`); without ``answer_length`` (an
        exchange of several packets) the line is only settled. ``first``: the outcome of
        a first attempt already made.
        """
        allowed = 1 + (self.retries if retries is None else retries)
        failure = "not attempted"
        for number in range(1, allowed + 1):
            if number == 1 and first is not None:
                data, result, error = first
            else:
                data, result, error = _attempted(attempt)
            if result == COMM_SUCCESS:
                return Reply(servo_id, bytes(data), error, None, number)
            failure = self._failure(result)
            waited = False
            if result == COMM_RX_TIMEOUT and answer_length is not None:
                late = self._late_answer(servo_id, answer_length)
                if late is not None:
                    return Reply(servo_id, late[0], late[1], None, number)
                waited = True
            if number < allowed:
                self.traffic.retries += 1
                self._settle(waited)
        return Reply(servo_id, failure=failure, attempts=allowed)

    @property
    def _settle_ms(self) -> float:
        """How long a late answer may still come: one more packet timeout's latency part."""
        return 2.0 * self.latency_timer_ms + 2.0

    def _late_answer(self, servo_id: int, length: int) -> tuple[bytes, int] | None:
        """The answer to a timed-out request, if it comes within the settle time: (data, error).

        The servo did answer, only late (a loaded machine, an emulator not scheduled in
        time). The port was flushed when the request was sent, so a status of this servo
        with the request's length is its answer. Counted in ``traffic.late``.
        """
        id_index = 2 if self.protocol == 1 else 4
        extra = () if self.protocol == 1 else (False,)

        def receive(port: CountingPortHandler) -> tuple[list[int], int]:
            port.setPacketTimeoutMillis(self._settle_ms)
            while True:
                status, result = self._packets.rxPacket(port, *extra)
                if result != COMM_SUCCESS or status[id_index] == servo_id:
                    return status, result

        try:
            status, result = self._call(receive)
        except SerialGlitchError:
            return None
        data, result, error = self._checked(status, result, length)
        if result != COMM_SUCCESS:
            return None
        self.traffic.late += 1
        return data, error

    def _settle(self, waited: bool = False) -> None:
        """Before a retry: let a late answer to the failed attempt arrive (unless that wait
        was just done), then drop it.

        The SDK matches a status to its request by ID only; a late status of the
        failed attempt would otherwise be taken for the retry's answer.
        """
        if not waited:
            time.sleep(self._settle_ms / 1000.0)
        with contextlib.suppress(SerialGlitchError):
            self._call(lambda port: port.flush_input())

    # -- packets: the SDK's lists, checked -----------------------------------------------
    def _instruction(self, servo_id: int, instruction: int, params: list[int]) -> list[int]:
        """An instruction packet as the SDK's txRxPacket takes it (header and checksum filled in there)."""
        if self.protocol == 1:
            return [0, 0, servo_id, len(params) + 2, instruction, *params, 0]
        length = len(params) + 3
        return [0, 0, 0, 0, servo_id, length & 0xFF, length >> 8, instruction, *params, 0, 0]

    def _status_parameters(self, status: list[int]) -> tuple[list[int], int]:
        """A status packet's parameters and its ERR byte (packets as the SDK returns them)."""
        if self.protocol == 1:
            return status[5:5 + status[3] - 2], status[4]
        return status[9:9 + (status[5] | status[6] << 8) - 4], status[8]

    def _checked(self, status: list[int] | None, result: int, length: int) -> tuple[bytes, int, int]:
        """(data, result, error) of a status that must carry ``length`` parameters.

        Another length means the answer belongs to another request (a late status of
        the same servo): it is corrupt for this exchange.
        """
        if result != COMM_SUCCESS or status is None:
            return b"", result, 0
        params, error = self._status_parameters(status)
        if len(params) != length:
            return b"", COMM_RX_CORRUPT, 0
        return bytes(params), result, error

    def _transact(self, servo_id: int, instruction: int, params: list[int], answer_length: int,
                  ) -> tuple[bytes, int, int]:
        packet = self._instruction(servo_id, instruction, params)
        status, result, _ = self._call(self._packets.txRxPacket, packet)
        return self._checked(status, result, answer_length)

    def _read_once(self, servo_id: int, address: int, length: int) -> tuple[bytes, int, int]:
        params = ([address, length] if self.protocol == 1  # one byte each; two (little endian) in 2.0
                  else [address & 0xFF, address >> 8, length & 0xFF, length >> 8])
        return self._transact(servo_id, INST_READ, params, length)

    def ping(self, servo_id: int, retries: int | None = None) -> Reply:
        """PING; the reply's data is the model number (2 bytes, little endian).

        Protocol 1.0 has no model number in its PING status: it is READ from address 0
        after the PING (two exchanges); protocol 2.0 returns it in the PING status
        (model number and firmware version).
        """
        def attempt() -> tuple[bytes, int, int]:
            if self.protocol == 2:
                data, result, error = self._transact(servo_id, INST_PING, [], 3)
                return data[:2], result, error
            _, result, error = self._transact(servo_id, INST_PING, [], 0)
            if result != COMM_SUCCESS:
                return b"", result, error
            return self._read_once(servo_id, 0, 2)

        return self._exchange(servo_id, attempt, retries)

    def read(self, servo_id: int, address: int, length: int, retries: int | None = None) -> Reply:
        """READ ``length`` bytes from ``address`` of one servo.

        The first attempt is made here: it is the one that answers, every servo every
        cycle, and the retry machinery is entered only when it did not."""
        first = _attempted(lambda: self._read_once(servo_id, address, length))
        if first[1] == COMM_SUCCESS:
            return Reply(servo_id, first[0], first[2])
        return self._exchange(servo_id, lambda: self._read_once(servo_id, address, length), retries, length, first)

    def read_item(self, servo_id: int, item: ControlItem, retries: int | None = None) -> tuple[int | None, Reply]:
        """One item's value (None without an answer) and the reply."""
        reply = self.read(servo_id, item.address, item.size, retries)
        return (item.decode(reply.data) if reply.ok else None), reply

    def write(self, servo_id: int, item: ControlItem, value: int, retries: int | None = None) -> Reply:
        """WRITE one item; waits for the status only when the servos answer writes."""
        data = list(item.encode(value))
        if not self.writes_answered:
            self._call(self._packets.writeTxOnly, servo_id, item.address, item.size, data)
            return Reply(servo_id)

        def attempt() -> tuple[bytes, int, int]:
            result, error = self._call(self._packets.writeTxRx, servo_id, item.address, item.size, data)
            return b"", result, error

        return self._exchange(servo_id, attempt, retries, answer_length=0)

    def write_maybe_answered(self, servo_id: int, item: ControlItem, value: int) -> Reply:
        """WRITE to a servo whose Status Return Level is unknown: one attempt, and a status
        is consumed if one comes, so that it cannot be taken for the next exchange's answer.
        A timeout is then no failure (the reply says "timeout")."""
        data = list(item.encode(value))

        def attempt() -> tuple[bytes, int, int]:
            result, error = self._call(self._packets.writeTxRx, servo_id, item.address, item.size, data)
            return b"", result, error

        return self._exchange(servo_id, attempt, retries=0, answer_length=0)

    # -- whole-bus exchanges -----------------------------------------------------------
    def sync_write(self, address: int, length: int, data: Mapping[int, bytes]) -> bool:
        """One SYNC_WRITE packet giving each servo its ``length`` bytes at ``address``.

        False when a serial glitch kept the packet from going out (the port is still
        there: the next cycle writes again); PortLostError when the port is gone. The same
        bytes as last time (a held set-point) reuse the packet's parameters, as a
        GroupSyncWrite is meant to be used.
        """
        if not data:
            return True
        group = self._sync_write_group
        if group is None or group.port is not self._port or self._sync_write_of != (address, length, data):
            group = GroupSyncWrite(self._port, self._packets, address, length)
            for servo_id, payload in data.items():
                if len(payload) != length or not group.addParam(servo_id, list(payload)):
                    raise ValueError(f"SYNC_WRITE: servo {servo_id} needs exactly {length} bytes")
            self._sync_write_group, self._sync_write_of = group, (address, length, dict(data))
        try:
            result = self._call(lambda _port: group.txPacket())
        except SerialGlitchError:
            return False
        if result != COMM_SUCCESS:
            raise PortLostError(f"{self.port_name}: SYNC_WRITE not sent ({self._packets.getTxRxResult(result)})")
        return True

    def drain(self) -> None:
        """Wait until everything written has left for the wire (before closing the port)."""
        with contextlib.suppress(SerialGlitchError, PortLostError):
            self._call(lambda port: port.ser.flush())

    def read_many(self, servo_ids: Iterable[int], address: int, length: int) -> dict[int, Reply]:
        """The same block from several servos, in the fewest transactions the protocol allows."""
        ids = list(servo_ids)
        if self.protocol == 1:
            return {i: self.read(i, address, length) for i in ids}
        return self._sync_read(ids, address, length)

    def _sync_read(self, ids: list[int], address: int, length: int) -> dict[int, Reply]:
        """Protocol 2.0: one SYNC_READ; servos lost in it are read one by one (with retries).

        The status packets come back in ID order; once one is missing the SDK's receive
        loop is out of step, so the rest of that cycle falls back to single READs.
        """
        replies: dict[int, Reply] = {}
        if not ids:
            return replies
        group = GroupSyncRead(self._port, self._packets, address, length)
        for servo_id in ids:
            group.addParam(servo_id)
        try:
            if self._call(lambda _port: group.txPacket()) == COMM_SUCCESS:
                for servo_id in ids:
                    data, result, error = self._receive(servo_id, length)
                    if result != COMM_SUCCESS:
                        self._failure(result)
                        self.traffic.retries += 1
                        break
                    replies[servo_id] = Reply(servo_id, data, error)
        except SerialGlitchError:
            self.traffic.retries += 1
        for servo_id in ids:
            if servo_id not in replies:
                replies[servo_id] = self.read(servo_id, address, length)
        return replies

    def _receive(self, servo_id: int, length: int) -> tuple[bytes, int, int]:
        """Protocol 2.0: the next status of ``servo_id`` (others skipped, as the SDK's
        readRx does), checked."""
        while True:
            status, result = self._call(self._packets.rxPacket, False)
            if result != COMM_SUCCESS or status[4] == servo_id:
                return self._checked(status, result, length)

    # -- status errors -----------------------------------------------------------------
    def status_errors(self, error: int) -> list[str]:
        """Readable names of a status packet's ERR byte for this bus's protocol.

        Protocol 2.0 reports hardware faults only as an alert bit: the servo's Hardware
        Error Status says which (see :func:`humanoid_hw.control_tables.decode_bits`).
        """
        if self.protocol == 1:
            return decode_bits(error, PROTOCOL1_ERROR_BITS)
        names = []
        number = error & ~PROTOCOL2_ALERT_BIT
        if number:
            names.append(PROTOCOL2_ERROR_NUMBERS.get(number, f"error {number}"))
        if error & PROTOCOL2_ALERT_BIT:
            names.append("hardware alert")
        return names
