"""Which servo drives which joint on one bus, and whether one bus can carry them.

The driver's configuration layer (pypot's "config" next to its "io" and
"controller"): from the robot's joints and its joint map to the servos of one bus,
each with its control table and the range it may be commanded in, and the checks a
bus needs before anything is sent: one protocol, unique IDs, and one register layout
for the goal and the present state (SYNC_WRITE and SYNC_READ address every servo at
the same place).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from humanoid_core.loop import DriverError
from humanoid_description import JointMap, ServoJoint
from humanoid_hw.control_tables import ControlTable, control_table
from humanoid_hw.servo_health import ServoHealth

if TYPE_CHECKING:
    from humanoid_description import RobotModel


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
class BusServo:
    """One servo of the bus: its joint, control table and commandable range, and its health."""

    #: Position of the joint in the driver's (canonical) joint order.
    index: int
    joint: HardwareJoint
    table: ControlTable
    #: Commandable range (rad): the URDF limits within what the register can hold.
    lower: float
    upper: float
    #: The same range in register units (written as the servo's angle limits).
    raw_min: int
    raw_max: int
    health: ServoHealth = field(default_factory=ServoHealth)
    #: The joint map's ID of the servo: an attribute, not a property (asked for every servo every cycle).
    servo_id: int = field(init=False)

    def __post_init__(self) -> None:
        self.servo_id = self.joint.servo.servo_id

    @property
    def name(self) -> str:
        return self.joint.name

    @property
    def label(self) -> str:
        return f"ID {self.servo_id} ({self.joint.name})"


def hardware_joints(model: RobotModel, joint_map: JointMap | None = None) -> list[HardwareJoint]:
    """The robot's joints in canonical order with their servos (from ``joint_map`` or the
    model's own) and URDF limits."""
    joint_map = joint_map if joint_map is not None else model.config.joint_map
    if joint_map is None:
        raise DriverError(f"robot {model.name} has no Dynamixel joint map")
    joints = []
    for info in model.joints:
        if info.name not in joint_map:
            raise DriverError(f"joint {info.name} has no servo in the joint map")
        joints.append(HardwareJoint(joint_map[info.name], info.limits.lower, info.limits.upper))
    return joints


def commandable_range(joint: HardwareJoint) -> tuple[float, float, int, int]:
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


def bus_servos(joints: Sequence[HardwareJoint], protocol: int) -> list[BusServo]:
    """The servos of one bus speaking ``protocol``; DriverError says why they cannot share it."""
    if not joints:
        raise DriverError("no joints to drive")
    servos = []
    for index, joint in enumerate(joints):
        try:
            table = control_table(joint.servo.model)
        except KeyError as error:
            raise DriverError(f"joint {joint.name}: {error.args[0]}") from None
        lower, upper, raw_min, raw_max = commandable_range(joint)
        servos.append(BusServo(index, joint, table, lower, upper, raw_min, raw_max))
    ids = [s.servo_id for s in servos]
    if len(set(ids)) != len(ids):
        raise DriverError(f"servo IDs must be unique on one bus: {ids}")
    for servo in servos:
        if servo.table.protocol != protocol:
            raise DriverError(f"{servo.label}: {servo.table.name} speaks protocol {servo.table.protocol}.0, "
                              f"the bus is configured for protocol {protocol}.0")
    layouts = {(s.table.command_block, s.table.state_block) for s in servos}
    if len(layouts) != 1:
        raise DriverError("servos on one bus must share the goal and present-state register layout")
    return servos
