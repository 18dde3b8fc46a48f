"""Which of the walk's computed set-points a trajectory sent now still carries.

The walk controller node computes set-points ahead of the robot's clock and sends those
not yet due when the trajectory begins. The walk's last set-point (at rest) must always
reach the robot, or the walk would end at whatever set-point was sent before it; when the
node lagged so far that even that one is due already, it is given a new time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from humanoid_control.biped_walking.controller import Setpoint


@dataclass(frozen=True)
class Window:
    """The set-points to send, and how late (s) the final one came when it was retimed."""

    setpoints: list[Setpoint]
    final_late_by: float | None = None


def still_ahead(setpoints: Sequence[Setpoint], begins: float, final: bool, retime_at: float) -> Window:
    """The ``setpoints`` due after ``begins`` (the trajectory's start, robot time). With the
    walk's ``final`` set-point among them but due already, that one alone, at ``retime_at``:
    a time the trajectory can still reach after the transport's delays (the node's command
    lead after now), not one period after its start, which a trajectory a few tenths of a
    second late would have missed (it was then refused as ended before it could start)."""
    ahead = [s for s in setpoints if s.stamp > begins + 1e-6]
    if final and not ahead and setpoints:
        last = setpoints[-1]
        return Window([Setpoint(max(retime_at, begins + 1e-3), last.positions, last.velocities)],
                      final_late_by=begins - last.stamp)
    return Window(ahead)
