"""The ZMP measured by the feet: centre of pressure of the ground reaction forces.

Each foot sensor gives a wrench in its sole frame (``<side>_foot/wrench``): the force
the ground exerts on the foot and its moment about the sole frame's origin (the
simulator's convention, and that of a six-axis sensor whose reading is transformed to
the sole; fz > 0 when the foot carries load). The wrenches of the loaded feet are
brought into the ground frame and summed about its origin, and the ZMP is the point
of the ground plane (z = 0) where the horizontal moments vanish:

    p_x = -tau_y / f_z,    p_y = tau_x / f_z

which for point contacts on flat ground is the force-weighted mean of the contact
points (Sum f_z,i p_i / Sum f_z,i). It is valid only while the feet carry load.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FootWrench:
    """One foot's reading: force (N) and moment about the sole origin (N m), sole frame."""

    force: tuple[float, float, float]
    torque: tuple[float, float, float]

    @property
    def load(self) -> float:
        """Force along the sole's normal (N): what the foot carries when it stands flat."""
        return self.force[2]


def centre_of_pressure(feet: Iterable[tuple[FootWrench, np.ndarray, np.ndarray]],
                       min_load: float) -> tuple[float, float] | None:
    """ZMP on the plane z = 0 of the ground frame from (wrench, sole rotation, sole
    position) of each foot, the placements in that frame. Feet carrying less than
    ``min_load`` (N, along their sole normal) are left out; None when no foot is loaded
    or the total vertical force is not above ``min_load``."""
    force = np.zeros(3)
    moment = np.zeros(3)
    for wrench, rotation, position in feet:
        if not wrench.load > min_load:
            continue
        f = rotation @ np.asarray(wrench.force, dtype=float)
        force += f
        x, y, z = position
        arm = (y * f[2] - z * f[1], z * f[0] - x * f[2], x * f[1] - y * f[0])  # position x f (np.cross: 50 us)
        moment += rotation @ np.asarray(wrench.torque, dtype=float) + arm
    if not force[2] > min_load:
        return None
    return float(-moment[1] / force[2]), float(moment[0] / force[2])
