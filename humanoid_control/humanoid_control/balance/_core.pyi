"""The balance monitor's per-update computation, compiled (_core.cpp: why, and what it does)."""

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from humanoid_control.balance.estimator import BalanceEstimate, BaseSource, ContactSource
from humanoid_description.support import ConvexPolygon

class CoMFilter:
    """Critically damped second-order low-pass on a 3-D point, per axis, with its
    velocity and acceleration (com_filter.py: the maths). The monitor also smooths the
    measured ZMP with one."""

    #: natural frequency 2 pi f (rad/s)
    omega: float
    #: robot time of the first sample since the last reset (NaN before one)
    started: float

    def __init__(self, cutoff_hz: float) -> None:
        """Raises ValueError unless ``cutoff_hz`` > 0."""
    @property
    def delay(self) -> float:
        """Group delay (s) of the filter for slow motions."""
    def reset(self) -> None:
        """Forget the past (after a jump of the frame, or of time)."""
    def settled(self, stamp: float) -> bool:
        """Has the filter run for three delays since its last reset (its start transient,
        from rest at the first sample, has then decayed to 2 % of it)."""
    def update(self, stamp: float, point: Sequence[float]) -> tuple[
            tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]:
        """Take the sample ``point`` at ``stamp`` (s); returns the filtered point, its velocity
        and its acceleration (three 3-tuples). The first sample after a reset (or after time
        went back) starts the filter at rest there."""

def cart_table_zmp(com: Sequence[float], acceleration: Sequence[float], gravity: float) -> tuple[float, float]:
    """ZMP of the cart-table model on the ground plane z = 0: p = c - (z_c / g) c'' for x
    and y, z_c the CoM height above the ground (Kajita's linear inverted pendulum)."""

class BalanceCore:
    """The estimator's kinematics on its own pinocchio.Model and Data (held by reference:
    frame placements it computes are in ``data`` for the Python code), and the flat-feet
    update of a biped (the hardware's usual case)."""

    def __init__(self, model: pin.Model, data: pin.Data, q_index: Sequence[int] | np.ndarray, right_sole: int,
                 left_sole: int, com_filter: CoMFilter, gravity: float, polygon_precision: float,
                 estimate_type: type[BalanceEstimate], min_margin: float) -> None:
        """``estimate_type`` is estimator.BalanceEstimate (a slots dataclass: flat_feet fills
        its fields in directly); TypeError unless it has exactly those slots."""
    def com(self, positions: Sequence[float] | np.ndarray,
            xyzquat: Sequence[float] | np.ndarray | None) -> tuple[float, float, float]:
        """Whole-body CoM with the joints at ``positions`` (canonical order) and the base at
        ``xyzquat`` (None: the identity); the joint placements stay in the data."""
    def flat_feet(self, stamp: float, positions: Sequence[float] | np.ndarray) -> BalanceEstimate | None:
        """Flat feet on flat ground, base at the identity: the estimate in the held support
        sole's frame (CoM, the filtered CoM's velocity, the cart-table ZMP once the filter has
        settled, the margin in the held polygon, the base's placement in that frame, the held
        frame, contacts and sources). None, with both sole placements in the data, when the
        left sole moved in the right one's frame beyond ``polygon_precision`` (SE3.isApprox)
        since :meth:`hold`, or nothing is held: the caller works the support out, holds it,
        and calls again (the filter is only updated by a call that answers)."""
    def hold(self, support_right: bool, frame: str, contacts: dict[str, bool], polygon: ConvexPolygon,
             base_source: BaseSource, contact_source: ContactSource) -> None:
        """Keep the soles' relative placement of the last :meth:`flat_feet` call, the support
        sole (right, else left) and what its estimates take from the support."""
    def forget(self) -> None:
        """Drop the held support: the next :meth:`flat_feet` call returns None."""
