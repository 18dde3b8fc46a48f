"""From a motion to the dense trajectory a robot's follow_joint_trajectory action plays.

:func:`plan_playback` is what a player calls: it picks the joints, applies the user's
speed factor, slows the motion to the joint limits (reporting by how much), checks
that the interpolated path stays within the position limits, prepends a transition
from the robot's current position to the first keyframe, and samples everything at a
fixed period with the motion's interpolation law. The result keeps the keyframe
arrival times in trajectory time, for progress feedback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_core.loop import Law
from humanoid_core.motion.data import load_settings
from humanoid_core.motion.limits import POSITION_TOLERANCE, JointBounds
from humanoid_core.motion.model import Motion, MotionError, joint_array
from humanoid_core.motion.time_scaling import TimeScaling, check_times, scale_to_limits

#: Below this distance (rad) on every joint the robot is at the first keyframe already.
AT_START_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Trajectory:
    """Dense samples of some joints: times (s, from 0) and (m, j) positions, velocities, accelerations."""

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def then(self, other: Trajectory) -> Trajectory:
        """This trajectory followed by ``other`` (whose t = 0 sample is this one's last)."""
        if other.joint_names != self.joint_names:
            raise ValueError("cannot join trajectories of different joints")
        return Trajectory(self.joint_names,
                          np.concatenate([self.times, other.times[1:] + self.duration]),
                          np.vstack([self.positions, other.positions[1:]]),
                          np.vstack([self.velocities, other.velocities[1:]]),
                          np.vstack([self.accelerations, other.accelerations[1:]]))


def sample_motion(motion: Motion, period: float | None = None) -> Trajectory:
    """Samples every ``period`` from 0 to the motion's end (the end included)."""
    period = load_settings().sample_period if period is None else period
    if not period > 0.0:
        raise ValueError(f"sampling period must be positive, got {period}")
    times = np.arange(0.0, motion.duration, period)
    if len(times) == 0 or motion.duration - times[-1] > 1e-9:
        times = np.append(times, motion.duration)
    positions, velocities, accelerations = motion.spline().sample_many(times)
    return Trajectory(motion.joint_names, times, positions, velocities, accelerations)


def check_path_limits(motion: Motion, bounds: JointBounds) -> None:
    """Raise MotionError if the interpolated path leaves a joint's position range.

    Keyframes are checked when a file is read; this catches what the interpolation
    law adds between them (overshoot of a cubic with given velocities, for example).
    """
    bounds = bounds.select(motion.joint_names)
    spline = motion.spline()
    times = spline.times if len(spline.times) < 2 else check_times(spline, load_settings().samples_per_segment)
    positions = spline.sample_many(times)[0]
    low = positions < bounds.lower - POSITION_TOLERANCE
    high = positions > bounds.upper + POSITION_TOLERANCE
    bad = np.argwhere(low | high)
    if len(bad):
        row, column = bad[0]
        after = int(np.searchsorted(motion.times, times[row], side="right")) - 1
        problem = bounds.position_violation(int(column), float(positions[row, column]))
        raise MotionError(motion.source, f"motion {motion.name!r} between {motion.label(max(after, 0))} and "
                                         f"the next keyframe (t = {times[row]:.3f} s): {problem}")


def transition_motion(start: np.ndarray, motion: Motion, bounds: JointBounds, limit_fraction: float | None = None,
                      min_duration: float | None = None, period: float | None = None) -> Motion | None:
    """A rest-to-rest cubic from ``start`` to the motion's first keyframe, or None when there already.

    As short as ``limit_fraction`` of the rate limits allows (the time scaling decides),
    never shorter than ``min_duration``; defaults from the settings. ``period``: the
    playback sampling period the limits are also verified at.
    """
    settings = load_settings()
    fraction = settings.transition_limit_fraction if limit_fraction is None else limit_fraction
    shortest = settings.transition_min_duration if min_duration is None else min_duration
    target = motion.positions[0]
    if np.max(np.abs(target - start), initial=0.0) <= AT_START_TOLERANCE:
        return None
    move = Motion(name=f"transition to {motion.name}", robot=motion.robot, joint_names=motion.joint_names,
                  times=[0.0, shortest], positions=[start, target], law=Law.CUBIC,
                  labels=("current position", motion.label(0)), source=motion.source)
    scaled, _ = scale_to_limits(move, bounds.select(motion.joint_names).with_rate_fraction(fraction),
                                verify_period=period)
    return scaled


@dataclass(frozen=True)
class Playback:
    """A motion planned for playback: the trajectory to send and what to tell the user."""

    motion: Motion  # as loaded (and restricted to the played joints)
    played: Motion  # speed and limit scaling applied; its t = 0 is the end of the transition
    scaling: TimeScaling
    transition_duration: float  # s, 0 when the robot was at the first keyframe already
    trajectory: Trajectory

    @property
    def keyframe_times(self) -> np.ndarray:
        """Arrival time of each keyframe in trajectory time."""
        return self.played.times + self.transition_duration

    @property
    def duration(self) -> float:
        return self.trajectory.duration

    def keyframe_reached(self, t: float) -> int:
        """Index of the last keyframe reached at trajectory time ``t`` (-1 before the first)."""
        return int(np.searchsorted(self.keyframe_times, t + 1e-9, side="right")) - 1


def plan_playback(motion: Motion, *, speed: float = 1.0, current: Mapping[str, float] | None = None,
                  joints: Sequence[str] | None = None, period: float | None = None,
                  bounds: JointBounds | None = None) -> Playback:
    """Plan ``motion`` for playback.

    ``speed``: the user's factor (2.0 = twice as fast), applied before the limit
    scaling; ``current``: joint name -> position (rad) of the robot now, to start
    with a transition (None: the motion starts where it is); ``joints``: play only
    these joints; ``period``: sampling period (default from the settings);
    ``bounds``: the limits (default: the robot's).
    """
    if joints is not None:
        motion = motion.select(joints)
    period = load_settings().sample_period if period is None else period
    bounds = (JointBounds.for_robot(motion.robot) if bounds is None else bounds).select(motion.joint_names)
    for i in range(motion.keyframe_count):
        for column, value in enumerate(motion.positions[i]):
            problem = bounds.position_violation(column, float(value))
            if problem:
                raise MotionError(motion.source, f"motion {motion.name!r}, {motion.label(i)}: {problem}")
    check_path_limits(motion, bounds)
    played, scaling = scale_to_limits(motion, bounds, speed, verify_period=period)
    trajectory = sample_motion(played, period)
    transition_duration = 0.0
    if current is not None:
        # a joint read a hair beyond its limit (a simulated joint's soft limit, a servo's noise)
        # starts from the limit: the robot interface refuses a trajectory point outside it
        start = np.clip(joint_array(current, motion.joint_names), bounds.lower, bounds.upper)
        move = transition_motion(start, played, bounds, period=period)
        if move is not None:
            transition_duration = move.duration
            trajectory = sample_motion(move, period).then(trajectory)
    return Playback(motion=motion, played=played, scaling=scaling,
                    transition_duration=transition_duration, trajectory=trajectory)

