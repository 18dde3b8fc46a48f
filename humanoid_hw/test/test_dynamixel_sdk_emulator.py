"""The maker's SDK, used as any user would use it, talking to the emulator's pseudo-terminal."""

import contextlib
import sys
import threading
import time

import pytest
from dynamixel_sdk import (
    COMM_NOT_AVAILABLE,
    COMM_RX_TIMEOUT,
    COMM_SUCCESS,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
    PortHandler,
)
from dynamixel_sdk.protocol1_packet_handler import ERRBIT_OVERLOAD
from dynamixel_sdk.protocol2_packet_handler import Protocol2PacketHandler

from humanoid_hw import control_table
from humanoid_hw.emulator import BusEmulator

MODELS = {1: "AX-12", 2: "XL430"}
IDS = (1, 2, 3)
#: Values written then read back, per item the driver uses (within each family's ranges).
WRITES = {
    1: {"return_delay_time": 0, "status_return_level": 2, "min_position_limit": 100, "max_position_limit": 900,
        "torque_enable": 1, "led": 1, "goal_position": 600, "goal_speed": 100, "torque_limit": 512,
        "shutdown": 36},
    2: {"return_delay_time": 0, "status_return_level": 2, "min_position_limit": 500, "max_position_limit": 3500,
        "torque_enable": 1, "led": 1, "goal_position": 2500, "goal_speed": 100, "shutdown": 52},
}
READ_ONLY = ("model_number", "id", "present_position", "present_speed", "present_load", "present_voltage",
             "present_temperature", "moving")


def checksum(body: bytes) -> int:
    return ~sum(body) & 0xFF


def sdk_crc(data: bytes) -> int:
    return Protocol2PacketHandler().updateCRC(0, list(data), len(data))


#: The SDK's latency timer (ms) for answers the tests wait for: a packet times out after twice
#: it, about 5 s instead of the real adapter's 34 ms (16). The SDK never retries, and a loaded
#: machine can leave the emulator's thread waiting for over a second: CI once had a READ go
#: unanswered for the 0.5 s a timer of 250 allowed, and has held other processes 1-1.5 s.
PATIENT_LATENCY_TIMER = 2500
#: The adapter's real latency timer, for a packet that must go unanswered: waiting longer for
#: the answer that must not come only slows the test.
ADAPTER_LATENCY_TIMER = 16


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    """The emulator shares the test's CPU. The SDK polls the port in a tight loop holding
    the GIL, so the emulator thread waits up to the 5 ms switch interval for each step of
    an answer: shorten it. And give the SDK the patience a loaded machine needs
    (:data:`PATIENT_LATENCY_TIMER`), so that a late answer cannot pass for a missing one."""
    monkeypatch.setattr("dynamixel_sdk.port_handler.LATENCY_TIMER", PATIENT_LATENCY_TIMER)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(previous)


