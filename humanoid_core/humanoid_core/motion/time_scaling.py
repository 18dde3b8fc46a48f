"""Uniform time scaling of a motion to the joints' velocity and acceleration limits.

Stretching time by ``k`` divides velocities by ``k`` and accelerations by ``k**2``, so
the smallest admissible stretch is ``max(1, peak |v| / v_max, sqrt(peak |a| / a_max))``
over all joints. The peaks are found on check points of the motion's spline (the
interpolation law's own samples, never re-derived here), kept a small safety margin
below the limits, and the result is verified on the samples of the scaled motion
itself, including the dense playback samples; should any of them still exceed a
limit, ``k`` grows until none does. The factor is reported, never applied silently.

The linear law has no acceleration inside a keyframe interval: its velocity jumps
at the keyframes. There the acceleration is counted as the velocity change spread
over the two adjacent half-intervals (from rest before the first keyframe, to rest
after the last), which is what a servo following the samples sees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from humanoid_core.loop import Law, Spline
from humanoid_core.motion.data import load_settings
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import Motion

_END = 1.0 - 1e-9  # just before a knot: the end of an interval, not the start of the next
_MAX_ROUNDS = 8


@dataclass(frozen=True)
class RatePeaks:
    """Peak |velocity| / limit and |acceleration| / limit per joint (1.0 = at the limit)."""

    velocity: np.ndarray
    acceleration: np.ndarray

    def worst(self) -> float:
        """The time stretch that would put the worst joint exactly at its limit (< 1: headroom)."""
        worst_v = float(np.max(self.velocity, initial=0.0))
        worst_a = float(np.max(self.acceleration, initial=0.0))
        return max(worst_v, math.sqrt(worst_a))


@dataclass(frozen=True)
class TimeScaling:
    """How a motion's timing was changed for playback, to tell the user."""

    motion: str
    speed: float  # the user's factor: 2.0 plays twice as fast
    limit_factor: float  # k >= 1: how much slower than asked, to respect the limits
    limiting_joint: str | None  # the joint that set k (None when k == 1)
    limiting_rate: str | None  # "velocity" or "acceleration"
    peak_velocity_ratio: float  # after scaling: highest |v| / v_max over all joints
    peak_acceleration_ratio: float

    @property
    def stretch(self) -> float:
        """Factor applied to the motion's times: ``limit_factor / speed``."""
        return self.limit_factor / self.speed

    @property
    def slowed(self) -> bool:
        return self.limit_factor > 1.0

    def describe(self) -> str:
        asked = f"at {self.speed:g}x speed" if self.speed != 1.0 else "at nominal speed"
        if not self.slowed:
            return f"motion {self.motion!r} plays {asked} within the joint limits"
        return (f"motion {self.motion!r} slowed by {self.limit_factor:.3f}x (asked {asked}) to respect the "
                f"{self.limiting_rate} limit of {self.limiting_joint}")


def check_times(spline: Spline, samples_per_segment: int) -> np.ndarray:
    """Where to look for the peak rates of a spline: per interval, by interpolation law."""
    law = spline.effective_law
    if law is Law.LINEAR:
        fractions = np.array([0.5])  # constant velocity; accelerations at knots handled apart
    elif law is Law.TWO_SEGMENT:
        fractions = np.array([0.0, 0.25, 0.5, 0.75, _END])  # v linear and a constant on each half
    else:
        fractions = np.append(np.linspace(0.0, 1.0, samples_per_segment + 1)[:-1], _END)
    starts, widths = spline.times[:-1], np.diff(spline.times)
    return (starts[:, None] + widths[:, None] * fractions[None, :]).reshape(-1)


def peak_rates(motion: Motion, bounds: JointBounds, extra_times: np.ndarray | None = None,
               samples_per_segment: int | None = None) -> RatePeaks:
    """Peak rate ratios of ``motion`` on its check points (and ``extra_times``)."""
    bounds = bounds.select(motion.joint_names)
    spline = motion.spline()
    if len(spline.times) < 2:
        zero = np.zeros(len(motion.joint_names))
        return RatePeaks(zero, zero.copy())
    per_segment = samples_per_segment or load_settings().samples_per_segment
    times = check_times(spline, per_segment)
    if extra_times is not None:
        times = np.concatenate([times, np.asarray(extra_times, dtype=float)])
    _, velocity, acceleration = spline.sample_many(times)
    peak_v = np.max(np.abs(velocity), axis=0)
    peak_a = np.max(np.abs(acceleration), axis=0)
    if spline.effective_law is Law.LINEAR:
        peak_a = np.maximum(peak_a, _linear_knot_accelerations(spline))
    return RatePeaks(peak_v / bounds.velocity, peak_a / bounds.acceleration)


def _linear_knot_accelerations(spline: Spline) -> np.ndarray:
    """Per joint, the largest velocity jump at a knot over the mean adjacent half-interval."""
    widths = np.diff(spline.times)
    _, velocity, _ = spline.sample_many(spline.times[:-1] + 0.5 * widths)
    rest = np.zeros((1, velocity.shape[1]))
    jumps = np.diff(np.vstack([rest, velocity, rest]), axis=0)
    spans = 0.5 * (np.append(0.0, widths) + np.append(widths, 0.0))
    return np.max(np.abs(jumps) / spans[:, None], axis=0)


def scale_to_limits(motion: Motion, bounds: JointBounds, speed: float = 1.0,
                    verify_period: float | None = None) -> tuple[Motion, TimeScaling]:
    """The motion at ``speed``, then slowed uniformly just enough to respect the limits.

    ``verify_period``: also verify on samples at this period (the playback samples);
    the default is the configured sample period.
    """
    if not speed > 0.0 or not math.isfinite(speed):
        raise ValueError(f"speed factor must be positive and finite, got {speed}")
    settings = load_settings()
    period = settings.sample_period if verify_period is None else verify_period
    bounds = bounds.select(motion.joint_names)
    asked = motion.stretched(1.0 / speed)
    before = peak_rates(asked, bounds, samples_per_segment=settings.samples_per_segment)
    headroom = 1.0 - settings.safety_margin
    factor = max(1.0, before.worst() / headroom)
    for _ in range(_MAX_ROUNDS):
        scaled = asked.stretched(factor) if factor != 1.0 else asked
        playback = np.arange(0.0, scaled.duration, period)
        after = peak_rates(scaled, bounds, playback, settings.samples_per_segment)
        if after.worst() <= 1.0:
            break
        factor *= after.worst() / headroom
    else:  # pragma: no cover - each round provably reduces the ratios below 1
        raise RuntimeError(f"time scaling of {motion.name!r} did not converge")
    joint, rate = _limiting(before, motion.joint_names) if factor > 1.0 else (None, None)
    return scaled, TimeScaling(
        motion=motion.name, speed=speed, limit_factor=factor, limiting_joint=joint, limiting_rate=rate,
        peak_velocity_ratio=float(np.max(after.velocity, initial=0.0)),
        peak_acceleration_ratio=float(np.max(after.acceleration, initial=0.0)))


def _limiting(peaks: RatePeaks, joints: tuple[str, ...]) -> tuple[str, str]:
    by_velocity = peaks.velocity
    by_acceleration = np.sqrt(peaks.acceleration)
    if np.max(by_velocity) >= np.max(by_acceleration):
        return joints[int(np.argmax(by_velocity))], "velocity"
    return joints[int(np.argmax(by_acceleration))], "acceleration"
