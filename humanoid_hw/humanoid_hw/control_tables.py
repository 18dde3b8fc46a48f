"""The control tables of the supported Dynamixel models, as data: items, model numbers, units.

One :class:`ControlTable` per servo model (AX-12, XL430 ...): where each register lives,
how wide it is, and what its values mean (speed and load scales, maximum torque, error
bits, baud codes). The driver and the emulator never branch on a model name; they look
up what they need here. (Simulated actuator dynamics are another matter:
``humanoid_sim.servo_profiles``.) Two families exist: the AX series (protocol 1.0:
AX-12, AX-12A, AX-18) and the X series (protocol 2.0: XL430, XM430). Items are named by what they mean, so that the
same name works for both families (``min_position_limit`` is the AX "CW Angle Limit"
and the X "Min Position Limit"); ``manual_name`` keeps the maker's wording for messages.

Sources, checked against the maker's e-manual (emanual.robotis.com, AX-12A and
XL430-W250 pages) and the project's reference notes:

- AX-12/AX-12A control table: all addresses below.
- XL430-W250 control table: addresses in the reference notes, plus items the notes
  do not list, taken from the e-manual: Velocity Limit 44 (4), Max Position Limit 48
  (4), Min Position Limit 52 (4), Shutdown 63 (1), Status Return Level 68 (1),
  Registered Instruction 69 (1). XM430-W350 shares the layout; its address 126 is
  Present Current, not Present Load.
- Model numbers: AX-12/AX-12+/AX-12A = 12 and AX-18A = 18 (e-manual, DynamixelWorkbench
  ``dynamixel_item.h``); XL430-W250 = 1060 (e-manual control table default; also
  ``dynamixel_item.h``), XM430-W350 = 1020 (``dynamixel_item.h``).
- Maximum (stall) torque, used to turn a load fraction into N m: AX-12A 1.5 N m at 12 V
  (e-manual; the URDF effort limit of the Bioloid uses the same figure), AX-18A 1.8 N m
  at 12 V, XL430-W250 1.5 N m at 12 V (1.4 N m at 11.1 V), XM430-W350 4.1 N m at 12 V.
"""

from __future__ import annotations

import dataclasses
import operator
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

from humanoid_description import (
    AX12_LOAD,
    AX12_SPEED,
    POSITION_SCALES,
    XSERIES_LOAD,
    XSERIES_SPEED,
    JointMap,
    LoadScale,
    PositionScale,
    SpeedScale,
)


@dataclass(frozen=True)
class ControlItem:
    """One control-table item: where it lives, how wide it is, how to read it."""

    manual_name: str
    address: int
    size: int
    signed: bool = False
    writable: bool = True

    @property
    def end(self) -> int:
        """First address after the item."""
        return self.address + self.size

    def encode(self, value: int) -> bytes:
        """Little-endian register bytes (Dynamixel order) for ``value``."""
        return int(value).to_bytes(self.size, "little", signed=self.signed)

    def decode(self, data: bytes | Sequence[int], start_address: int | None = None) -> int:
        """The item's value inside ``data`` read from ``start_address`` (default: the item itself)."""
        offset = 0 if start_address is None else self.address - start_address
        return int.from_bytes(data[offset:offset + self.size], "little", signed=self.signed)


#: struct codes of the item sizes (little endian is the format's prefix), unsigned and signed.
_STRUCT_CODES = {(1, False): "B", (1, True): "b", (2, False): "H", (2, True): "h", (4, False): "I", (4, True): "i"}


def block_decoder(items: Sequence[ControlItem], start_address: int) -> Callable[[bytes], tuple[int, ...]]:
    """Decodes ``items`` (in the order given) from a block read from ``start_address`` in
    one ``struct`` call: the values :meth:`ControlItem.decode` gives, for a driver that
    decodes the same items of every servo every cycle. Overlapping items raise ValueError."""
    by_address = sorted(range(len(items)), key=lambda i: items[i].address)
    fmt, position = "<", start_address
    for i in by_address:
        item = items[i]
        if item.address < position:
            raise ValueError(f"{item.manual_name} overlaps another item or lies before the block")
        fmt += "x" * (item.address - position) + _STRUCT_CODES[(item.size, item.signed)]
        position = item.end
    unpack = struct.Struct(fmt).unpack_from
    if by_address == list(range(len(items))):
        return unpack
    pick = operator.itemgetter(*(by_address.index(i) for i in range(len(items))))
    return lambda data: pick(unpack(data))


