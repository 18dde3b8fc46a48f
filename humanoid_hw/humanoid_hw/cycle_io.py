"""The per-cycle traffic of the driver: present states in, goals out, in URDF units.

Per control cycle the bus carries the cheapest read the protocol has (protocol 1.0:
one READ of the present-state block per servo; protocol 2.0: one SYNC_READ) and one
SYNC_WRITE of goal position + speed. Units are the URDF's: positions through the joint
map (direction, offset, position scale), velocities through the control table's speed
scale, effort = load fraction x the model's maximum torque (AX-12: 1.5 N m) x
direction. The load register is the servo's estimate from its motor drive, not a
torque sensor: effort is an indication. A model whose load register has no scale
(XM430: it reports current) gives NaN effort.

``valid`` says which joints were read *this cycle*: it is cleared when a cycle
begins and set by each answer, so a joint whose servo did not answer, a servo not
asked this cycle (stale, probed later), and every joint of a lost port read invalid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from humanoid_core.loop import JointState
from humanoid_hw.bus import DynamixelBus, Reply
from humanoid_hw.bus_layout import BusServo
from humanoid_hw.control_tables import ControlTable, block_decoder, decode_bits
from humanoid_hw.hardware_config import DynamixelConfig


class CycleIO:
    """Reads and writes every servo of one bus, and keeps the latest joint values."""

    def __init__(self, bus: DynamixelBus, servos: Sequence[BusServo], config: DynamixelConfig) -> None:
        self.bus = bus
        self.servos = list(servos)
        self.config = config
        #: The layout every servo of the bus shares (checked by bus_layout.bus_servos).
        self.table: ControlTable = self.servos[0].table
        count = len(self.servos)
        self.position = np.zeros(count)
        self.velocity = np.zeros(count)
        self.effort = np.zeros(count)
        self.valid = np.zeros(count, dtype=bool)
        self._state_block = self.table.state_block
        #: Present position, speed and load from a state block, in one call (each servo, every cycle).
        self._decode_motion = block_decoder([self.table.item(name) for name in ("present_position", "present_speed",
                                                                                "present_load")],
                                            self._state_block.start)
        #: The latest SYNC_WRITE payload and what it was made from (positions, velocities, servo IDs).
        self._payload: dict[int, bytes] = {}
        self._payload_of: tuple[np.ndarray, np.ndarray | None, list[int]] = (np.zeros(0), None, [])
        #: Where goal position and speed sit in the command block (offset, item), found once.
        command = self.table.command_block
        self._command_items = tuple((item.address - command.start, item) for item in
                                    (self.table.item("goal_position"), self.table.item("goal_speed")))

    # -- reading ---------------------------------------------------------------------
    def begin_cycle(self) -> None:
        """Nothing is read yet this cycle."""
        self.valid[:] = False

    def read_cycle(self, now: float) -> list[BusServo]:
        """Read every servo in the cycle in the fewest transactions (PortLostError propagates);
        returns the servos that were out of the cycle (stale, not configured, disabled)."""
        block = self._state_block
        active, out = [], []
        for servo in self.servos:
            (active if servo.health.in_cycle else out).append(servo)
        replies = self.bus.read_many([s.servo_id for s in active], block.start, block.length)
        for servo in active:
            self.take(servo, replies[servo.servo_id], now)
        return out

    def read_one(self, servo: BusServo, now: float, retries: int | None = None) -> None:
        """One servo's present state (a probe: usually no retries)."""
        block = self.table.state_block
        self.take(servo, self.bus.read(servo.servo_id, block.start, block.length, retries=retries), now)

    def take(self, servo: BusServo, reply: Reply, now: float) -> None:
        """Use one servo's answer, or mark it stale."""
        index, health = servo.index, servo.health
        if not reply.ok:
            health.mark_stale(f"no answer after {reply.attempts} attempt(s) ({reply.failure})", now,
                              self.config.stale_probe_period)
            self.valid[index] = False
            return
        health.answered()
        data = health.state_block = reply.data  # the rest of the block is decoded for diagnostics only
        position, speed, load = self._decode_motion(data)
        health.clear_warning_within(position, servo.raw_min, servo.raw_max)
        joint, table = servo.joint.servo, servo.table
        sign = joint.raw_velocity_sign()
        self.position[index] = joint.raw_to_radians(position)
        self.velocity[index] = sign * table.speed_scale.raw_to_rad_s(speed)
        self.effort[index] = (sign * table.load_scale.raw_to_fraction(load) * table.max_torque_nm
                              if table.load_scale is not None else math.nan)
        self.valid[index] = True
        self.note_errors(servo, reply.error, now)

    def note_errors(self, servo: BusServo, error: int, now: float) -> None:
        """Decode a status ERR byte; protocol 2.0's alert bit is resolved through the
        servo's Hardware Error Status (read again at most every stale_probe_period)."""
        health = servo.health
        if not error and not health.errors and health.hardware_error_read_at == -math.inf:
            return  # no error now nor before: nothing to update (the usual case, every servo every cycle)
        names = self.bus.status_errors(error)
        if "hardware alert" in names and servo.table.hardware_error_bits:
            if now - health.hardware_error_read_at >= self.config.stale_probe_period:
                health.hardware_error_read_at = now
                value, _ = self.bus.read_item(servo.servo_id, servo.table.item("hardware_error_status"), retries=0)
                health.hardware_error = value or 0
            if health.hardware_error:
                names = [n for n in names if n != "hardware alert"]
                names += decode_bits(health.hardware_error, servo.table.hardware_error_bits)
        else:
            health.hardware_error, health.hardware_error_read_at = 0, -math.inf
        health.note_errors(names)

    def snapshot(self, stamp: float) -> JointState:
        return JointState(stamp=stamp, position=self.position.copy(), velocity=self.velocity.copy(),
                          effort=self.effort.copy(), valid=self.valid.copy())

    # -- writing ---------------------------------------------------------------------
    def driven(self) -> list[BusServo]:
        """Servos that take commands: configured and of the right model."""
        return [s for s in self.servos if s.health.configured and s.health.disabled is None]

    def write_goals(self, positions: np.ndarray, velocities: np.ndarray | None) -> bool:
        """One SYNC_WRITE of goal position + speed for every driven servo (False: not sent, a glitch).

        A commanded velocity becomes the servo's speed limit toward the goal; zero or
        no velocity means the servo's own maximum (register value 0 on both families), and
        so does a velocity that rounds to no register unit (a set-point at rest but for
        floating-point dust: a servo behind its goal would otherwise crawl at the slowest
        speed, 0.7 deg/s on an AX-12, and never get there).
        The same goals for the same servos as last cycle (a held set-point) give the same
        bytes, which are then not converted again.
        """
        block = self.table.command_block
        driven = self.driven()
        ids = [servo.servo_id for servo in driven]
        last_positions, last_velocities, last_ids = self._payload_of
        if not (ids == last_ids and np.array_equal(positions, last_positions)
                and (velocities is None if last_velocities is None
                     else velocities is not None and np.array_equal(velocities, last_velocities))):
            payload = {}
            for servo in driven:
                speed = 0.0 if velocities is None else float(velocities[servo.index])
                payload[servo.servo_id] = self.command_bytes(servo, positions[servo.index], speed)
            self._payload = payload
            self._payload_of = (positions.copy(), None if velocities is None else velocities.copy(), ids)
        return self.bus.sync_write(block.start, block.length, self._payload)

    def command_bytes(self, servo: BusServo, position: float, speed: float) -> bytes:
        """The command block of one servo: goal within its commandable range, speed in register units."""
        raw = servo.joint.servo.radians_to_raw(min(servo.upper, max(servo.lower, position)))
        speed_raw = abs(servo.table.speed_scale.rad_s_to_raw(abs(speed))) if math.isfinite(speed) else 0
        data = bytearray(self.table.command_block.length)
        for (offset, item), value in zip(self._command_items, (raw, speed_raw), strict=True):
            data[offset:offset + item.size] = item.encode(value)
        return bytes(data)

    def write_torque(self, enabled: bool) -> bool:
        """Torque on or off for every driven servo, in one SYNC_WRITE (False: not sent, a glitch)."""
        item = self.table.item("torque_enable")
        payload = {s.servo_id: item.encode(int(enabled)) for s in self.driven()}
        return self.bus.sync_write(item.address, item.size, payload)
