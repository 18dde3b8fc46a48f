"""The swing foot's path between lift-off and touch-down.

The foot rises and comes down vertically at both ends of the single support (no
scraping the ground as it leaves, no sliding as it lands): the horizontal motion and
the turn follow a minimum-jerk (quintic, rest to rest) law over the middle of the
swing, and the height a ``sin^2`` bump, zero in value and speed at both ends and
``height`` at mid-swing.
"""

from __future__ import annotations

import math

from humanoid_control.interpolation import quintic
from humanoid_control.walking.footsteps import Pose2, interpolate

#: Fraction of the swing spent rising before moving (and descending after).
VERTICAL_SHARE = 0.15



def rest_to_rest(s: float) -> float:
    """The quintic from 0 to 1 over s in [0, 1], at rest at both ends (clamped outside)."""
    s = min(1.0, max(0.0, s))
    return float(quintic(s, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)[0])  # type: ignore[arg-type]


def swing_pose(start: Pose2, target: Pose2, height: float, s: float) -> tuple[Pose2, float]:
    """Placement on the ground plane and height of the swing sole at phase ``s`` in [0, 1]."""
    s = min(1.0, max(0.0, s))
    horizontal = rest_to_rest((s - VERTICAL_SHARE) / (1.0 - 2.0 * VERTICAL_SHARE))
    return interpolate(start, target, horizontal), height * math.sin(math.pi * s) ** 2
