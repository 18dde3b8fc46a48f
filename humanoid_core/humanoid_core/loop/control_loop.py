"""The control loop of the robot interface, free of ROS: driver, executor, validation, guard.

One loop per robot driver. Its thread runs the cycle

    driver.sync(period)                 # sim: step the physics; hw: wait for the deadline
    state = driver.read()
    command = executor.update(state)    # the active trajectory's set-point, or the held one
    driver.write(guard.filter_setpoint(command, state))   # a Veto: the executor holds it
    hooks(state)                        # the front publishes, the simulator its clock ...

and meters its own rate. Commands arrive from other threads (the ROS front's callbacks)
through :meth:`ControlLoop.accept_trajectory` and :meth:`ControlLoop.stream`, which do
all per-command work (validation, the spline, the guard's check) in the caller's thread:
the control thread only samples. Nothing here imports ROS, so the loop is tested
in-process with any driver and a fake clock (``humanoid_core/test/test_control_loop.py``).

Torque off (:meth:`ControlLoop.set_torque`, the robot interface's ``torque`` service, the fall
manager's ``protect: limp``): the control thread releases every joint through the driver at
its next cycle and, while they are released, writes no set-point (the robot goes limp; the
state is still read and published). The next command accepted (a trajectory, streaming
set-points, a hold, or torque on) takes them again: its set-points start from the positions
measured at that moment, are written, and only then is the torque switched on, so that no
joint jumps to a set-point from before the release.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from humanoid_core.loop.command_guard import CheckInterruptedError, CommandGuard, Veto
from humanoid_core.loop.driver import DriverError, JointCommand, JointState, RobotDriver, TorqueUnsupportedError
from humanoid_core.loop.interface_parameters import InterfaceParameters
from humanoid_core.loop.lockstep import LockstepGate
from humanoid_core.loop.trajectory_executor import (
    PlanOutdatedError,
    RunState,
    Tolerances,
    TrajectoryExecutor,
    TrajectoryRun,
)
from humanoid_core.loop.validation import (
    CommandRejectedError,
    CommandValidator,
    ErrorCode,
    PointData,
    ValidatedSetpoint,
    ValidatedTrajectory,
)
from humanoid_description import JointTable

CycleHook = Callable[[JointState], None]

#: How often a trajectory is planned again when other commands keep changing the set-points.
PLAN_ATTEMPTS = 10
#: s (wall): how long :meth:`ControlLoop.set_torque` waits for the control thread to carry it out.
TORQUE_TIMEOUT = 10.0


class GilTurns:
    """Gives the process's other Python threads a turn while the loop runs flat out.

    A simulation running as fast as it can (``real_time_factor`` 0, or a machine too slow
    for real time) never blocks between cycles. A thread waiting for the GIL asks its
    holder to drop it after one switch interval (5 ms), but only if the GIL did not change
    hands meanwhile: a loop that releases and retakes it in short C calls within every
    interval starves the others. Measured with a loop and an executor that did so: the
    action thread of the simulated robot waited up to 4.5 s for a 0.1 s feedback period,
    so a cancel came seconds of robot time late. A loop whose thread was on the
    CPU at least ``busy_share`` of the last ``period`` sleeps ``turn`` seconds: long
    enough for a thread woken by the GIL's release to take it. A loop that blocks anyway
    (a paced simulation, a serial bus) is left alone.

    The period is the interface's ``gil_turn_period`` (default 50 ms), not the switch
    interval: a turn costs the loop about 0.2 ms of sleep on these VMs plus caches the
    physics must refill, 6-7 % of ``bench sim`` at one turn per 5 ms, while the loop
    (no GIL release in PyBullet nor in rclpy's publish) lets CPython's own switching hand
    the GIL over within 6-13 ms (measured, waiter on a 20 ms Event.wait, with and without
    every topic subscribed); the turns bound what a GIL-releasing call in the loop could do
    (docs/ros_and_dds.md)."""

    def __init__(self, period: float | None = None, turn: float = 1e-4, busy_share: float = 0.5) -> None:
        self.period = sys.getswitchinterval() if period is None else period
        self.turn, self.busy_share = turn, busy_share
        self._wall, self._cpu = time.monotonic(), time.thread_time()

    def give(self) -> bool:
        """Call from the loop's thread once per cycle; True when it slept to give a turn."""
        wall = time.monotonic()
        if wall - self._wall < self.period:
            return False
        busy = time.thread_time() - self._cpu >= self.busy_share * (wall - self._wall)
        if busy:
            time.sleep(self.turn)
        self._wall, self._cpu = time.monotonic(), time.thread_time()
        return busy


@dataclass(frozen=True)
class ToleranceSpec:
    """One joint's tolerance as a client gives it (control_msgs' JointTolerance):
    0 = the default, < 0 = not checked, > 0 = the tolerance (rad, rad/s, rad/s²)."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass(frozen=True)
class TrajectoryRequest:
    """A trajectory as received (topic or action goal), before validation.

    ``start_time`` is on the driver's clock (None: start now); tolerances follow
    :class:`ToleranceSpec`, ``goal_time_tolerance`` 0 = the default."""

    joint_names: Sequence[str]
    points: Sequence[PointData]
    start_time: float | None = None
    path_tolerance: Sequence[ToleranceSpec] = ()
    goal_tolerance: Sequence[ToleranceSpec] = ()
    goal_time_tolerance: float = 0.0


@dataclass
class TorqueRequest:
    """Torque on or off for every joint, carried out by the control thread at its next cycle
    (:meth:`ControlLoop.request_torque`): ``done`` is set then, with ``error`` (None: done),
    ``message`` (what was done) and ``stamp`` (the driver-clock time of that cycle's reading)."""

    enabled: bool
    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None
    message: str = ""
    stamp: float = math.nan


@dataclass(frozen=True)
class LoopStatus:
    """Health of the loop, for diagnostics."""

    cycles: int
    commands_rejected: int
    driver_errors: int
    error: str  # the last cycle's driver error, "" when the last cycle went through
    loop_rate_hz: float  # cycles per wall-clock second (NaN until measured)
    real_time_factor: float  # driver-clock seconds per wall-clock second
    limp: bool = False  # torque off: the joints released, no set-point written (until the next command)


class ControlLoop:
    """The real-time part of the robot interface, for one driver."""

    def __init__(self, driver: RobotDriver, joints: JointTable, params: InterfaceParameters | None = None,
                 guard: CommandGuard | None = None, wall_clock: Callable[[], float] = time.monotonic,
                 on_exception: Callable[[BaseException], None] | None = None) -> None:
        """``wall_clock`` meters the loop rate (monotonic seconds); ``on_exception`` is called
        with any exception other than a :class:`DriverError` that ends the loop thread
        (default: re-raised)."""
        self.driver = driver
        self.joints = joints
        self.params = params or InterfaceParameters()
        self.names = joints.names
        if tuple(driver.joint_names) != tuple(self.names):
            raise ValueError(f"driver joints {driver.joint_names} differ from the model's {self.names}")
        self.guard = guard or CommandGuard()
        self.validator = CommandValidator(joints, start_tolerance=self.params.start_tolerance,
                                          max_points=self.params.max_trajectory_points,
                                          max_duration=self.params.max_trajectory_duration)
        self.trajectory_executor = TrajectoryExecutor(self.names)
        self.period = 1.0 / self.params.control_rate
        self._wall_clock = wall_clock
        self._on_exception = on_exception
        self._hooks: list[CycleHook] = []
        #: Set for a lockstep simulation: the loop waits at each published state for its answers.
        self.gate: LockstepGate | None = None
        #: Publishes the state the loop waits at again (set by the state's publisher).
        self.resend_state: Callable[[], None] = lambda: None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._state: JointState | None = None
        #: The set-points the latest cycle wrote to the driver (after the guard), for the hooks:
        #: what the robot executed, whatever the command's source (published as joint_setpoints).
        self.written: JointCommand | None = None
        self._cycles = self._rejected = self._errors = 0
        self._error = ""
        self._rate_window: tuple[float, float, int] | None = None  # wall, driver time, cycles
        self._rates = (math.nan, math.nan)
        #: Trajectories that passed validation so far: the newest is the one to start, and
        #: an older one still being checked gives way (:meth:`accept_trajectory`).
        self._newest = 0
        self._numbering = threading.Lock()
        #: Torque requests not yet carried out by the control thread, and the torque's state.
        self._torque_requests: list[TorqueRequest] = []
        self._torque_lock = threading.Lock()
        self._limp = False
        self._take_back = False  # a command came in while limp: the next cycle takes the joints again

    # -- life cycle ---------------------------------------------------------------------
    def add_cycle_hook(self, hook: CycleHook) -> None:
        """Call ``hook(state)`` once per cycle after the write, in the control thread (keep it cheap)."""
        self._hooks.append(hook)

    def start(self) -> JointState:
        """Bring the driver up and hold its measured positions (the loop thread is not started)."""
        state = self.driver.start()
        self._state = state
        self.trajectory_executor.hold(state.position)
        return state

    def run_in_thread(self) -> None:
        """Run cycles in a thread of their own until :meth:`stop`."""
        self._thread = threading.Thread(target=self._run, name="control-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop, end any run (aborted), release the robot (hold or limp, as configured)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self.trajectory_executor.stop(state=RunState.ABORTED, code=ErrorCode.DRIVER_FAILURE,
                                      message="the robot interface is shutting down")
        self.driver.close()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def hold(self, positions: np.ndarray) -> None:
        """Make every joint hold ``positions``, ending any run (a reset: the positions the robot
        is set to, given before it is, so that no cycle drives it back to the old set-points;
        reading them back instead could return the reading of a cycle that ran meanwhile). Released
        joints (:attr:`limp`) are taken again."""
        self.trajectory_executor.hold(positions)
        if self._limp:
            self._take_back = True

    @property
    def state(self) -> JointState | None:
        """The latest reading (replaced whole each cycle, so reading it needs no lock)."""
        return self._state

    # -- the cycle ------------------------------------------------------------------------
    def cycle(self) -> JointState:
        """One control cycle; raises :class:`DriverError` when the driver fails."""
        self.driver.sync(self.period)
        return self._act()

    def _act(self) -> JointState:
        """The cycle after the driver's sync: read, torque requests, command, write, hooks."""
        state = self.driver.read()
        self._state = state
        requests = self._take_torque_requests()
        try:
            for request in requests:
                self._torque(request, state)
            if self._limp and not self._take_back:  # released: no set-point
                self.written = None
            else:
                command = self.trajectory_executor.update(state)
                decision = self.guard.filter_setpoint(command, state)
                if isinstance(decision, Veto):
                    self.trajectory_executor.substitute(command, decision.setpoint.position, decision.code,
                                                        decision.message)
                    decision = decision.setpoint
                self.driver.write(decision)
                self.written = decision
                if self._limp:  # the set-points at the measured positions are written: torque on
                    self.driver.set_torque(True)
                    self._limp = self._take_back = False
        except DriverError as error:
            for request in requests:
                request.error = request.error or str(error)
                request.done.set()
            raise
        for request in requests:
            request.done.set()
        for hook in self._hooks:
            hook(state)
        self._cycles += 1
        self._meter(state.stamp)
        self._error = ""
        return state

    # -- torque (any thread; carried out by the control thread) ----------------------------
    @property
    def limp(self) -> bool:
        """True while every joint is released (torque off): no set-point is written."""
        return self._limp

    def request_torque(self, enabled: bool) -> TorqueRequest:
        """Ask the control thread to switch every joint's torque off (``False``: the robot goes
        limp) or on again (``True``: the joints hold where they are measured), at its next
        cycle; raises :class:`TorqueUnsupportedError` at once where the driver cannot."""
        if not self.driver.releases_torque:
            raise TorqueUnsupportedError(f"{type(self.driver).__name__} has no torque-off command: its joints "
                                         "cannot be released while it runs")
        request = TorqueRequest(enabled)
        with self._torque_lock:
            self._torque_requests.append(request)
        return request

    def set_torque(self, enabled: bool, timeout: float = TORQUE_TIMEOUT) -> tuple[str, float]:
        """:meth:`request_torque` and wait until the control thread carried it out; returns what
        was done and the driver-clock time of the cycle that did it; raises :class:`DriverError`
        with the reason when it could not be."""
        request = self.request_torque(enabled)
        if not request.done.wait(timeout):
            raise DriverError(f"torque {'on' if enabled else 'off'}: the control loop did not carry it out "
                              f"within {timeout:g} s")
        if request.error is not None:
            raise DriverError(f"torque {'on' if enabled else 'off'} failed: {request.error}")
        return request.message, request.stamp

    def _take_torque_requests(self) -> list[TorqueRequest]:
        if not self._torque_requests:  # the usual cycle: no lock
            return []
        with self._torque_lock:
            requests, self._torque_requests = self._torque_requests, []
        return requests

    def _torque(self, request: TorqueRequest, state: JointState) -> None:
        """Carry out one torque request in the control thread, at the cycle of ``state``."""
        request.stamp = state.stamp
        if not request.enabled:
            if self._limp and not self._take_back:
                request.message = "torque already off: the joints are released"
                return
            self.trajectory_executor.stop(state=RunState.PREEMPTED, code=ErrorCode.PREEMPTED,
                                          message="the joints were released (torque off)")
            self.driver.set_torque(False)
            self._limp, self._take_back = True, False
            request.message = "torque off: every joint released"
        elif not self._limp:
            request.message = "torque already on"
        else:
            self._take_back_at(state)
            request.message = "torque on: every joint holds where it was measured"

    def _take_back_at(self, state: JointState | None) -> None:
        """Torque on while limp: hold the measured positions; the next cycle writes them, then
        switches the torque on."""
        self._from_measured(state)
        self._take_back = True

    def _from_measured(self, state: JointState | None) -> None:
        """While limp, before a command reaches the executor: its set-points start from the
        measured positions (the executor still has those from before the release)."""
        if self._limp and not self._take_back:
            setpoint, _ = self.trajectory_executor.setpoint()
            self.trajectory_executor.hold(known_positions(state, setpoint))

    def _taken(self) -> None:
        """A command was accepted: released joints are taken again at the next cycle."""
        if self._limp:
            self._take_back = True

    def _run(self) -> None:
        turns = GilTurns(period=self.params.gil_turn_period)
        stopping = self._stop.is_set
        while not stopping():
            turns.give()
            try:
                # The step towards the next state drives the command written at the last one,
                # whatever the answers to it: it runs while the participants work on that state,
                # and its result is read only once they all answered (:meth:`command_time`).
                self.driver.sync(self.period)
                if self.gate is not None:
                    self.gate.wait(stopping, self.resend_state)
                self._act()
            except DriverError as error:
                self._errors += 1
                self._error = str(error)
                self._stop.wait(self.period)
            except BaseException as error:  # handed to the owner, or re-raised
                if self._on_exception is None:
                    raise
                self._on_exception(error)
                return

    def _meter(self, stamp: float) -> None:
        wall = self._wall_clock()
        if self._rate_window is None:
            self._rate_window = (wall, stamp, self._cycles)
            return
        wall0, stamp0, cycles0 = self._rate_window
        if wall - wall0 >= 1.0:
            self._rates = ((self._cycles - cycles0) / (wall - wall0), (stamp - stamp0) / (wall - wall0))
            self._rate_window = (wall, stamp, self._cycles)

    def status(self) -> LoopStatus:
        return LoopStatus(self._cycles, self._rejected, self._errors, self._error, *self._rates, limp=self._limp)

    # -- commands (callback threads) ------------------------------------------------------
    def count_rejection(self) -> None:
        """Count a command refused before it reached the loop (e.g. malformed by the front)."""
        self._rejected += 1

    def accept_trajectory(self, request: TrajectoryRequest,
                          canceled: Callable[[], bool] = lambda: False) -> TrajectoryRun:
        """Validate, plan, check with the guard and start a trajectory; raises
        :class:`CommandRejectedError` (counted) when any step refuses it. Runs in the
        caller's thread; the running trajectory, if any, is preempted only on success
        (see :meth:`start_trajectory`)."""
        try:
            trajectory = self.validator.trajectory(request.joint_names, request.points, self.start_positions(),
                                                   start_time=request.start_time, now=self.command_time())
            tolerances = trajectory_tolerances(self.params, trajectory.joint_names, request.path_tolerance,
                                               request.goal_tolerance, request.goal_time_tolerance)
        except CommandRejectedError:
            self._rejected += 1
            raise
        return self.start_trajectory(trajectory, tolerances, self.number_trajectory(), canceled)

    def number_trajectory(self) -> int:
        """The next trajectory's number, given in the order trajectories arrive: the newest
        is the one to start (:meth:`start_trajectory`)."""
        with self._numbering:
            self._newest += 1
            return self._newest

    def start_trajectory(self, trajectory: ValidatedTrajectory, tolerances: Tolerances, number: int | None = None,
                         canceled: Callable[[], bool] = lambda: False) -> TrajectoryRun:
        """Plan a validated trajectory, check it with the guard and start it; raises
        :class:`CommandRejectedError` (counted) when the guard or the timing refuses it.

        Each command replaces the one before, so a trajectory still being checked when a
        newer one (a higher ``number``, from :meth:`number_trajectory`) has arrived gives way
        (PREEMPTED, never started), and one whose goal was canceled meanwhile (``canceled()``
        true) ends CANCELED, never started: checks never pile up, and a client's cancel is
        answered at once by a goal that never moves. Neither counts as a rejection."""
        number = self.number_trajectory() if number is None else number
        self._from_measured(self._state)

        def stop() -> bool:
            return self._newest != number or canceled()

        try:
            run = self._start(trajectory, tolerances, stop, canceled)
            self._taken()
            return run
        except CommandRejectedError as error:
            if error.code not in (ErrorCode.PREEMPTED, ErrorCode.CANCELED):
                self._rejected += 1
            raise

    def _start(self, trajectory: ValidatedTrajectory, tolerances: Tolerances, stop: Callable[[], bool],
               canceled: Callable[[], bool]) -> TrajectoryRun:
        # A plan taking over a moving trajectory joins it where it will be at the plan's start,
        # and a stamped one keeps its timeline, so neither may start before its check ends:
        # planned that far ahead (twice the last check's robot time), the running trajectory
        # (or the hold) leads into it meanwhile. An unstamped plan from rest is simply delayed.
        lead, late = 0.0, False
        for _ in range(PLAN_ATTEMPTS):
            planned_at = self.command_time()
            plan = self.trajectory_executor.plan(trajectory, planned_at + lead)
            if trajectory.start_time is not None:  # stamped: led in from the set-point at its stamp
                self.validator.check_lead_in(plan.trajectory, plan.setpoint)
            try:
                self.guard.check_trajectory(plan, stop)
            except CheckInterruptedError:
                raise self._given_up(canceled()) from None
            if stop():
                raise self._given_up(canceled())
            now = self.command_time()
            late = not plan.may_start_later and now > plan.start
            if late:
                lead = 2.0 * (now - planned_at)
                continue
            try:
                return self.trajectory_executor.start(plan, tolerances, now)
            except PlanOutdatedError:
                continue  # a streaming command or another goal came in between: plan again
        reason = ("its check kept outlasting the time it was planned ahead" if late
                  else "the set-points kept changing while it was planned")
        raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"trajectory not started: {reason} "
                                                           f"({PLAN_ATTEMPTS} attempts): send it again")

    @staticmethod
    def _given_up(canceled: bool) -> CommandRejectedError:
        """Why a trajectory was given up before it started (see :meth:`start_trajectory`)."""
        if canceled:
            return CommandRejectedError(ErrorCode.CANCELED, "canceled by the client while its path was being "
                                                            "checked: the trajectory never started")
        return CommandRejectedError(ErrorCode.PREEMPTED, "preempted by a newer trajectory while its path was being "
                                                         "checked: the trajectory never started")

    def command_time(self) -> float:
        """The time a command is taken at: the driver's clock, or in lockstep the stamp of the
        state it answers (the latest read; the driver may already have stepped past it)."""
        state = self._state
        if self.gate is not None and state is not None:
            return state.stamp
        return self.driver.now()

    def start_positions(self) -> np.ndarray:
        """Where a new trajectory's speed is checked from (:func:`start_positions`)."""
        setpoint, _ = self.trajectory_executor.setpoint()
        run = self.trajectory_executor.active
        driven = run.trajectory.joint_indices if run is not None and not self._limp else np.zeros(0, dtype=int)
        return start_positions(self._state, setpoint, driven)

    def stream(self, joint_names: Sequence[str], positions: Sequence[float],
               velocities: Sequence[float] = ()) -> ValidatedSetpoint:
        """Apply a streaming set-point (clamped into the limits, see its ``warnings``);
        raises :class:`CommandRejectedError` (counted) when malformed."""
        try:
            setpoint = self.validator.setpoint(joint_names, positions, velocities)
        except CommandRejectedError:
            self._rejected += 1
            raise
        self.stream_setpoint(setpoint)
        return setpoint

    def stream_setpoint(self, setpoint: ValidatedSetpoint) -> None:
        """Apply a validated streaming set-point (released joints are taken again, from where
        they are measured, for the joints it does not name)."""
        self._from_measured(self._state)
        self.trajectory_executor.stream(setpoint)
        self._taken()

    def stop_trajectory(self, run: TrajectoryRun | None = None, state: RunState = RunState.CANCELED,
                        code: ErrorCode = ErrorCode.CANCELED, message: str = "canceled by the client") -> None:
        """Stop ``run`` (or the active one) where it is."""
        self.trajectory_executor.stop(run, state=state, code=code, message=message)

    def tolerances(self, joint_names: Sequence[str], path: Sequence[ToleranceSpec],
                   goal: Sequence[ToleranceSpec], goal_time: float) -> Tolerances:
        """:func:`trajectory_tolerances` with this loop's default tolerances."""
        return trajectory_tolerances(self.params, joint_names, path, goal, goal_time)


def known_positions(state: JointState | None, setpoint: np.ndarray) -> np.ndarray:
    """Measured positions where known, else ``setpoint`` (a stale joint's reading is unknown)."""
    if state is None:
        return setpoint
    known = state.valid & np.isfinite(state.position)
    return np.where(known, state.position, setpoint)


def start_positions(state: JointState | None, setpoint: np.ndarray, driven: np.ndarray) -> np.ndarray:
    """Where a new trajectory's speed is checked from: the set-point for the joints a running
    trajectory drives (``driven``: their canonical indices), since the executor joins the new
    one from there, wherever the servos are; elsewhere the measured positions where known. A
    servo that lags its set-point (a loop overrunning its period on a slow computer) made a
    walk's next trajectory look like a jump from where the servo was, and the robot refused
    the rest of the walk."""
    positions = known_positions(state, setpoint).copy()
    positions[driven] = setpoint[driven]
    return positions


def trajectory_tolerances(params: InterfaceParameters, joint_names: Sequence[str], path: Sequence[ToleranceSpec],
                          goal: Sequence[ToleranceSpec], goal_time: float) -> Tolerances:
    """Per-joint tolerances of a trajectory from a client's entries: 0 = the default
    parameter, < 0 = not checked. Acceleration tolerances cannot be checked (no driver
    measures acceleration) and are refused when > 0 rather than ignored."""
    names = list(joint_names)

    def table(entries: Sequence[ToleranceSpec], kind: str, attribute: str, default: float) -> np.ndarray:
        values = np.full(len(names), default if default > 0.0 else math.inf)
        for entry in entries:
            if entry.name not in names:
                raise CommandRejectedError(ErrorCode.INVALID_JOINTS, f"{kind} tolerance given for joint "
                                                                     f"{entry.name!r}, which is not in the "
                                                                     "trajectory")
            if entry.acceleration > 0.0:
                raise CommandRejectedError(
                    ErrorCode.INVALID_GOAL,
                    f"{kind} tolerance of joint {entry.name}: acceleration tolerances are not supported "
                    "(no driver measures joint acceleration); give 0 or -1")
            value = getattr(entry, attribute)
            if not math.isfinite(value):
                raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"{kind} tolerance of joint {entry.name}: "
                                                                   f"{attribute} is {value}")
            if value < 0.0:
                values[names.index(entry.name)] = math.inf
            elif value > 0.0:
                values[names.index(entry.name)] = value
        return values

    if not math.isfinite(goal_time) or goal_time < 0.0:
        raise CommandRejectedError(ErrorCode.INVALID_GOAL, f"goal_time_tolerance {goal_time} s is not a finite "
                                                           "time >= 0")
    return Tolerances(path=table(path, "path", "position", params.path_position_tolerance),
                      goal=table(goal, "goal", "position", params.goal_position_tolerance),
                      goal_time=goal_time if goal_time > 0.0 else params.goal_time_tolerance,
                      path_velocity=table(path, "path", "velocity", 0.0),
                      goal_velocity=table(goal, "goal", "velocity", 0.0))
