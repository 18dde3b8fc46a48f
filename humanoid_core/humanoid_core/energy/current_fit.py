"""Fitting the current model's constants to a measured supply current.

Equation 8 (I = K * sum(|T_i|) + N * I_servo + I_controller) is linear in its constants, so
a recording of the joint torques beside a measured supply current (a power board's
``sensor_msgs/BatteryState``) gives them by least squares, with K and the idle current both
kept >= 0 (scipy's bounded linear least squares). Only their sum N * I_servo + I_controller
is seen in such a recording: splitting it needs one of the two from elsewhere
(:func:`servo_idle_share` takes the controller's current as configured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import lsq_linear

#: Samples below which no fit is made.
MIN_SAMPLES = 10
#: N m: the recorded torque sum must span at least this much, or K and the idle current
#: cannot be told apart (a robot standing still draws one current at one torque).
MIN_TORQUE_SPAN = 0.05


class CurrentFitError(ValueError):
    """The recording cannot give the constants; the message says why."""


@dataclass(frozen=True)
class CurrentFit:
    """K and the idle current fitted to ``samples`` pairs of torque sum and current."""

    torque_to_current: float  # K, A / (N m)
    idle_current: float  # A, N * I_servo + I_controller
    rms_error: float  # A, measured minus fitted
    samples: int
    torque_span: tuple[float, float]  # N m, the smallest and largest torque sum seen
    current_span: tuple[float, float]  # A, the smallest and largest current measured


def fit_current(torque_sums: np.ndarray, currents: np.ndarray) -> CurrentFit:
    """The constants that best explain ``currents`` (A) by ``torque_sums`` (sum |T_i|, N m)."""
    s, i = np.asarray(torque_sums, dtype=float), np.asarray(currents, dtype=float)
    known = np.isfinite(s) & np.isfinite(i)
    s, i = s[known], i[known]
    if len(s) < MIN_SAMPLES:
        raise CurrentFitError(f"{len(s)} samples with both a torque sum and a measured current: at least "
                              f"{MIN_SAMPLES} are needed")
    if float(np.ptp(s)) < MIN_TORQUE_SPAN:
        raise CurrentFitError(f"the joint torques' sum stays within {float(np.ptp(s)):.3f} N m (from {s.min():.3f}): "
                              f"K and the idle current cannot be told apart; record a motion that loads the "
                              f"servos (at least {MIN_TORQUE_SPAN} N m of change)")
    design = np.column_stack([s, np.ones_like(s)])
    solution = lsq_linear(design, i, bounds=([0.0, 0.0], [np.inf, np.inf]))
    k, idle = (float(v) for v in solution.x)
    residual = i - design @ solution.x
    return CurrentFit(k, idle, math.sqrt(float(np.mean(residual ** 2))), len(s),
                      (float(s.min()), float(s.max())), (float(i.min()), float(i.max())))


def servo_idle_share(idle_current: float, servo_count: int, controller_current: float) -> float:
    """One servo's idle current, given the controller's: (idle - I_controller) / N."""
    if servo_count < 1:
        raise CurrentFitError(f"servo count must be >= 1, got {servo_count}")
    share = (idle_current - controller_current) / servo_count
    if share < 0.0:
        raise CurrentFitError(f"the fitted idle current {idle_current:.3f} A is below the controller's configured "
                              f"{controller_current:.3f} A alone: lower controller_current (the recording sees only "
                              f"their sum)")
    return share
