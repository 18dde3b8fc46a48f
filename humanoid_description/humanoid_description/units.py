"""Unit conversions between servo registers and SI joint units, each defined once.

Joint positions everywhere else in the stack are radians (URDF convention). The
hardware speaks raw register values; these scales are the only place where the two
meet. Raw-to-angle maps are affine: ``degrees = (raw - centre) * degrees_per_unit``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RPM_TO_RAD_S = 2.0 * math.pi / 60.0


@dataclass(frozen=True)
class PositionScale:
    """Position register of a servo family: resolution, centre and register range."""

    name: str
    degrees_per_unit: float
    centre: int
    raw_min: int
    raw_max: int

    def raw_to_degrees(self, raw: float) -> float:
        return (raw - self.centre) * self.degrees_per_unit

    def degrees_to_raw(self, degrees: float) -> int:
        """Nearest register value; raises ValueError outside the register range."""
        raw = round(self.centre + degrees / self.degrees_per_unit)
        if not self.raw_min <= raw <= self.raw_max:
            raise ValueError(
                f"{degrees:.3f} deg is outside the {self.name} range "
                f"[{self.raw_to_degrees(self.raw_min):.2f}, {self.raw_to_degrees(self.raw_max):.2f}] deg")
        return raw

    def raw_to_radians(self, raw: float) -> float:
        return math.radians(self.raw_to_degrees(raw))

    def radians_to_raw(self, radians: float) -> int:
        return self.degrees_to_raw(math.degrees(radians))

    @property
    def radians_per_unit(self) -> float:
        return math.radians(self.degrees_per_unit)


@dataclass(frozen=True)
class SpeedScale:
    """Speed register of a servo family (unsigned magnitude plus a direction bit, or signed)."""

    name: str
    rpm_per_unit: float
    direction_bit: int | None  # AX-12: bit 10 set = clockwise (negative); None = two's complement

    def raw_to_rad_s(self, raw: int) -> float:
        if self.direction_bit is None:
            return raw * self.rpm_per_unit * RPM_TO_RAD_S
        magnitude = raw & ((1 << self.direction_bit) - 1)
        sign = -1.0 if raw & (1 << self.direction_bit) else 1.0
        return sign * magnitude * self.rpm_per_unit * RPM_TO_RAD_S

    def rad_s_to_raw(self, rad_s: float) -> int:
        """Register value for a speed; for a direction-bit register, the magnitude only."""
        units = round(abs(rad_s) / (self.rpm_per_unit * RPM_TO_RAD_S))
        if self.direction_bit is None:
            return units if rad_s >= 0 else -units
        return min(units, (1 << self.direction_bit) - 1)


@dataclass(frozen=True)
class LoadScale:
    """Load register: fraction of the maximum torque (AX: 0..1023 plus direction bit 10)."""

    name: str
    fraction_per_unit: float
    direction_bit: int | None

    def raw_to_fraction(self, raw: int) -> float:
        if self.direction_bit is None:
            return raw * self.fraction_per_unit
        magnitude = raw & ((1 << self.direction_bit) - 1)
        sign = -1.0 if raw & (1 << self.direction_bit) else 1.0
        return sign * magnitude * self.fraction_per_unit


#: AX-12/AX-12A/AX-18: 1024 steps over 300 degrees, raw 512 = 0 degrees (Bioloid thesis).
AX12 = PositionScale("AX-12", degrees_per_unit=0.2932, centre=512, raw_min=0, raw_max=1023)
#: X series (XL430, XM430): 4096 steps per turn, raw 2048 = 0 degrees.
XSERIES = PositionScale("X-series", degrees_per_unit=360.0 / 4096.0, centre=2048, raw_min=0, raw_max=4095)

#: AX-12 Moving Speed / Present Speed: about 0.111 rpm per unit, bit 10 = direction.
AX12_SPEED = SpeedScale("AX-12", rpm_per_unit=0.111, direction_bit=10)
#: X-series Present Velocity / Profile Velocity: 0.229 rpm per unit, signed 32 bit.
XSERIES_SPEED = SpeedScale("X-series", rpm_per_unit=0.229, direction_bit=None)
#: AX-12 Present Load: 0..1023 = 0..100 % of the maximum torque, bit 10 = direction.
AX12_LOAD = LoadScale("AX-12", fraction_per_unit=1.0 / 1023.0, direction_bit=10)
#: XL430 Present Load (address 126): 0.1 % per unit, signed.
XSERIES_LOAD = LoadScale("X-series", fraction_per_unit=0.001, direction_bit=None)

#: HOAP-2 joint encoders: 209 pulses per degree; the sign depends on the joint and
#: comes from the robot configuration (robots/hoap2/robot.yaml).
HOAP2_PULSES_PER_DEGREE = 209.0


def hoap2_pulses_to_radians(pulses: float, sign: int) -> float:
    """HOAP-2 pulses to a URDF joint angle: ``degrees = pulses / (sign * 209)``."""
    return math.radians(pulses / (sign * HOAP2_PULSES_PER_DEGREE))


def radians_to_hoap2_pulses(radians: float, sign: int) -> int:
    """URDF joint angle to the nearest HOAP-2 pulse count."""
    return round(math.degrees(radians) * sign * HOAP2_PULSES_PER_DEGREE)


def hoap2_pulse_rate_to_rad_s(pulses_per_ms: float) -> float:
    """A HOAP-2 speed (pulse/ms) in rad/s: 57 pulse/ms is 4.76 rad/s."""
    return math.radians(pulses_per_ms * 1000.0 / HOAP2_PULSES_PER_DEGREE)


def hoap2_pulse_accel_to_rad_s2(pulses_per_ms2: float) -> float:
    """A HOAP-2 acceleration (pulse/ms^2) in rad/s^2: 5 pulse/ms^2 is about 417 rad/s^2."""
    return math.radians(pulses_per_ms2 * 1.0e6 / HOAP2_PULSES_PER_DEGREE)
