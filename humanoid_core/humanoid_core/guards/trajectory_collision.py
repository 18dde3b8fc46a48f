"""Self-collision along a trajectory: the path the executor will follow, checked densely.

Used by the command guard (a trajectory goal or ``joint_trajectory`` is refused before
any motion) and by the checker node's ``check_trajectory_self_collision`` service. The
path is the executor's own (:func:`~humanoid_core.loop.trajectory_executor.run_spline` /
:meth:`~humanoid_core.loop.trajectory_executor.PlannedTrajectory.configurations`), sampled
every ``period`` seconds; the check clears the path between the samples too
(:meth:`~humanoid_description.collision.CollisionTracker.first_violation_along`).

The work is bounded: a path needing more than ``max_samples`` samples is refused before
any is taken, and the samples are computed and checked ``CHUNK`` at a time, so that the
memory a check needs does not grow with the path (every sample at once cost about 2 kB:
gigabytes for a path of hours); between chunks the check asks its caller whether to go
on (a goal canceled or replaced while its path is being checked).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_core.loop import (
    CheckInterruptedError,
    CommandRejectedError,
    ErrorCode,
    Spline,
    ValidatedTrajectory,
    run_spline,
)
from humanoid_description import CollisionTracker, PairDistance


@dataclass(frozen=True)
class PathCollision:
    """Where a path first brings two links within the safety distance."""

    time: float  # s from the trajectory's start
    pair: PairDistance
    positions: np.ndarray  # every joint there (canonical order)
    #: False: the pair is within the safety distance at ``time``; True: it is farther there,
    #: but the joints move enough within the finest sampling to close the gap (not proven clear)
    unproven: bool = False


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
        if hit.unproven:
            return (f"self-collision not excluded: the path brings {hit.pair.link_a} and {hit.pair.link_b} "
                    f"to {hit.pair.distance * 1000:.1f} mm at t = {hit.time:.3f} s and may come closer between "
                    f"samples {FINEST_PERIOD * 1000:g} ms apart (safety distance {safety_distance * 1000:g} mm); "
                    f"where {values}")
        return (f"self-collision: the path brings {hit.pair.link_a} and {hit.pair.link_b} "
                f"{hit.pair.distance * 1000:.1f} mm apart (safety distance {safety_distance * 1000:g} mm) at "
                f"t = {hit.time:.3f} s, where {values}")


def sample_times(duration: float, period: float) -> np.ndarray:
    """Times from 0 to ``duration`` every ``period``, the end included."""
    return _chunk_times(duration, period, 0, _intervals(duration, period))


def _intervals(duration: float, period: float) -> int:
    """How many samples a path is cut into (the end sample not counted): as ``np.arange``."""
    return max(0, math.ceil(duration / period))


def _chunk_times(duration: float, period: float, first: int, last: int) -> np.ndarray:
    """The sample times ``first`` to ``last`` (included) of :func:`sample_times`."""
    intervals = _intervals(duration, period)
    return np.append(np.arange(first, last) * period, duration if last >= intervals else last * period)


#: s: the finest sampling :func:`check_path` refines to (a joint at its 5.3 rad/s limit moves
#: 1.3 mrad in it: pairs a few millimetres apart are told from touching ones).
FINEST_PERIOD = 0.00025
#: Each interval refined is cut into this many (none shorter than ``FINEST_PERIOD``).
REFINEMENT = 4
#: Intervals computed and checked at a time (consecutive chunks share a sample): four of the
#: tracker's windows, about 15 MB of samples; as fast as the whole path at once (measured).
CHUNK = 4 * CollisionTracker.PATH_WINDOW - 1


def check_path(tracker: CollisionTracker, configurations: Callable[[np.ndarray], np.ndarray], duration: float,
               period: float, max_samples: int | None = None,
               stop: Callable[[], bool] | None = None) -> PathCheck:
    """Check the path ``configurations(times)`` (times from its start, rows of every joint).

    Between two samples the check can only bound how close a pair comes (by how far the
    joints move): a pair clear at a sample but nearer than that bound (the feet of a
    walking robot, a few millimetres apart, at the joints' top speed) is not proven clear
    there. Only there is the path sampled again: the intervals next to such samples, four
    times as densely (again where needed, down to ``FINEST_PERIOD``). Only a pair within
    the safety distance at a sample, or still unproven at the finest sampling, is a
    collision; the first one in time is reported.

    A path of more than ``max_samples`` samples (``duration / period``) is refused
    (:class:`CommandRejectedError`, INVALID_GOAL); ``stop`` is asked before each chunk of
    samples, and when it returns True the check ends with :class:`CheckInterruptedError`."""
    refuse_long_path(duration, period, max_samples)
    intervals = _intervals(duration, period)
    refinement = _PathRefinement(tracker, configurations, intervals + 1)
    for first in range(0, max(intervals, 1), CHUNK):
        if stop is not None and stop():
            raise CheckInterruptedError(f"stopped at t = {first * period:.3f} s of the {duration:.3f} s path")
        times = _chunk_times(duration, period, first, min(first + CHUNK, intervals))
        hit = refinement.first_collision(times, configurations(times))
        if hit is not None:
            return PathCheck(hit, refinement.samples, duration)
    return PathCheck(None, refinement.samples, duration)


def refuse_long_path(duration: float, period: float, max_samples: int | None) -> None:
    """:class:`CommandRejectedError` (INVALID_GOAL) for a path that needs more than
    ``max_samples`` samples every ``period`` (None: no bound)."""
    needed = duration / period
    if max_samples is not None and needed > max_samples * (1.0 + 1e-9):  # a rounding error is no sample
        raise CommandRejectedError(
            ErrorCode.INVALID_GOAL,
            f"checking the {duration:.4g} s path for self-collision every {period:g} s takes "
            f"{math.ceil(needed - 1e-9)} samples, more than max_trajectory_samples = {max_samples}: split the "
            "trajectory (or raise the parameter)")


#: Two splines share a segment when its end points are at the same time within ``SAME_TIME``
#: (s: above the rounding of a robot time of 1.8e9 s, 2.4e-7 s) and have the same values
#: within ``SAME_VALUE`` (rad, rad/s, rad/s^2): what the two segments then differ by moves no
#: link by as much as a micrometre.
SAME_TIME = 1e-6
SAME_VALUE = 1e-9


def shared_segments(new: Spline, old: Spline) -> np.ndarray:
    """For each segment of ``new`` (between consecutive points), whether ``old`` has the same
    one: the same interpolation law between points at the same times with the same positions,
    velocities and accelerations, so the same path there (every law here is piecewise: a
    segment depends on its two end points only)."""
    shared = np.zeros(max(len(new.times) - 1, 0), dtype=bool)
    if (len(new.times) < 2 or len(old.times) < 2 or new.effective_law is not old.effective_law
            or new.positions.shape[1] != old.positions.shape[1]):
        return shared
    at = np.minimum(np.searchsorted(old.times, new.times - SAME_TIME), len(old.times) - 1)
    same = np.abs(old.times[at] - new.times) <= SAME_TIME
    for mine, theirs in ((new.positions, old.positions), (new.velocities, old.velocities),
                         (new.accelerations, old.accelerations)):
        if (mine is None) != (theirs is None):
            return shared
        if mine is not None:
            same &= np.all(np.abs(theirs[at] - mine) <= SAME_VALUE, axis=1)
    return same[:-1] & same[1:] & (at[1:] == at[:-1] + 1)


@dataclass
class _PathRefinement:
    """One :func:`check_path`: the local refinement, and the samples taken so far."""

    tracker: CollisionTracker
    configurations: Callable[[np.ndarray], np.ndarray]
    samples: int

    def first_collision(self, times: np.ndarray, path: np.ndarray) -> PathCollision | None:
        """The first collision along the samples ``path`` at ``times``, between them too (the
        path beyond the first and last sample being proven by their caller, or none)."""
        unproven: list[tuple[int, PairDistance]] = []
        found = self.tracker.first_violation_along(path, unproven=unproven)
        # the path is clear up to the sample found (or to the end) but around the unproven samples
        for stretch, (index, pair) in self._stretches(unproven, len(times)):
            finer = self._refined(times[stretch], path[stretch])
            if finer is None:  # the finest sampling already: unproven is a collision
                return PathCollision(float(times[index]), pair, path[index].copy(),
                                     unproven=pair.distance > self.tracker.safety_distance)
            hit = self.first_collision(*finer)
            if hit is not None:
                return hit
        if found is None:
            return None
        index, pair = found
        return PathCollision(float(times[index]), pair, path[index].copy())

    @staticmethod
    def _stretches(unproven: list[tuple[int, PairDistance]], samples: int,
                   ) -> list[tuple[slice, tuple[int, PairDistance]]]:
        """The stretches to sample again, in order: each from the sample before an unproven
        one to the sample after it, overlapping ones merged; with the first unproven sample
        of each (and a pair found there)."""
        stretches: list[tuple[slice, tuple[int, PairDistance]]] = []
        for index, pair in unproven:  # in the order of the samples
            begin, end = max(0, index - 1), min(samples, index + 2)
            if stretches and begin < stretches[-1][0].stop:
                stretches[-1] = (slice(stretches[-1][0].start, end), stretches[-1][1])
            else:
                stretches.append((slice(begin, end), (index, pair)))
        return stretches

    def _refined(self, times: np.ndarray, path: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The samples ``path`` at ``times`` with each interval cut into ``REFINEMENT``, none
        shorter than ``FINEST_PERIOD``: the times and the configurations (the given ones
        kept, the new ones computed); None when no interval can be cut (the sampling is the
        finest there already)."""
        counts = np.minimum(REFINEMENT, np.floor(np.diff(times) / FINEST_PERIOD + 1e-6)).astype(int)
        np.maximum(counts, 1, out=counts)
        if np.all(counts == 1):
            return None
        # each interval's share of the new times: its start, then the cuts
        fractions = np.concatenate([np.arange(count) / count for count in counts])
        starts = np.repeat(times[:-1], counts)
        fine = np.append(starts + np.repeat(np.diff(times), counts) * fractions, times[-1])
        given = np.append(np.cumsum(np.concatenate([[0], counts]))[:-1], len(fine) - 1)  # where the old ones go
        rows = np.empty((len(fine), path.shape[1]))
        rows[given] = path
        new = np.ones(len(fine), dtype=bool)
        new[given] = False
        rows[new] = self.configurations(fine[new])
        self.samples += int(np.count_nonzero(new))
        return fine, rows


def check_trajectory(tracker: CollisionTracker, trajectory: ValidatedTrajectory, start: np.ndarray,
                     period: float, max_samples: int | None = None) -> PathCheck:
    """Check the path a run of ``trajectory`` follows from the set-point ``start`` (every
    joint, at rest): what the executor would do with it, without an executor (``period``
    and ``max_samples``: as :func:`check_path`)."""
    idx = trajectory.joint_indices
    spline = run_spline(trajectory, 0.0, start[idx], np.zeros(len(idx)))

    def configurations(times: np.ndarray) -> np.ndarray:
        rows = np.tile(start, (len(times), 1))
        rows[:, idx] = spline.sample_many(times)[0]
        return rows

    return check_path(tracker, configurations, spline.end_time, period, max_samples)
