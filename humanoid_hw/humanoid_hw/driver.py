"""The Dynamixel hardware driver: the real robot behind the shared driver interface.

One bus (one serial port, one protocol) carries every joint's servo. The driver is
the controller layer over pieces that each do one job (pypot's io / controller /
config layering):

- :mod:`~humanoid_hw.bus` - the serial port and the protocol (io);
- :mod:`~humanoid_hw.bus_layout` - which servo drives which joint, and the checks
  that one bus can carry them (config), with :mod:`~humanoid_hw.hardware_config`;
- :mod:`~humanoid_hw.servo_setup` - bringing a servo up (PING, model, configuration);
- :mod:`~humanoid_hw.cycle_io` - the per-cycle reads and writes in URDF units;
- :mod:`~humanoid_hw.servo_health` - the stale/probe state machine of each servo;
- :mod:`~humanoid_hw.port_recovery` - reopening a vanished port with back-off;
- :mod:`~humanoid_hw.driver_status` - the diagnostics text.

Faults never stop the other joints: a servo that does not answer after the bounded
retries is marked stale (``JointState.valid`` False, a STALE status naming the joint)
and asked again every ``stale_probe_period`` until it answers; status error bits are
decoded into named status entries; a vanished port is closed and reopened with
exponential back-off (every joint invalid meanwhile); late cycles are counted as
deadline misses. Start-up follows the same policy: each exchange has ``retries``,
a servo that does not come up is asked again (``retries`` more rounds, paced by the
reopen back-off), a port that fails during start-up is reopened with the same
back-off (at most ``retries`` times), and a servo still missing after that
is handled as ``on_missing`` says. The driver knows nothing of ROS: the shared
front publishes :meth:`DynamixelDriver.status`.

``clock`` (monotonic by default) schedules deadlines, probes and back-off, and
stamps joint states with the time their reads ended; the ROS front maps it to ROS
time.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from humanoid_core.loop import DriverError, JointCommand, JointState, RobotDriver, StatusEntry
from humanoid_description import JointMap
from humanoid_hw.bus import BusError, DynamixelBus, PortLostError, Traffic
from humanoid_hw.bus_layout import BusServo, HardwareJoint, bus_servos, hardware_joints
from humanoid_hw.control_tables import RETURN_DELAY_UNIT_S
from humanoid_hw.cycle_io import CycleIO
from humanoid_hw.driver_status import bus_status, joint_status, loop_status
from humanoid_hw.hardware_config import DynamixelConfig, load_hardware_config
from humanoid_hw.port_recovery import PortRecovery
from humanoid_hw.servo_setup import bring_up

if TYPE_CHECKING:
    from humanoid_description import RobotModel

Clock = Callable[[], float]


class DynamixelDriver(RobotDriver):
    """Drives a chain of Dynamixel servos on one serial port (see the module docstring)."""

    def __init__(self, joints: Sequence[HardwareJoint], config: DynamixelConfig | None = None,
                 clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config or DynamixelConfig()
        self._clock = clock
        self._sleep = sleep
        self.servos: list[BusServo] = bus_servos(joints, self.config.protocol)
        self.joint_names = tuple(s.name for s in self.servos)
        self.bus = DynamixelBus(self.config.port, self.config.baud, self.config.protocol,
                                self.config.retries, self.config.latency_timer_ms, self.config.answer_poll_us,
                                self.config.return_delay * RETURN_DELAY_UNIT_S)
        self.io = CycleIO(self.bus, self.servos, self.config)
        #: The control table every servo of the bus shares (one layout per bus).
        self.control_table = self.io.table
        self.port_recovery = PortRecovery(self.bus, self.config)
        #: One cycle, start or close at a time: close() may come from a signal handler's
        #: thread while the control thread is in a cycle.
        self._lock = threading.RLock()
        self._stamp = self._clock()
        self._deadline: float | None = None
        self.cycles = 0
        self.deadline_misses = 0
        self.worst_overrun = 0.0
        #: Traffic of the last complete cycle (from one read() to the next).
        self.last_cycle_traffic = Traffic()
        self._cycle_mark = Traffic()
        self._status_mark = Traffic()
        self.dropped_writes = 0
        self._started = False

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_model(cls, model: RobotModel, config: DynamixelConfig | None = None,
                   joint_map: JointMap | None = None, clock: Clock = time.monotonic) -> DynamixelDriver:
        """Driver for a robot model: canonical joint order and URDF limits from the model,
        servos from its joint map (or from ``joint_map``)."""
        return cls(hardware_joints(model, joint_map), config, clock=clock)

    @classmethod
    def for_robot(cls, robot: str, **overrides: object) -> DynamixelDriver:
        """Driver for a named robot with its ``bus.yaml`` parameters (plus overrides)."""
        from humanoid_description import load_model

        return cls.from_model(load_model(robot), load_hardware_config(robot, **overrides))

    # -- start-up ------------------------------------------------------------------------
    def start(self) -> JointState:
        """Open the port, check every servo (ID, model), configure them, read the state.

        A missing or wrong servo is reported by ID and joint name; then the driver
        refuses to start (``on_missing: refuse``) or starts with those joints stale
        (``on_missing: degraded``).
        """
        with self._lock:
            try:
                self.bus.open()
            except BusError as error:
                raise DriverError(f"Dynamixel driver: {error}") from error
            problems = self._bring_up_all()
            if problems and self.config.on_missing == "refuse":
                self.bus.close()
                raise DriverError(
                    f"Dynamixel bus {self.config.port} (protocol {self.config.protocol}.0, {self.config.baud} baud): "
                    + "; ".join(problems)
                    + ". Check power, wiring, IDs and baud rate, or set on_missing: degraded to start without them.")
            self._started = True
            self._cycle_mark = self.bus.traffic.snapshot()
            return self.read()

    def _bring_up_all(self) -> list[str]:
        """Bring every servo up; returns one problem per servo that is not ready.

        The run-time policy: each exchange has ``retries``; a servo that did not come up
        is asked again, ``retries`` more rounds, the pause between rounds doubling from
        ``reopen_backoff_initial`` up to ``reopen_backoff_max`` (the back-off of a lost
        port), before it counts as missing; a port that fails meanwhile is reopened with
        that back-off, at most ``retries`` attempts in the whole start-up.
        """
        failures: dict[int, str] = {}
        reopens_left = self.config.retries
        pause = self.config.reopen_backoff_initial
        for round_number in range(1 + self.config.retries):
            pending = [s for s in self.servos if not s.health.configured and s.health.disabled is None]
            if not pending:
                break
            if round_number:
                self._sleep(pause)
                pause = min(2.0 * pause, self.config.reopen_backoff_max)
            while pending:
                servo = pending[0]
                try:
                    failure = bring_up(self.bus, servo, self.config, self._note_errors)
                except PortLostError as error:
                    self.port_recovery.lose(str(error), self._clock())
                    while reopens_left > 0 and self.port_recovery.lost:
                        reopens_left -= 1
                        self._sleep(self.port_recovery.wait_time(self._clock()))
                        self.port_recovery.try_reopen(self._clock())
                    if not self.port_recovery.lost:
                        continue  # the same servo again, on the reopened port
                    failures |= {s.index: f"port lost during start-up ({error})" for s in pending}
                    return self._problems(failures)
                pending.pop(0)
                if failure is None:
                    failures.pop(servo.index, None)
                else:
                    failures[servo.index] = failure
        return self._problems(failures)

    def _problems(self, failures: dict[int, str]) -> list[str]:
        return [self._not_ready(servo, failures[servo.index]) for servo in self.servos if servo.index in failures]

    def _not_ready(self, servo: BusServo, reason: str) -> str:
        """A servo that did not come up: stale (to be probed) unless it is of the wrong model."""
        if servo.health.disabled is None:
            servo.health.mark_stale(reason, self._clock(), self.config.stale_probe_period)
        return f"{servo.label}: {reason}"

    def _note_errors(self, servo: BusServo, error: int) -> None:
        self.io.note_errors(servo, error, self._clock())

    # -- control cycle -----------------------------------------------------------------
    def sync(self, period: float) -> None:
        """Wait for the next deadline (monotonic clock); a cycle that overran is counted as a
        deadline miss and the schedule restarts from now (no burst of catch-up cycles). The
        next cycle polls for its answers only if this one left less than ``answer_poll_slack``
        of the period free: a cycle with time to spare gains nothing from polling."""
        now = self._clock()
        if self._deadline is None:
            self._deadline = now + period
        else:
            self._deadline += period
            if now > self._deadline:
                self.deadline_misses += 1
                self.worst_overrun = max(self.worst_overrun, now - self._deadline)
                self._deadline = now
        spare = self._deadline - now
        self.bus.answer_polling = spare <= self.config.answer_poll_slack * period
        if spare > 0.0:
            self._sleep(spare)

    def read(self) -> JointState:
        """Read every answering servo; probe stale ones when due; reopen a lost port when due.

        The state's ``valid`` marks the joints read in this call, its stamp is the
        time the reads ended; with the port lost no joint is valid.
        """
        with self._lock:
            self._require_started()
            now = self._clock()
            self.io.begin_cycle()
            if self.port_recovery.lost and self.port_recovery.try_reopen(now):
                self._after_reopen(now)
            if self.bus.is_open:
                try:
                    self._probe_due(self.io.read_cycle(now), now)
                except PortLostError as error:
                    self.port_recovery.lose(str(error), self._clock())
                    self.io.valid[:] = False
            self._stamp = self._clock()
            self.cycles += 1
            traffic = self.bus.traffic.snapshot()
            self.last_cycle_traffic = traffic.since(self._cycle_mark)
            self._cycle_mark = traffic
            return self.io.snapshot(self._stamp)

    def _after_reopen(self, now: float) -> None:
        """Ask each servo once this cycle instead of giving each a full retry round."""
        for servo in self.servos:
            if servo.health.disabled is None and servo.health.configured:
                servo.health.probe_now("port reopened, not read yet", now)

    def _probe_due(self, candidates: list[BusServo], now: float) -> None:
        """Probe those of ``candidates`` (the servos out of this cycle's reads) that are due."""
        for servo in candidates:
            if servo.health.probe_due(now):
                self._probe(servo, now)

    def _probe(self, servo: BusServo, now: float) -> None:
        """One attempt (no retries) to reach a stale servo, so it cannot stall the cycle; a
        servo never configured is brought up first."""
        health = servo.health
        health.next_probe = now + self.config.stale_probe_period
        if not health.configured:
            failure = bring_up(self.bus, servo, self.config, self._note_errors, ping_retries=0)
            if not health.configured:
                if failure is not None and health.disabled is None:
                    health.mark_stale(failure, now, self.config.stale_probe_period)
                return
        self.io.read_one(servo, now, retries=0)

    def write(self, command: JointCommand) -> None:
        """Goal position + speed of every driven servo in one SYNC_WRITE (see CycleIO.write_goals)."""
        with self._lock:
            self._require_started()
            positions = np.asarray(command.position, dtype=float)
            if positions.shape != self.io.position.shape or not np.all(np.isfinite(positions)):
                raise ValueError(f"expected {len(self.servos)} finite joint positions, got {positions!r}")
            if not self.bus.is_open:
                self.dropped_writes += 1
                return
            velocities = None if command.velocity is None else np.asarray(command.velocity, dtype=float)
            try:
                if not self.io.write_goals(positions, velocities):
                    self.dropped_writes += 1
            except PortLostError as error:
                self.port_recovery.lose(str(error), self._clock())

    releases_torque = True

    def set_torque(self, enabled: bool) -> None:
        """Torque on or off for every driven servo, in one SYNC_WRITE (sent again once if a serial
        glitch kept it from going out, as at shutdown). Off, the servos go limp: the control loop
        writes no goal until it takes them again, goals at the measured positions first."""
        with self._lock:
            self._require_started()
            if not self.bus.is_open:
                raise DriverError(f"torque {'on' if enabled else 'off'}: the port {self.config.port} is lost "
                                  "(reopening)")
            try:
                if not self.io.write_torque(enabled) and not self.io.write_torque(enabled):
                    raise DriverError(f"torque {'on' if enabled else 'off'}: the SYNC_WRITE did not go out twice "
                                      f"on {self.config.port}")
            except PortLostError as error:
                self.port_recovery.lose(str(error), self._clock())
                raise DriverError(f"torque {'on' if enabled else 'off'}: {error}") from error

    def _require_started(self) -> None:
        if not self._started:
            raise DriverError("the Dynamixel driver is not running: call start() first")

    # -- state and health --------------------------------------------------------------
    def now(self) -> float:
        return self._clock()

    def status(self) -> list[StatusEntry]:
        """Bus, control loop, then one entry per joint (named by joint and servo ID)."""
        traffic = self.bus.traffic
        recent = traffic.since(self._status_mark)
        self._status_mark = traffic.snapshot()
        now = self._clock()
        return ([bus_status(self.config, traffic, recent, self.last_cycle_traffic, self.port_recovery,
                            self.dropped_writes),
                 loop_status(self.cycles, self.deadline_misses, self.worst_overrun)]
                + [joint_status(s, now) for s in self.servos])

    # -- shutdown ----------------------------------------------------------------------
    def close(self) -> None:
        """Apply ``on_shutdown`` and close the port; idempotent, callable from any thread.

        ``limp``: torque off for every driven servo (one SYNC_WRITE, sent again once if a
        serial glitch kept it from going out), drained to the wire before the port
        closes; a port lost at that moment is reopened once for it. ``hold``: torque
        stays on, every servo holding its last goal. A cycle running in another thread
        (the control loop when a signal ends the process) finishes first.
        """
        with self._lock:
            if self._started:
                self._started = False
                if self.config.on_shutdown == "limp":
                    self._go_limp()
            self.bus.close()

    def _go_limp(self) -> None:
        if self.port_recovery.lost:
            self.port_recovery.try_reopen(self._clock(), force=True)
        if not self.bus.is_open:
            return
        with contextlib.suppress(PortLostError):
            if not self.io.write_torque(False):
                self.io.write_torque(False)
            self.bus.drain()
