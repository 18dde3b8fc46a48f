"""Command validation, done once, in the shared front: nothing reaches a driver unchecked.

Trajectories (topic and action) are rejected as a whole with an error code and a
message naming the joint, the point and the value. Streaming set-points are
rejected when malformed (unknown joint, NaN, length mismatch) and clamped into the
joint limits otherwise, with a warning. The validator works on plain Python data so
that it is independent of ROS message types; the front converts messages first.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from humanoid_description import JointTable


class ErrorCode(enum.IntEnum):
    """Result codes of humanoid_interfaces/action/FollowJointTrajectory."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5
    PREEMPTED = -6
    CANCELED = -7
    DRIVER_FAILURE = -8
    SELF_COLLISION = -9


#: s: a trajectory whose header stamp has passed is joined at its first point due at least
#: this long after the join (the executor's :func:`joined_at`, and the speed check here):
#: heading for a point due a millisecond later would turn any small difference between the
#: path the robot is on and the trajectory into a jump.
LATE_JOIN_MARGIN = 0.02


class CommandRejectedError(ValueError):
    """A command that must not move the robot, with the reason and its error code."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class PointData:
    """One trajectory point as received (time from start in seconds)."""

    time: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()


@dataclass(frozen=True)
class ValidatedTrajectory:
    """A trajectory that passed every check, for the joints it names."""

    joint_names: tuple[str, ...]
    joint_indices: np.ndarray  # canonical index of each trajectory joint
    times: np.ndarray  # (n,) seconds from the start
    positions: np.ndarray  # (n, k)
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    start_time: float | None  # absolute start on the driver clock; None = now


@dataclass(frozen=True)
class ValidatedSetpoint:
    """A streaming set-point after checks and clamping."""

    joint_indices: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    warnings: list[str] = field(default_factory=list)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def points_still_ahead(times: np.ndarray, stamp: float, join: float, join_name: str) -> np.ndarray:
    """Which points (``times`` from the header ``stamp``, s) a run joining its trajectory at
    ``join`` (driver clock; ``join_name``: "now" or "start", for the message) still heads for:
    those due more than ``LATE_JOIN_MARGIN`` after the join. None left: the trajectory is
    refused as OLD_HEADER_TIMESTAMP. The one rule of the validator and the executor's join."""
    keep = times - (join - stamp) > LATE_JOIN_MARGIN
    if not keep.any():
        end = stamp + float(times[-1]) - join  # the last point's time from the join
        relative = {"now": ("ago", "from now"), "start": ("before it could start", "after it could start")}[join_name]
        when = (f"ended {_fmt(-end)} s {relative[0]}" if end <= 0.0
                else f"ends {_fmt(end)} s {relative[1]}, too soon to join")
        raise CommandRejectedError(ErrorCode.OLD_HEADER_TIMESTAMP, f"the trajectory {when} (header stamp "
                                   f"{_fmt(stamp)} s, {join_name} {_fmt(join)} s)")
    return keep


