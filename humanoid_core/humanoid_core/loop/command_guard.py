"""The command guard: a last safety check between accepted commands and the driver.

The control loop (:class:`~humanoid_core.loop.control_loop.ControlLoop`) calls a guard at
two points, and the default guard (this class) lets everything through:

1. :meth:`CommandGuard.check_trajectory`, once per trajectory (topic or action goal),
   after validation and before it starts, **in the callback thread** that received it
   (never the control thread: it may take as long as a check of the whole path needs).
   It gets the :class:`~humanoid_core.loop.trajectory_executor.PlannedTrajectory`, the
   exact path the executor will sample (``plan.configurations(times)`` gives every
   joint's set-point along it), and raises
   :class:`~humanoid_core.loop.validation.CommandRejectedError` (code and message) to
   refuse it: the trajectory then never starts and the robot keeps its set-point. A
   check that takes long asks ``stop()`` now and then and, when it returns True (the
   goal was canceled, or a newer trajectory came), gives up with
   :class:`CheckInterruptedError`.
2. :meth:`CommandGuard.filter_setpoint`, once per control cycle **in the control
   thread**, on the set-point about to be written; it returns the set-point to write
   (the same object when it passes: drivers skip re-sending an unchanged object), or a
   substitute. A :class:`Veto` substitute (such as the last safe set-point) also
   becomes the executor's set-point, so that the robot holds it and the refused
   command is dropped (the next command is filtered afresh); a running trajectory
   then ends ABORTED with the veto's code and message. It must be cheap (well under a
   control period).

The self-collision guard (:mod:`humanoid_core.guards.self_collision_guard`) implements both:
the trajectory check samples the path, the filter stops streaming set-points
(``joint_commands``) that would bring two links too close.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from humanoid_core.loop.driver import JointCommand, JointState, StatusEntry
from humanoid_core.loop.trajectory_executor import PlannedTrajectory
from humanoid_core.loop.validation import ErrorCode


class CheckInterruptedError(RuntimeError):
    """A trajectory check given up because its ``stop()`` returned True."""


@dataclass(frozen=True)
class Veto:
    """A set-point refused by a guard: what to write and hold instead, and why."""

    setpoint: JointCommand
    code: ErrorCode
    message: str


class CommandGuard:
    """Accepts every trajectory and passes every set-point through (the default)."""

    def check_trajectory(self, plan: PlannedTrajectory, stop: Callable[[], bool] = lambda: False) -> None:
        """Raise :class:`~humanoid_core.loop.validation.CommandRejectedError` to refuse ``plan``."""

    def filter_setpoint(self, command: JointCommand, state: JointState) -> JointCommand | Veto:
        """The set-point to write this cycle, given the one computed and the latest reading."""
        return command

    def status(self) -> list[StatusEntry]:
        """What the guard has refused, for the robot interface's diagnostics."""
        return []