@contextlib.contextmanager
def expecting_silence():
    """The adapter's own timeout for packets that must go unanswered."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("dynamixel_sdk.port_handler.LATENCY_TIMER", ADAPTER_LATENCY_TIMER)
        yield


@pytest.fixture(params=[1, 2], ids=["protocol1", "protocol2"])
def protocol(request):
    return request.param


@pytest.fixture
def emulator(protocol):
    with BusEmulator(dict.fromkeys(IDS, MODELS[protocol])) as emulator:
        yield emulator


@pytest.fixture
def port(emulator):
    port = PortHandler(emulator.port)
    assert port.openPort()
    assert port.setBaudRate(1_000_000)
    yield port
    port.closePort()


def read_item(packets, port, servo_id, item):
    functions = {1: packets.read1ByteTxRx, 2: packets.read2ByteTxRx, 4: packets.read4ByteTxRx}
    value, result, error = functions[item.size](port, servo_id, item.address)
    assert result == COMM_SUCCESS, packets.getTxRxResult(result)
    return value, error


def write_item(packets, port, servo_id, item, value):
    functions = {1: packets.write1ByteTxRx, 2: packets.write2ByteTxRx, 4: packets.write4ByteTxRx}
    result, error = functions[item.size](port, servo_id, item.address, value)
    assert result == COMM_SUCCESS, packets.getTxRxResult(result)
    return error


def test_ping_returns_the_model_number_and_an_absent_id_times_out(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    expected = control_table(MODELS[protocol]).model_number
    for servo_id in IDS:
        model_number, result, error = packets.ping(port, servo_id)
        assert (model_number, result, error) == (expected, COMM_SUCCESS, 0)
    with expecting_silence():
        assert packets.ping(port, 9)[1] == COMM_RX_TIMEOUT


def test_known_protocol1_ping_bytes_and_answer():
    with BusEmulator({1: "AX-12"}) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            model_number, result, _ = PacketHandler(1.0).ping(port, 1)
        finally:
            port.closePort()
    assert (model_number, result) == (12, COMM_SUCCESS)
    assert emulator.received[0] == bytes.fromhex("FF FF 01 02 01 FB")
    assert emulator.sent[0] == bytes([0xFF, 0xFF, 1, 2, 0, checksum(bytes([1, 2, 0]))]) == bytes.fromhex(
        "FF FF 01 02 00 FC")
    # The SDK then READs the model number (address 0, 2 bytes): 12 = 0x000C.
    assert emulator.received[1] == bytes.fromhex("FF FF 01 04 02 00 02 F6")
    body = bytes([1, 4, 0, 12, 0])
    assert emulator.sent[1] == b"\xff\xff" + body + bytes([checksum(body)])


def test_known_protocol2_ping_bytes_and_answer():
    with BusEmulator({1: "XL430"}) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            model_number, result, _ = PacketHandler(2.0).ping(port, 1)
        finally:
            port.closePort()
    assert (model_number, result) == (1060, COMM_SUCCESS)
    assert emulator.received[0] == bytes.fromhex("FF FF FD 00 01 03 00 01 19 4E")
    # Status: LEN 7, INST 0x55, ERR 0, model 1060 = 0x0424, firmware version, CRC.
    head = bytes.fromhex("FF FF FD 00 01 07 00 55 00 24 04") + bytes([emulator.register(1, "firmware_version")])
    assert emulator.sent[0] == head + sdk_crc(head).to_bytes(2, "little")


def test_every_item_the_driver_uses_reads_and_writes(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    model = control_table(MODELS[protocol])
    for servo_id in IDS:
        for name, value in WRITES[protocol].items():
            item = model.item(name)
            if name != "torque_enable" and model.is_eeprom(item.address):
                write_item(packets, port, servo_id, model.item("torque_enable"), 0)  # X: EEPROM needs torque off
            assert write_item(packets, port, servo_id, item, value) == 0, name
            assert read_item(packets, port, servo_id, item) == (value, 0), name
            assert emulator.register(servo_id, name) == value
        for name in READ_ONLY:
            item = model.item(name)
            value, error = read_item(packets, port, servo_id, item)
            # Present values move: compare after the read with the emulator's own register.
            if name not in ("present_position", "present_speed", "moving"):
                assert value == emulator.register(servo_id, name), name
            assert error == 0
        assert read_item(packets, port, servo_id, model.item("id"))[0] == servo_id
    if protocol == 2:
        assert read_item(packets, port, 1, model.item("hardware_error_status")) == (0, 0)


def test_read_only_items_refuse_writes(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    item = control_table(MODELS[protocol]).item("present_position")
    error = write_item(packets, port, 1, item, 5)
    assert error != 0
    assert packets.getRxPacketError(error)  # the SDK has words for it


def test_sync_write_of_goal_and_speed_in_one_packet(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    model = control_table(MODELS[protocol])
    block = model.command_block
    group = GroupSyncWrite(port, packets, block.start, block.length)
    goals = {1: 300, 2: 700, 3: 900} if protocol == 1 else {1: 1000, 2: 2000, 3: 3000}
    for servo_id, goal in goals.items():
        data = bytearray(block.length)
        for name, value in (("goal_position", goal), ("goal_speed", 50 + servo_id)):
            item = model.item(name)
            data[item.address - block.start:item.end - block.start] = item.encode(value)
        assert group.addParam(servo_id, list(data))
    before = len(emulator.received)
    assert group.txPacket() == COMM_SUCCESS
    # Broadcast: nobody answers; the next exchange proves the packet was handled.
    assert packets.ping(port, 1)[1] == COMM_SUCCESS
    assert len(emulator.received) >= before + 1
    sync_write = emulator.received[before]
    assert sync_write[2 if protocol == 1 else 4] == 0xFE
    for servo_id, goal in goals.items():
        assert read_item(packets, port, servo_id, model.item("goal_position"))[0] == goal
        assert read_item(packets, port, servo_id, model.item("goal_speed"))[0] == 50 + servo_id


def test_sync_read_protocol2_reads_the_state_block_of_every_servo():
    """The SDK sets one timeout for the whole sync read (every servo's answer, read one after
    the other): the module's patience is enough (a loaded run of the suite once timed it out
    at about 0.5 s while the other test worker's real-time graphs took the CPU)."""
    with BusEmulator(dict.fromkeys(IDS, "XL430")) as emulator:
        for servo_id in IDS:
            emulator.place(servo_id, 1000 + 100 * servo_id)
            emulator.set_register(servo_id, "present_load", -250)
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            packets = PacketHandler(2.0)
            model = control_table("XL430")
            block = model.state_block
            group = GroupSyncRead(port, packets, block.start, block.length)
            for servo_id in IDS:
                assert group.addParam(servo_id)
            assert group.txRxPacket() == COMM_SUCCESS
            for servo_id in IDS:
                for name in ("present_position", "present_load", "present_voltage", "present_temperature"):
                    item = model.item(name)
                    assert group.isAvailable(servo_id, item.address, item.size)
                    raw = group.getData(servo_id, item.address, item.size)
                    value = int.from_bytes(raw.to_bytes(item.size, "little"), "little", signed=item.signed)
                    assert value == emulator.register(servo_id, name), (servo_id, name)
            assert emulator.register(2, "present_position") == 1200
        finally:
            port.closePort()
    sync_read = [p for p in emulator.received if p[7] == 0x82]
    assert len(sync_read) == 1 and sync_read[0][4] == 0xFE


