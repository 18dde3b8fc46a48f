"""Bringing one servo up: PING, model check, configuration, torque on without a jump.

Used at start-up for every servo and later for a servo that was missing and answers
again. Configuration is read before it is written (EEPROM wears out, and X servos
need torque off to write it), in two READs whose answer lengths no other request of
the driver has: the configuration block and the present-state block. The bus matches
answers to requests by ID and length; distinct lengths keep a late answer of one
request from passing for another's (a limit taken for the present position would
make torque-on jump).
"""

from __future__ import annotations

from collections.abc import Callable

from humanoid_hw.bus import DynamixelBus
from humanoid_hw.bus_layout import BusServo
from humanoid_hw.control_tables import CONFIGURATION_ITEMS, model_name_for_number
from humanoid_hw.hardware_config import DynamixelConfig

#: Called with a servo and the ERR byte of a status it sent (decoded by the caller).
ErrorSink = Callable[[BusServo, int], None]


def bring_up(bus: DynamixelBus, servo: BusServo, config: DynamixelConfig, note_errors: ErrorSink,
             ping_retries: int | None = None) -> str | None:
    """Ping, check the model, configure; returns what went wrong (None when ready).

    A servo of another model is disabled for good (``servo.health.disabled``); one that
    does not answer is left unconfigured for the caller to mark stale.
    """
    reply = bus.ping(servo.servo_id, retries=ping_retries)
    if not reply.ok:
        return f"no answer to PING after {reply.attempts} attempt(s) ({reply.failure})"
    found = int.from_bytes(reply.data, "little")
    if found != servo.table.model_number:
        servo.health.disable(f"model number {found} ({model_name_for_number(found, bus.protocol)}), "
                             f"expected {servo.table.model_number} ({servo.table.name}); not driven")
        return servo.health.disabled
    failure = configure(bus, servo, config, note_errors)
    if failure is None:
        servo.health.mark_configured()
    return failure


def read_configuration(bus: DynamixelBus, servo: BusServo) -> dict[str, int] | None:
    """The servo's configuration items (one READ), or None without an answer."""
    block = servo.table.configuration_block
    reply = bus.read(servo.servo_id, block.start, block.length)
    return servo.table.decode_block(CONFIGURATION_ITEMS, block, reply.data) if reply.ok else None


def configure(bus: DynamixelBus, servo: BusServo, config: DynamixelConfig, note_errors: ErrorSink) -> str | None:
    """Status return level, return delay, position limits, torque limit, goal = present, torque."""
    items, sid = servo.table.items, servo.servo_id
    present = read_configuration(bus, servo)
    if present is None or present["status_return_level"] != config.status_return_level:
        # The servo's level is unknown or another (0 never answers a READ): it may or may not answer this.
        bus.write_maybe_answered(sid, items["status_return_level"], config.status_return_level)
        present = read_configuration(bus, servo)
        if present is None:
            return "no answer while reading its configuration"
        if present["status_return_level"] != config.status_return_level:
            return f"Status Return Level not accepted (read back {present['status_return_level']})"
    bus.writes_answered = config.status_return_level == 2
    state_block = servo.table.state_block
    state = bus.read(sid, state_block.start, state_block.length)
    if not state.ok:
        return f"no answer while reading its present position ({state.failure})"
    position = servo.table.item("present_position").decode(state.data, state_block.start)
    scale = servo.joint.servo.scale
    if not scale.raw_min <= position <= scale.raw_max:
        return f"implausible Present Position {position} (register range {scale.raw_min}..{scale.raw_max})"
    low, high = servo.raw_min, servo.raw_max
    if not low <= position <= high:
        # Torque-on must not move anything: hold it where it is; commands bring it in.
        servo.health.warning = (f"found at raw {position}, outside its limits [{low}, {high}]: held there, "
                                "servo limits widened until the next start")
        low, high = min(low, position), max(high, position)
    eeprom = {"return_delay_time": config.return_delay, "min_position_limit": low, "max_position_limit": high}
    changes = {name: value for name, value in eeprom.items() if present[name] != value}
    writes = []
    if changes and servo.table.eeprom_locked_by_torque and present["torque_enable"]:
        writes.append(("torque_enable", 0))  # X series: EEPROM is locked while torque is on
    writes += list(changes.items())
    if "torque_limit" in present and present["torque_limit"] != present["max_torque"]:
        # An AX servo that shut itself down (overload, heat) keeps Torque Limit at 0 until
        # it is written: starting the driver re-arms it to its Max Torque.
        writes.append(("torque_limit", present["max_torque"]))
    writes.append(("goal_position", position))
    writes.append(("torque_enable", int(config.torque_on_start)))
    for name, value in writes:
        reply = bus.write(sid, items[name], value)
        if not reply.ok:
            return f"no answer to the write of {items[name].manual_name} ({reply.failure})"
        if reply.error:
            note_errors(servo, reply.error)
    return None