def _ro(manual_name: str, address: int, size: int, signed: bool = False) -> ControlItem:
    return ControlItem(manual_name, address, size, signed=signed, writable=False)


#: s per unit of Return Delay Time (both families: the e-manual's 2 us).
RETURN_DELAY_UNIT_S = 2e-6

#: AX-12/AX-12A/AX-18 (protocol 1.0). ``goal_speed`` is Moving Speed (0 = maximum).
AX_ITEMS: Mapping[str, ControlItem] = MappingProxyType({
    "model_number": _ro("Model Number", 0, 2),
    "firmware_version": _ro("Firmware Version", 2, 1),
    "id": ControlItem("ID", 3, 1),
    "baud_rate": ControlItem("Baud Rate", 4, 1),
    "return_delay_time": ControlItem("Return Delay Time", 5, 1),
    "min_position_limit": ControlItem("CW Angle Limit", 6, 2),
    "max_position_limit": ControlItem("CCW Angle Limit", 8, 2),
    "max_torque": ControlItem("Max Torque", 14, 2),
    "status_return_level": ControlItem("Status Return Level", 16, 1),
    "alarm_led": ControlItem("Alarm LED", 17, 1),
    "shutdown": ControlItem("Alarm Shutdown", 18, 1),
    "torque_enable": ControlItem("Torque Enable", 24, 1),
    "led": ControlItem("LED", 25, 1),
    "goal_position": ControlItem("Goal Position", 30, 2),
    "goal_speed": ControlItem("Moving Speed", 32, 2),
    "torque_limit": ControlItem("Torque Limit", 34, 2),
    "present_position": _ro("Present Position", 36, 2),
    "present_speed": _ro("Present Speed", 38, 2),
    "present_load": _ro("Present Load", 40, 2),
    "present_voltage": _ro("Present Voltage", 42, 1),
    "present_temperature": _ro("Present Temperature", 43, 1),
    "registered": _ro("Registered", 44, 1),
    "moving": _ro("Moving", 46, 1),
    "lock": ControlItem("Lock", 47, 1),
    "punch": ControlItem("Punch", 48, 2),
})

#: XL430/XM430 (protocol 2.0). ``goal_speed`` is Profile Velocity (0 = no limit, i.e.
#: the Velocity Limit). Address 126 is Present Load on the XL430, Present Current on
#: the XM430.
X_ITEMS: Mapping[str, ControlItem] = MappingProxyType({
    "model_number": _ro("Model Number", 0, 2),
    "firmware_version": _ro("Firmware Version", 6, 1),
    "id": ControlItem("ID", 7, 1),
    "baud_rate": ControlItem("Baud Rate", 8, 1),
    "return_delay_time": ControlItem("Return Delay Time", 9, 1),
    "drive_mode": ControlItem("Drive Mode", 10, 1),
    "operating_mode": ControlItem("Operating Mode", 11, 1),
    "homing_offset": ControlItem("Homing Offset", 20, 4, signed=True),
    "velocity_limit": ControlItem("Velocity Limit", 44, 4),  # not in the reference notes
    "max_position_limit": ControlItem("Max Position Limit", 48, 4),  # not in the reference notes
    "min_position_limit": ControlItem("Min Position Limit", 52, 4),  # not in the reference notes
    "shutdown": ControlItem("Shutdown", 63, 1),  # not in the reference notes
    "torque_enable": ControlItem("Torque Enable", 64, 1),
    "led": ControlItem("LED", 65, 1),
    "status_return_level": ControlItem("Status Return Level", 68, 1),  # not in the reference notes
    "registered": _ro("Registered Instruction", 69, 1),  # not in the reference notes
    "hardware_error_status": _ro("Hardware Error Status", 70, 1),
    "position_d_gain": ControlItem("Position D Gain", 80, 2),
    "position_i_gain": ControlItem("Position I Gain", 82, 2),
    "position_p_gain": ControlItem("Position P Gain", 84, 2),
    "profile_acceleration": ControlItem("Profile Acceleration", 108, 4),
    "goal_speed": ControlItem("Profile Velocity", 112, 4),
    "goal_position": ControlItem("Goal Position", 116, 4),
    "moving": _ro("Moving", 122, 1),
    "present_load": _ro("Present Load", 126, 2, signed=True),
    "present_speed": _ro("Present Velocity", 128, 4, signed=True),
    "present_position": _ro("Present Position", 132, 4, signed=True),
    "present_voltage": _ro("Present Input Voltage", 144, 2),
    "present_temperature": _ro("Present Temperature", 146, 1),
})

