"""The self-collision veto of the robot interface (a command guard; sim and hardware alike).

Two checks, both against the robot's collision model (the URDF's shapes, pairs filtered
by the SRDF) and its safety distance:

- **Trajectories** (``follow_joint_trajectory`` goals and ``joint_trajectory``): the
  exact path the executor will follow (``plan.configurations``) is checked every
  ``trajectory_sample_period`` seconds and between the samples
  (:mod:`humanoid_core.guards.trajectory_collision`), at most ``max_trajectory_samples``
  samples (a longer path is refused, INVALID_GOAL), one check at a time; a check stops
  early when the goal is canceled or a newer trajectory replaces it. A path that brings
  two links within the safety distance is refused before any motion: ``SELF_COLLISION``
  (-9), with a message naming the pair, the time and the joint values.
- **Set-points**, every control cycle: a set-point that would bring two links within the
  safety distance is not written; the robot holds the last safe set-point (a
  :class:`~humanoid_core.loop.command_guard.Veto`: the executor drops the refused command,
  a running trajectory ends with ``SELF_COLLISION``), a warning names the pair (at most one
  per ``warning_period``), and the robot follows again as soon as a command is safe, as
  hrpsys' CollisionDetector does. The check costs a matrix-vector product while the pairs
  stay apart (:class:`~humanoid_description.collision.CollisionTracker`), nothing for an
  unchanged set-point.

Set-points are never unknown (every joint has one), so the staleness of readings does not
enter here. The set-point held at bring-up (the measured pose) counts as safe even if it
is within the safety distance: the robot is already there; commands that take it closer
are refused, and a command that takes it out is followed.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

import numpy as np

from humanoid_core.guards.parameters import SelfCollisionGuardParameters
from humanoid_core.guards.trajectory_collision import PathCheck, check_path, refuse_long_path, shared_segments
from humanoid_core.loop import (
    CommandGuard,
    CommandRejectedError,
    ErrorCode,
    JointCommand,
    JointState,
    Level,
    PlannedTrajectory,
    StatusEntry,
    Veto,
)
from humanoid_description import CollisionModel, CollisionTracker, RobotModel


class SelfCollisionGuard(CommandGuard):
    """Refuses commands that would bring two links of the robot within the safety distance."""

    def __init__(self, robot: str, params: SelfCollisionGuardParameters | None = None,
                 warn: Callable[[str], None] | None = None, inform: Callable[[str], None] | None = None,
                 wall_clock: Callable[[], float] = time.monotonic) -> None:
        """``warn``/``inform`` receive the messages to log (default: dropped); ``wall_clock``
        paces the warnings. The models are the guard's own: the control thread and the
        callback threads each check with theirs (Pinocchio data is per thread)."""
        self.params = params or SelfCollisionGuardParameters()
        cycle_model = RobotModel(robot)
        self.joint_names = cycle_model.joints.names
        self.safety_distance = (self.params.safety_distance if self.params.safety_distance >= 0.0
                                else cycle_model.config.safety_distance)
        self._cycle = CollisionTracker(CollisionModel(cycle_model), self.safety_distance)
        self._paths = CollisionTracker(CollisionModel(RobotModel(robot)), self.safety_distance)
        self._paths_lock = threading.Lock()  # two callback threads may check trajectories at once
        self._warn = warn or (lambda _message: None)
        self._inform = inform or (lambda _message: None)
        self._wall_clock = wall_clock
        self._seen: JointCommand | None = None  # the last set-point checked, and it passed
        self._safe: JointCommand | None = None  # the last set-point that passed (or the bring-up one)
        self._holding: str | None = None  # why set-points are being refused, while they are
        self._warned_at = -np.inf
        self._cleared: PlannedTrajectory | None = None  # the last trajectory whose path was cleared
        #: Counters for diagnostics.
        self.refused_trajectories = 0
        self.refused_setpoints = 0
        self.path_samples = 0  # samples taken along trajectories' paths

    @property
    def holding(self) -> str | None:
        """While set-points are being refused, why (the pair); None otherwise."""
        return self._holding

    # -- trajectories (callback threads) -----------------------------------------------------
    def check_trajectory(self, plan: PlannedTrajectory, stop: Callable[[], bool] = lambda: False) -> None:
        if not self.params.veto:
            return
        with self._paths_lock:
            result = self._check_plan(plan, stop)
        if result.hit is not None:
            self.refused_trajectories += 1
            raise CommandRejectedError(ErrorCode.SELF_COLLISION, result.describe(
                self.joint_names, self.safety_distance, plan.trajectory.joint_indices))

    def _check_plan(self, plan: PlannedTrajectory, stop: Callable[[], bool]) -> PathCheck:
        """The plan's path, checked where the last path cleared does not already cover it: a
        controller that streams trajectories (the walk: 0.7 s of path every 0.1 s) sends
        mostly the same segments again, and only its new ones need checking."""
        p = self.params
        duration = plan.end - plan.start
        refuse_long_path(duration, p.trajectory_sample_period, p.max_trajectory_samples)
        samples = 0
        for begin, end in self._not_cleared(plan):
            check = check_path(self._paths, lambda t, begin=begin: plan.configurations(begin + t), end - begin,
                               p.trajectory_sample_period, None, stop)
            samples += check.samples
            self.path_samples += check.samples
            if check.hit is not None:
                return PathCheck(dataclasses.replace(check.hit, time=check.hit.time + begin - plan.start), samples,
                                 duration)
        self._cleared = plan
        return PathCheck(None, samples, duration)

    def _not_cleared(self, plan: PlannedTrajectory) -> list[tuple[float, float]]:
        """The stretches of the plan's path (robot time, consecutive segments merged) that the
        last path cleared does not share; the whole path when the two move different joints or
        hold the others elsewhere."""
        cleared, times = self._cleared, plan.spline.times
        whole = [(plan.start, plan.end)]
        indices = plan.trajectory.joint_indices
        if cleared is None or len(times) < 2 or not np.array_equal(cleared.trajectory.joint_indices, indices):
            return whole
        others = np.ones(len(plan.setpoint), dtype=bool)
        others[indices] = False
        if not np.array_equal(cleared.setpoint[others], plan.setpoint[others]):
            return whole
        stretches: list[tuple[float, float]] = []
        for k in np.flatnonzero(~shared_segments(plan.spline, cleared.spline)):
            begin, end = float(times[k]), float(times[k + 1])
            if stretches and stretches[-1][1] == begin:
                stretches[-1] = (stretches[-1][0], end)
            else:
                stretches.append((begin, end))
        return stretches

    # -- set-points (control thread) ---------------------------------------------------------
    def filter_setpoint(self, command: JointCommand, state: JointState) -> JointCommand | Veto:
        if not self.params.veto or command is self._seen:
            return command
        if self._safe is None:  # bring-up: the robot is where this set-point holds it
            self._seen = self._safe = command
            return command
        if np.array_equal(command.position, self._safe.position):  # holding (after a veto) or unchanged
            self._seen = command
            return command
        hit = self._cycle.first_violation(command.position)
        if hit is None:
            if self._holding is not None:
                self._inform(f"self-collision veto: following set-points again (held because {self._holding})")
                self._holding = None
            self._seen = self._safe = command
            return command
        self.refused_setpoints += 1
        moved = [self.joint_names[k] for k in np.flatnonzero(command.position != self._safe.position)]
        self._holding = (f"{hit.link_a} and {hit.link_b} would be {hit.distance * 1000:.1f} mm apart (safety "
                         f"distance {self.safety_distance * 1000:g} mm)")
        message = (f"self-collision veto: set-point refused, holding the last safe one: {self._holding}; "
                   f"moving {', '.join(moved) or 'no joint'}")
        now = self._wall_clock()
        if now - self._warned_at >= self.params.warning_period:
            self._warned_at = now
            self._warn(message)
        held = JointCommand(position=self._safe.position.copy(), velocity=np.zeros(len(self.joint_names)))
        return Veto(held, ErrorCode.SELF_COLLISION, message)

    def status(self) -> list[StatusEntry]:
        holding = self._holding
        if not self.params.veto:
            level, message = Level.WARN, "off (self_collision_veto false): commands are not checked"
        elif holding is not None:
            level, message = Level.WARN, f"holding the last safe set-point: {holding}"
        else:
            level, message = Level.OK, "on"
        return [StatusEntry(
            name="self-collision veto", level=level, message=message,
            values={"safety_distance_mm": f"{self.safety_distance * 1000:g}",
                    "trajectories_refused": str(self.refused_trajectories),
                    "setpoints_refused": str(self.refused_setpoints),
                    "trajectory_samples": str(self.path_samples)})]
