"""The trajectory executor: turns accepted commands into one set-point per control cycle.

It holds the commanded position of every joint, runs at most one trajectory at a
time (a newer trajectory, goal or streaming command preempts it), samples it with
the interpolation law its data call for, checks path and goal tolerances, and
finishes each run with an error code and a message. It is driven by the control
loop (``update``) and commanded from ROS callbacks (``run``, ``stream``, ``cancel``),
which may live in different threads: every public method takes the lock.

Time is the driver's clock (simulated time in simulation). A run starts at
``max(header stamp, now)``; when its first point is later than the start, the
current command is prepended so the robot moves there smoothly.
"""

from __future__ import annotations

import enum
import math
import threading
from dataclasses import dataclass, field

import numpy as np

from humanoid_control.driver import JointCommand, JointState
from humanoid_control.interpolation import Law, Spline
from humanoid_control.validation import ErrorCode, ValidatedSetpoint, ValidatedTrajectory


class RunState(enum.Enum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    PREEMPTED = "preempted"
    CANCELED = "canceled"


@dataclass(frozen=True)
class Tolerances:
    """Per trajectory joint (rad); ``inf`` means not checked. ``goal_time`` in seconds."""

    path: np.ndarray
    goal: np.ndarray
    goal_time: float


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
    spline: Spline | None = None
    start: float = math.nan
    state: RunState = RunState.PENDING
    code: ErrorCode = ErrorCode.SUCCESSFUL
    message: str = ""
    feedback: Feedback | None = None
    done: threading.Event = field(default_factory=threading.Event)
    stale_since: float | None = None

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.trajectory.joint_names

    @property
    def end(self) -> float:
        return self.start + float(self.trajectory.times[-1])

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

    # -- commands (ROS callbacks) ------------------------------------------------------
    def hold(self, positions: np.ndarray) -> None:
        """Hold these positions (bring-up, reset); ends any run as preempted."""
        with self._lock:
            self._preempt("the robot was reset")
            self._command = np.array(positions, dtype=float)
            self._velocity[:] = 0.0
            self._last = None

    def run(self, trajectory: ValidatedTrajectory, tolerances: Tolerances, now: float) -> TrajectoryRun:
        """Start executing ``trajectory``; any running one is preempted."""
        with self._lock:
            self._preempt("preempted by a newer trajectory")
            start = now if trajectory.start_time is None else max(trajectory.start_time, now)
            run = TrajectoryRun(trajectory, tolerances, start=start, state=RunState.RUNNING)
            run.spline = self._spline(trajectory, start)
            self._run = run
            return run

    def stream(self, setpoint: ValidatedSetpoint) -> None:
        """Apply a streaming set-point; a running trajectory is preempted."""
        with self._lock:
            self._preempt("preempted by a streaming command on joint_commands")
            self._command[setpoint.joint_indices] = setpoint.positions
            self._velocity[setpoint.joint_indices] = (
                0.0 if setpoint.velocities is None else setpoint.velocities)
            self._last = None

    def stop(self, run: TrajectoryRun | None = None, state: RunState = RunState.CANCELED,
             code: ErrorCode = ErrorCode.CANCELED, message: str = "canceled by the client") -> None:
        """Stop ``run`` (or the active run) where it is: the joints hold their current set-point."""
        with self._lock:
            if self._run is not None and (run is None or run is self._run):
                self._velocity[:] = 0.0
                self._last = None
                self._run._finish(state, code, message)
                self._run = None
            elif run is not None:
                run._finish(state, code, message)

    @property
    def active(self) -> TrajectoryRun | None:
        return self._run

    # -- control loop -----------------------------------------------------------------
    def update(self, state: JointState) -> JointCommand:
        """The set-point for this control cycle; also advances and checks the active run.

        While nothing changes (no run, no new command) the same object is returned, so a
        driver can skip re-sending it."""
        with self._lock:
            run = self._run
            self._adopt_revived(state, run)
            if run is not None:
                self._advance(run, state)
            elif self._last is not None:
                return self._last
            self._last = JointCommand(position=self._command.copy(), velocity=self._velocity.copy())
            return self._last

    def _adopt_revived(self, state: JointState, run: TrajectoryRun | None) -> None:
        """A joint read again after being stale (a servo that answers again, or one missing at
        start-up) holds where it is measured, unless a running trajectory drives it: its old
        set-point may be a placeholder or a point of an aborted path, and must not be chased."""
        revived = state.valid & ~self._valid
        self._valid = state.valid.copy()
        if run is not None:
            revived[run.trajectory.joint_indices] = False
        if np.any(revived):
            self._command[revived] = state.position[revived]
            self._velocity[revived] = 0.0
            self._last = None

    def _advance(self, run: TrajectoryRun, state: JointState) -> None:
        idx = run.trajectory.joint_indices
        now = state.stamp
        assert run.spline is not None
        position, velocity, acceleration = run.spline.sample(now)
        self._command[idx] = position
        self._velocity[idx] = velocity
        actual = state.position[idx]
        run.feedback = Feedback(now, position, velocity, acceleration, actual, state.velocity[idx],
                                max(0.0, now - run.start))
        error = np.abs(position - actual)
        names = run.joint_names

        stale = ~state.valid[idx]
        if np.any(stale):
            run.stale_since = now if run.stale_since is None else run.stale_since
            if now - run.stale_since >= self.STALE_TIMEOUT:
                joint = names[int(np.flatnonzero(stale)[0])]
                self._abort(run, state, ErrorCode.DRIVER_FAILURE,
                            f"joint {joint} has not been read for {now - run.stale_since:.2f} s (its servo "
                            "stopped answering); holding the other joints")
            return
        run.stale_since = None

        if now < run.end:
            over = error > run.tolerances.path
            if now >= run.start and np.any(over):
                k = int(np.argmax(np.where(over, error - run.tolerances.path, -np.inf)))
                self._abort(run, state, ErrorCode.PATH_TOLERANCE_VIOLATED,
                            f"joint {names[k]} is {error[k]:.4f} rad from its desired position "
                            f"(path tolerance {run.tolerances.path[k]:.4f} rad) at "
                            f"t = {now - run.start:.3f} s")
            return
        self._velocity[idx] = 0.0
        over = error > run.tolerances.goal
        if not np.any(over):
            run._finish(RunState.SUCCEEDED, ErrorCode.SUCCESSFUL, "")
            self._run = None
        elif now > run.end + run.tolerances.goal_time:
            k = int(np.argmax(np.where(over, error - run.tolerances.goal, -np.inf)))
            self._abort(run, state, ErrorCode.GOAL_TOLERANCE_VIOLATED,
                        f"joint {names[k]} ended {error[k]:.4f} rad from its goal (goal tolerance "
                        f"{run.tolerances.goal[k]:.4f} rad, {run.tolerances.goal_time:.3f} s after the end)")

    def _abort(self, run: TrajectoryRun, state: JointState, code: ErrorCode, message: str) -> None:
        """End the run and hold the joints where they are measured (no jump back to the path)."""
        idx = run.trajectory.joint_indices
        valid = state.valid[idx]
        self._command[idx[valid]] = state.position[idx[valid]]
        self._velocity[idx] = 0.0
        run._finish(RunState.ABORTED, code, message)
        self._run = None
        self._last = None

    def _preempt(self, message: str) -> None:
        if self._run is not None:
            self._run._finish(RunState.PREEMPTED, ErrorCode.PREEMPTED, message)
            self._run = None

    def _spline(self, trajectory: ValidatedTrajectory, start: float) -> Spline:
        """Absolute-time spline for the run, starting from the current set-point."""
        idx = trajectory.joint_indices
        times = start + trajectory.times
        positions, velocities, accelerations = trajectory.positions, trajectory.velocities, trajectory.accelerations
        if trajectory.times[0] > 0.0:
            times = np.concatenate([[start], times])
            positions = np.vstack([self._command[idx], positions])
            if velocities is not None:
                velocities = np.vstack([self._velocity[idx], velocities])
            if accelerations is not None:
                accelerations = np.vstack([np.zeros(len(idx)), accelerations])
        law = Law.QUINTIC if accelerations is not None else Law.CUBIC if velocities is not None else Law.LINEAR
        return Spline.build(times, positions, velocities, accelerations, law)