#: Protocol 1.0 status ERR bits (bit number -> name), the same for every AX servo.
PROTOCOL1_ERROR_BITS: Mapping[int, str] = MappingProxyType({
    0: "input voltage", 1: "angle limit", 2: "overheating", 3: "range", 4: "checksum",
    5: "overload", 6: "instruction"})
#: Protocol 2.0 status ERR field: bit 7 is the hardware alert, bits 0-6 one error number.
PROTOCOL2_ALERT_BIT = 0x80
PROTOCOL2_ERROR_NUMBERS: Mapping[int, str] = MappingProxyType({
    1: "result fail", 2: "instruction", 3: "CRC", 4: "data range", 5: "data length", 6: "data limit",
    7: "access"})
#: X-series Hardware Error Status (address 70) bits (e-manual, "Shutdown").
X_HARDWARE_ERROR_BITS: Mapping[int, str] = MappingProxyType({
    0: "input voltage", 2: "overheating", 3: "motor encoder", 4: "electrical shock", 5: "overload"})

#: Items read every control cycle, as one contiguous block (see ControlTable.state_block).
STATE_ITEMS = ("present_position", "present_speed", "present_load", "present_voltage", "present_temperature")
#: Items written every control cycle in one SYNC_WRITE (goal position and its speed).
COMMAND_ITEMS = ("goal_position", "goal_speed")
#: Items read at start-up to configure a servo, as one block (those the model has): one
#: READ instead of one per item, and an answer length no other request of the driver has.
CONFIGURATION_ITEMS = ("return_delay_time", "min_position_limit", "max_position_limit", "status_return_level",
                       "torque_enable", "max_torque", "torque_limit")


@dataclass(frozen=True)
class Block:
    """A contiguous address range covering several items (one READ / one SYNC_WRITE slot)."""

    start: int
    length: int


@dataclass(frozen=True)
class ControlTable:
    """One servo model's control table and units: everything the driver and the emulator need."""

    name: str
    model_number: int
    protocol: int
    items: Mapping[str, ControlItem]
    #: First RAM address: the items below live in EEPROM (written rarely: wear).
    ram_start: int
    #: X series: EEPROM items can only be written while torque is off.
    eeprom_locked_by_torque: bool
    speed_scale: SpeedScale
    #: None when the load register has no scale in units.py (XM430: it reports current).
    load_scale: LoadScale | None
    max_torque_nm: float
    #: Hardware error register bits (X series); protocol 1.0 reports errors in the status ERR byte.
    hardware_error_bits: Mapping[int, str]
    #: Register values of the supported baud rates.
    baud_codes: Mapping[int, int]
    #: Present Voltage register resolution (both families: 0.1 V).
    volts_per_unit: float = 0.1

    @property
    def position_scale(self) -> PositionScale:
        return POSITION_SCALES[self.name]

    def item(self, name: str) -> ControlItem:
        try:
            return self.items[name]
        except KeyError:
            raise KeyError(f"{self.name} has no control-table item {name!r}") from None

    def block(self, names: Sequence[str]) -> Block:
        """The smallest contiguous block holding the given items."""
        items = [self.item(n) for n in names]
        start = min(i.address for i in items)
        return Block(start=start, length=max(i.end for i in items) - start)

    @cached_property
    def state_block(self) -> Block:
        """Read every cycle: computed once (a table never changes)."""
        return self.block(STATE_ITEMS)

    @cached_property
    def command_block(self) -> Block:
        """Written every cycle: computed once."""
        return self.block(COMMAND_ITEMS)

    @property
    def configuration_block(self) -> Block:
        return self.block([name for name in CONFIGURATION_ITEMS if name in self.items])

    def decode_block(self, names: Sequence[str], block: Block, data: bytes) -> dict[str, int]:
        """The values of ``names`` in ``data`` read from ``block``."""
        items = self.items
        return {name: items[name].decode(data, block.start) for name in names if name in items}

    def is_eeprom(self, address: int) -> bool:
        return address < self.ram_start


