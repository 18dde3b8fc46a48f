"""Several guards in the command path, as one: the control loop takes one guard.

Each trajectory must pass every guard's check (the first refusal stands); each set-point
goes through the guards in order, and the first :class:`~humanoid_core.loop.command_guard.Veto`
is the cycle's decision (the guards after it do not see the refused set-point). A guard
that passes a set-point may still substitute another (a plain ``JointCommand``); the next
guard filters that one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from humanoid_core.loop import CommandGuard, JointCommand, JointState, PlannedTrajectory, StatusEntry, Veto

__all__ = ["CompositeGuard"]


class CompositeGuard(CommandGuard):
    """The guards of a driver node, checked in the order given."""

    def __init__(self, guards: Sequence[CommandGuard]) -> None:
        self.guards = tuple(guards)

    def check_trajectory(self, plan: PlannedTrajectory, stop: Callable[[], bool] = lambda: False) -> None:
        for guard in self.guards:
            guard.check_trajectory(plan, stop)

    def filter_setpoint(self, command: JointCommand, state: JointState) -> JointCommand | Veto:
        for guard in self.guards:
            decision = guard.filter_setpoint(command, state)
            if isinstance(decision, Veto):
                return decision
            command = decision
        return command

    def status(self) -> list[StatusEntry]:
        return [entry for guard in self.guards for entry in guard.status()]
