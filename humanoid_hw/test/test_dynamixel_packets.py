"""The emulator's byte codec against known packets, the maker's SDK, and its own inverse."""

import random

import pytest
from dynamixel_sdk.protocol2_packet_handler import Protocol2PacketHandler

from humanoid_hw.emulator import (
    InstructionPacket,
    PacketParser,
    crc16,
    instruction_packet,
    status_packet,
    stuff,
    unstuff,
)

PING1 = bytes.fromhex("FF FF 01 02 01 FB")
PING2 = bytes.fromhex("FF FF FD 00 01 03 00 01 19 4E")
#: e-manual (protocol 2.0, PING example): status of an XM430-W210 (model 1030, firmware 38).
PING2_STATUS_EXAMPLE = bytes.fromhex("FF FF FD 00 01 07 00 55 00 06 04 26 65 5D")


def sdk_crc(data: bytes) -> int:
    """The maker's table-driven CRC: a third implementation to compare with."""
    return Protocol2PacketHandler().updateCRC(0, list(data), len(data))


def test_known_pings_are_built_and_parsed():
    assert instruction_packet(1, 1, 0x01) == PING1
    assert instruction_packet(2, 1, 0x01) == PING2
    (p1,) = PacketParser(1).feed(PING1)
    (p2,) = PacketParser(2).feed(PING2)
    assert (p1.servo_id, p1.instruction, p1.params, p1.intact) == (1, 1, b"", True)
    assert (p2.servo_id, p2.instruction, p2.params, p2.intact) == (1, 1, b"", True)


def test_crc16_matches_the_manual_example_and_the_sdk():
    assert crc16(PING2[:-2]) == 0x4E19
    assert crc16(PING2_STATUS_EXAMPLE[:-2]) == 0x5D65
    assert status_packet(2, 1, 0, bytes([0x06, 0x04, 0x26])) == PING2_STATUS_EXAMPLE
    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        assert crc16(data) == sdk_crc(data)


def test_protocol1_status_checksum():
    # ID 1, no error, no parameter: FF FF 01 02 00 ~(1 + 2 + 0) = FC
    assert status_packet(1, 1, 0) == bytes.fromhex("FF FF 01 02 00 FC")
    # READ answer of 2 bytes (512) with the overload bit: checksum by hand
    body = [1, 4, 0x20, 0x00, 0x02]
    assert status_packet(1, 1, 0x20, b"\x00\x02") == bytes([0xFF, 0xFF, *body, ~sum(body) & 0xFF])


def test_byte_stuffing_of_a_payload_containing_the_header():
    assert stuff(bytes.fromhex("01 FF FF FD 02")) == bytes.fromhex("01 FF FF FD FD 02")
    assert unstuff(bytes.fromhex("01 FF FF FD FD 02")) == bytes.fromhex("01 FF FF FD 02")
    params = bytes.fromhex("E0 00 FF FF FD 00")  # WRITE address 224: FF FF FD 00
    packet = instruction_packet(2, 3, 0x03, params)
    # LEN counts the stuffed byte: INST + 6 params + 1 stuffing + CRC 2 = 10
    assert packet[5:7] == (10).to_bytes(2, "little")
    assert b"\xff\xff\xfd\xfd" in packet[7:]
    assert crc16(packet[:-2]) == sdk_crc(packet[:-2])
    (parsed,) = PacketParser(2).feed(packet)
    assert parsed.params == params and parsed.intact


@pytest.mark.parametrize("seed", range(20))
def test_stuffing_round_trips(seed):
    rng = random.Random(seed)
    alphabet = [0xFF, 0xFD, 0x00, 0x55]
    payload = bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
    stuffed = stuff(payload)
    assert unstuff(stuffed) == payload
    assert b"\xff\xff\xfd" not in stuffed.replace(b"\xff\xff\xfd\xfd", b"")


def test_parser_resynchronises_on_noise_and_split_reads():
    parser = PacketParser(1)
    stream = b"\x00\xff\x13" + PING1 + bytes.fromhex("FF FF 02 04 02 24 02 D1")
    packets: list[InstructionPacket] = []
    for byte in stream:  # one byte at a time, as a slow line delivers them
        packets += parser.feed(bytes([byte]))
    assert [(p.servo_id, p.instruction, p.params) for p in packets] == [(1, 1, b""), (2, 2, b"\x24\x02")]
    assert all(p.intact for p in packets)


def test_corrupted_packets_are_flagged_not_dropped():
    bad1 = PING1[:-1] + b"\x00"
    bad2 = PING2[:-1] + b"\x00"
    assert PacketParser(1).feed(bad1)[0].intact is False
    assert PacketParser(2).feed(bad2)[0].intact is False


def test_the_emulator_survives_malformed_instructions():
    import serial

    from humanoid_hw.emulator import BusEmulator

    with BusEmulator({1: "AX-12"}) as emulator:
        with serial.Serial(emulator.port, 1_000_000, timeout=5) as line:
            line.write(instruction_packet(1, 1, 0x02, b""))  # READ without address and length
            line.write(instruction_packet(1, 0xFE, 0x83, b"\x1e"))  # SYNC_WRITE cut short
            line.write(instruction_packet(1, 1, 0x7F))  # unknown instruction
            line.write(PING1)
            answers = line.read(6 + 6 + 6)
        assert emulator.wait_for(lambda: emulator.packets_handled == 4, timeout=10)
    assert answers[-6:] == bytes.fromhex("FF FF 01 02 00 FC")  # still answering
    assert answers[4] & 0x08  # the READ without parameters: range error bit
    assert answers[10] & 0x40  # the unknown instruction: instruction error bit