#: AX baud register: baud = 2 000 000 / (value + 1).
_AX_BAUDS = MappingProxyType({2_000_000 // (v + 1): v for v in (1, 3, 4, 7, 9, 16, 34, 103, 207)})
#: X-series baud register values (e-manual "Baud Rate (8)").
_X_BAUDS = MappingProxyType({9600: 0, 57600: 1, 115200: 2, 1_000_000: 3, 2_000_000: 4,
                             3_000_000: 5, 4_000_000: 6, 4_500_000: 7})


def _ax(name: str, model_number: int, max_torque_nm: float) -> ControlTable:
    return ControlTable(name=name, model_number=model_number, protocol=1, items=AX_ITEMS, ram_start=24,
                      eeprom_locked_by_torque=False, speed_scale=AX12_SPEED, load_scale=AX12_LOAD,
                      max_torque_nm=max_torque_nm, hardware_error_bits=MappingProxyType({}),
                      baud_codes=_AX_BAUDS)


def _x(name: str, model_number: int, load_scale: LoadScale | None, max_torque_nm: float) -> ControlTable:
    return ControlTable(name=name, model_number=model_number, protocol=2, items=X_ITEMS, ram_start=64,
                      eeprom_locked_by_torque=True, speed_scale=XSERIES_SPEED, load_scale=load_scale,
                      max_torque_nm=max_torque_nm, hardware_error_bits=X_HARDWARE_ERROR_BITS,
                      baud_codes=_X_BAUDS)


#: The supported models, by the names the joint maps use.
CONTROL_TABLES: Mapping[str, ControlTable] = MappingProxyType({
    "AX-12": _ax("AX-12", 12, 1.5),
    "AX-12A": _ax("AX-12A", 12, 1.5),
    "AX-18": _ax("AX-18", 18, 1.8),
    "XL430": _x("XL430", 1060, XSERIES_LOAD, 1.5),
    "XM430": _x("XM430", 1020, None, 4.1),
})


def control_table(name: str) -> ControlTable:
    """The model called ``name``; KeyError lists the supported ones."""
    try:
        return CONTROL_TABLES[name]
    except KeyError:
        raise KeyError(f"unsupported servo model {name!r} (supported: {', '.join(CONTROL_TABLES)})") from None


#: The model that stands in for any servo on a bus of each protocol (see stand_in_joint_map).
REFERENCE_MODELS: Mapping[int, str] = MappingProxyType({1: "AX-12", 2: "XL430"})


def stand_in_joint_map(joint_map: JointMap, protocol: int) -> JointMap:
    """The same joints and IDs, each servo replaced by the protocol's reference model
    when its own model speaks another protocol.

    Lets a robot built of AX-12s be exercised on a protocol-2.0 bus (emulator,
    benchmark): same IDs and directions, XL430 control table and units. Offsets are
    raw units of the original model and are dropped for replaced servos.
    """
    entries = []
    for servo in joint_map.values():
        if control_table(servo.model).protocol != protocol:
            servo = dataclasses.replace(servo, model=REFERENCE_MODELS[protocol], offset=0)
        entries.append(servo)
    return JointMap(entries)


def model_name_for_number(model_number: int, protocol: int) -> str:
    """A readable name for a model number found on the bus (for error messages)."""
    names = [m.name for m in CONTROL_TABLES.values() if m.model_number == model_number and m.protocol == protocol]
    return "/".join(names) if names else "unknown model"


def decode_bits(value: int, names: Mapping[int, str]) -> list[str]:
    """Names of the set bits of ``value``; unnamed bits appear as ``bit N``."""
    if not value:  # the usual status: no error (read once per servo and cycle)
        return []
    return [names.get(bit, f"bit {bit}") for bit in range(8 * max(1, (value.bit_length() + 7) // 8))
            if value >> bit & 1]
