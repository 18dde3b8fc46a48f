"""The Dynamixel byte protocol seen from the servo side: parse instructions, build statuses.

Written from the protocol description, independently of the maker's SDK that the
driver uses: the tests run the SDK against this codec, so a mistake in either shows
up as a disagreement instead of cancelling out.

Protocol 1.0: ``FF FF ID LEN INST P... CHK``, LEN = params + 2,
CHK = ~(ID + LEN + INST + P...) & 0xFF. Status: ``FF FF ID LEN ERR P... CHK``.

Protocol 2.0: ``FF FF FD 00 ID LEN_L LEN_H INST P... CRC_L CRC_H``, LEN = stuffed
params + 3, CRC-16 (polynomial 0x8005, initial 0, not reflected) over every byte
before it; inside INST..P an ``FF FF FD`` is sent as ``FF FF FD FD`` (byte stuffing).
Status: INST = 0x55 followed by ERR and the parameters.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

BROADCAST_ID = 0xFE
HEADER1 = b"\xff\xff"
HEADER2 = b"\xff\xff\xfd\x00"
#: Longest packet accepted (bytes after the header); anything longer is noise.
MAX_LENGTH = 1024


class Instruction(enum.IntEnum):
    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    FACTORY_RESET = 0x06
    REBOOT = 0x08
    STATUS = 0x55
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    BULK_READ = 0x92
    BULK_WRITE = 0x93


@dataclass(frozen=True)
class InstructionPacket:
    """One instruction as received: parameters already unstuffed, checksum verdict kept."""

    protocol: int
    servo_id: int
    instruction: int
    params: bytes
    raw: bytes
    intact: bool


def checksum(body: bytes) -> int:
    """Protocol 1.0 checksum of ID..last parameter."""
    return ~sum(body) & 0xFF


def crc16(data: bytes) -> int:
    """Protocol 2.0 CRC-16: polynomial 0x8005, initial value 0, MSB first, no final XOR."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def stuff(payload: bytes) -> bytes:
    """Insert ``FD`` after every ``FF FF FD`` so a header never appears inside a packet."""
    out = bytearray()
    for byte in payload:
        out.append(byte)
        if byte == 0xFD and out[-3:-1] == b"\xff\xff" and len(out) >= 3:
            out.append(0xFD)
    return bytes(out)


def unstuff(payload: bytes) -> bytes:
    """Undo :func:`stuff`: drop the ``FD`` that follows ``FF FF FD``."""
    out = bytearray()
    index = 0
    while index < len(payload):
        out.append(payload[index])
        if out[-3:] == b"\xff\xff\xfd" and index + 1 < len(payload) and payload[index + 1] == 0xFD:
            index += 1
        index += 1
    return bytes(out)


def status_packet(protocol: int, servo_id: int, error: int, params: bytes = b"") -> bytes:
    """The status packet a servo sends back."""
    if protocol == 1:
        body = bytes([servo_id, len(params) + 2, error]) + params
        return HEADER1 + body + bytes([checksum(body)])
    payload = stuff(bytes([Instruction.STATUS, error]) + params)
    packet = HEADER2 + bytes([servo_id]) + (len(payload) + 2).to_bytes(2, "little") + payload
    return packet + crc16(packet).to_bytes(2, "little")


def instruction_packet(protocol: int, servo_id: int, instruction: int, params: bytes = b"") -> bytes:
    """An instruction packet (for tests and tools that talk to the emulator without the SDK)."""
    if protocol == 1:
        body = bytes([servo_id, len(params) + 2, instruction]) + params
        return HEADER1 + body + bytes([checksum(body)])
    payload = stuff(bytes([instruction]) + params)
    packet = HEADER2 + bytes([servo_id]) + (len(payload) + 2).to_bytes(2, "little") + payload
    return packet + crc16(packet).to_bytes(2, "little")


class PacketParser:
    """Cuts a byte stream into instruction packets, resynchronising on noise."""

    def __init__(self, protocol: int) -> None:
        if protocol not in (1, 2):
            raise ValueError(f"protocol must be 1 or 2, not {protocol!r}")
        self.protocol = protocol
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[InstructionPacket]:
        """Add received bytes; return every packet they complete."""
        self._buffer += data
        packets = []
        while (packet := self._next()) is not None:
            packets.append(packet)
        return packets

    def _next(self) -> InstructionPacket | None:
        return self._next_protocol1() if self.protocol == 1 else self._next_protocol2()

    def _skip_to(self, header: bytes) -> bool:
        """Drop bytes before the next header; False when no complete header is buffered."""
        start = self._buffer.find(header)
        if start < 0:
            keep = len(header) - 1  # a header may be split across reads
            del self._buffer[:max(0, len(self._buffer) - keep)]
            return False
        del self._buffer[:start]
        return True

    def _next_protocol1(self) -> InstructionPacket | None:
        while self._skip_to(HEADER1):
            if len(self._buffer) < 4:
                return None
            servo_id, length = self._buffer[2], self._buffer[3]
            if servo_id == 0xFF or length < 2:
                del self._buffer[0]
                continue
            total = 4 + length
            if len(self._buffer) < total:
                return None
            raw = bytes(self._buffer[:total])
            del self._buffer[:total]
            return InstructionPacket(1, servo_id, raw[4], raw[5:-1], raw, checksum(raw[2:-1]) == raw[-1])
        return None

    def _next_protocol2(self) -> InstructionPacket | None:
        while self._skip_to(HEADER2):
            if len(self._buffer) < 7:
                return None
            servo_id = self._buffer[4]
            length = int.from_bytes(self._buffer[5:7], "little")
            if servo_id == 0xFF or not 3 <= length <= MAX_LENGTH:
                del self._buffer[0]
                continue
            total = 7 + length
            if len(self._buffer) < total:
                return None
            raw = bytes(self._buffer[:total])
            del self._buffer[:total]
            intact = crc16(raw[:-2]) == int.from_bytes(raw[-2:], "little")
            payload = unstuff(raw[7:-2])
            return InstructionPacket(2, servo_id, payload[0], payload[1:], raw, intact)
        return None
