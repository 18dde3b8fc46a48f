"""One Dynamixel bus (one serial port, one protocol) on top of the maker's SDK.

What this layer adds to ``dynamixel_sdk``:

- the fewest transactions the protocol allows for reading many servos: protocol 1.0
  has no SYNC_READ, so one READ of a contiguous block per servo; protocol 2.0 reads
  every servo with one SYNC_READ of the same block (GroupSyncRead);
- writing every servo's goal in one SYNC_WRITE packet;
- bounded retries on timeouts and corrupted status packets, counted;
- the serial device vanishing (USB adapter unplugged) as :class:`PortLostError`
  instead of an exception from deep inside the SDK;
- bytes on the wire in both directions, counted (for the bus benchmark);
- a packet wait that sleeps in ``select()`` instead of spinning, a monotonic clock,
  and the adapter's latency timer as a parameter instead of the SDK's constant 16 ms.
"""

from __future__ import annotations

import contextlib
import select
import termios
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import serial
from dynamixel_sdk import (
    COMM_RX_CORRUPT,
    COMM_RX_TIMEOUT,
    COMM_SUCCESS,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
    PortHandler,
)

from humanoid_hw.servo_models import (
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


@dataclass
class Traffic:
    """Cumulative counters of one bus; subtract two snapshots for one cycle's share."""

    bytes_out: int = 0
    bytes_in: int = 0
    instructions: int = 0
    timeouts: int = 0
    corrupt: int = 0
    retries: int = 0

    @property
    def bytes_total(self) -> int:
        return self.bytes_out + self.bytes_in

    def snapshot(self) -> Traffic:
        return replace(self)

    def since(self, earlier: Traffic) -> Traffic:
        return Traffic(self.bytes_out - earlier.bytes_out, self.bytes_in - earlier.bytes_in,
                       self.instructions - earlier.instructions, self.timeouts - earlier.timeouts,
                       self.corrupt - earlier.corrupt, self.retries - earlier.retries)


@dataclass(frozen=True)
class Reply:
    """Outcome of one addressed exchange (after retries)."""

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
    """

    def __init__(self, port_name: str, traffic: Traffic, latency_timer_ms: float) -> None:
        super().__init__(port_name)
        self.traffic = traffic
        self.latency_timer_ms = latency_timer_ms

    def getCurrentTime(self) -> float:  # noqa: N802 - SDK method name
        return time.monotonic() * 1000.0

    def setPacketTimeout(self, packet_length: int) -> None:  # noqa: N802 - SDK method name
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + 2.0 * self.latency_timer_ms + 2.0

    def readPort(self, length: int) -> bytes:  # noqa: N802 - SDK method name
        remaining_ms = self.packet_timeout - self.getTimeSinceStart()
        if remaining_ms > 0 and self.ser.in_waiting == 0:
            select.select([self.ser.fileno()], [], [], remaining_ms / 1000.0)
        data = self.ser.read(length)
        self.traffic.bytes_in += len(data)
        return data

    def writePort(self, packet: list[int]) -> int:  # noqa: N802 - SDK method name
        written = self.ser.write(bytes(packet))
        self.traffic.bytes_out += written
        self.traffic.instructions += 1
        return written


class DynamixelBus:
    """A serial port speaking one Dynamixel protocol, with retries and traffic counters."""

    def __init__(self, port: str, baud: int, protocol: int, retries: int = 3,
                 latency_timer_ms: float = 16.0) -> None:
        if protocol not in (1, 2):
            raise ValueError(f"protocol must be 1 or 2, not {protocol!r}")
        self.port_name = port
        self.baud = baud
        self.protocol = protocol
        self.retries = retries
        self.latency_timer_ms = latency_timer_ms
        self.traffic = Traffic()
        #: False once the servos are told to answer only PING and READ (status return level 1).
        self.writes_answered = True
        self._packets = PacketHandler(float(protocol))
        self._port: CountingPortHandler | None = None

    # -- port ------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._port is not None

    def open(self) -> None:
        """Open the port at the bus's baud rate; BusError says why it cannot."""
        self.close()
        port = CountingPortHandler(self.port_name, self.traffic, self.latency_timer_ms)
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
        """Run one SDK call on the open port; a serial failure becomes PortLostError."""
        if self._port is None:
            raise PortLostError(f"{self.port_name} is not open")
        try:
            return function(self._port, *args)
        except (serial.SerialException, OSError, termios.error) as error:
            self.close()
            raise PortLostError(f"{self.port_name} failed: {error}") from error

    # -- addressed exchanges -----------------------------------------------------------
    def _failure(self, result: int) -> str:
        if result == COMM_RX_TIMEOUT:
            self.traffic.timeouts += 1
            return "timeout"
        if result == COMM_RX_CORRUPT:
            self.traffic.corrupt += 1
            return "corrupt"
        return self._packets.getTxRxResult(result) or f"SDK result {result}"

    def _exchange(self, servo_id: int, attempt: Callable[[], tuple[bytes, int, int]],
                  retries: int | None) -> Reply:
        """Up to 1 + retries attempts of one exchange; ``attempt`` returns (data, result, error)."""
        allowed = 1 + (self.retries if retries is None else retries)
        failure = "not attempted"
        for number in range(1, allowed + 1):
            data, result, error = attempt()
            if result == COMM_SUCCESS:
                return Reply(servo_id, bytes(data), error, None, number)
            failure = self._failure(result)
            if number < allowed:
                self.traffic.retries += 1
                self._settle()
        return Reply(servo_id, failure=failure, attempts=allowed)

    def _settle(self) -> None:
        """Before a retry: let a late answer to the failed attempt arrive, then drop it.

        The SDK matches a status to its request by ID only; a late status of the
        failed attempt would otherwise be taken for the retry's answer.
        """
        time.sleep((2.0 * self.latency_timer_ms + 2.0) / 1000.0)
        self._call(lambda port: port.clearPort())

    def ping(self, servo_id: int, retries: int | None = None) -> Reply:
        """PING; the reply's data is the model number (2 bytes, little endian).

        Protocol 1.0 has no model number in its PING status: the SDK reads address 0
        after the PING (two exchanges); protocol 2.0 returns it in the PING status.
        """
        def attempt() -> tuple[bytes, int, int]:
            model_number, result, error = self._call(self._packets.ping, servo_id)
            return int(model_number).to_bytes(2, "little"), result, error

        return self._exchange(servo_id, attempt, retries)

    def read(self, servo_id: int, address: int, length: int, retries: int | None = None) -> Reply:
        """READ ``length`` bytes from ``address`` of one servo."""
        def attempt() -> tuple[bytes, int, int]:
            data, result, error = self._call(self._packets.readTxRx, servo_id, address, length)
            if result == COMM_SUCCESS and len(data) != length:  # a stray status of another request
                return b"", COMM_RX_CORRUPT, 0
            return data, result, error

        return self._exchange(servo_id, attempt, retries)

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

        return self._exchange(servo_id, attempt, retries)

    def write_maybe_answered(self, servo_id: int, item: ControlItem, value: int) -> Reply:
        """WRITE to a servo whose Status Return Level is unknown: one attempt, and a status
        is consumed if one comes, so that it cannot be taken for the next exchange's answer.
        A timeout is then no failure (the reply says "timeout")."""
        data = list(item.encode(value))

        def attempt() -> tuple[bytes, int, int]:
            result, error = self._call(self._packets.writeTxRx, servo_id, item.address, item.size, data)
            return b"", result, error

        return self._exchange(servo_id, attempt, retries=0)

    # -- whole-bus exchanges -----------------------------------------------------------
    def sync_write(self, address: int, length: int, data: Mapping[int, bytes]) -> None:
        """One SYNC_WRITE packet giving each servo its ``length`` bytes at ``address``."""
        if not data:
            return
        group = GroupSyncWrite(self._port, self._packets, address, length)
        for servo_id, payload in data.items():
            if len(payload) != length or not group.addParam(servo_id, list(payload)):
                raise ValueError(f"SYNC_WRITE: servo {servo_id} needs exactly {length} bytes")
        result = self._call(lambda _port: group.txPacket())
        if result != COMM_SUCCESS:
            raise PortLostError(f"{self.port_name}: SYNC_WRITE not sent ({self._packets.getTxRxResult(result)})")

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
        if self._call(lambda _port: group.txPacket()) == COMM_SUCCESS:
            for servo_id in ids:
                data, result, error = self._call(self._packets.readRx, servo_id, length)
                if result == COMM_SUCCESS and len(data) != length:
                    result = COMM_RX_CORRUPT
                if result != COMM_SUCCESS:
                    self._failure(result)
                    self.traffic.retries += 1
                    break
                replies[servo_id] = Reply(servo_id, bytes(data), error)
        for servo_id in ids:
            if servo_id not in replies:
                replies[servo_id] = self.read(servo_id, address, length)
        return replies

    # -- status errors -----------------------------------------------------------------
    def status_errors(self, error: int) -> list[str]:
        """Readable names of a status packet's ERR byte for this bus's protocol.

        Protocol 2.0 reports hardware faults only as an alert bit: the servo's Hardware
        Error Status says which (see :func:`humanoid_hw.servo_models.decode_bits`).
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
