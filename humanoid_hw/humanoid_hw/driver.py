"""The Dynamixel hardware driver: the real robot behind the shared driver interface.

One bus (one serial port, one protocol) carries every joint's servo. Per control cycle
the driver costs the bus one SYNC_WRITE (goal position + speed of every servo) and the
cheapest read the protocol has (protocol 1.0: one READ of a contiguous block per
servo; protocol 2.0: one SYNC_READ). Units are the URDF's: positions through the joint
map (direction, offset, position scale), velocities through the model's speed scale,
effort = load fraction x the model's maximum torque (AX-12: 1.5 N m) x direction. The
load register is the servo's estimate from its motor drive, not a torque sensor: treat
effort as an indication.

Faults never stop the other joints: a servo that does not answer after the bounded
retries is marked stale (``JointState.valid`` False, a STALE status naming the joint)
and asked again every ``stale_probe_period`` until it answers; status error bits are
decoded into named status entries; a vanished port is closed and reopened with
exponential back-off; late cycles are counted as deadline misses. The driver knows
nothing of ROS: the shared front publishes :meth:`DynamixelDriver.status`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from humanoid_control.driver import (
    DriverError,
    JointCommand,
    JointState,
    Level,
    RobotDriver,
    StatusEntry,
)
from humanoid_description.joint_map import JointMap, ServoJoint
from humanoid_hw.bus import BusError, DynamixelBus, PortLostError, Reply, Traffic
from humanoid_hw.hardware_config import DynamixelConfig, load_hardware_config
from humanoid_hw.servo_models import (
    STATE_ITEMS,
    ServoModel,
    decode_bits,
    model_name_for_number,
    servo_model,
)

if TYPE_CHECKING:
    from humanoid_description.model import RobotModel


@dataclass(frozen=True)
class HardwareJoint:
    """One joint as the driver sees it: its servo and its URDF limits (rad)."""

    servo: ServoJoint
    lower: float
    upper: float

    @property
    def name(self) -> str:
        return self.servo.joint


@dataclass
class _Servo:
    """What the driver knows about one servo while it runs."""

    index: int
    joint: HardwareJoint
    model: ServoModel
    #: Commandable range (rad): the URDF limits within what the register can hold.
    lower: float
    upper: float
    #: The same range in register units (written as the servo's angle limits).
    raw_min: int
    raw_max: int
    #: Start-up configuration done (return delay, limits, torque); never before it answered.
    configured: bool = False
    #: Set for a servo of the wrong model: it is never written to.
    disabled: str | None = None
    stale_since: float | None = None
    stale_reason: str = ""
    next_probe: float = 0.0
    recoveries: int = 0
    errors: tuple[str, ...] = ()
    #: Something to know that is not a fault (e.g. found outside its limits at start-up).
    warning: str | None = None
    #: The servo protected itself (overload, overheating): its torque is off until it is
    #: re-armed, even after the error bit clears. Kept until the driver restarts.
    tripped: str | None = None
    #: Last Hardware Error Status read (protocol 2.0), and when.
    hardware_error: int = 0
    hardware_error_read_at: float = -math.inf
    values: dict[str, int] = field(default_factory=dict)

    @property
    def servo_id(self) -> int:
        return self.joint.servo.servo_id

    @property
    def label(self) -> str:
        return f"ID {self.servo_id} ({self.joint.name})"

    @property
    def in_cycle(self) -> bool:
        """Read every cycle: configured, enabled and answering."""
        return self.configured and self.disabled is None and self.stale_since is None


#: Servo errors after which the servo switches its own torque off (AX-12: Torque Limit 0).
SHUTDOWN_ERRORS = frozenset({"overload", "overheating"})


class DynamixelDriver(RobotDriver):
    """Drives a chain of Dynamixel servos on one serial port (see the module docstring)."""

    def __init__(self, joints: Sequence[HardwareJoint], config: DynamixelConfig | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config or DynamixelConfig()
        self._clock = clock
        self._sleep = sleep
        self._servos = [self._servo_entry(index, joint) for index, joint in enumerate(joints)]
        self._check_bus_layout()
        self.joint_names = tuple(j.name for j in joints)
        self.model = self._servos[0].model
        self.bus = DynamixelBus(self.config.port, self.config.baud, self.config.protocol,
                                self.config.retries, self.config.latency_timer_ms)
        count = len(joints)
        self._position = np.zeros(count)
        self._velocity = np.zeros(count)
        self._effort = np.zeros(count)
        self._valid = np.zeros(count, dtype=bool)
        self._stamp = self._clock()
        self._deadline: float | None = None
        self.cycles = 0
        self.deadline_misses = 0
        self.worst_overrun = 0.0
        #: Traffic of the last complete cycle (from one read() to the next).
        self.last_cycle_traffic = Traffic()
        self._cycle_mark = Traffic()
        self._status_mark = Traffic()
        self._port_error: str | None = None
        self._reopen_at = 0.0
        self._backoff = self.config.reopen_backoff_initial
        self.port_losses = 0
        self.reopen_attempts = 0
        self.port_reopens = 0
        self.dropped_writes = 0
        self._started = False

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_model(cls, model: RobotModel, config: DynamixelConfig | None = None,
                   joint_map: JointMap | None = None, clock: Callable[[], float] = time.monotonic) -> DynamixelDriver:
        """Driver for a robot model: canonical joint order and URDF limits from the model,
        servos from its joint map (or from ``joint_map``); ``clock`` stamps the states."""
        joint_map = joint_map if joint_map is not None else model.config.joint_map
        if joint_map is None:
            raise DriverError(f"robot {model.name} has no Dynamixel joint map")
        joints = []
        for info in model.joints:
            if info.name not in joint_map:
                raise DriverError(f"joint {info.name} has no servo in the joint map")
            joints.append(HardwareJoint(joint_map[info.name], info.limits.lower, info.limits.upper))
        return cls(joints, config, clock=clock)

    @classmethod
    def for_robot(cls, robot: str, **overrides: object) -> DynamixelDriver:
        """Driver for a named robot with its ``<robot>_hw.yaml`` parameters (plus overrides)."""
        from humanoid_description.model import load_model

        return cls.from_model(load_model(robot), load_hardware_config(robot, **overrides))

    def _servo_entry(self, index: int, joint: HardwareJoint) -> _Servo:
        try:
            model = servo_model(joint.servo.model)
        except KeyError as error:
            raise DriverError(f"joint {joint.name}: {error.args[0]}") from None
        lower, upper, raw_min, raw_max = self._commandable_range(joint)
        return _Servo(index=index, joint=joint, model=model, lower=lower, upper=upper, raw_min=raw_min, raw_max=raw_max)

    @staticmethod
    def _commandable_range(joint: HardwareJoint) -> tuple[float, float, int, int]:
        """A joint's URDF limits within what the register can hold, in rad and in register units.

        The joint map converts ``raw - offset`` through the position scale, which must
        stay in the register range too: with an offset the usable range shrinks by it.
        """
        servo = joint.servo
        scale = servo.scale
        ends = sorted((servo.raw_to_radians(scale.raw_min + max(0, servo.offset)),
                       servo.raw_to_radians(scale.raw_max + min(0, servo.offset))))
        lower = max(joint.lower, ends[0]) if math.isfinite(joint.lower) else ends[0]
        upper = min(joint.upper, ends[1]) if math.isfinite(joint.upper) else ends[1]
        raws = sorted((servo.radians_to_raw(lower), servo.radians_to_raw(upper)))
        return lower, upper, raws[0], raws[1]

    def _check_bus_layout(self) -> None:
        """One bus: one protocol, one command and state layout (SYNC_WRITE / SYNC_READ need it)."""
        if not self._servos:
            raise DriverError("no joints to drive")
        ids = [s.servo_id for s in self._servos]
        if len(set(ids)) != len(ids):
            raise DriverError(f"servo IDs must be unique on one bus: {ids}")
        for servo in self._servos:
            if servo.model.protocol != self.config.protocol:
                raise DriverError(f"{servo.label}: {servo.model.name} speaks protocol {servo.model.protocol}.0, "
                                  f"the bus is configured for protocol {self.config.protocol}.0")
        layouts = {(s.model.command_block, s.model.state_block) for s in self._servos}
        if len(layouts) != 1:
            raise DriverError("servos on one bus must share the goal and present-state register layout")

    # -- start-up ------------------------------------------------------------------------
    def start(self) -> JointState:
        """Open the port, check every servo (ID, model), configure them, read the state.

        A missing or wrong servo is reported by ID and joint name; then the driver
        refuses to start (``on_missing: refuse``) or starts with those joints stale
        (``on_missing: degraded``).
        """
        try:
            self.bus.open()
            problems = [problem for servo in self._servos if (problem := self._bring_up(servo, self.config.retries))]
        except BusError as error:
            self.bus.close()
            raise DriverError(f"Dynamixel driver: {error}") from error
        if problems and self.config.on_missing == "refuse":
            self.bus.close()
            raise DriverError(
                f"Dynamixel bus {self.config.port} (protocol {self.config.protocol}.0, {self.config.baud} baud): "
                + "; ".join(problems)
                + ". Check power, wiring, IDs and baud rate, or set on_missing: degraded to start without them.")
        self._started = True
        self._cycle_mark = self.bus.traffic.snapshot()
        return self.read()

    def _bring_up(self, servo: _Servo, retries: int) -> str | None:
        """Ping, check the model, configure; returns what went wrong (None when ready)."""
        now = self._clock()
        reply = self.bus.ping(servo.servo_id, retries=retries)
        if not reply.ok:
            return self._mark_stale(servo, f"no answer to PING after {reply.attempts} attempt(s) ({reply.failure})",
                                    now)
        found = int.from_bytes(reply.data, "little")
        if found != servo.model.model_number:
            servo.disabled = (f"model number {found} ({model_name_for_number(found, self.config.protocol)}), "
                              f"expected {servo.model.model_number} ({servo.model.name}); not driven")
            return f"{servo.label}: {servo.disabled}"
        failure = self._configure(servo)
        if failure:
            return self._mark_stale(servo, failure, now)
        servo.configured = True
        servo.stale_since = None
        return None

    def _configure(self, servo: _Servo) -> str | None:
        """Status return level, return delay, position limits, torque limit, goal = present, torque."""
        bus, items, sid = self.bus, servo.model.items, servo.servo_id
        level, _ = bus.read_item(sid, items["status_return_level"])
        if level != self.config.status_return_level:
            # The servo's level is unknown (0 never answers a READ): it may or may not answer.
            bus.write_maybe_answered(sid, items["status_return_level"], self.config.status_return_level)
            level, _ = bus.read_item(sid, items["status_return_level"])
            if level != self.config.status_return_level:
                return f"Status Return Level not accepted (read back {level})"
        bus.writes_answered = self.config.status_return_level == 2
        present = {name: bus.read_item(sid, items[name])[0] for name in (
            "return_delay_time", "min_position_limit", "max_position_limit", "torque_enable", "present_position")}
        if any(value is None for value in present.values()):
            return "no answer while reading its configuration"
        position = present["present_position"]
        scale = servo.joint.servo.scale
        if not scale.raw_min <= position <= scale.raw_max:
            return f"implausible Present Position {position} (register range {scale.raw_min}..{scale.raw_max})"
        low, high = servo.raw_min, servo.raw_max
        if not low <= position <= high:
            # Torque-on must not move anything: hold it where it is; commands bring it in.
            servo.warning = (f"found at raw {position}, outside its limits [{low}, {high}]: held there, "
                             "servo limits widened until the next start")
            low, high = min(low, position), max(high, position)
        eeprom = {"return_delay_time": self.config.return_delay, "min_position_limit": low, "max_position_limit": high}
        # Read before write: EEPROM wears out, and X servos need torque off to write it.
        changes = {name: value for name, value in eeprom.items() if present[name] != value}
        writes = []
        if changes and servo.model.eeprom_locked_by_torque and present["torque_enable"]:
            writes.append(("torque_enable", 0))  # X series: EEPROM is locked while torque is on
        writes += list(changes.items())
        if "torque_limit" in items and "max_torque" in items:
            # An AX servo that shut itself down (overload, heat) keeps Torque Limit at 0 until
            # it is written: starting the driver re-arms it to its Max Torque.
            max_torque, _ = bus.read_item(sid, items["max_torque"])
            limit, _ = bus.read_item(sid, items["torque_limit"])
            if max_torque is None or limit is None:
                return "no answer while reading its torque limits"
            if limit != max_torque:
                writes.append(("torque_limit", max_torque))
        writes.append(("goal_position", position))
        writes.append(("torque_enable", int(self.config.torque_on_start)))
        for name, value in writes:
            reply = self.bus.write(sid, items[name], value)
            if not reply.ok:
                return f"no answer to the write of {items[name].manual_name} ({reply.failure})"
            if reply.error:
                self._note_errors(servo, reply.error)
        return None

    # -- control cycle -----------------------------------------------------------------
    def sync(self, period: float) -> None:
        """Wait for the next deadline (monotonic clock); a cycle that overran is counted as a
        deadline miss and the schedule restarts from now (no burst of catch-up cycles)."""
        now = self._clock()
        if self._deadline is None:
            self._deadline = now + period
        else:
            self._deadline += period
            if now > self._deadline:
                self.deadline_misses += 1
                self.worst_overrun = max(self.worst_overrun, now - self._deadline)
                self._deadline = now
        if self._deadline > now:
            self._sleep(self._deadline - now)

    def read(self) -> JointState:
        """Read every answering servo; probe stale ones when due; reopen a lost port when due."""
        self._require_started()
        now = self._clock()
        if not self.bus.is_open:
            self._try_reopen(now)
        if self.bus.is_open:
            try:
                self._read_cycle(now)
            except PortLostError as error:
                self._lose_port(str(error), now)
        self._stamp = self._clock()
        self.cycles += 1
        traffic = self.bus.traffic.snapshot()
        self.last_cycle_traffic = traffic.since(self._cycle_mark)
        self._cycle_mark = traffic
        return self._snapshot()

    def _read_cycle(self, now: float) -> None:
        block = self.model.state_block
        active = [s for s in self._servos if s.in_cycle]
        replies = self.bus.read_many([s.servo_id for s in active], block.start, block.length)
        for servo in active:
            self._take(servo, replies[servo.servo_id], now)
        for servo in self._servos:
            if servo.disabled is None and not servo.in_cycle and now >= servo.next_probe:
                self._probe(servo, now)

    def _probe(self, servo: _Servo, now: float) -> None:
        """One attempt (no retries) to reach a stale servo, so it cannot stall the cycle."""
        servo.next_probe = now + self.config.stale_probe_period
        if not servo.configured:
            self._bring_up(servo, retries=0)
            if not servo.configured:
                return
        block = self.model.state_block
        self._take(servo, self.bus.read(servo.servo_id, block.start, block.length, retries=0), now)

    def _take(self, servo: _Servo, reply: Reply, now: float) -> None:
        """Use one servo's answer, or mark it stale."""
        index = servo.index
        if not reply.ok:
            self._mark_stale(servo, f"no answer after {reply.attempts} attempt(s) ({reply.failure})", now)
            self._valid[index] = False
            return
        if servo.stale_since is not None:
            servo.recoveries += 1
            servo.stale_since = None
        start = self.model.state_block.start
        values = {name: servo.model.item(name).decode(reply.data, start) for name in STATE_ITEMS}
        servo.values = values
        if servo.warning and servo.raw_min <= values["present_position"] <= servo.raw_max:
            servo.warning = None
        joint, model = servo.joint.servo, servo.model
        sign = joint.raw_velocity_sign()
        self._position[index] = joint.raw_to_radians(values["present_position"])
        self._velocity[index] = sign * model.speed_scale.raw_to_rad_s(values["present_speed"])
        self._effort[index] = (sign * model.load_scale.raw_to_fraction(values["present_load"]) * model.max_torque_nm
                               if model.load_scale is not None else math.nan)
        self._valid[index] = True
        self._note_errors(servo, reply.error, now)

    def _note_errors(self, servo: _Servo, error: int, now: float | None = None) -> None:
        """Decode a status ERR byte; protocol 2.0's alert bit is resolved through the
        servo's Hardware Error Status (read again at most every stale_probe_period)."""
        names = self.bus.status_errors(error)
        if "hardware alert" in names and servo.model.hardware_error_bits:
            now = self._clock() if now is None else now
            if now - servo.hardware_error_read_at >= self.config.stale_probe_period:
                servo.hardware_error_read_at = now
                value, _ = self.bus.read_item(servo.servo_id, servo.model.item("hardware_error_status"), retries=0)
                servo.hardware_error = value or 0
            if servo.hardware_error:
                names = [n for n in names if n != "hardware alert"]
                names += decode_bits(servo.hardware_error, servo.model.hardware_error_bits)
        else:
            servo.hardware_error, servo.hardware_error_read_at = 0, -math.inf
        servo.errors = tuple(names)
        shutdowns = [n for n in names if n in SHUTDOWN_ERRORS]
        if shutdowns and servo.tripped is None:
            servo.tripped = ", ".join(shutdowns)

    def _mark_stale(self, servo: _Servo, reason: str, now: float) -> str:
        if servo.stale_since is None:
            servo.stale_since = now
        servo.stale_reason = reason
        servo.next_probe = now + self.config.stale_probe_period
        return f"{servo.label}: {reason}"

    def write(self, command: JointCommand) -> None:
        """One SYNC_WRITE of goal position + speed for every configured servo.

        A commanded velocity becomes the servo's speed limit toward the goal; zero or
        no velocity means the servo's own maximum (register value 0 on both families).
        """
        self._require_started()
        positions = np.asarray(command.position, dtype=float)
        if positions.shape != self._position.shape or not np.all(np.isfinite(positions)):
            raise ValueError(f"expected {len(self._servos)} finite joint positions, got {positions!r}")
        if not self.bus.is_open:
            self.dropped_writes += 1
            return
        velocities = None if command.velocity is None else np.asarray(command.velocity, dtype=float)
        block = self.model.command_block
        payload = {}
        for index, servo in enumerate(self._servos):
            if servo.configured and servo.disabled is None:
                speed = 0.0 if velocities is None else float(velocities[index])
                payload[servo.servo_id] = self._command_bytes(servo, positions[index], speed)
        try:
            self.bus.sync_write(block.start, block.length, payload)
        except PortLostError as error:
            self._lose_port(str(error), self._clock())

    def _command_bytes(self, servo: _Servo, position: float, speed: float) -> bytes:
        raw = servo.joint.servo.radians_to_raw(min(servo.upper, max(servo.lower, position)))
        speed_raw = 0
        if math.isfinite(speed) and speed != 0.0:
            speed_raw = max(1, abs(servo.model.speed_scale.rad_s_to_raw(abs(speed))))
        block = self.model.command_block
        data = bytearray(block.length)
        for name, value in (("goal_position", raw), ("goal_speed", speed_raw)):
            item = servo.model.item(name)
            data[item.address - block.start:item.end - block.start] = item.encode(value)
        return bytes(data)

    def set_torque(self, enabled: bool) -> None:
        """Torque on or off for every configured servo, in one SYNC_WRITE."""
        item = self.model.item("torque_enable")
        payload = {s.servo_id: item.encode(int(enabled)) for s in self._servos if s.configured and s.disabled is None}
        self.bus.sync_write(item.address, item.size, payload)

    def _require_started(self) -> None:
        if not self._started:
            raise DriverError("the Dynamixel driver is not running: call start() first")

    # -- port loss ---------------------------------------------------------------------
    def _lose_port(self, reason: str, now: float) -> None:
        if self._port_error is None:
            self.port_losses += 1
            self._backoff = self.config.reopen_backoff_initial
        self.bus.close()
        self._port_error = reason
        self._reopen_at = now + self._backoff
        self._valid[:] = False

    def _try_reopen(self, now: float) -> None:
        if now < self._reopen_at:
            return
        self.reopen_attempts += 1
        try:
            self.bus.open()
        except BusError as error:
            self._backoff = min(2.0 * self._backoff, self.config.reopen_backoff_max)
            self._port_error = f"{error}; next attempt in {self._backoff:.2f} s"
            self._reopen_at = now + self._backoff
            return
        self.port_reopens += 1
        self._port_error = None
        for servo in self._servos:  # ask each once this cycle instead of a full retry round each
            if servo.disabled is None and servo.configured:
                self._mark_stale(servo, "port reopened, not read yet", now)
                servo.next_probe = now

    # -- state and health --------------------------------------------------------------
    def _snapshot(self) -> JointState:
        return JointState(stamp=self._stamp, position=self._position.copy(), velocity=self._velocity.copy(),
                          effort=self._effort.copy(), valid=self._valid.copy())

    def now(self) -> float:
        return self._clock()

    def status(self) -> list[StatusEntry]:
        """Bus, control loop, then one entry per joint (named by joint and servo ID)."""
        return [self._bus_status(), self._loop_status()] + [self._joint_status(s) for s in self._servos]

    def _bus_status(self) -> StatusEntry:
        traffic = self.bus.traffic
        recent = traffic.since(self._status_mark)
        self._status_mark = traffic.snapshot()
        values = {"port": self.config.port, "protocol": f"{self.config.protocol}.0", "baud": str(self.config.baud),
                  "bytes_last_cycle": str(self.last_cycle_traffic.bytes_total),
                  "instructions_last_cycle": str(self.last_cycle_traffic.instructions),
                  "timeouts": str(traffic.timeouts), "corrupt_packets": str(traffic.corrupt),
                  "retries": str(traffic.retries), "port_losses": str(self.port_losses),
                  "reopen_attempts": str(self.reopen_attempts), "port_reopens": str(self.port_reopens),
                  "dropped_writes": str(self.dropped_writes)}
        if self._port_error is not None:
            return StatusEntry("dynamixel bus", Level.ERROR,
                               f"port {self.config.port} lost ({self._port_error}); reopening with back-off", values)
        if recent.corrupt or recent.timeouts:
            return StatusEntry("dynamixel bus", Level.WARN,
                               f"{recent.corrupt} corrupted status packet(s) and {recent.timeouts} timeout(s) "
                               f"since the last report ({recent.retries} retries)", values)
        return StatusEntry("dynamixel bus", Level.OK, f"{self.config.port} open", values)

    def _loop_status(self) -> StatusEntry:
        values = {"cycles": str(self.cycles), "deadline_misses": str(self.deadline_misses),
                  "worst_overrun_ms": f"{1000.0 * self.worst_overrun:.2f}"}
        if self.deadline_misses:
            return StatusEntry("dynamixel control loop", Level.WARN,
                               f"{self.deadline_misses} deadline miss(es) in {self.cycles} cycles "
                               f"(worst overrun {1000.0 * self.worst_overrun:.1f} ms)", values)
        return StatusEntry("dynamixel control loop", Level.OK, f"{self.cycles} cycles, no deadline miss", values)

    def _joint_status(self, servo: _Servo) -> StatusEntry:
        name = f"joint {servo.joint.name} (ID {servo.servo_id})"
        values = {"joint": servo.joint.name, "id": str(servo.servo_id), "model": servo.model.name,
                  "recoveries": str(servo.recoveries)}
        values |= {key: str(value) for key, value in servo.values.items()}
        if "present_voltage" in servo.values:
            values["voltage_V"] = f"{servo.values['present_voltage'] * servo.model.volts_per_unit:.1f}"
        if servo.disabled is not None:
            return StatusEntry(name, Level.ERROR, f"{servo.joint.name}: {servo.disabled}", values)
        if servo.stale_since is not None or not servo.configured:
            age = self._clock() - servo.stale_since if servo.stale_since is not None else 0.0
            return StatusEntry(name, Level.STALE, f"{servo.joint.name} (ID {servo.servo_id}) stale for {age:.1f} s: "
                               f"{servo.stale_reason}; the other joints keep running", values)
        if servo.errors:
            return StatusEntry(name, Level.ERROR,
                               f"{servo.joint.name} (ID {servo.servo_id}) reports: {', '.join(servo.errors)}", values)
        if servo.tripped:
            return StatusEntry(name, Level.ERROR,
                               f"{servo.joint.name} (ID {servo.servo_id}) shut itself down ({servo.tripped}): its "
                               "torque stays off until it is re-armed (restart the node once the cause is gone)",
                               values)
        if servo.warning:
            return StatusEntry(name, Level.WARN, f"{servo.joint.name} (ID {servo.servo_id}) {servo.warning}", values)
        return StatusEntry(name, Level.OK, "ok", values)

    # -- shutdown ----------------------------------------------------------------------
    def close(self) -> None:
        """Torque off (``on_shutdown: limp``) or leave it holding (``hold``); close the port."""
        if self.bus.is_open and self._started and self.config.on_shutdown == "limp":
            with contextlib.suppress(PortLostError):
                self.set_torque(False)
        self.bus.close()
        self._started = False

