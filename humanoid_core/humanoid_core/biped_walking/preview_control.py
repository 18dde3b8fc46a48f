"""Kajita's preview control of the cart-table model: a CoM path whose ZMP follows a reference.

The cart-table model (a linear inverted pendulum at constant height ``z_c``) relates
the CoM to the ZMP on each horizontal axis: ``p = x - (z_c / g) x''``. With the CoM
jerk as input and the state ``(x, x', x'')`` sampled every ``dt``, Kajita et al. (2003)
choose the jerk that minimises ``sum Q_e (p - p_ref)^2 + R u^2`` over an infinite
horizon knowing the reference ``preview`` seconds ahead (Katayama's servo form with an
integral of the tracking error). The optimal law is

    u(k) = -G_i sum_{i<=k} (p(i) - p_ref(i)) - G_x x(k) - sum_{j=1..N} G_p(j) p_ref(k + j)

with the gains from the discrete algebraic Riccati equation of the augmented system
(error, state increments), solved here with numpy by the structure-preserving doubling
algorithm (:func:`riccati`): scipy's ``solve_discrete_are`` gives the same solution to
1e-13, but importing scipy.linalg cost the control container 0.5 CPU-s at every start. The
same gains serve both axes; each axis keeps its own state and error integral.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRAVITY = 9.81

#: Doubling steps before :func:`riccati` gives up (each doubles the horizon: 9-10 suffice
#: for the walking controllers' periods and weights).
RICCATI_ITERATIONS = 64


@dataclass(frozen=True)
class PreviewGains:
    """Gains of the preview controller for one sampling period and CoM height."""

    dt: float
    com_height: float
    A: np.ndarray  # (3, 3) cart-table state transition
    B: np.ndarray  # (3,) jerk input
    C: np.ndarray  # (3,) ZMP output
    integral: float  # G_i
    state: np.ndarray  # G_x (3,)
    preview: np.ndarray  # G_p(1..N)

    @property
    def steps(self) -> int:
        """N: how many future reference samples each update needs."""
        return len(self.preview)


def preview_gains(dt: float, com_height: float, horizon: float, q_error: float = 1.0,
                  r_jerk: float = 1e-6, gravity: float = GRAVITY) -> PreviewGains:
    """Gains for sampling period ``dt`` (s), CoM height (m) and a preview of ``horizon`` s."""
    if not (dt > 0.0 and com_height > 0.0 and horizon >= dt and q_error > 0.0 and r_jerk > 0.0):
        raise ValueError("preview control needs dt, com_height, q_error, r_jerk > 0 and horizon >= dt")
    a = np.array([[1.0, dt, dt * dt / 2.0], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    b = np.array([dt**3 / 6.0, dt * dt / 2.0, dt])
    c = np.array([1.0, 0.0, -com_height / gravity])
    # augmented system: (tracking error, state increment), input = jerk increment
    a_aug = np.zeros((4, 4))
    a_aug[0, 0] = 1.0
    a_aug[0, 1:] = c @ a
    a_aug[1:, 1:] = a
    b_aug = np.concatenate([[c @ b], b]).reshape(4, 1)
    q_aug = np.zeros((4, 4))
    q_aug[0, 0] = q_error
    p = riccati(a_aug, b_aug, q_aug, np.array([[r_jerk]]))
    scale = 1.0 / (r_jerk + (b_aug.T @ p @ b_aug).item())
    gain = scale * (b_aug.T @ p @ a_aug)  # (1, 4): [G_i, G_x]
    closed = a_aug - b_aug @ gain
    unit = np.array([1.0, 0.0, 0.0, 0.0]).reshape(4, 1)
    count = max(1, round(horizon / dt))
    preview = np.empty(count)
    x = -closed.T @ p @ unit
    preview[0] = -gain[0, 0]
    for j in range(1, count):
        preview[j] = scale * (b_aug.T @ x).item()
        x = closed.T @ x
    return PreviewGains(dt=dt, com_height=com_height, A=a, B=b, C=c, integral=float(gain[0, 0]),
                        state=gain[0, 1:].copy(), preview=preview)


def riccati(a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray, tolerance: float = 1e-14) -> np.ndarray:
    """P solving the discrete algebraic Riccati equation
    ``P = A'PA - A'PB (R + B'PB)^-1 B'PA + Q`` (stabilizable, detectable), by the
    structure-preserving doubling algorithm (Chu, Fan and Lin 2005): step k holds the
    Riccati recursion's value after 2^k steps, so it converges quadratically, with no
    eigenvalue problem to solve. ValueError if it does not converge."""
    eye = np.eye(a.shape[0])
    a_k, g_k, h_k = a.copy(), b @ np.linalg.solve(r, b.T), q.copy()
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging solution ends in ValueError
        for _ in range(RICCATI_ITERATIONS):
            w = eye + g_k @ h_k
            w_a, w_g = np.linalg.solve(w, a_k), np.linalg.solve(w, g_k)
            h = h_k + a_k.T @ h_k @ w_a
            g_k = g_k + a_k @ w_g @ a_k.T
            a_k = a_k @ w_a
            h, g_k = (h + h.T) / 2.0, (g_k + g_k.T) / 2.0
            if not np.isfinite(h).all():
                break
            converged = np.abs(h - h_k).max() <= tolerance * np.abs(h).max()
            h_k = h
            if converged:
                return h_k
    raise ValueError("the Riccati equation's doubling did not converge (system not stabilizable?)")


class PreviewController:
    """CoM state of both horizontal axes, advanced one period at a time."""

    def __init__(self, gains: PreviewGains, com: np.ndarray) -> None:
        self.gains = gains
        #: (3, 2): position, velocity, acceleration of the CoM on x and y.
        self.state = np.zeros((3, 2))
        self.state[0] = np.asarray(com, dtype=float)[:2]
        self._error_sum = np.zeros(2)

    def reset(self, com: np.ndarray) -> None:
        """At rest at ``com`` (x, y), ZMP under it, no accumulated error."""
        self.state[:] = 0.0
        self.state[0] = np.asarray(com, dtype=float)[:2]
        self._error_sum[:] = 0.0

    @property
    def com(self) -> np.ndarray:
        return self.state[0].copy()

    @property
    def zmp(self) -> np.ndarray:
        """The cart-table ZMP of the current state (x, y)."""
        return self.gains.C @ self.state

    def step(self, reference: np.ndarray) -> np.ndarray:
        """Advance one period. ``reference`` (N + 1, 2): the ZMP reference now and at the
        next N samples. Returns the new CoM position (x, y)."""
        g = self.gains
        self._error_sum += self.zmp - reference[0]
        jerk = -g.integral * self._error_sum - g.state @ self.state - g.preview @ reference[1:g.steps + 1]
        self.state = g.A @ self.state + np.outer(g.B, jerk)
        return self.state[0].copy()
