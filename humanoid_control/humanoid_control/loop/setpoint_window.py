"""Which of a controller's computed set-points a trajectory sent now still carries.

The walk and gait controller nodes compute set-points ahead of the robot's clock and send
those not yet due when the trajectory begins (:mod:`humanoid_control.ros.setpoint_stream`).
The last set-point of a motion (at rest) must always reach the robot, or the motion would
end at whatever set-point was sent before it; when the node lagged so far that even that
one is due already, it is given a new time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Share of a joint's speed limit a controller's set-points may use (the rest is the front's margin).
VELOCITY_MARGIN = 0.95


@dataclass(frozen=True)
class Setpoint:
    """Joint positions (rad) and velocities (rad/s) for every joint, canonical order."""

    stamp: float  # robot time the set-point is for
    positions: np.ndarray
    velocities: np.ndarray


@dataclass(frozen=True)
class Window:
    """The set-points to send, and how late (s) the final one came when it was retimed."""

    setpoints: list[Setpoint]
    final_late_by: float | None = None


def still_ahead(setpoints: Sequence[Setpoint], begins: float, final: bool, retime_at: float) -> Window:
    """The ``setpoints`` due after ``begins`` (the trajectory's start, robot time). With the
    motion's ``final`` set-point among them but due already, that one alone, at ``retime_at``:
    a time the trajectory can still reach after the transport's delays (the node's command
    lead after now), not one period after its start, which a trajectory a few tenths of a
    second late would have missed (it was then refused as ended before it could start)."""
    ahead = [s for s in setpoints if s.stamp > begins + 1e-6]
    if final and not ahead and setpoints:
        last = setpoints[-1]
        return Window([Setpoint(max(retime_at, begins + 1e-3), last.positions, last.velocities)],
                      final_late_by=begins - last.stamp)
    return Window(ahead)