def test_group_sync_read_refuses_protocol1():
    with BusEmulator({1: "AX-12"}) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            group = GroupSyncRead(port, PacketHandler(1.0), 36, 8)
            assert group.addParam(1) is False
            assert group.txRxPacket() == COMM_NOT_AVAILABLE
        finally:
            port.closePort()
    assert len(emulator.received) == 0  # nothing was sent


def test_byte_stuffing_on_the_wire_both_ways():
    """Status packets are stuffed by the emulator and unstuffed by the SDK. Instructions:
    dynamixel-sdk 4.1 (Python) computes a stuffed copy in txPacket and sends the
    original (the return value of addStuffing is dropped), so a stuffed instruction is
    written here byte by byte, and the SDK's unstuffed one must still be understood."""
    stuffed_write = bytes.fromhex("FF FF FD 00 01 0A 00 03 E0 00 FF FF FD FD 00")  # LEN counts the extra FD
    stuffed_write += sdk_crc(stuffed_write).to_bytes(2, "little")
    with BusEmulator({1: "XL430"}) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            packets = PacketHandler(2.0)
            port.writePort(list(stuffed_write))
            assert emulator.wait_for(lambda: len(emulator.sent) == 1, timeout=10)
            data, result, error = packets.readTxRx(port, 1, 224, 4)  # Indirect Data 1..4: any bytes
            assert (result, error) == (COMM_SUCCESS, 0)
            assert bytes(data) == bytes.fromhex("FF FF FD 00")
            result, error = packets.writeTxRx(port, 1, 228, 3, [0xFF, 0xFF, 0xFD])  # sent unstuffed by the SDK
            assert (result, error) == (COMM_SUCCESS, 0)
            assert bytes(packets.readTxRx(port, 1, 226, 5)[0]) == bytes.fromhex("FD 00 FF FF FD")
        finally:
            port.closePort()
    write_status, read_answer = emulator.sent[0], emulator.sent[1]
    assert write_status[7:9] == b"\x55\x00"  # accepted without a CRC error
    assert b"\xff\xff\xfd\xfd" in read_answer[7:]
    assert int.from_bytes(read_answer[5:7], "little") == len(read_answer) - 7
    assert sdk_crc(read_answer[:-2]) == int.from_bytes(read_answer[-2:], "little")


