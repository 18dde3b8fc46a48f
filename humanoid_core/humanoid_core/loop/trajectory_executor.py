"""The trajectory executor: turns accepted commands into one set-point per control cycle.

It holds the commanded position of every joint, runs at most one trajectory at a
time (a newer trajectory, goal or streaming command preempts it), samples it with
the interpolation law its data call for, checks path and goal tolerances, and
finishes each run with an error code and a message. It is driven by the control
loop (``update``) and commanded from callback threads (``plan``, ``start``,
``stream``, ``stop``): every public method takes the lock, and nothing proportional to
a trajectory's size is done under it (the spline is built by :meth:`plan`, outside).

Time is the driver's clock (simulated time in simulation). A run starts at
``max(header stamp, now)``; when its first point is later than the start, the
set-point at the start is prepended so the robot moves there smoothly
(:func:`run_spline`: the one place that builds the path a run follows, so that a
command guard checks exactly the path the executor will sample). A run that starts
later than it is accepted replaces the one running from its start, as ROS's
joint_trajectory_controller does: until then the preempted run's path is followed (a
controller sending its set-points ahead, such as the walk controller, is thus
immune to the transport's delays up to its lead).

Readings of joints that are not valid (stale, or NaN) are unknown: they never enter a
tolerance check or a set-point.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import threading
from dataclasses import dataclass, field

import numpy as np

from humanoid_core.loop.driver import JointCommand, JointState
from humanoid_core.loop.interpolation import Law, Sample, Spline
from humanoid_core.loop.validation import (
    ErrorCode,
    ValidatedSetpoint,
    ValidatedTrajectory,
    points_still_ahead,
)


class RunState(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    PREEMPTED = "preempted"
    CANCELED = "canceled"


@dataclass(frozen=True)
class Tolerances:
    """Per trajectory joint; ``inf`` means not checked. Positions in rad, velocities in
    rad/s, ``goal_time`` in seconds."""

    path: np.ndarray
    goal: np.ndarray
    goal_time: float
    path_velocity: np.ndarray | None = None
    goal_velocity: np.ndarray | None = None

    @classmethod
    def unchecked(cls, joints: int, goal_time: float = math.inf) -> Tolerances:
        """Nothing checked (every tolerance infinite)."""
        return cls(np.full(joints, math.inf), np.full(joints, math.inf), goal_time)


@dataclass(frozen=True)
class PlannedTrajectory:
    """A validated trajectory turned into the exact path a run will follow.

    ``spline`` covers the trajectory's joints (``trajectory.joint_indices``) on the
    driver clock, from ``start``; ``setpoint`` is every joint's set-point at ``start``
    (the joints the trajectory does not name hold it). Built by
    :meth:`TrajectoryExecutor.plan` in the caller's thread; a command guard checks it
    before :meth:`TrajectoryExecutor.start` runs it unchanged.
    """

    trajectory: ValidatedTrajectory
    start: float
    spline: Spline
    setpoint: np.ndarray
    generation: int  # the executor's command generation the plan was made from
    #: Made while every joint held still (no run, no set-point speed): the same path started
    #: later is the same motion, only later (see :meth:`TrajectoryExecutor.start`).
    from_rest: bool = False

    @property
    def may_start_later(self) -> bool:
        """Whether the same path may start later than planned: from rest and with no header
        stamp (a stamped trajectory keeps its timeline: :func:`joined_at`)."""
        return self.from_rest and self.trajectory.start_time is None

    def delayed(self, start: float) -> PlannedTrajectory:
        """This plan from rest, starting at ``start`` instead (the path unchanged, shifted in time)."""
        assert self.may_start_later, "only an unstamped plan from rest can start later unchanged"
        velocity = np.zeros(len(self.trajectory.joint_indices))
        spline = run_spline(self.trajectory, start, self.setpoint[self.trajectory.joint_indices], velocity)
        return dataclasses.replace(self, start=start, spline=spline)

    @property
    def end(self) -> float:
        return self.spline.end_time

    def configurations(self, times: np.ndarray) -> np.ndarray:
        """Every joint's set-point (rows: ``times``, columns: canonical joints) along the path."""
        rows = np.tile(self.setpoint, (len(times), 1))
        if len(times):
            rows[:, self.trajectory.joint_indices] = self.spline.sample_many(times)[0]
        return rows


class PlanOutdatedError(RuntimeError):
    """The set-points changed between :meth:`TrajectoryExecutor.plan` and ``start``
    (another command arrived): plan again."""


