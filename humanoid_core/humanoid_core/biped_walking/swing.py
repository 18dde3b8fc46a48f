"""The swing foot's path between lift-off and touch-down.

The height is a ``sin^2`` bump: zero in value and speed at both ends, ``height`` at
mid-swing. The horizontal motion (and the turn) may wait at both ends while the foot
only rises and comes down (``lift_share`` of the swing each: no scraping the ground as
it leaves, no sliding as it lands), and goes from rest to rest in between: its speed
rises over ``ramp_share`` of that time, cruises, and falls again over ``ramp_share``.

Why this shape: the swing leg's joints move fastest where the foot does, so for a step
of given length and duration the joints' peak speed goes with the foot's peak speed
over its mean (docs/walking.md: the HOAP-2's 4.76 rad/s servos). A ramp share of 0.5
is the minimum-jerk quintic (peak 1.875 x the mean); a short ramp cruises most of the
way (0.2: 1.23 x). The ramps are the quintic's halves stretched, so the acceleration
is continuous and zero at the ends for every ramp share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from humanoid_core.biped_walking.footsteps import Pose2, interpolate
from humanoid_core.loop import quintic

#: Mean of the normalised ramp r(u) = u^2 (2 - u)^2 over u in [0, 1] (its integral).
_RAMP_MEAN = 8.0 / 15.0


def rest_to_rest(s: float) -> float:
    """The quintic from 0 to 1 over s in [0, 1], at rest at both ends (clamped outside)."""
    s = min(1.0, max(0.0, s))
    return float(quintic(s, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)[0])  # type: ignore[arg-type]


def _ramp_integral(u: float) -> float:
    """Integral from 0 to u of the ramp r(u) = u^2 (2 - u)^2 (0 to 1 in value, speed 0 at both ends)."""
    return u**3 * (4.0 / 3.0 - u + u**2 / 5.0)


def ramp_peak_ratio(ramp_share: float) -> float:
    """Peak speed over mean speed of :func:`ramp_cruise_ramp`: 1 / (1 - 14/15 ramp_share)."""
    return 1.0 / (1.0 - 2.0 * ramp_share * (1.0 - _RAMP_MEAN))


def ramp_cruise_ramp(s: float, ramp_share: float) -> float:
    """From 0 to 1 over s in [0, 1] (clamped outside), at rest at both ends: the speed rises
    over ``ramp_share`` of the time, is constant, and falls over the last ``ramp_share``
    (peak speed: :func:`ramp_peak_ratio` times the mean); 0.5 is :func:`rest_to_rest`."""
    s = min(1.0, max(0.0, s))
    peak = ramp_peak_ratio(ramp_share)
    if s <= ramp_share:
        return peak * ramp_share * _ramp_integral(s / ramp_share)
    if s >= 1.0 - ramp_share:
        return 1.0 - peak * ramp_share * _ramp_integral((1.0 - s) / ramp_share)
    return peak * (ramp_share * _RAMP_MEAN + s - ramp_share)


@dataclass(frozen=True)
class SwingProfile:
    """The shape of every swing: how high, how long the foot only rises and lands, how
    long its horizontal motion accelerates and brakes."""

    height: float  # m at mid-swing
    lift_share: float = 0.15  # of the swing at each end with vertical motion only, 0 <= share < 0.5
    ramp_share: float = 0.5  # of the horizontal motion accelerating (and braking), 0 < share <= 0.5

    def __post_init__(self) -> None:
        if not self.height >= 0.0:
            raise ValueError(f"the swing height must be >= 0, got {self.height}")
        if not 0.0 <= self.lift_share < 0.5:
            raise ValueError(f"swing_lift_share must be in [0, 0.5), got {self.lift_share}")
        if not 0.0 < self.ramp_share <= 0.5:
            raise ValueError(f"swing_ramp_share must be in (0, 0.5], got {self.ramp_share}")

    @property
    def peak_speed_ratio(self) -> float:
        """The foot's peak horizontal speed over its mean speed from lift-off to touch-down."""
        return ramp_peak_ratio(self.ramp_share) / (1.0 - 2.0 * self.lift_share)

    def pose(self, start: Pose2, target: Pose2, s: float) -> tuple[Pose2, float]:
        """Placement on the ground plane and height of the swing sole at phase ``s`` in [0, 1]."""
        s = min(1.0, max(0.0, s))
        horizontal = ramp_cruise_ramp((s - self.lift_share) / (1.0 - 2.0 * self.lift_share), self.ramp_share)
        return interpolate(start, target, horizontal), self.height * math.sin(math.pi * s) ** 2