def test_error_bits_reach_the_sdk(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    model = control_table(MODELS[protocol])
    if protocol == 1:
        emulator.inject_errors(2, "overload")
        _, error = read_item(packets, port, 2, model.item("present_position"))
        assert error & ERRBIT_OVERLOAD
        assert "Overload" in packets.getRxPacketError(error)
        assert emulator.register(2, "torque_limit") == 0  # Alarm Shutdown default 36 includes overload
    else:
        emulator.inject_errors(2, "overheating")
        _, error = read_item(packets, port, 2, model.item("present_position"))
        assert error & 0x80  # alert bit
        assert read_item(packets, port, 2, model.item("hardware_error_status"))[0] == 0b100
        assert emulator.register(2, "torque_enable") == 0  # Shutdown default 52 includes overheating
    assert read_item(packets, port, 1, model.item("present_position"))[1] == 0  # the others are fine


def test_status_return_level_decides_who_answers(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    model = control_table(MODELS[protocol])
    level, led = model.item("status_return_level"), model.item("led")
    write_item(packets, port, 1, level, 1)
    sent = len(emulator.sent)
    assert packets.write1ByteTxOnly(port, 1, led.address, 1) == COMM_SUCCESS
    assert read_item(packets, port, 1, led)[0] == 1  # READ is answered at level 1
    assert len(emulator.sent) == sent + 1  # ... and the WRITE was not
    assert packets.write1ByteTxOnly(port, 1, level.address, 0) == COMM_SUCCESS
    with expecting_silence():
        assert packets.read1ByteTxRx(port, 1, led.address)[1] == COMM_RX_TIMEOUT  # level 0: not even READ
    if protocol == 1:  # a bare PING: the SDK's ping() of protocol 1.0 also READs the model number
        _, result, _ = packets.txRxPacket(port, [0, 0, 1, 2, 0x01, 0])
    else:
        _, result, _ = packets.ping(port, 1)
    assert result == COMM_SUCCESS  # PING is always answered


def test_broadcast_write_and_reg_write_action(protocol, emulator, port):
    packets = PacketHandler(float(protocol))
    model = control_table(MODELS[protocol])
    led, goal = model.item("led"), model.item("goal_position")
    sent = len(emulator.sent)
    assert packets.write1ByteTxOnly(port, 0xFE, led.address, 1) == COMM_SUCCESS
    assert packets.regWriteTxRx(port, 3, goal.address, goal.size, list(goal.encode(model.position_scale.centre + 40)))[
        0] == COMM_SUCCESS
    assert emulator.register(3, "registered") == 1
    assert packets.action(port, 0xFE) == COMM_SUCCESS
    assert [read_item(packets, port, i, led)[0] for i in IDS] == [1, 1, 1]
    assert read_item(packets, port, 3, goal)[0] == model.position_scale.centre + 40
    assert emulator.register(3, "registered") == 0
    # Answers: the REG_WRITE and the READs only (broadcasts get no status).
    assert len(emulator.sent) == sent + 1 + 4


def test_broadcast_ping_protocol2_is_answered_by_every_servo_in_id_order():
    with BusEmulator(dict.fromkeys(IDS, "XL430")) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            found, result = PacketHandler(2.0).broadcastPing(port)
        finally:
            port.closePort()
    assert result == COMM_SUCCESS
    assert {servo_id: model for servo_id, (model, _) in found.items()} == dict.fromkeys(IDS, 1060)
    assert [packet[4] for packet in emulator.sent] == list(IDS)


class ManualClock:
    """Time that only the emulator's sleeping advances: the delays it charges, measured exactly."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)


def charged_time(clock: ManualClock, exchange) -> float:
    """Emulator time that ``exchange()`` (one request and its answer) cost."""
    before = clock()
    exchange()
    return clock() - before


def test_return_delay_time_delays_every_answer():
    clock = ManualClock()
    with BusEmulator({1: "AX-12"}, clock=clock, sleep=clock.sleep) as emulator:
        port = PortHandler(emulator.port)
        assert port.openPort()
        packets = PacketHandler(1.0)
        delay = control_table("AX-12").item("return_delay_time")

        def read_temperature() -> None:
            assert packets.read1ByteTxRx(port, 1, 43)[1] == COMM_SUCCESS

        try:
            write_item(packets, port, 1, delay, 0)
            immediate = charged_time(clock, read_temperature)
            write_item(packets, port, 1, delay, 254)  # 508 us
            delayed = charged_time(clock, read_temperature)
        finally:
            port.closePort()
    assert immediate == 0.0
    assert delayed == pytest.approx(508e-6, abs=1e-12)


def test_return_delay_is_waited_in_real_time():
    """The same delay on the real clock: an answer never comes before it (load only adds time)."""
    with BusEmulator({1: "AX-12"}) as emulator:
        emulator.set_register(1, "return_delay_time", 254)  # 508 us
        port = PortHandler(emulator.port)
        assert port.openPort()
        try:
            started = time.perf_counter()
            assert PacketHandler(1.0).read1ByteTxRx(port, 1, 43)[1] == COMM_SUCCESS
            elapsed = time.perf_counter() - started
        finally:
            port.closePort()
    assert elapsed >= 508e-6


def test_timing_mode_charges_wire_time_at_the_baud_rate():
    baud = 57_600  # 10 bits per byte
    clock = ManualClock()
    with BusEmulator({1: "AX-12"}, baud=baud, timing=True, clock=clock, sleep=clock.sleep) as emulator:
        emulator.set_register(1, "return_delay_time", 0)
        port = PortHandler(emulator.port)
        assert port.openPort()
        assert port.setBaudRate(baud)
        answer = []
        try:
            elapsed = charged_time(clock, lambda: answer.append(PacketHandler(1.0).readTxRx(port, 1, 36, 8)))
        finally:
            port.closePort()
    data, result, _ = answer[0]
    assert result == COMM_SUCCESS and len(data) == 8
    # READ instruction (8 bytes) then its status (6 + 8 bytes), one after the other on the wire
    assert elapsed == pytest.approx((8 + 6 + 8) * 10 / baud, abs=1e-12)
