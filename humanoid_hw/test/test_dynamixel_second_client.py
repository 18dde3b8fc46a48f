"""The emulator against a second client that shares no code with the driver or the SDK.

The client is written here from the protocol 1.0 description with raw pyserial bytes,
following the access pattern of pypot's ``DxlIO`` (an independent Dynamixel library):
every write is a SYNC_WRITE that nobody answers, every read a READ per servo, and stale
input is discarded before each packet. It also sends what pypot does not: WRITEs that a
servo at Status Return Level 1 leaves unanswered, and a write and a read in one
``write()`` call. Every write must be applied and every byte received, in order.

pypot also discards its *unsent output* before each packet. On a pseudo-terminal such a
flush can drop the packet written just before it (the kernel hands written bytes to the
emulator asynchronously); the emulator cannot prevent that and reports it instead
(docs/bus_emulator.md), which the flush test checks.
"""

import random
import sys
import termios

import pytest
import serial

from humanoid_hw import control_table
from humanoid_hw.emulator import OUTPUT_FLUSH_WARNING, BusEmulator, robot_servos

PATIENCE = 60.0
#: Protocol 1.0 instructions and the AX-12 items used, from the e-manual (not the project's tables).
READ, WRITE, SYNC_WRITE, BROADCAST = 0x02, 0x03, 0x83, 0xFE
TORQUE_ENABLE, LED, GOAL_POSITION, PRESENT_POSITION, STATUS_RETURN_LEVEL = 24, 25, 30, 36, 16
TRIALS = 200


def packet(servo_id: int, instruction: int, params: bytes = b"") -> bytes:
    """FF FF ID LEN INST P... CHK, LEN = params + 2, CHK = ~(ID + LEN + INST + P...)."""
    body = bytes([servo_id, len(params) + 2, instruction]) + params
    return b"\xff\xff" + body + bytes([~sum(body) & 0xFF])


class RawClient:
    """A Dynamixel protocol 1.0 master on a serial port, in the manner of pypot's DxlIO."""

    def __init__(self, port: str) -> None:
        self.line = serial.Serial(port, 1_000_000, timeout=PATIENCE, write_timeout=PATIENCE)
        self.written = bytearray()

    def close(self) -> None:
        self.line.close()

    def send(self, data: bytes) -> None:
        """Drop stale input, then write (no answer awaited)."""
        self.line.reset_input_buffer()
        self.line.write(data)
        self.written += data

    def sync_write(self, address: int, values: dict[int, bytes]) -> None:
        length = len(next(iter(values.values())))
        params = bytes([address, length]) + b"".join(bytes([i]) + v for i, v in values.items())
        self.send(packet(BROADCAST, SYNC_WRITE, params))

    def answer(self, servo_id: int) -> bytes:
        """The status packet of ``servo_id``: header first, then as many bytes as it announces."""
        header = self.line.read(4)
        assert len(header) == 4 and header[:3] == bytes([0xFF, 0xFF, servo_id]), header.hex(" ")
        rest = self.line.read(header[3])
        assert len(rest) == header[3], "status packet cut short"
        body = header[2:] + rest[:-1]
        assert rest[-1] == ~sum(body) & 0xFF, "bad status checksum"
        assert rest[0] == 0, f"servo {servo_id} reports error bits {rest[0]:#04x}"
        return rest[1:-1]

    def read(self, servo_id: int, address: int, length: int) -> int:
        self.send(packet(servo_id, READ, bytes([address, length])))
        return int.from_bytes(self.answer(servo_id), "little")


@pytest.fixture
def bioloid_bus():
    with BusEmulator(robot_servos("bioloid", 1)) as emulator:
        client = RawClient(emulator.port)
        yield emulator, client
        client.close()


def test_every_write_of_a_pypot_like_loop_is_applied(bioloid_bus):
    """The loop that lost torque and goal writes: torque off, read all 18 positions, torque
    on, read it back; a goal, read back; an unanswered WRITE and a READ in one write()."""
    emulator, client = bioloid_bus
    ids = emulator.servo_ids
    client.sync_write(STATUS_RETURN_LEVEL, dict.fromkeys(ids, b"\x01"))  # WRITEs go unanswered
    misses = []
    for trial in range(TRIALS):
        servo_id = ids[trial % len(ids)]
        client.sync_write(TORQUE_ENABLE, {servo_id: b"\x00"})
        positions = [client.read(i, PRESENT_POSITION, 2) for i in ids]
        client.sync_write(TORQUE_ENABLE, {servo_id: b"\x01"})
        if client.read(servo_id, TORQUE_ENABLE, 1) != 1:
            misses.append((trial, "torque"))
        goal = 312 + trial
        client.sync_write(GOAL_POSITION, {servo_id: goal.to_bytes(2, "little")})
        if client.read(servo_id, GOAL_POSITION, 2) != goal:
            misses.append((trial, "goal"))
        led = trial % 2
        client.send(packet(servo_id, WRITE, bytes([LED, led])) + packet(servo_id, READ, bytes([LED, 1])))
        if int.from_bytes(client.answer(servo_id), "little") != led:
            misses.append((trial, "led"))
        assert all(0 <= p <= 1023 for p in positions)
    assert misses == []
    assert b"".join(emulator.received) == bytes(client.written)  # every byte, in order
    assert emulator.output_flushes == 0 and not emulator.handler_errors


