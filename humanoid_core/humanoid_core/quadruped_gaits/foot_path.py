"""Elliptic foot paths (the reference's: x = h + a cos phi, y = k + b sin phi).

The path is traced in the leg's sagittal plane, relative to the hip pitch axis: ``x``
forward, ``z`` up. Over one cycle of the phase the foot swings forward through the upper
half of the ellipse (lifted up to ``b`` above ``k``) and is pushed back through the lower
half, ``stance_depth`` times ``b`` below ``k`` at most: 1 is the reference's full ellipse
(the body rides up and down), 0 a flat stance at ``k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class EllipticPath:
    centre_x: float  # h (m): where the stride is centred, forward of the hip
    centre_z: float  # k (m): height of the ellipse's centre (negative: below the hip)
    half_stride: float  # a (m)
    lift: float  # b (m)
    stance_depth: float = 1.0

    def point(self, phase: float) -> tuple[float, float]:
        """The foot's ``(x, z)`` at ``phase`` (rad): from the back of the stride, 0 to pi
        swings forward and up, pi to 2 pi pushes back along the ground."""
        sine = math.sin(phase)
        depth = 1.0 if sine >= 0.0 else self.stance_depth
        return self.centre_x - self.half_stride * math.cos(phase), self.centre_z + self.lift * depth * sine
