"""The driver's health as status entries: the bus, the control loop, and one entry per joint.

Entries name what a user must act on (the joint, its servo ID, the fault in words)
and carry the counters as values; the shared ROS front publishes them on
``diagnostics``. Nothing here touches the bus.
"""

from __future__ import annotations

from humanoid_core.loop import Level, StatusEntry
from humanoid_hw.bus import Traffic
from humanoid_hw.bus_layout import BusServo
from humanoid_hw.control_tables import STATE_ITEMS
from humanoid_hw.hardware_config import DynamixelConfig
from humanoid_hw.port_recovery import PortRecovery


def bus_status(config: DynamixelConfig, total: Traffic, recent: Traffic, last_cycle: Traffic,
               port: PortRecovery, dropped_writes: int) -> StatusEntry:
    """The bus: open or lost, and the faults since the last report (``recent``)."""
    values = {"port": config.port, "protocol": f"{config.protocol}.0", "baud": str(config.baud),
              "bytes_last_cycle": str(last_cycle.bytes_total),
              "instructions_last_cycle": str(last_cycle.instructions),
              "timeouts": str(total.timeouts), "corrupt_packets": str(total.corrupt),
              "late_answers": str(total.late), "serial_glitches": str(total.glitches),
              "retries": str(total.retries),
              "port_losses": str(port.losses), "reopen_attempts": str(port.attempts),
              "port_reopens": str(port.reopens), "dropped_writes": str(dropped_writes)}
    if port.lost:
        return StatusEntry("dynamixel bus", Level.ERROR,
                           f"port {config.port} lost ({port.error}); reopening with back-off", values)
    if recent.corrupt or recent.timeouts or recent.glitches:
        glitches = f", {recent.glitches} serial glitch(es)" if recent.glitches else ""
        return StatusEntry("dynamixel bus", Level.WARN,
                           f"{recent.corrupt} corrupted status packet(s) and {recent.timeouts} timeout(s){glitches} "
                           f"since the last report ({recent.retries} retries)", values)
    return StatusEntry("dynamixel bus", Level.OK, f"{config.port} open", values)


def loop_status(cycles: int, deadline_misses: int, worst_overrun: float) -> StatusEntry:
    values = {"cycles": str(cycles), "deadline_misses": str(deadline_misses),
              "worst_overrun_ms": f"{1000.0 * worst_overrun:.2f}"}
    if deadline_misses:
        return StatusEntry("dynamixel control loop", Level.WARN,
                           f"{deadline_misses} deadline miss(es) in {cycles} cycles "
                           f"(worst overrun {1000.0 * worst_overrun:.1f} ms)", values)
    return StatusEntry("dynamixel control loop", Level.OK, f"{cycles} cycles, no deadline miss", values)


def joint_status(servo: BusServo, now: float) -> StatusEntry:
    """One joint, named by joint and servo ID: wrong model, stale, errors, shut down, warning or ok."""
    health, joint, sid = servo.health, servo.name, servo.servo_id
    name = f"joint {joint} (ID {sid})"
    values = {"joint": joint, "id": str(sid), "model": servo.table.name, "recoveries": str(health.recoveries)}
    table = servo.table
    registers = table.decode_block(STATE_ITEMS, table.state_block, health.state_block) if health.state_block else {}
    values |= {key: str(value) for key, value in registers.items()}
    if "present_voltage" in registers:
        values["voltage_V"] = f"{registers['present_voltage'] * table.volts_per_unit:.1f}"
    if health.disabled is not None:
        return StatusEntry(name, Level.ERROR, f"{joint}: {health.disabled}", values)
    if health.stale:
        age = now - health.stale_since if health.stale_since is not None else 0.0
        return StatusEntry(name, Level.STALE, f"{joint} (ID {sid}) stale for {age:.1f} s: "
                           f"{health.stale_reason}; the other joints keep running", values)
    if health.errors:
        return StatusEntry(name, Level.ERROR, f"{joint} (ID {sid}) reports: {', '.join(health.errors)}", values)
    if health.tripped:
        return StatusEntry(name, Level.ERROR,
                           f"{joint} (ID {sid}) shut itself down ({health.tripped}): its torque stays off until "
                           "it is re-armed (restart the node once the cause is gone)", values)
    if health.warning:
        return StatusEntry(name, Level.WARN, f"{joint} (ID {sid}) {health.warning}", values)
    return StatusEntry(name, Level.OK, "ok", values)