@pytest.mark.parametrize("timing", [False, True], ids=["untimed", "wire-timing"])
def test_packets_split_and_merged_at_random_arrive_whole_and_in_order(timing):
    """A stream of unanswered and answered packets written in random pieces (one byte, a
    packet and a half, several packets at once) while answers are read as they come."""
    rng = random.Random(21)
    with BusEmulator(robot_servos("bioloid", 1), timing=timing) as emulator:
        for servo_id in emulator.servo_ids:
            emulator.set_register(servo_id, "return_delay_time", 0)
        stream, answerers, answer_bytes, final_goal = bytearray(), [], 0, {}
        for number in range(1000):
            servo_id = rng.choice(emulator.servo_ids)
            kind = rng.randrange(4)
            if kind == 0:
                stream += packet(BROADCAST, SYNC_WRITE, bytes([TORQUE_ENABLE, 1, servo_id, number % 2]))
            elif kind == 1:
                goals = {i: 200 + rng.randrange(600) for i in emulator.servo_ids}
                final_goal |= goals
                stream += packet(BROADCAST, SYNC_WRITE, bytes([GOAL_POSITION, 2]) + b"".join(
                    bytes([i]) + g.to_bytes(2, "little") for i, g in goals.items()))
            elif kind == 2:
                stream += packet(servo_id, WRITE, bytes([LED, number % 2]))
                answerers.append(servo_id)
                answer_bytes += 6
            else:
                stream += packet(servo_id, READ, bytes([PRESENT_POSITION, 2]))
                answerers.append(servo_id)
                answer_bytes += 8
        with serial.Serial(emulator.port, 1_000_000, timeout=0, write_timeout=PATIENCE) as line:
            answers, position = bytearray(), 0
            while position < len(stream):
                piece = rng.choice([1, 2, 3, 9, 14, 64, 200])
                position += line.write(stream[position:position + piece])
                answers += line.read(4096)
            line.timeout = PATIENCE
            answers += line.read(answer_bytes - len(answers))
        assert b"".join(emulator.received) == bytes(stream)
        assert status_ids(bytes(answers)) == answerers
        assert {i: emulator.register(i, "goal_position") for i in final_goal} == final_goal


def status_ids(answers: bytes) -> list[int]:
    """The IDs of consecutive protocol 1.0 status packets."""
    ids, offset = [], 0
    while offset < len(answers):
        assert answers[offset:offset + 2] == b"\xff\xff", answers[offset:].hex(" ")
        ids.append(answers[offset + 2])
        offset += 4 + answers[offset + 3]
    return ids


def test_a_client_discarding_its_unsent_output_is_reported_once():
    """pypot's flush before each packet: each output flush is counted, one warning is given.
    Input flushes (the SDK's clearPort, the driver's) are not output flushes."""
    warnings = []
    with BusEmulator({1: "AX-12"}, warn=warnings.append) as emulator:
        client = RawClient(emulator.port)
        try:
            for expected in (1, 2):
                client.line.reset_input_buffer()
                client.line.reset_output_buffer()
                assert emulator.wait_for(lambda n=expected: emulator.output_flushes == n, timeout=PATIENCE)
                assert client.read(1, PRESENT_POSITION, 2) == 512  # the bus serves on
            termios.tcflush(client.line.fileno(), termios.TCIFLUSH)
            assert client.read(1, LED, 1) == 0
        finally:
            client.close()
    assert emulator.output_flushes == 2
    assert warnings == [OUTPUT_FLUSH_WARNING]
    assert "TCOFLUSH" in OUTPUT_FLUSH_WARNING and "docs/bus_emulator.md" in OUTPUT_FLUSH_WARNING


def test_sdk_sync_writes_are_all_applied():
    """The maker's SDK: a SYNC_WRITE of 18 goals then a READ of one, many times; the emulator
    must have every packet and every goal (a READ of the SDK that times out on a loaded
    machine may take the late answer of the previous one: that is the SDK's matching by ID,
    not a lost write, so the register is checked in the emulator)."""
    from dynamixel_sdk import COMM_SUCCESS, GroupSyncWrite, PacketHandler, PortHandler

    goal = control_table("AX-12").item("goal_position")
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # the SDK polls holding the GIL: let the emulator thread in
    with BusEmulator(robot_servos("bioloid", 1)) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        packets = PacketHandler(1.0)
        try:
            for trial in range(TRIALS):
                value = 300 + trial
                group = GroupSyncWrite(port, packets, goal.address, goal.size)
                for servo_id in emulator.servo_ids:
                    group.addParam(servo_id, list(goal.encode(value)))
                assert group.txPacket() == COMM_SUCCESS
                packets.read2ByteTxRx(port, 1 + trial % 18, goal.address)
                assert emulator.wait_for(lambda n=2 * trial + 2: emulator.packets_handled >= n, timeout=PATIENCE)
                assert {emulator.register(i, "goal_position") for i in emulator.servo_ids} == {value}, trial
        finally:
            port.closePort()
            sys.setswitchinterval(switch_interval)
    assert emulator.packets_handled == 2 * TRIALS and emulator.output_flushes == 0
