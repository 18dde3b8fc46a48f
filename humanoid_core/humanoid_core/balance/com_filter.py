"""CoM velocity and acceleration for the cart-table ZMP: a second-order low-pass.

Differentiating the CoM twice amplifies noise by the square of its frequency: the
simulated HOAP-2 standing still vibrates by a few hundredths of a millimetre at about
20 Hz, which is 0.3 m/s^2 of acceleration and, through the cart-table model, nearly
a centimetre of ZMP. The CoM is therefore filtered by a critically damped
second-order low-pass of natural frequency w = 2 pi f,

    x'' = w^2 (u - x) - 2 w x'

whose states give the velocity x' and the acceleration x'' of the filtered CoM. It is
integrated exactly between samples (the input interpolated linearly between them), so
it is stable for any sampling period and needs no uniform sampling (hardware stamps
jitter); holding the input instead would make the acceleration jump with every sample.

What it costs: slow motions come out delayed by the filter's group delay 2 / w (80 ms
at 4 Hz); a vibration of frequency F reaches the acceleration
attenuated to w^2 / F^2 of its raw second derivative (at 4 Hz and 20 Hz, 1/25). A
Savitzky-Golay fit would need uniform samples and a window of them per update.
"""

from __future__ import annotations

import math


class CoMFilter:
    """Critically damped second-order low-pass on a 3-D point, per axis, with its
    velocity and acceleration. The monitor also smooths the measured ZMP with one.

    ``update`` runs once per joint_states message, so it is written out for the three
    axes in plain float arithmetic, and the step's coefficients are kept while the
    sampling period stays the same."""

    __slots__ = ("_coefficients", "_period", "_stamp", "_state", "omega", "started")

    def __init__(self, cutoff_hz: float) -> None:
        if not cutoff_hz > 0.0:
            raise ValueError(f"the filter cut-off must be > 0 Hz, got {cutoff_hz}")
        self.omega = 2.0 * math.pi * cutoff_hz
        self._stamp = math.nan
        self._period = math.nan
        self._coefficients = (1.0, 0.0, 0.0, 1.0, 0.0)
        #: filtered x, y, z, their velocities, and the previous sample's x, y, z
        self._state = (0.0,) * 9
        #: robot time of the first sample since the last reset (NaN before one)
        self.started = math.nan

    @property
    def delay(self) -> float:
        """Group delay (s) of the filter for slow motions."""
        return 2.0 / self.omega

    def reset(self) -> None:
        """Forget the past (after a jump of the frame, or of time)."""
        self._stamp = math.nan
        self.started = math.nan

    def settled(self, stamp: float) -> bool:
        """Has the filter run for three delays since its last reset (its start transient,
        from rest at the first sample, has then decayed to 2 % of it)."""
        return stamp - self.started >= 3.0 * self.delay

    def update(self, stamp: float, point: tuple[float, float, float]) -> tuple[tuple[float, float, float], ...]:
        """Take the sample ``point`` at ``stamp`` (s); returns the filtered point, its velocity
        and its acceleration (three 3-tuples). The first sample after a reset (or after time
        went back) starts the filter at rest there."""
        ux, uy, uz = point
        dt = stamp - self._stamp
        if not dt > 0.0:
            if dt != 0.0:  # first sample (NaN: never equal) or time went back
                self.started = stamp
                self._state = (ux, uy, uz, 0.0, 0.0, 0.0, ux, uy, uz)
            dt = 0.0
        if abs(dt - self._period) > 1e-9 or dt == 0.0:
            self._coefficients = self._step(dt)
            self._period = dt
        a11, a12, a21, a22, slope_scale = self._coefficients
        lag, w = 2.0 / self.omega, self.omega
        x, y, z, vx, vy, vz, px, py, pz = self._state
        # The input is interpolated linearly between samples (slope s): relative to the
        # filter's steady response to that ramp (position u - 2 s / w, velocity s) the
        # state decays by e^(A dt), exactly, for any dt.
        sx, sy, sz = (ux - px) * slope_scale, (uy - py) * slope_scale, (uz - pz) * slope_scale
        ex, ey, ez = x - px + lag * sx, y - py + lag * sy, z - pz + lag * sz
        fx, fy, fz = vx - sx, vy - sy, vz - sz
        x, y, z = ux - lag * sx + a11 * ex + a12 * fx, uy - lag * sy + a11 * ey + a12 * fy, \
            uz - lag * sz + a11 * ez + a12 * fz
        vx, vy, vz = sx + a21 * ex + a22 * fx, sy + a21 * ey + a22 * fy, sz + a21 * ez + a22 * fz
        self._state = (x, y, z, vx, vy, vz, ux, uy, uz)
        self._stamp = stamp
        w2, two_w = w * w, 2.0 * w
        return ((x, y, z), (vx, vy, vz),
                (w2 * (ux - x) - two_w * vx, w2 * (uy - y) - two_w * vy, w2 * (uz - z) - two_w * vz))

    def _step(self, dt: float) -> tuple[float, float, float, float, float]:
        """e^(A dt) = decay * [[1 + w dt, dt], [-w^2 dt, 1 - w dt]], and 1 / dt (0 for dt = 0)."""
        w = self.omega
        wdt = w * dt
        decay = math.exp(-wdt)
        return (decay * (1.0 + wdt), decay * dt, -decay * w * wdt, decay * (1.0 - wdt),
                1.0 / dt if dt > 0.0 else 0.0)


def cart_table_zmp(com: tuple[float, float, float], acceleration: tuple[float, float, float],
                   gravity: float) -> tuple[float, float]:
    """ZMP of the cart-table model on the ground plane z = 0: p = c - (z_c / g) c'' for x
    and y, z_c the CoM height above the ground (Kajita's linear inverted pendulum)."""
    scale = com[2] / gravity
    return com[0] - scale * acceleration[0], com[1] - scale * acceleration[1]
