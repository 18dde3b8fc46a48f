"""Start-up follows the run-time fault policy: one transient error is not fatal.

A serial error on a port that is still there is one failed attempt (retried within
``retries``), a port that fails while the servos are being brought up is reopened
with the run-time back-off, and only a servo still missing after that meets
``on_missing``. Against a busy machine, the driver starts every time.
"""

import contextlib
import threading
import time

import pytest
import serial

from humanoid_core.loop import DriverError, Level
from humanoid_description import load_model
from humanoid_hw import DynamixelBus, DynamixelConfig, DynamixelDriver, PortLostError, load_hardware_config
from humanoid_hw.emulator import BusEmulator, emulator_process, robot_servos

#: Generous limit (s) for anything awaited (each wait ends as soon as its condition holds).
PATIENCE = 30.0
#: What pyserial raises when select() says readable and read() returns nothing: on
#: Linux a hung-up device (unplugged adapter), or a line another reader emptied first.
EMPTY_READ = ("device reports readiness to read but returned no data "
              "(device disconnected or multiple access on port?)")


@pytest.fixture(scope="module")
def bioloid():
    return load_model("bioloid")


@pytest.fixture
def emulator(tmp_path):
    emulator = BusEmulator(robot_servos("bioloid", 1), link=tmp_path / "ttyDXL").start()
    yield emulator
    emulator.stop()


def config_for(emulator, **overrides):
    values = {"port": emulator.port, "latency_timer_ms": 20.0, "stale_probe_period": 0.1,
              "reopen_backoff_initial": 0.02, "reopen_backoff_max": 0.16} | overrides
    return DynamixelConfig(**values)


@contextlib.contextmanager
def empty_reads(bus: DynamixelBus, count: int):
    """The next ``count`` reads of the open port fail as pyserial fails on an empty read
    (the port handler's read primitive raises what the device would make it raise)."""
    port = bus._port
    original = port.receive
    left = [count]

    def receive(length: int, timeout: float) -> bytes:
        if left[0] > 0:
            left[0] -= 1
            raise serial.SerialException(EMPTY_READ)
        return original(length, timeout)

    port.receive = receive
    try:
        yield left
    finally:
        port.receive = original


# -- the bus: a glitch on a present port is one failed attempt ----------------------------
def test_an_empty_read_on_a_present_port_is_one_failed_attempt(emulator):
    bus = DynamixelBus(emulator.port, 1_000_000, 1, retries=3, latency_timer_ms=20.0)
    bus.open()
    try:
        with empty_reads(bus, 2) as left:
            reply = bus.read(1, 36, 8)
        assert left == [0]
        assert reply.ok and reply.attempts == 3 and len(reply.data) == 8
        assert bus.is_open and bus.traffic.glitches == 2 and bus.traffic.retries == 2
        with empty_reads(bus, 4):  # more than the retries allow: the exchange fails, the port stays
            reply = bus.read(1, 36, 8)
        assert not reply.ok and "serial error" in reply.failure and bus.is_open
        assert bus.read(1, 36, 8).ok
    finally:
        bus.close()


def test_a_serial_error_on_a_vanished_port_is_a_lost_port(emulator):
    """Unplugged: the device node is gone and the open descriptor hung up (EIO)."""
    bus = DynamixelBus(emulator.port, 1_000_000, 1, retries=3, latency_timer_ms=20.0)
    bus.open()
    try:
        emulator.vanish()
        with pytest.raises(PortLostError, match="failed"):
            bus.read(1, 36, 8)
        assert not bus.is_open and bus.traffic.glitches == 0 and bus.traffic.retries == 0
    finally:
        bus.close()


# -- the driver: start-up with the run-time policy ------------------------------------------
def vanish_after(emulator: BusEmulator, packets: int, back: bool = True) -> threading.Thread:
    """Unplug the emulated adapter once ``packets`` instructions were handled (and plug it back)."""
    def unplug() -> None:
        if emulator.wait_for(lambda: emulator.packets_handled >= packets, timeout=PATIENCE):
            emulator.vanish()
            if back:
                emulator.reappear()

    thread = threading.Thread(target=unplug, daemon=True)
    thread.start()
    return thread


def test_a_port_lost_during_start_up_is_reopened_and_the_start_goes_on(bioloid, emulator):
    driver = DynamixelDriver.from_model(bioloid, config_for(emulator))
    unplug = vanish_after(emulator, 60)  # in the middle of bringing the 18 servos up
    try:
        state = driver.start()
        unplug.join(PATIENCE)
        assert state.valid.all()
        assert driver.port_recovery.losses == 1 and driver.port_recovery.reopens == 1
        assert [emulator.register(i, "torque_enable") for i in emulator.servo_ids] == [1] * 18
        assert all(entry.level == Level.OK for entry in driver.status()[2:])
    finally:
        driver.close()


def test_a_port_gone_for_good_at_start_up_meets_on_missing(bioloid, emulator):
    refusing = DynamixelDriver.from_model(bioloid, config_for(emulator, retries=1))
    unplug = vanish_after(emulator, 60, back=False)
    with pytest.raises(DriverError, match=r"port lost during start-up"):
        refusing.start()
    unplug.join(PATIENCE)
    assert not refusing.bus.is_open and refusing.port_recovery.attempts == 1  # retries: 1 reopen attempt
    emulator.reappear()
    degraded = DynamixelDriver.from_model(bioloid, config_for(emulator, on_missing="degraded"))
    unplug = vanish_after(emulator, emulator.packets_handled + 60, back=False)
    try:
        state = degraded.start()  # starts without its bus: no joint valid, the port reopened when it is back
        unplug.join(PATIENCE)
        assert not state.valid.any() and degraded.port_recovery.lost
        emulator.reappear()
        deadline = time.monotonic() + PATIENCE
        while not (state := degraded.read()).valid.all() and time.monotonic() < deadline:
            degraded.sync(0.01)
        assert state.valid.all() and degraded.port_recovery.reopens == 1
    finally:
        degraded.close()


def test_the_driver_starts_ten_times_in_ten_on_a_busy_machine(bioloid, cpu_hogs):
    """``humanoid real --emulate`` failed 3 starts of 3 on a busy machine. The emulator in its
    own process (as there), the shipped parameters, two CPU hogs: every start succeeds."""
    failures = []
    with emulator_process("bioloid") as port, cpu_hogs(2):
        for attempt in range(10):
            driver = DynamixelDriver.from_model(bioloid, load_hardware_config("bioloid", port=port))
            try:
                state = driver.start()
                if not state.valid.all():
                    failures.append(f"start {attempt}: joints not read: {state.valid}")
            except DriverError as error:
                failures.append(f"start {attempt}: {error}")
            finally:
                driver.close()
    assert failures == []
