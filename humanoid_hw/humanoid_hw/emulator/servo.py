"""One emulated Dynamixel servo: its control table, its motion, its faults.

The control-table layout comes from :mod:`humanoid_hw.control_tables` (the data the
driver uses too); the factory defaults, the motion model and the error behaviour are
the emulator's own. Motion is integrated lazily: every instruction first advances
every servo to the present time, so no timer thread is needed and a read always sees
where the horn is now.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from humanoid_hw.control_tables import (
    PROTOCOL1_ERROR_BITS,
    PROTOCOL2_ALERT_BIT,
    PROTOCOL2_ERROR_NUMBERS,
    ControlTable,
)

#: Control-table size (bytes) per protocol: AX tables end with Punch (48-49); X tables
#: end with Indirect Data 56 (661).
TABLE_SIZE = {1: 50, 2: 662}
#: Register defaults the driver never touches, by address (e-manual "Initial Value").
_EXTRA_DEFAULTS = {
    1: {11: (1, 70), 12: (1, 60), 13: (1, 140), 26: (1, 1), 27: (1, 1), 28: (1, 32), 29: (1, 32)},
    2: {24: (4, 10), 31: (1, 72), 32: (2, 140), 34: (2, 60), 36: (2, 885), 76: (2, 1000), 78: (2, 100)},
}
#: AX Moving Speed 0 means "as fast as the motor can": the register's full scale,
#: 1023 x 0.111 rpm (about 114 rpm).
AX_MAXIMUM_SPEED_UNITS = 1023
FIRMWARE_VERSION = 38
PRESENT_VOLTAGE_UNITS = 120  # 12.0 V
PRESENT_TEMPERATURE_C = 35


@dataclass(frozen=True)
class Outcome:
    """What an instruction did to a servo: the status error names and any data read."""

    errors: tuple[str, ...] = ()
    data: bytes = b""


class EmulatedServo:
    """Control table plus motion of one servo, and the faults injected into it."""

    def __init__(self, servo_id: int, table: ControlTable, baud: int, now: float) -> None:
        self.servo_id = servo_id
        self.table = table
        self.protocol = table.protocol
        self.registers = bytearray(TABLE_SIZE[self.protocol])
        self._position = float(table.position_scale.centre)
        self._last_update = now
        self._registered: tuple[int, bytes] | None = None
        self._angle_limit_error = False
        #: Fault injection: a silent servo ignores the bus entirely.
        self.silent = False
        #: Fault injection: error names reported on every status (and maybe shutting down).
        self.injected_errors: set[str] = set()
        self._factory_defaults(baud)

    # -- registers ---------------------------------------------------------------------
    def _factory_defaults(self, baud: int) -> None:
        for address, (size, value) in _EXTRA_DEFAULTS[self.protocol].items():
            self.registers[address:address + size] = value.to_bytes(size, "little")
        centre = self.table.position_scale.centre
        defaults = {
            "model_number": self.table.model_number, "firmware_version": FIRMWARE_VERSION,
            "id": self.servo_id, "baud_rate": self.table.baud_codes.get(baud, 1),
            "return_delay_time": 250, "status_return_level": 2,
            "min_position_limit": self.table.position_scale.raw_min,
            "max_position_limit": self.table.position_scale.raw_max,
            "goal_position": centre, "present_position": centre,
            "present_voltage": PRESENT_VOLTAGE_UNITS, "present_temperature": PRESENT_TEMPERATURE_C,
        }
        if self.protocol == 1:
            defaults |= {"max_torque": 1023, "torque_limit": 1023, "alarm_led": 36, "shutdown": 36, "punch": 32}
        else:
            defaults |= {"operating_mode": 3, "velocity_limit": 265, "shutdown": 52, "position_d_gain": 4000,
                         "position_p_gain": 640}
        for name, value in defaults.items():
            self.set(name, value)

    def get(self, name: str) -> int:
        item = self.table.item(name)
        return item.decode(self.registers[item.address:item.end])

    def set(self, name: str, value: int) -> None:
        """Set a register directly (no checks): factory defaults, motion, fault injection."""
        item = self.table.item(name)
        self.registers[item.address:item.end] = item.encode(value)

    def place(self, raw_position: int) -> None:
        """Put the horn at ``raw_position`` (as if moved by hand), goal included so it stays."""
        self._position = float(raw_position)
        self.set("present_position", raw_position)
        self.set("goal_position", raw_position)

    # -- motion ------------------------------------------------------------------------
    @property
    def torque_on(self) -> bool:
        shut_down = self.protocol == 1 and self.get("torque_limit") == 0
        return bool(self.get("torque_enable")) and not shut_down

    def _maximum_speed_units(self) -> int:
        """Speed register value used when the goal speed register says "no limit" (0)."""
        return AX_MAXIMUM_SPEED_UNITS if self.protocol == 1 else self.get("velocity_limit")

    def advance(self, now: float) -> None:
        """Move the horn toward the goal at the speed limit, up to time ``now``."""
        dt = max(0.0, now - self._last_update)
        self._last_update = now
        goal = self.get("goal_position")
        if not self.torque_on or goal == self._position:
            self._set_motion(moving=False, speed_units=0)
            return
        speed_units = self.get("goal_speed") or self._maximum_speed_units()
        rad_s = abs(self.table.speed_scale.raw_to_rad_s(speed_units))
        step = rad_s / self.table.position_scale.radians_per_unit * dt
        remaining = goal - self._position
        if abs(remaining) <= step:
            self._position = float(goal)
            self._set_motion(moving=False, speed_units=0)
        else:
            self._position += math.copysign(step, remaining)
            self._set_motion(moving=True, speed_units=int(math.copysign(speed_units, remaining)))

    def _set_motion(self, moving: bool, speed_units: int) -> None:
        self.set("present_position", round(self._position))
        self.set("moving", int(moving))
        direction_bit = self.table.speed_scale.direction_bit
        if direction_bit is None:
            self.set("present_speed", speed_units)
        else:
            self.set("present_speed", abs(speed_units) | ((1 << direction_bit) if speed_units < 0 else 0))

    # -- faults ------------------------------------------------------------------------
    def inject_errors(self, *names: str) -> None:
        """Report ``names`` from now on; errors in the Shutdown mask stop the motor, as on the real servo."""
        bits = self.table.hardware_error_bits if self.protocol == 2 else PROTOCOL1_ERROR_BITS
        known = set(bits.values())
        unknown = set(names) - known
        if unknown:
            raise ValueError(f"{self.table.name} cannot report {sorted(unknown)} (known: {sorted(known)})")
        self.injected_errors.update(names)
        if self.protocol == 2:
            self.set("hardware_error_status", self._bits(self.injected_errors, self.table.hardware_error_bits))
            if self.get("hardware_error_status") & self.get("shutdown"):
                self.set("torque_enable", 0)
        elif self._bits(self.injected_errors, PROTOCOL1_ERROR_BITS) & self.get("shutdown"):
            self.set("torque_limit", 0)  # AX shutdown: output 0 % until Torque Limit is written again

    def clear_errors(self) -> None:
        """The fault is gone (the servo cooled down, the load was removed)."""
        self.injected_errors.clear()
        if self.protocol == 2:
            self.set("hardware_error_status", 0)

    @staticmethod
    def _bits(names: set[str], table: Mapping[int, str]) -> int:
        return sum(1 << bit for bit, name in table.items() if name in names)

    def status_error(self, errors: tuple[str, ...]) -> int:
        """The status packet's ERR byte for this instruction's errors plus the persistent ones."""
        if self.protocol == 1:
            persistent = set(self.injected_errors) | ({"angle limit"} if self._angle_limit_error else set())
            return self._bits(persistent | set(errors), PROTOCOL1_ERROR_BITS)
        numbers = {name: number for number, name in PROTOCOL2_ERROR_NUMBERS.items()}
        value = numbers[errors[0]] if errors else 0
        return value | (PROTOCOL2_ALERT_BIT if self.get("hardware_error_status") else 0)

    # -- instructions ------------------------------------------------------------------
    def read(self, address: int, length: int) -> Outcome:
        if length < 1 or address + length > len(self.registers):
            return Outcome(("range",) if self.protocol == 1 else ("access",))
        return Outcome(data=bytes(self.registers[address:address + length]))

    def write(self, address: int, data: bytes) -> Outcome:
        """A WRITE (or the part of a SYNC_WRITE for this servo), with the servo's checks."""
        if not data or address + len(data) > len(self.registers):
            return Outcome(("range",) if self.protocol == 1 else ("access",))
        touched = [item for item in self.table.items.values()
                   if item.address < address + len(data) and address < item.end]
        if any(not item.writable for item in touched):
            return Outcome(("range",) if self.protocol == 1 else ("access",))
        if self.table.eeprom_locked_by_torque and self.table.is_eeprom(address) and self.get("torque_enable"):
            return Outcome(("access",))
        previous = bytes(self.registers)
        self.registers[address:address + len(data)] = data
        goal = self.table.item("goal_position")
        if address < goal.end and goal.address < address + len(data):
            return self._check_goal(previous)
        return Outcome()

    def _check_goal(self, previous: bytes) -> Outcome:
        """Goal outside the position limits: AX clamps and flags "angle limit"; X refuses ("data limit")."""
        goal, low, high = (self.get(n) for n in ("goal_position", "min_position_limit", "max_position_limit"))
        if low <= goal <= high:
            self._angle_limit_error = False
            return Outcome()
        if self.protocol == 1:
            self.set("goal_position", min(high, max(low, goal)))
            self._angle_limit_error = True
            return Outcome(("angle limit",))
        self.registers[:] = previous
        return Outcome(("data limit",))

    def register(self, address: int, data: bytes) -> Outcome:
        """REG_WRITE: keep the write until ACTION."""
        self._registered = (address, bytes(data))
        self.set("registered", 1)
        return Outcome()

    def action(self) -> Outcome:
        if self._registered is None:
            return Outcome(("instruction",))
        address, data = self._registered
        self._registered = None
        self.set("registered", 0)
        return self.write(address, data)

    def reboot(self) -> Outcome:
        """REBOOT (protocol 2.0): clears a shutdown; torque comes back off."""
        self.injected_errors.clear()
        self.set("hardware_error_status", 0)
        self.set("torque_enable", 0)
        return Outcome()
