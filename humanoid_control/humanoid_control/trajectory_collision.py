"""Self-collision along a trajectory: the path the executor will follow, checked densely.

Used by the command guard (a trajectory goal or ``joint_trajectory`` is refused before
any motion) and by the checker node's ``check_trajectory_self_collision`` service. The
path is the executor's own (:func:`~humanoid_control.trajectory_executor.run_spline` /
:meth:`~humanoid_control.trajectory_executor.PlannedTrajectory.configurations`), sampled
every ``period`` seconds; the check clears the path between the samples too
(:meth:`~humanoid_description.collision.CollisionTracker.first_violation_along`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_control.trajectory_executor import run_spline
from humanoid_control.validation import ValidatedTrajectory
from humanoid_description.collision import CollisionTracker, PairDistance


@dataclass(frozen=True)
class PathCollision:
    """Where a path first brings two links within the safety distance."""

    time: float  # s from the trajectory's start
    pair: PairDistance
    positions: np.ndarray  # every joint there (canonical order)


@dataclass(frozen=True)
class PathCheck:
    """The outcome of checking a path: the first collision (None: clear) and the samples taken."""

    hit: PathCollision | None
    samples: int
    duration: float

    def describe(self, joint_names: Sequence[str], safety_distance: float,
                 moving: Sequence[int] | None = None) -> str:
        """What was found; a collision names the pair, the time and the values of the
        ``moving`` joints (canonical indices; default: all)."""
        if self.hit is None:
            return (f"no self-collision along the {self.duration:.3f} s path ({self.samples} samples, "
                    f"safety distance {safety_distance * 1000:g} mm)")
        hit = self.hit
        joints = range(len(joint_names)) if moving is None else moving
        values = ", ".join(f"{joint_names[k]} = {hit.positions[k]:.4f} rad" for k in joints)
        return (f"self-collision: the path brings {hit.pair.link_a} and {hit.pair.link_b} "
                f"{hit.pair.distance * 1000:.1f} mm apart (safety distance {safety_distance * 1000:g} mm) at "
                f"t = {hit.time:.3f} s, where {values}")


def sample_times(duration: float, period: float) -> np.ndarray:
    """Times from 0 to ``duration`` every ``period``, the end included."""
    return np.append(np.arange(0.0, duration, period), duration)


#: s: the finest sampling :func:`check_path` refines to (a joint at its 5.3 rad/s limit moves
#: 1.3 mrad in it: pairs a few millimetres apart are told from touching ones).
FINEST_PERIOD = 0.00025


def check_path(tracker: CollisionTracker, configurations: Callable[[np.ndarray], np.ndarray], duration: float,
               period: float) -> PathCheck:
    """Check the path ``configurations(times)`` (times from its start, rows of every joint).

    Between two samples the check can only bound how close a pair comes (by how far the
    joints move): a pair clear at the samples but nearer than that bound (the feet of a
    walking robot, a few millimetres apart, at the joints' top speed) is not proven clear.
    Such a path is sampled again four times as densely, down to ``FINEST_PERIOD``; only a
    pair within the safety distance at a sample, or still unproven there, is a collision."""
    while True:
        times = sample_times(duration, period)
        path = configurations(times)
        found = tracker.first_violation_along(path)
        if found is None:
            return PathCheck(None, len(times), duration)
        index, pair = found
        if pair.distance <= tracker.safety_distance or period <= FINEST_PERIOD:
            return PathCheck(PathCollision(float(times[index]), pair, path[index].copy()), len(times), duration)
        period = max(FINEST_PERIOD, period / 4.0)


def check_trajectory(tracker: CollisionTracker, trajectory: ValidatedTrajectory, start: np.ndarray,
                     period: float) -> PathCheck:
    """Check the path a run of ``trajectory`` follows from the set-point ``start`` (every
    joint, at rest): what the executor would do with it, without an executor."""
    idx = trajectory.joint_indices
    spline = run_spline(trajectory, 0.0, start[idx], np.zeros(len(idx)))

    def configurations(times: np.ndarray) -> np.ndarray:
        rows = np.tile(start, (len(times), 1))
        rows[:, idx] = spline.sample_many(times)[0]
        return rows

    return check_path(tracker, configurations, spline.end_time, period)