class CommandValidator:
    """Checks commands against the robot's joint table (names, limits)."""

    def __init__(self, joints: JointTable, start_tolerance: float = 0.1, max_points: int | None = None,
                 max_duration: float | None = None) -> None:
        self.joints = joints
        #: How far (rad) a point at time 0 may be from the current position.
        self.start_tolerance = start_tolerance
        #: Longest trajectory accepted (points); None = no bound.
        self.max_points = max_points
        #: Longest trajectory accepted (s, from its receipt to its last point); None = no bound.
        self.max_duration = max_duration

    # -- shared checks ---------------------------------------------------------------
    def _joint_indices(self, names: Sequence[str], code: ErrorCode = ErrorCode.INVALID_JOINTS) -> np.ndarray:
        if len(names) == 0:
            raise CommandRejectedError(code, "no joint names given")
        seen: set[str] = set()
        indices = []
        for name in names:
            if name in seen:
                raise CommandRejectedError(code, f"joint {name!r} appears more than once")
            seen.add(name)
            if name not in self.joints:
                raise CommandRejectedError(code, f"unknown joint {name!r}; this robot's joints are: "
                                            f"{', '.join(self.joints.names)}")
            indices.append(self.joints.index(name))
        return np.array(indices, dtype=int)

    @staticmethod
    def _vector(values: Sequence[float], count: int, what: str, names: Sequence[str]) -> np.ndarray:
        if len(values) != count:
            raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                  f"{what}: {len(values)} values for {count} joints")
        array = np.asarray(values, dtype=float)
        for name, value in zip(names, array, strict=True):
            if not math.isfinite(value):
                raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"{what}, joint {name}: value is {value}")
        return array

    # -- trajectories ----------------------------------------------------------------
    def trajectory(self, joint_names: Sequence[str], points: Sequence[PointData],
                   current: np.ndarray, start_time: float | None = None,
                   now: float | None = None) -> ValidatedTrajectory:
        """Validate a whole trajectory; raises :class:`CommandRejectedError` on the first problem.

        ``current`` is the robot's current position of every joint (canonical order),
        used to check the first segment; ``start_time``/``now`` on the driver clock.
        The checks are vectorised: a trajectory of the largest allowed size is
        validated in milliseconds (it runs in a callback thread, beside the control loop).
        """
        indices = self._joint_indices(joint_names)
        names = tuple(joint_names)
        if len(points) == 0:
            raise CommandRejectedError(ErrorCode.INVALID_GOAL, "the trajectory has no points")
        if self.max_points is not None and len(points) > self.max_points:
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"the trajectory has {len(points)} points, more than max_trajectory_points = {self.max_points}: "
                "split it into several goals (or raise the parameter)")
        count = len(names)
        has_velocities = len(points[0].velocities) > 0
        has_accelerations = len(points[0].accelerations) > 0
        for i, point in enumerate(points):  # shapes first, so that the arrays below are regular
            if len(point.positions) != count:
                raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                           f"point {i} positions: {len(point.positions)} values for {count} joints")
            for what, values, given in (("velocities", point.velocities, has_velocities),
                                        ("accelerations", point.accelerations, has_accelerations)):
                if (len(values) > 0) != given:
                    raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                               f"point {i}: {what} must be given for every point or for none")
                if given and len(values) != count:
                    raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                               f"point {i} {what}: {len(values)} values for {count} joints")
        t = np.fromiter((point.time for point in points), float, len(points))
        bad = np.flatnonzero(~np.isfinite(t) | (t < 0.0))
        if len(bad):
            i = int(bad[0])
            raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                       f"point {i}: time_from_start {t[i]} s is not a finite time >= 0")
        bad = np.flatnonzero(np.diff(t) <= 0.0)
        if len(bad):
            i = int(bad[0]) + 1
            raise CommandRejectedError(ErrorCode.INVALID_GOAL,
                                       f"point {i}: time_from_start {_fmt(t[i])} s is not after "
                                       f"point {i - 1} ({_fmt(t[i - 1])} s); times must increase strictly")
        self._check_duration(float(t[-1]), start_time - now if start_time is not None and now is not None else 0.0)
        p = self._matrix([point.positions for point in points], "positions", names)
        v = self._matrix([point.velocities for point in points], "velocities", names) if has_velocities else None
        a = (self._matrix([point.accelerations for point in points], "accelerations", names)
             if has_accelerations else None)
        self._check_limits(names, indices, p, v)
        if start_time is not None and now is not None and start_time < now:
            # a stamp already past: the executor joins it on its timeline, at the points still due
            due = points_still_ahead(t, start_time, now, "now")
            self._check_speeds(names, indices, t[due] + (start_time - now), p[due], current[indices],
                               numbers=np.flatnonzero(due))
        elif start_time is not None and now is not None and start_time > now:
            # a later start: until then the robot holds, or follows the trajectory before, so the
            # set-point it leads in from is known only to the plan (check_lead_in)
            self._check_speeds(names, indices, t, p, None)
        else:
            self._check_speeds(names, indices, t, p, current[indices])
        return ValidatedTrajectory(names, indices, t, p, v, a, start_time)

    def check_lead_in(self, trajectory: ValidatedTrajectory, setpoint: np.ndarray) -> None:
        """The lead-in of a planned run: from ``setpoint`` (every joint's set-point at the run's
        start) to the first point of ``trajectory`` (as joined at that start), within the
        velocity limits, or a first point at time 0 within ``start_tolerance``. A stamped
        trajectory's start is its header stamp, where the set-point may be far from where
        the robot is at its receipt: a first point 0.1 s after a stamp 1 s ahead was once
        accepted as a lead-in of 1.1 s, its set-points moving the joint at about twice its limit."""
        idx = trajectory.joint_indices
        self._check_speeds(trajectory.joint_names, idx, trajectory.times[:1], trajectory.positions[:1], setpoint[idx],
                           labels=("its set-point at the trajectory's start", "the first point still due"))

    def _check_duration(self, last: float, lead: float) -> None:
        """The trajectory must end within ``max_duration`` of its receipt (its last point at
        ``last`` s from a start ``lead`` s away, < 0: past): the robot interface holds a goal
        that long, and the command guard's work on its path grows with it."""
        if self.max_duration is None:
            return
        end = last + lead
        if end > self.max_duration:
            stamp = f"{_fmt(lead)} s ahead" if lead > 0.0 else f"{_fmt(-lead)} s ago"
            when = (f"lasts {_fmt(end)} s (its last point's time_from_start)" if lead == 0.0 else
                    f"ends {_fmt(end)} s from now (header stamp {stamp}, last point at {_fmt(last)} s)")
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"the trajectory {when}, longer than max_trajectory_duration = {_fmt(self.max_duration)} s: "
                "split it into several goals (or raise the parameter)")

    @staticmethod
    def _matrix(rows: list[Sequence[float]], what: str, names: Sequence[str]) -> np.ndarray:
        """Rows of equal length (checked before) as an array; the first non-finite value is named.

        Converted row by row (a Python loop lets the control thread take the GIL between
        rows; one ``np.array`` call over every row would hold it for the whole trajectory)."""
        array = np.empty((len(rows), len(names)))
        for i, row in enumerate(rows):
            array[i] = row
        bad = np.argwhere(~np.isfinite(array))
        if len(bad):
            i, k = (int(x) for x in bad[0])
            raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"point {i} {what}, joint {names[k]}: "
                                                               f"value is {array[i, k]}")
        return array

    def _check_limits(self, names: Sequence[str], indices: np.ndarray, positions: np.ndarray,
                      velocities: np.ndarray | None) -> None:
        lower, upper = self.joints.lower[indices], self.joints.upper[indices]
        vmax = self.joints.velocity[indices]
        outside = (positions < lower - 1e-9) | (positions > upper + 1e-9)
        too_fast = np.zeros_like(outside) if velocities is None else np.abs(velocities) > vmax * (1 + 1e-6)
        # the first offending point, position before velocity (as a reader goes through them)
        for i in np.flatnonzero(np.any(outside, axis=1) | np.any(too_fast, axis=1))[:1]:
            if np.any(outside[i]):
                k = int(np.flatnonzero(outside[i])[0])
                value = positions[i, k]
                raise CommandRejectedError(
                    ErrorCode.INVALID_GOAL,
                    f"point {i}, joint {names[k]}: position {_fmt(value)} rad ({_fmt(math.degrees(value))} deg) "
                    f"is outside its limits [{_fmt(lower[k])}, {_fmt(upper[k])}] rad")
            assert velocities is not None
            k = int(np.flatnonzero(too_fast[i])[0])
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"point {i}, joint {names[k]}: velocity {_fmt(velocities[i, k])} rad/s exceeds its limit "
                f"{_fmt(vmax[k])} rad/s")

    def _check_speeds(self, names: Sequence[str], indices: np.ndarray, times: np.ndarray,
                      positions: np.ndarray, current: np.ndarray | None, numbers: np.ndarray | None = None,
                      labels: tuple[str, str] | None = None) -> None:
        """The average speed each segment needs must be within the joint's velocity limit;
        the first from the ``current`` position (None: left to :meth:`check_lead_in`) at time 0
        to point 0 (a point 0 at time 0: within ``start_tolerance`` of it). ``times`` from the
        start; ``numbers``: the points' numbers in the trajectory received, when only those
        still due are checked; ``labels``: what the current position and point 0 are called."""
        vmax = self.joints.velocity[indices]
        points = [f"point {i}" for i in (range(len(times)) if numbers is None else numbers)]
        origin, points[0] = labels if labels is not None else ("the current position", points[0])
        if current is None:
            starts, start_positions = times, positions
        elif times[0] == 0.0:
            gap = np.abs(positions[0] - current)
            worst = int(np.argmax(gap))
            if gap[worst] > self.start_tolerance:
                raise CommandRejectedError(
                    ErrorCode.INVALID_GOAL,
                    f"{points[0]} at time 0 puts joint {names[worst]} {_fmt(gap[worst])} rad away from "
                    f"{origin} (tolerance {_fmt(self.start_tolerance)} rad): give it a time_from_start > 0 so "
                    "the robot can get there")
            starts, start_positions = times, positions
        else:
            points.insert(0, origin)
            starts = np.concatenate([[0.0], times])
            start_positions = np.vstack([current, positions])
        if len(starts) < 2:
            return
        speeds = np.abs(np.diff(start_positions, axis=0)) / np.diff(starts)[:, None]
        segment, joint = np.unravel_index(int(np.argmax(speeds / vmax)), speeds.shape)
        if speeds[segment, joint] > vmax[joint] * (1 + 1e-6):
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"joint {names[joint]} would have to move at {_fmt(speeds[segment, joint])} rad/s from "
                f"{points[segment]} to {points[segment + 1]}; its velocity limit is {_fmt(vmax[joint])} rad/s "
                "(slow the trajectory down)")

    # -- streaming set-points --------------------------------------------------------
    def setpoint(self, joint_names: Sequence[str], positions: Sequence[float],
                 velocities: Sequence[float] = (), clamp: bool = True) -> ValidatedSetpoint:
        """Validate a set-point. Out-of-limit values are clamped with a warning, or, with
        ``clamp=False`` (a configuration to jump to, such as a reset), rejected."""
        indices = self._joint_indices(joint_names)
        names = list(joint_names)
        p = self._vector(positions, len(names), "positions", names)
        if not clamp:
            self._check_limits(names, indices, p[None, :], None)
        warnings = []
        lower, upper = self.joints.lower[indices], self.joints.upper[indices]
        clamped = np.clip(p, lower, upper)
        for k in np.flatnonzero(clamped != p):
            warnings.append(f"joint {names[k]}: position {_fmt(p[k])} rad clamped to its limit "
                            f"{_fmt(clamped[k])} rad")
        v = None
        if len(velocities) > 0:
            raw = self._vector(velocities, len(names), "velocities", names)
            vmax = self.joints.velocity[indices]
            v = np.clip(raw, -vmax, vmax)
            for k in np.flatnonzero(v != raw):
                warnings.append(f"joint {names[k]}: velocity {_fmt(raw[k])} rad/s clamped to "
                                f"{_fmt(v[k])} rad/s")
        return ValidatedSetpoint(indices, clamped, v, warnings)
