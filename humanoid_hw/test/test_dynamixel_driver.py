"""The Dynamixel driver against the emulator (no ROS): start-up, motion, faults, shutdown.

Expected joint angles are computed here from the thesis formula,
``angle = direction * radians((raw - 512 - offset) * 0.2932)``, not through the
joint map code the driver uses.
"""

import dataclasses
import math
import signal
import threading
import time

import numpy as np
import pytest

from humanoid_core.loop import DriverError, JointCommand, Level
from humanoid_description import JointMap, load_model
from humanoid_hw import (
    DynamixelBus,
    DynamixelConfig,
    DynamixelDriver,
    HardwareJoint,
    hardware_joints,
    stand_in_joint_map,
)
from humanoid_hw.emulator import BusEmulator, robot_servos

#: Generous time limit for anything the tests wait for (event-driven: the loop ends as
#: soon as the condition holds).
PATIENCE = 60.0


@pytest.fixture(scope="module")
def bioloid():
    return load_model("bioloid")


def ax12_angle(raw: float, direction: int, offset: int = 0) -> float:
    return direction * math.radians((raw - 512 - offset) * 0.2932)


class ManualClock:
    """Time that only sleeping advances. Shared by the emulator (servo motion, answer
    delays) and the driver (deadlines, stamps, probes, back-off), it puts both on one
    exact time line, whatever the machine's load does to the real one."""

    def __init__(self, start: float = 100.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self._now += max(0.0, seconds)


def emulator_for(tmp_path, protocol=1, replace=None, missing=(), clock=None):
    servos = robot_servos("bioloid", protocol) | (replace or {})
    for servo_id in missing:
        del servos[servo_id]
    timeline = {"clock": clock, "sleep": clock.sleep} if clock is not None else {}
    return BusEmulator(servos, link=tmp_path / "ttyDXL", **timeline).start()


def config_for(emulator, protocol=1, **overrides):
    # The emulator shares the test's CPU: packet timeouts of 42 ms (a 20 ms latency timer)
    # survive a loaded machine; short probe and reopen periods keep fault tests quick.
    values = {"port": emulator.port, "protocol": protocol, "latency_timer_ms": 20.0, "stale_probe_period": 0.1,
              "reopen_backoff_initial": 0.02, "reopen_backoff_max": 0.16} | overrides
    return DynamixelConfig(**values)


def driver_for(bioloid, emulator, protocol=1, joint_map=None, clock=None, **overrides):
    joint_map = joint_map or stand_in_joint_map(bioloid.config.joint_map, protocol)
    timeline = {"clock": clock, "sleep": clock.sleep} if clock is not None else {}
    return DynamixelDriver(hardware_joints(bioloid, joint_map), config_for(emulator, protocol, **overrides),
                           **timeline)


@pytest.fixture
def emulator(tmp_path):
    emulator = emulator_for(tmp_path)
    yield emulator
    emulator.stop()


@pytest.fixture
def driver(bioloid, emulator):
    driver = driver_for(bioloid, emulator)
    yield driver
    driver.close()


def run_until(driver, condition, command=None, period=0.01, patience=PATIENCE):
    """Run control cycles until ``condition(state)`` holds; returns the last state."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        driver.sync(period)
        state = driver.read()
        if command is not None:
            driver.write(command)
        if condition(state):
            return state
    raise AssertionError(f"condition not reached within {patience} s; status: {driver.status()}")


def entry(driver, name_part):
    (found,) = [e for e in driver.status() if name_part in e.name]
    return found


def hold(state):
    return JointCommand(position=state.position.copy())


# -- start-up ------------------------------------------------------------------------------
def test_start_reads_radians_and_configures_every_servo(bioloid, emulator, driver):
    home_raw = {1: 206, 2: 818, 3: 252, 4: 772, 11: 463, 12: 560, 13: 440, 14: 585, 15: 554, 16: 470}
    for servo_id, raw in home_raw.items():
        emulator.place(servo_id, raw)
    state = driver.start()
    assert state.valid.all()
    for index, name in enumerate(bioloid.joints.names):
        servo = bioloid.config.joint_map[name]
        raw = home_raw.get(servo.servo_id, 512)
        assert state.position[index] == pytest.approx(ax12_angle(raw, servo.direction), abs=1e-9), name
        registers = {n: emulator.register(servo.servo_id, n) for n in (
            "return_delay_time", "status_return_level", "torque_enable", "goal_position",
            "min_position_limit", "max_position_limit")}
        assert registers["return_delay_time"] == 0 and registers["status_return_level"] == 2
        assert registers["torque_enable"] == 1 and registers["goal_position"] == raw  # no jump on torque-on
        # Angle limits from the URDF limits (clipped to the register), within one step of rounding.
        limits = bioloid.joints[name].limits
        ends = sorted(ax12_angle(r, servo.direction) for r in (registers["min_position_limit"],
                                                               registers["max_position_limit"]))
        step = math.radians(0.2932)
        assert ends[0] == pytest.approx(max(limits.lower, ax12_angle(0 if servo.direction > 0 else 1023,
                                                                     servo.direction)), abs=step)
        assert ends[1] == pytest.approx(min(limits.upper, ax12_angle(1023 if servo.direction > 0 else 0,
                                                                     servo.direction)), abs=step)


def test_directions_and_offsets_of_the_joint_map(bioloid, emulator):
    offsets = {1: 10, 2: -7, 13: 25}
    joint_map = JointMap([dataclasses.replace(s, offset=offsets.get(s.servo_id, 0))
                          for s in bioloid.config.joint_map.values()])
    raws = {1: 300, 2: 700, 13: 400, 14: 600}  # within the URDF limits (r_knee: raw 114..538 here)
    for servo_id, raw in raws.items():
        emulator.place(servo_id, raw)
    driver = driver_for(bioloid, emulator, joint_map=joint_map)
    try:
        state = driver.start()
    finally:
        driver.close()
    for servo_id, raw in raws.items():
        servo = joint_map.by_id(servo_id)
        index = bioloid.joints.index(servo.joint)
        assert state.position[index] == pytest.approx(ax12_angle(raw, servo.direction, offsets.get(servo_id, 0)))


def test_a_joint_found_outside_its_limits_is_held_and_reported(bioloid, emulator):
    # The model's limits are the servo's whole range at the factory zero; a calibration offset
    # shifts the servo's range past them: r_knee at the register's end is beyond its lower limit.
    offset = -40
    joint_map = JointMap([dataclasses.replace(s, offset=offset if s.servo_id == 13 else 0)
                          for s in bioloid.config.joint_map.values()])
    driver = driver_for(bioloid, emulator, joint_map=joint_map)
    try:
        emulator.place(13, 1023)
        state = driver.start()
        index = bioloid.joints.index("r_knee")
        lower = bioloid.joints["r_knee"].limits.lower
        assert state.position[index] == pytest.approx(ax12_angle(1023, -1, offset))  # torque-on did not move it
        assert state.position[index] < lower
        assert emulator.register(13, "min_position_limit") <= 1023 <= emulator.register(13, "max_position_limit")
        warning = entry(driver, "r_knee")
        assert warning.level == Level.WARN and "outside its limits" in warning.message
        run_until(driver, lambda s: s.position[index] >= lower - math.radians(0.2932), hold(state))  # clamped goal
        assert entry(driver, "r_knee").level == Level.OK
    finally:
        driver.close()


def test_missing_servo_refuses_naming_id_and_joint(bioloid, tmp_path):
    emulator = emulator_for(tmp_path, missing=(5,))
    try:
        driver = driver_for(bioloid, emulator)
        with pytest.raises(DriverError, match=r"ID 5 \(r_elbow\): no answer to PING after 4 attempt"):
            driver.start()
        assert not driver.bus.is_open
    finally:
        emulator.stop()


def test_wrong_model_is_reported_and_never_driven(bioloid, tmp_path):
    emulator = emulator_for(tmp_path, replace={7: "AX-18"})
    try:
        with pytest.raises(DriverError, match=r"ID 7 \(r_hip_yaw\): model number 18 \(AX-18\), expected 12 \(AX-12\)"):
            driver_for(bioloid, emulator).start()
        driver = driver_for(bioloid, emulator, on_missing="degraded")
        state = driver.start()
        index = bioloid.joints.index("r_hip_yaw")
        assert not state.valid[index] and state.valid.sum() == 17
        status = entry(driver, "r_hip_yaw")
        assert status.level == Level.ERROR and "model number 18" in status.message
        command = hold(state)
        command.position[index] += 0.3
        driver.write(command)
        driver.read()
        assert emulator.register(7, "torque_enable") == 0 and emulator.register(7, "goal_position") == 512
        driver.close()
    finally:
        emulator.stop()


def test_degraded_start_marks_the_missing_joint_stale_until_it_appears(bioloid, emulator):
    emulator.silence(5)
    driver = driver_for(bioloid, emulator, on_missing="degraded")
    try:
        driver.start()
        index = bioloid.joints.index("r_elbow")
        # every other servo answers (on a loaded machine a read may miss once: a cycle or two on)
        state = run_until(driver, lambda s: s.valid.sum() == 17)
        assert not state.valid[index]
        status = entry(driver, "r_elbow")
        assert status.level == Level.STALE and "ID 5" in status.message and "PING" in status.message
        emulator.silence(5, False)
        state = run_until(driver, lambda s: s.valid[index])
        assert emulator.register(5, "return_delay_time") == 0 and emulator.register(5, "torque_enable") == 1
        assert entry(driver, "r_elbow").level == Level.OK
    finally:
        driver.close()


# -- control cycle -------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", [1, 2])
def test_present_positions_follow_goals_at_the_speed_limit(bioloid, tmp_path, protocol):
    """A goal with a speed is reached at that speed. Emulator and driver share a manual
    clock (10 ms per cycle), so the slope measured is the servo's, not the scheduler's."""
    clock = ManualClock()
    emulator = emulator_for(tmp_path, protocol, clock=clock)
    driver = driver_for(bioloid, emulator, protocol, clock=clock)
    try:
        state = driver.start()
        index = bioloid.joints.index("r_elbow")  # direction -1: increasing angle = decreasing raw
        target, speed = state.position[index] + 0.6, 1.0
        command = hold(state)
        command.position[index] = target
        command.velocity = np.zeros(len(command.position))
        command.velocity[index] = speed
        samples = []

        def record(s):
            samples.append((s.stamp, s.position[index], s.velocity[index]))
            return abs(s.position[index] - target) < 0.01

        run_until(driver, record, command)
        times, positions, velocities = map(np.array, zip(*samples, strict=True))
        middle = (positions > state.position[index] + 0.15) & (positions < target - 0.15)
        assert middle.sum() >= 20  # 0.3 rad at 1 rad/s: 30 cycles of 10 ms
        assert np.all(np.diff(times) == pytest.approx(0.01))  # one stamp per cycle, at the end of its reads
        slope = np.polyfit(times[middle], positions[middle], 1)[0]
        assert slope == pytest.approx(speed, rel=0.02)
        assert np.median(velocities[middle]) == pytest.approx(speed, rel=0.05)
        others = [i for i in range(18) if i != index]
        assert np.allclose(positions[-1:], target, atol=0.01)
        assert np.allclose(driver.read().position[others], state.position[others])
        # A clean cycle (a loaded machine can make one late): one SYNC_READ or 18 READs, one SYNC_WRITE.
        for _ in range(50):
            driver.write(command)
            driver.read()
            if not (driver.last_cycle_traffic.timeouts or driver.last_cycle_traffic.corrupt):
                break
        assert driver.last_cycle_traffic.instructions == (2 if protocol == 2 else 19)
    finally:
        driver.close()
        emulator.stop()


@pytest.mark.parametrize("protocol", [1, 2])
def test_a_speed_below_one_register_unit_is_the_maximum_not_a_crawl(bioloid, tmp_path, protocol):
    """A set-point at rest but for floating-point dust (1e-5 rad/s: a protective posture
    from where the robot stands to a pose equal to it but for the last digits) leaves a
    servo behind its goal free to get there at full speed. Written as the slowest speed
    (register 1: 0.7 deg/s on an AX-12), a servo still 0.3 rad behind crawled where it was,
    a fall manager read it as settled, and the get-up it planned from there was refused."""
    clock = ManualClock()
    emulator = emulator_for(tmp_path, protocol, clock=clock)
    driver = driver_for(bioloid, emulator, protocol, clock=clock)
    try:
        state = driver.start()
        index = bioloid.joints.index("r_shoulder_pitch")
        command = hold(state)
        command.position[index] += 0.3
        command.velocity = np.full(len(command.position), -1e-5)
        start = state.stamp
        reached = run_until(driver, lambda s: abs(s.position[index] - command.position[index]) < 0.01, command,
                            patience=PATIENCE)
        # AX-12 at its 114 rpm: 25 ms; XM430 unlimited: a cycle or two (the slowest speed: 25 s)
        assert reached.stamp - start < 0.1
    finally:
        driver.close()
        emulator.stop()


def test_goals_at_and_beyond_the_urdf_limits_are_clipped_to_the_register(bioloid, emulator, driver):
    state = driver.start()
    command = JointCommand(position=bioloid.joints.upper.copy())  # r_shoulder_pitch: 2.62 rad > raw 1023
    command.position[0] = 10.0  # far beyond: clipped, never an exception in the control loop
    driver.write(command)
    driver.read()
    expected = [min(1023, max(0, round(512 + s.direction * math.degrees(u) / 0.2932)))
                for s, u in zip(bioloid.config.joint_map.values(), bioloid.joints.upper, strict=True)]
    assert emulator.wait_for(lambda: [emulator.register(i, "goal_position") for i in range(1, 19)] == expected,
                             timeout=PATIENCE)
    assert state.valid.all()


def test_effort_is_the_load_fraction_times_the_maximum_torque(bioloid, emulator, driver):
    emulator.set_register(9, "present_load", 1024 + 512)  # bit 10: clockwise, 512/1023 of 1.5 N m
    state = driver.start()
    servo = bioloid.config.joint_map.by_id(9)
    index = bioloid.joints.index(servo.joint)
    assert state.effort[index] == pytest.approx(servo.direction * -512 / 1023 * 1.5)


# -- faults --------------------------------------------------------------------------------
@pytest.mark.parametrize("answer_poll_us", [0.0, 5000.0])
def test_silent_servo_goes_stale_the_others_keep_running_and_it_recovers(bioloid, emulator, answer_poll_us):
    """Also with a wide polling window around each answer's due time: a silent servo still times out."""
    driver = driver_for(bioloid, emulator, answer_poll_us=answer_poll_us)
    try:
        _silent_servo_goes_stale_and_recovers(bioloid, emulator, driver)
    finally:
        driver.close()


def _silent_servo_goes_stale_and_recovers(bioloid, emulator, driver):
    state = driver.start()
    stale, moving = bioloid.joints.index("r_shoulder_roll"), bioloid.joints.index("r_elbow")
    emulator.silence(3)
    command = hold(state)
    command.position[moving] += 0.3
    state = run_until(driver, lambda s: not s.valid[stale], command)
    status = entry(driver, "r_shoulder_roll")
    assert status.level == Level.STALE and "ID 3" in status.message and "no answer" in status.message
    start = state.position[moving]
    state = run_until(driver, lambda s: s.position[moving] > start + 0.1, command)
    assert not state.valid[stale] and state.valid.sum() == 17  # the rest of the bus kept running
    emulator.silence(3, False)
    state = run_until(driver, lambda s: s.valid[stale], command)
    assert state.valid.all()
    assert entry(driver, "r_shoulder_roll").level == Level.OK
    assert entry(driver, "r_shoulder_roll").values["recoveries"] == "1"


def test_answers_later_than_the_polling_window_are_slept_for(bioloid, emulator):
    """An adapter that holds answers back (its latency timer) must not turn every wait into
    a busy loop: after one answer comes past the polling window, the next waits only sleep.

    Polling each of these waits would spend about 2 ms of CPU (until 2 ms after the due
    time, a fraction of a millisecond after the request) on answers that come 5 ms late:
    about 80 ms for the 40 reads."""
    spent = cpu_for_late_answers(bioloid, emulator, late=0.005, polling=True)
    assert spent < 0.04, f"{1e3 * spent:.1f} ms of CPU for 40 late answers: the waits polled"


def cpu_for_late_answers(bioloid, emulator, late: float, polling: bool) -> float:
    """CPU seconds of 40 reads of servo 5 answering ``late`` s late, polled for 2 ms each side of
    their due time when ``polling`` (else slept for)."""
    driver = driver_for(bioloid, emulator, answer_poll_us=2000.0)
    try:
        driver.start()
        driver.bus.answer_polling = polling
        emulator.delay_replies(5, late)
        position = driver.control_table.item("present_position")
        start = time.thread_time()
        replies = [driver.bus.read(5, position.address, position.size) for _ in range(40)]
        spent = time.thread_time() - start
    finally:
        driver.close()
    assert all(reply.ok for reply in replies)
    return spent


@pytest.mark.parametrize("answer_poll_us", [0.0, 5000.0])
def test_corrupted_answers_are_retried_within_the_bound_and_reported(bioloid, emulator, answer_poll_us):
    """Also with a wide polling window around each answer's due time: the same answers, the same retries.
    (Packet timeouts of 202 ms, a 100 ms latency timer: a corrupted answer comes at once, and the
    test is about those; with 42 ms a loaded machine's emulator answered some too late.)"""
    driver = driver_for(bioloid, emulator, answer_poll_us=answer_poll_us, latency_timer_ms=100.0)
    try:
        _corrupted_answers_are_retried(bioloid, emulator, driver)
    finally:
        driver.close()


def _corrupted_answers_are_retried(bioloid, emulator, driver):
    driver.start()
    driver.status()  # start a fresh reporting window
    emulator.corrupt_replies(2, servo_id=4)
    state = driver.read()
    assert state.valid.all()  # two bad checksums, the third attempt got through
    assert driver.bus.traffic.corrupt >= 2 and driver.bus.traffic.retries >= 2
    bus = entry(driver, "bus")
    assert bus.level == Level.WARN and "corrupted status packet" in bus.message
    emulator.corrupt_replies(100, servo_id=4)
    before = emulator.packets_to(4)
    state = driver.read()
    assert emulator.packets_to(4) - before == 1 + driver.config.retries  # bounded
    index = bioloid.joints.index("l_shoulder_roll")
    assert not state.valid[index] and state.valid.sum() == 17
    assert "corrupt" in entry(driver, "l_shoulder_roll").message


@pytest.mark.parametrize(("protocol", "fault", "shuts_down"),
                         [(1, "overload", True), (2, "overheating", True), (1, "input voltage", False)])
def test_error_bits_are_decoded_with_the_joint_name(bioloid, tmp_path, protocol, fault, shuts_down):
    """Each error bit is reported by joint; after an overload or overheating the servo has
    switched its own torque off, which stays reported after the bit clears."""
    emulator = emulator_for(tmp_path, protocol)
    driver = driver_for(bioloid, emulator, protocol)
    try:
        driver.start()
        emulator.inject_errors(9, fault)
        driver.read()
        status = entry(driver, "r_hip_roll")
        assert status.level == Level.ERROR
        assert status.message == f"r_hip_roll (ID 9) reports: {fault}"
        emulator.clear_errors(9)
        if shuts_down:
            run_until(driver, lambda s: "shut itself down" in entry(driver, "r_hip_roll").message)
            assert entry(driver, "r_hip_roll").level == Level.ERROR and fault in entry(driver, "r_hip_roll").message
        else:
            run_until(driver, lambda s: entry(driver, "r_hip_roll").level == Level.OK)
    finally:
        driver.close()
        emulator.stop()


def test_starting_the_driver_re_arms_a_servo_that_shut_itself_down(bioloid, emulator, driver):
    """An AX-12 that tripped (overload) keeps Torque Limit 0 until it is written: a start of
    the driver writes it back to the servo's Max Torque, so the joint is driven again."""
    emulator.set_register(9, "torque_limit", 0)
    max_torque = emulator.register(9, "max_torque")
    assert max_torque > 0
    driver.start()
    assert emulator.register(9, "torque_limit") == max_torque
    assert emulator.register(10, "torque_limit") == emulator.register(10, "max_torque")  # untouched ones too


def reopen_times(window: float, initial: float, maximum: float) -> list[float]:
    """When reopen attempts fall due within ``window`` s of a loss (the delay doubling from ``initial``)."""
    times, at, delay = [], initial, initial
    while at <= window:
        times.append(at)
        delay = min(2.0 * delay, maximum)
        at += delay
    return times


def test_vanished_port_is_reported_and_reopened_with_back_off(bioloid, emulator):
    # The driver's time is a manual clock, 1/128 s per cycle; back-off 1/32 s doubling to
    # 1/4 s. Binary fractions add up exactly, so the schedule is exact.
    clock, period, initial, maximum = ManualClock(), 2.0 ** -7, 2.0 ** -5, 2.0 ** -2
    driver = driver_for(bioloid, emulator, clock=clock, reopen_backoff_initial=initial,
                        reopen_backoff_max=maximum)
    driver.start()
    emulator.vanish()
    lost_at = clock()
    state = driver.read()
    assert not state.valid.any()
    bus = entry(driver, "bus")
    assert bus.level == Level.ERROR and "lost" in bus.message and "back-off" in bus.message
    for _ in range(64):  # absent for 0.5 s: the loop keeps cycling, nothing read, nothing written
        driver.sync(period)
        state = driver.read()
        assert not state.valid.any()
        driver.write(hold(state))
    assert driver.dropped_writes == 64
    assert clock() - lost_at == 0.5
    # attempts at 1/32, 3/32, 7/32 and 15/32 s, not every cycle
    assert reopen_times(0.5, initial, maximum) == [1 / 32, 3 / 32, 7 / 32, 15 / 32]
    assert driver.port_recovery.attempts == 4
    emulator.reappear()
    state = run_until(driver, lambda s: s.valid.all())
    assert driver.port_recovery.losses == 1 and driver.port_recovery.reopens == 1
    bus = entry(driver, "bus")  # open again (a loaded machine may add a timeout warning, never "lost")
    assert bus.level != Level.ERROR and "lost" not in bus.message and not driver.port_recovery.lost


def test_sync_waits_for_deadlines_and_counts_misses(bioloid, emulator):
    now = [100.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    joint_map = bioloid.config.joint_map
    joints = [HardwareJoint(joint_map[j.name], j.limits.lower, j.limits.upper) for j in bioloid.joints]
    driver = DynamixelDriver(joints, config_for(emulator), clock=lambda: now[0], sleep=sleep)
    driver.sync(0.01)  # first deadline: now + period
    now[0] += 0.004  # a 4 ms cycle
    driver.sync(0.01)
    assert slept == pytest.approx([0.01, 0.006])
    assert driver.deadline_misses == 0
    now[0] += 0.025  # a cycle 15 ms too long
    driver.sync(0.01)
    assert driver.deadline_misses == 1 and driver.worst_overrun == pytest.approx(0.015)
    assert len(slept) == 2  # the schedule restarts from now: no sleep, and no burst of catch-up cycles
    now[0] += 0.002
    driver.sync(0.01)
    assert slept[-1] == pytest.approx(0.008) and driver.deadline_misses == 1
    loop = entry(driver, "control loop")
    assert loop.level == Level.WARN and "1 deadline miss" in loop.message and "15.0 ms" in loop.message


def test_a_cycle_with_time_to_spare_sleeps_through_its_answers(bioloid, emulator):
    """Polling for answers buys a cycle a few wake-ups for CPU: the loop polls only in a
    cycle after one that left under ``answer_poll_slack`` (0.2) of its period free; a
    standing robot's cycles have time to spare and only sleep in their waits.

    With a 2 ms window, each of 40 answers that come 1.5 ms late (within the window) would be
    polled for 1.5 ms and more: over 60 ms of CPU; slept for, a fraction of a millisecond each."""
    now = [100.0]
    joint_map = bioloid.config.joint_map
    joints = [HardwareJoint(joint_map[j.name], j.limits.lower, j.limits.upper) for j in bioloid.joints]
    paced = DynamixelDriver(joints, config_for(emulator), clock=lambda: now[0],
                            sleep=lambda seconds: now.__setitem__(0, now[0] + seconds))
    polling = []
    for cycle in (0.0, 0.004, 0.009, 0.025, 0.007, 0.0085):  # the work of each cycle before its sync
        now[0] += cycle
        paced.sync(0.01)
        polling.append(paced.bus.answer_polling)
    # first deadline; 6 ms free; 1 ms free; overrun; 3 ms free; 1.5 ms free (<= 2 ms: poll)
    assert polling == [False, False, True, True, False, True]

    spent = cpu_for_late_answers(bioloid, emulator, late=0.0015, polling=False)
    assert spent < 0.04, f"{1e3 * spent:.1f} ms of CPU for 40 answers: the waits polled"


def torques_after_close(emulator):
    """Torque Enable of every servo once everything sent before was handled (the emulator
    handles packets in order: a PING answered after close comes after all of them)."""
    probe = DynamixelBus(emulator.port, 1_000_000, 1, latency_timer_ms=10.0)
    probe.open()
    try:
        assert probe.ping(1).ok
    finally:
        probe.close()
    return [emulator.register(i, "torque_enable") for i in emulator.servo_ids]


@pytest.mark.parametrize(("policy", "torque"), [("limp", 0), ("hold", 1)])
def test_close_goes_limp_or_holds(bioloid, emulator, policy, torque):
    driver = driver_for(bioloid, emulator, on_shutdown=policy)
    driver.start()
    assert [emulator.register(i, "torque_enable") for i in emulator.servo_ids] == [1] * 18
    driver.close()
    assert not driver.bus.is_open
    assert torques_after_close(emulator) == [torque] * 18
    driver.close()  # idempotent


def sync_write_address(raw: bytes) -> int | None:
    """Start address of a protocol 1.0 SYNC_WRITE packet (None for anything else)."""
    return raw[5] if raw[2] == 0xFE and raw[4] == 0x83 else None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize(("policy", "torque"), [("limp", 0), ("hold", 1)])
def test_a_signal_shutdown_while_the_loop_runs_applies_on_shutdown(bioloid, emulator, signum, policy, torque):
    """A node that loses its parent gets SIGTERM (a terminal closing: SIGHUP, handled alike):
    its handler closes the driver in the main thread while the control loop runs a cycle in
    another. The cycle finishes first, the policy is applied, and nothing is written after it."""
    driver = driver_for(bioloid, emulator, on_shutdown=policy)
    state = driver.start()
    problems = []

    def control_loop():
        while True:
            try:
                driver.sync(0.005)
                driver.write(hold(driver.read()))
            except DriverError:
                return  # closed: the loop ends
            except Exception as error:
                problems.append(error)
                return

    loop = threading.Thread(target=control_loop)
    running_from = emulator.packets_handled
    loop.start()
    assert emulator.wait_for(lambda: emulator.packets_handled > running_from + 100, timeout=PATIENCE)
    previous = signal.signal(signum, lambda *_: driver.close())
    try:
        signal.raise_signal(signum)  # the handler runs in this (main) thread, mid-cycle for the loop
    finally:
        signal.signal(signum, previous)
    loop.join(PATIENCE)
    assert not loop.is_alive() and problems == []
    assert not driver.bus.is_open
    assert torques_after_close(emulator) == [torque] * 18
    # The driver never discards its unsent output: through a pseudo-terminal such a flush can
    # drop the packet just written, a goal or the torque policy (docs/bus_emulator.md).
    assert emulator.output_flushes == 0
    writes = [sync_write_address(raw) for raw in emulator.received if sync_write_address(raw) is not None]
    torque_item = driver.control_table.item("torque_enable").address
    if policy == "limp":
        assert writes[-1] == torque_item  # the torque-off write is the last one: no goal after it
    else:
        assert torque_item not in writes[-3:]  # goals only: the servos hold the last one
    assert state.valid.all()


def test_valid_marks_the_joints_read_this_cycle_and_the_stamp_is_the_read_time(bioloid, emulator):
    """``valid`` is per cycle: a joint whose servo was not read in this very cycle is invalid,
    even between probes; the stamp is the driver's clock when the reads end."""
    driver = DynamixelDriver(hardware_joints(bioloid), config_for(emulator, stale_probe_period=3600.0))
    try:
        before = time.monotonic()
        state = driver.start()
        assert before <= state.stamp <= time.monotonic() and state.valid.all()
        emulator.silence(3)
        index = bioloid.joints.index("r_shoulder_roll")
        for _ in range(5):  # stale, and not probed again for an hour: never valid meanwhile
            before = time.monotonic()
            state = driver.read()
            assert before <= state.stamp <= time.monotonic()
            assert not state.valid[index] and state.valid.sum() == 17
        emulator.vanish()
        assert not driver.read().valid.any()  # the bus is gone: no joint was read
    finally:
        driver.close()


def test_status_return_level_one_saves_write_answers(bioloid, emulator):
    driver = driver_for(bioloid, emulator, status_return_level=1)
    try:
        driver.start()
        assert emulator.register(1, "status_return_level") == 1
        sent = len(emulator.sent)
        assert driver.bus.write(1, driver.control_table.item("led"), 1).ok  # not waiting for a status
        assert emulator.wait_for(lambda: emulator.register(1, "led") == 1, timeout=PATIENCE)
        assert len(emulator.sent) == sent  # the servo did not answer the WRITE
        state = driver.read()
        answers = list(emulator.sent)[sent:]
        assert state.valid.all() and len(answers) >= 18  # READs are answered (a late one may be retried)
        assert all(len(answer) == 6 + 8 for answer in answers)  # READ statuses only
    finally:
        driver.close()


def test_protocol2_sync_read_survives_a_silent_servo(bioloid, tmp_path):
    emulator = emulator_for(tmp_path, 2)
    driver = driver_for(bioloid, emulator, 2)
    try:
        driver.start()
        emulator.silence(5)
        state = driver.read()
        index = bioloid.joints.index("r_elbow")
        assert not state.valid[index] and state.valid.sum() == 17
        state = driver.read()  # next cycle: one SYNC_READ of the 17 answering servos
        assert state.valid.sum() == 17
        emulator.silence(5, False)
        run_until(driver, lambda s: s.valid.all())
    finally:
        driver.close()
        emulator.stop()