def run_spline(trajectory: ValidatedTrajectory, start: float, position: np.ndarray,
               velocity: np.ndarray) -> Spline:
    """The absolute-time path of a run of ``trajectory`` starting at ``start`` from the
    set-point ``position``/``velocity`` of the trajectory's joints (pure: the one
    definition of the path, used by the executor and by command guards alike)."""
    times = start + trajectory.times
    positions, velocities, accelerations = trajectory.positions, trajectory.velocities, trajectory.accelerations
    if trajectory.times[0] > 0.0:
        joints = len(trajectory.joint_indices)
        times = np.concatenate([[start], times])
        positions = np.vstack([position, positions])
        if velocities is not None:
            velocities = np.vstack([velocity, velocities])
        if accelerations is not None:
            accelerations = np.vstack([np.zeros(joints), accelerations])
    law = Law.QUINTIC if accelerations is not None else Law.CUBIC if velocities is not None else Law.LINEAR
    return Spline.build(times, positions, velocities, accelerations, law)


def joined_at(trajectory: ValidatedTrajectory, start: float) -> ValidatedTrajectory:
    """``trajectory`` as a run starting at ``start`` follows it.

    A trajectory whose header stamp has passed when its run can start keeps its timeline
    (ROS's convention: each point at stamp + time_from_start on the driver clock): the
    points already due (or due within ``LATE_JOIN_MARGIN``) are dropped and the run heads for
    the next one at its time. Shifting
    the whole trajectory instead would send a stream of overlapping trajectories (a walk)
    back along its own path by the delay, in a few milliseconds."""
    if trajectory.start_time is None or start <= trajectory.start_time:
        return trajectory
    keep = points_still_ahead(trajectory.times, trajectory.start_time, start, "start")
    times = trajectory.times - (start - trajectory.start_time)

    def kept(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[keep]

    return dataclasses.replace(trajectory, times=times[keep], positions=trajectory.positions[keep],
                               velocities=kept(trajectory.velocities),
                               accelerations=kept(trajectory.accelerations), start_time=start)


@dataclass(frozen=True)
class Feedback:
    """Desired, actual and error of the trajectory joints at ``stamp``."""

    stamp: float
    desired_position: np.ndarray
    desired_velocity: np.ndarray
    desired_acceleration: np.ndarray
    actual_position: np.ndarray
    actual_velocity: np.ndarray
    time_from_start: float

    @property
    def position_error(self) -> np.ndarray:
        return self.desired_position - self.actual_position

    @property
    def velocity_error(self) -> np.ndarray:
        return self.desired_velocity - self.actual_velocity


@dataclass
class TrajectoryRun:
    """One trajectory in execution. ``done`` is set when it finishes, for any reason."""

    trajectory: ValidatedTrajectory
    tolerances: Tolerances
    spline: Spline
    start: float
    state: RunState = RunState.PENDING
    code: ErrorCode = ErrorCode.SUCCESSFUL
    message: str = ""
    feedback: Feedback | None = None
    done: threading.Event = field(default_factory=threading.Event)
    stale_since: float | None = None
    #: The run this one preempted, followed until this one starts (itself maybe not
    #: started yet: then its own lead-in, and so on).
    lead_in: TrajectoryRun | None = None

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.trajectory.joint_names

    @property
    def end(self) -> float:
        return self.spline.end_time

    def path_at(self, t: float) -> tuple[TrajectoryRun, Sample]:
        """The run whose path the joints follow at ``t`` and its sample there: this one, or
        before its start the run it replaced (:attr:`lead_in`)."""
        run = self
        while t < run.start and run.lead_in is not None:
            run = run.lead_in
        return run, run.spline.sample(t)

    def _finish(self, state: RunState, code: ErrorCode, message: str) -> None:
        if not self.done.is_set():
            self.state, self.code, self.message = state, code, message
            self.done.set()


class TrajectoryExecutor:
    """Commanded positions of every joint, and the active trajectory run."""

    #: A joint whose reading stays stale this long aborts the run (seconds).
    STALE_TIMEOUT = 0.5

    def __init__(self, joint_names: tuple[str, ...]) -> None:
        self.joint_names = joint_names
        self._lock = threading.Lock()
        self._command = np.zeros(len(joint_names))
        self._velocity = np.zeros(len(joint_names))
        self._run: TrajectoryRun | None = None
        self._last: JointCommand | None = None  # returned again while nothing changes
        self._valid = np.ones(len(joint_names), dtype=bool)  # readings valid at the last update
        #: Bumped whenever set-points change other than by the active run's progress, so a
        #: plan made from older set-points is refused by :meth:`start`.
        self._generation = 0

    # -- commands (callback threads) ---------------------------------------------------
    def hold(self, positions: np.ndarray) -> None:
        """Hold these positions (bring-up, reset); ends any run as preempted."""
        with self._lock:
            self._preempt("the robot was reset")
            self._command = np.array(positions, dtype=float)
            self._velocity[:] = 0.0
            self._changed()

    def plan(self, trajectory: ValidatedTrajectory, now: float) -> PlannedTrajectory:
        """The path a run of ``trajectory`` accepted at ``now`` will follow (no side effect).

        The start set-point is the current one; for joints the active run drives, the
        active run's set-point at the new start (where it will have got to). A trajectory
        whose stamp is already past is joined on its timeline (:func:`joined_at`)."""
        start = now if trajectory.start_time is None else max(trajectory.start_time, now)
        trajectory = joined_at(trajectory, start)
        with self._lock:
            setpoint, velocity = self._command.copy(), self._velocity.copy()
            run, generation = self._run, self._generation
        if run is not None:
            path, (position, speed, _) = run.path_at(start)
            idx = path.trajectory.joint_indices
            setpoint[idx], velocity[idx] = position, speed
        idx = trajectory.joint_indices
        spline = run_spline(trajectory, start, setpoint[idx], velocity[idx])
        return PlannedTrajectory(trajectory, start, spline, setpoint, generation,
                                 from_rest=run is None and not np.any(velocity))

    def start(self, plan: PlannedTrajectory, tolerances: Tolerances, now: float | None = None) -> TrajectoryRun:
        """Run ``plan`` (any running trajectory is preempted); raises
        :class:`PlanOutdatedError` if the set-points changed since it was made.

        Checking a plan (a self-collision guard) takes time, during which the robot's clock
        runs on: an unstamped plan made from rest whose start has passed by ``now`` starts at ``now``,
        so that the robot is never thrown part-way into a trajectory (on a simulation running
        faster than real time, a check of a few tenths of a second skipped seconds of motion)."""
        with self._lock:
            if plan.generation != self._generation:
                raise PlanOutdatedError("the set-points changed while the trajectory was being planned")
            if now is not None and now > plan.start and plan.may_start_later:
                plan = plan.delayed(now)
            previous = self._run
            self._preempt("preempted by a newer trajectory")
            run = TrajectoryRun(plan.trajectory, tolerances, plan.spline, plan.start, state=RunState.RUNNING)
            run.lead_in = previous
            self._run = run
            self._changed()
            return run

    def run(self, trajectory: ValidatedTrajectory, tolerances: Tolerances, now: float) -> TrajectoryRun:
        """Plan and start ``trajectory`` at once (for callers with no guard between)."""
        while True:
            try:
                return self.start(self.plan(trajectory, now), tolerances)
            except PlanOutdatedError:
                continue

    def stream(self, setpoint: ValidatedSetpoint) -> None:
        """Apply a streaming set-point; a running trajectory is preempted."""
        with self._lock:
            self._preempt("preempted by a streaming command on joint_commands")
            self._command[setpoint.joint_indices] = setpoint.positions
            self._velocity[setpoint.joint_indices] = (
                0.0 if setpoint.velocities is None else setpoint.velocities)
            self._changed()

    def stop(self, run: TrajectoryRun | None = None, state: RunState = RunState.CANCELED,
             code: ErrorCode = ErrorCode.CANCELED, message: str = "canceled by the client") -> None:
        """Stop ``run`` (or the active run) where it is: the joints hold their current set-point."""
        with self._lock:
            if self._run is not None and (run is None or run is self._run):
                self._velocity[:] = 0.0
                self._run._finish(state, code, message)
                self._run = None
                self._changed()
            elif run is not None:
                run._finish(state, code, message)

    @property
    def active(self) -> TrajectoryRun | None:
        return self._run

    def setpoint(self) -> tuple[np.ndarray, np.ndarray]:
        """The current set-point (positions, velocities) of every joint, copied."""
        with self._lock:
            return self._command.copy(), self._velocity.copy()

    # -- control loop -----------------------------------------------------------------
    def substitute(self, seen: JointCommand, position: np.ndarray, code: ErrorCode, message: str) -> bool:
        """A command guard refused ``seen`` (the set-point :meth:`update` returned): hold
        ``position`` instead, at rest, and end the active run, if any, ABORTED with ``code``
        and ``message``. Nothing happens (False) when a newer command came in since ``seen``:
        the next cycle's set-point is filtered afresh."""
        with self._lock:
            if self._last is not seen:
                return False
            if self._run is not None:
                self._run._finish(RunState.ABORTED, code, message)
                self._run = None
            self._command = np.array(position, dtype=float)
            self._velocity[:] = 0.0
            self._changed()
            return True

    def update(self, state: JointState) -> JointCommand:
        """The set-point for this control cycle; also advances and checks the active run.

        While nothing changes (no run, no new command) the same object is returned, so a
        driver can skip re-sending it."""
        with self._lock:
            run = self._run
            valid = state.valid & np.isfinite(state.position)
            self._adopt_revived(state, valid, run)
            if run is not None:
                self._advance(run, state, valid)
            elif self._last is not None:
                return self._last
            self._last = JointCommand(position=self._command.copy(), velocity=self._velocity.copy())
            return self._last

    def _changed(self) -> None:
        self._generation += 1
        self._last = None

    def _adopt_revived(self, state: JointState, valid: np.ndarray, run: TrajectoryRun | None) -> None:
        """A joint read again after being stale (a servo that answers again, or one missing at
        start-up) holds where it is measured, unless a running trajectory drives it: its old
        set-point may be a placeholder or a point of an aborted path, and must not be chased."""
        previous, self._valid = self._valid, valid  # a fresh array of update()'s, never written to
        if previous.all():  # nothing was stale, so nothing is revived: the usual cycle, one numpy call
            return
        revived = valid & ~previous
        if run is not None:
            revived[run.trajectory.joint_indices] = False
        if revived.any():
            self._command[revived] = state.position[revived]
            self._velocity[revived] = 0.0
            self._changed()

    def _advance(self, run: TrajectoryRun, state: JointState, valid: np.ndarray) -> None:
        idx = run.trajectory.joint_indices
        now = state.stamp
        if run.lead_in is not None:
            if now < run.start:
                path, (position, velocity, _) = run.path_at(now)
                self._command[path.trajectory.joint_indices] = position
                self._velocity[path.trajectory.joint_indices] = velocity
                return
            run.lead_in = None  # the chain of replaced runs is let go
        position, velocity, acceleration = run.spline.sample(now)
        self._command[idx] = position
        self._velocity[idx] = velocity
        known = valid[idx]
        actual = np.where(known, state.position[idx], np.nan)
        actual_velocity = np.where(known, state.velocity[idx], np.nan)
        run.feedback = Feedback(now, position, velocity, acceleration, actual, actual_velocity,
                                max(0.0, now - run.start))
        names = run.joint_names

        if not np.all(known):
            run.stale_since = now if run.stale_since is None else run.stale_since
            if now - run.stale_since >= self.STALE_TIMEOUT:
                joint = names[int(np.flatnonzero(~known)[0])]
                self._abort(run, state, valid, ErrorCode.DRIVER_FAILURE,
                            f"joint {joint} has not been read for {now - run.stale_since:.2f} s (its servo "
                            "stopped answering); holding the other joints")
            return
        run.stale_since = None
        error = np.abs(position - actual)
        velocity_error = np.abs(velocity - actual_velocity)
        tolerances = run.tolerances

        if now < run.end:
            if now >= run.start:
                violation = (_worst(error, tolerances.path, "position", "rad")
                             or _worst(velocity_error, tolerances.path_velocity, "velocity", "rad/s"))
                if violation:
                    k, what = violation
                    self._abort(run, state, valid, ErrorCode.PATH_TOLERANCE_VIOLATED,
                                f"joint {names[k]}: {what} (path tolerance) at t = {now - run.start:.3f} s")
            return
        self._velocity[idx] = 0.0
        violation = (_worst(error, tolerances.goal, "position", "rad")
                     or _worst(np.abs(actual_velocity), tolerances.goal_velocity, "velocity", "rad/s"))
        if violation is None:
            run._finish(RunState.SUCCEEDED, ErrorCode.SUCCESSFUL, "")
            self._run = None
        elif now > run.end + tolerances.goal_time:
            k, what = violation
            self._abort(run, state, valid, ErrorCode.GOAL_TOLERANCE_VIOLATED,
                        f"joint {names[k]} ended with {what} (goal tolerance), "
                        f"{tolerances.goal_time:.3f} s after the end")

    def _abort(self, run: TrajectoryRun, state: JointState, valid: np.ndarray, code: ErrorCode,
               message: str) -> None:
        """End the run and hold the joints where they are measured (no jump back to the path)."""
        idx = run.trajectory.joint_indices
        known = idx[valid[idx]]
        self._command[known] = state.position[known]
        self._velocity[idx] = 0.0
        run._finish(RunState.ABORTED, code, message)
        self._run = None
        self._changed()

    def _preempt(self, message: str) -> None:
        if self._run is not None:
            self._run._finish(RunState.PREEMPTED, ErrorCode.PREEMPTED, message)
            self._run = None


def _worst(error: np.ndarray, tolerance: np.ndarray | None, quantity: str, unit: str) -> tuple[int, str] | None:
    """The joint whose ``error`` exceeds its tolerance the most, and a description; None if none."""
    if tolerance is None:
        return None
    over = error > tolerance
    if not np.any(over):
        return None
    k = int(np.argmax(np.where(over, error - tolerance, -np.inf)))
    return k, f"{quantity} error {error[k]:.4f} {unit} exceeds {tolerance[k]:.4f} {unit}"
