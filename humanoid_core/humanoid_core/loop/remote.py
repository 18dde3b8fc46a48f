"""The control loop behind a pipe: the robot interface's front in one process, the loop in another.

Why: rclpy turns a received message into Python objects in one call that holds the
interpreter lock for as long as the message is large (about 0.1 ms per trajectory point);
a control loop in the same process waits that long for its next cycle. With the loop in a
process of its own, no message, however large, delays it: the front (subscriptions, the
action server, services, validation) converts and checks commands in its process and
hands the loop only validated arrays, whose unpickling is a copy.

:class:`LoopServer` serves a :class:`~humanoid_core.loop.control_loop.ControlLoop` on one
end of a :func:`multiprocessing.Pipe`; :class:`LoopClient` is the front's view of it on the
other end. Neither knows ROS; whether the server runs in a child process (a driver node) or
in a thread (tests) is the caller's choice.

The server never blocks its control thread on the pipe: what the loop reports goes
through a queue to a sender thread, and the loop's state (sent at ``publish_rate``) is
coalesced there, so a front that stops reading for seconds costs the loop nothing; run
results, answers and errors are never dropped.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from humanoid_core.loop.control_loop import ControlLoop
from humanoid_core.loop.decimation import Decimator
from humanoid_core.loop.driver import JointState
from humanoid_core.loop.trajectory_executor import Feedback, RunState, Tolerances, TrajectoryRun
from humanoid_core.loop.validation import (
    CommandRejectedError,
    ErrorCode,
    ValidatedSetpoint,
    ValidatedTrajectory,
)
from humanoid_core.processes import StopRequest

__all__ = ["TORQUE", "LoopClient", "LoopServer", "RemoteError", "RunHandle"]

#: The operation every server has: ``call(TORQUE, enabled)``, ControlLoop.set_torque's answer.
TORQUE = "torque"

#: s: how often a client waiting for an answer looks whether to pass on a cancel.
ASK_POLL = 0.05


# -- messages: front -> loop -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Start:
    request: int
    trajectory: ValidatedTrajectory
    tolerances: Tolerances


@dataclass(frozen=True, slots=True)
class CancelStart:
    """The goal of Start ``request`` was canceled while the loop checks it."""

    request: int


@dataclass(frozen=True, slots=True)
class Stream:
    setpoint: ValidatedSetpoint


@dataclass(frozen=True, slots=True)
class Stop:
    run: int | None  # None: the active run
    state: RunState
    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class Hold:
    positions: np.ndarray


@dataclass(frozen=True, slots=True)
class Call:
    request: int
    name: str
    args: tuple


@dataclass(frozen=True, slots=True)
class Ready:
    """A lockstep participant's answer, relayed in order with the commands it sent before it."""

    participant: str
    stamp: float
    leaving: bool


@dataclass(frozen=True, slots=True)
class CountRejection:
    """A command the front refused (counted with the loop's own refusals in diagnostics)."""


@dataclass(frozen=True, slots=True)
class Shutdown:
    pass


# -- messages: loop -> front -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Started:
    state: JointState


@dataclass(frozen=True, slots=True)
class StartFailed:
    message: str


@dataclass(frozen=True, slots=True)
class State:
    state: JointState
    setpoint: np.ndarray  # every joint's set-point (what a stale joint is taken to be at)


@dataclass(frozen=True, slots=True)
class Accepted:
    request: int
    run: int


@dataclass(frozen=True, slots=True)
class Rejected:
    request: int
    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class RunFeedback:
    run: int
    feedback: Feedback


@dataclass(frozen=True, slots=True)
class RunDone:
    run: int
    state: RunState
    code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class Answer:
    request: int
    value: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """The loop ended on its own (its ``duration`` reached, or a fatal error)."""

    reason: str
    failed: bool = False


class RemoteError(RuntimeError):
    """An operation the loop's side refused or failed (the message says why)."""


# -- the server (the loop's process) ----------------------------------------------------
class _Outbox:
    """What the server sends, queued for a sender thread; the latest State replaces the
    previous one still waiting, and a run's feedback replaces its previous feedback."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._queue: collections.deque = collections.deque()
        self._state: State | None = None
        self._feedback: dict[int, RunFeedback] = {}
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._send_all, name="loop-outbox", daemon=True)
        self._thread.start()

    def put(self, message: object) -> None:
        with self._ready:
            if isinstance(message, State):
                self._state = message
            elif isinstance(message, RunFeedback):
                if message.run not in self._feedback:
                    self._queue.append(message.run)  # a place in line, filled when sent
                self._feedback[message.run] = message
            else:
                self._queue.append(message)
            self._ready.notify()

    def close(self, timeout: float = 2.0) -> None:
        """Send what is queued (for at most ``timeout``), then stop."""
        with self._ready:
            self._closed = True
            self._ready.notify()
        self._thread.join(timeout)

    def _next(self) -> object | None:
        with self._ready:
            self._ready.wait_for(lambda: self._queue or self._state is not None or self._closed)
            if self._queue:
                item = self._queue.popleft()
                return self._feedback.pop(item, None) if isinstance(item, int) else item
            if self._state is not None:
                state, self._state = self._state, None
                return state
            return None  # closed and empty

    def _send_all(self) -> None:
        while True:
            message = self._next()
            if message is None:
                with self._ready:
                    if self._closed and not self._queue and self._state is None:
                        return
                continue
            try:
                self._connection.send(message)
            except (OSError, EOFError, BrokenPipeError):
                return  # the front is gone


class LoopServer:
    """Serves ``loop`` on ``connection``: commands in, state and run results out.

    ``operations`` are the extra calls the front may make (a simulator's reset, pause,
    step ...), each run in a thread of its own; ``finished`` may be set by a cycle hook
    (the node's ``duration``) to end the loop with a reason."""

    def __init__(self, loop: ControlLoop, connection: Connection) -> None:
        self.loop = loop
        self.connection = connection
        self.operations: dict[str, Callable[..., Any]] = {}
        self._outbox: _Outbox | None = None
        self._runs: dict[int, TrajectoryRun] = {}
        self._runs_lock = threading.Lock()
        self._canceled: set[int] = set()  # Start requests canceled while their check runs
        # A lockstep answer takes effect only when every trajectory sent before it has started
        # (or was refused): the participant's commands are in force before the loop goes on.
        self._starting = 0
        self._held_answers: list[Ready] = []
        self._answers_lock = threading.Lock()
        self._run_ids = itertools.count(1)
        self._publishing = Decimator(loop.params.publish_rate, "publish_rate")
        self._feedback = Decimator(loop.params.feedback_rate, "feedback_rate")
        self._stopped = StopRequest()  # set by finish(), which a signal handler may call: no lock
        self._finished: Finished | None = None
        loop.add_cycle_hook(self._on_cycle)
        self.register(TORQUE, loop.set_torque)

    def register(self, name: str, operation: Callable[..., Any]) -> None:
        """Let the front call ``operation(*args)`` by ``name`` (its result is sent back)."""
        self.operations[name] = operation

    def finish(self, reason: str, failed: bool = False) -> None:
        """End serving: the loop stops and the front is told why (safe in a signal handler)."""
        if self._finished is None:
            self._finished = Finished(reason, failed)
        self._stopped.set()

    # -- life cycle -----------------------------------------------------------------------
    def serve(self, on_started: Callable[[JointState], None] | None = None) -> Finished:
        """Start the driver, tell the front, run the loop until shut down; the robot is
        released (``driver.close``) before this returns. ``on_started`` gets the first state
        before the loop runs (what a driver has, such as its sensors, is known then). Call
        from the thread that should wait (a process's main thread)."""
        self._outbox = _Outbox(self.connection)
        try:
            state = self.loop.start()
        except Exception as error:
            self._outbox.put(StartFailed(str(error) or type(error).__name__))
            self._outbox.close()
            with contextlib.suppress(Exception):
                self.loop.driver.close()
            return Finished(f"the robot did not start: {error}", failed=True)
        if on_started is not None:
            on_started(state)
        self._outbox.put(Started(state))
        reader = threading.Thread(target=self._read, name="loop-requests", daemon=True)
        reader.start()
        self.loop.run_in_thread()
        while not self._stopped.wait(None):
            pass
        self.loop.stop()  # ends any run (aborted), releases the robot
        self._report_finished_runs()
        finished = self._finished or Finished("shut down")
        self._outbox.put(finished)
        self._outbox.close()
        self._stopped.close()
        return finished

    def stop(self) -> None:
        """Stop serving (a signal, or the front asked)."""
        self._stopped.set()

    def _read(self) -> None:
        while not self._stopped.is_set():
            try:
                message = self.connection.recv()
            except (EOFError, OSError):
                self.finish("the robot interface's front is gone", failed=True)
                return
            self._dispatch(message)

    def _dispatch(self, message: object) -> None:
        if isinstance(message, Start):  # numbered here, in the order they came: the newest wins
            number = self.loop.number_trajectory()
            with self._answers_lock:
                self._starting += 1
            threading.Thread(target=self._start, args=(message, number), name="loop-start", daemon=True).start()
        elif isinstance(message, CancelStart):
            self._canceled.add(message.request)
        elif isinstance(message, Stream):
            self.loop.stream_setpoint(message.setpoint)
        elif isinstance(message, Stop):
            run = None if message.run is None else self._run(message.run)
            if message.run is None or run is not None:
                self.loop.stop_trajectory(run, message.state, message.code, message.message)
        elif isinstance(message, Hold):
            self.loop.hold(message.positions)
        elif isinstance(message, Call):
            threading.Thread(target=self._call, args=(message,), name=f"loop-{message.name}", daemon=True).start()
        elif isinstance(message, Ready):
            with self._answers_lock:
                if self._starting:
                    self._held_answers.append(message)
                    return
            self._answer(message)
        elif isinstance(message, CountRejection):
            self.loop.count_rejection()
        elif isinstance(message, Shutdown):
            self.finish("shut down by the front")

    def _start(self, message: Start, number: int) -> None:
        try:
            run = self.loop.start_trajectory(message.trajectory, message.tolerances, number,
                                             canceled=lambda: message.request in self._canceled)
        except CommandRejectedError as error:
            self._send(Rejected(message.request, error.code, str(error)))
            return
        else:
            run_id = next(self._run_ids)
            with self._runs_lock:
                self._runs[run_id] = run
            self._send(Accepted(message.request, run_id))
        finally:
            self._canceled.discard(message.request)
            with self._answers_lock:
                self._starting -= 1
                answers = self._held_answers if not self._starting else []
                if answers:
                    self._held_answers = []
            for answer in answers:
                self._answer(answer)

    def _answer(self, message: Ready) -> None:
        if self.loop.gate is not None:
            self.loop.gate.answer(message.participant, message.stamp, message.leaving)

    def _call(self, message: Call) -> None:
        operation = self.operations.get(message.name)
        if operation is None:
            self._send(Answer(message.request, error=f"no operation {message.name!r} on this robot"))
            return
        try:
            value = operation(*message.args)
        except Exception as error:
            self._send(Answer(message.request, error=str(error) or type(error).__name__))
            return
        self._send(Answer(message.request, value))

    def _run(self, run_id: int) -> TrajectoryRun | None:
        with self._runs_lock:
            return self._runs.get(run_id)

    def _send(self, message: object) -> None:
        if self._outbox is not None:
            self._outbox.put(message)

    # -- the control thread -------------------------------------------------------------------
    def _on_cycle(self, state: JointState) -> None:
        if self._publishing.due(state.stamp):
            self._send(State(state, self.loop.trajectory_executor.setpoint()[0]))
        feedback_due = self._feedback.due(state.stamp)
        if not self._runs:
            return
        active = self.loop.trajectory_executor.active
        with self._runs_lock:
            tracked = list(self._runs.items())
        for run_id, run in tracked:
            if run.done.is_set():
                self._report_done(run_id, run)
            elif feedback_due and run is active and run.feedback is not None:
                self._send(RunFeedback(run_id, run.feedback))

    def _report_done(self, run_id: int, run: TrajectoryRun) -> None:
        with self._runs_lock:
            if self._runs.pop(run_id, None) is None:
                return
        if run.feedback is not None:
            self._send(RunFeedback(run_id, run.feedback))
        self._send(RunDone(run_id, run.state, run.code, run.message))

    def _report_finished_runs(self) -> None:
        with self._runs_lock:
            tracked = list(self._runs.items())
        for run_id, run in tracked:
            self._report_done(run_id, run)


# -- the client (the front's process) -------------------------------------------------------
@dataclass
class RunHandle:
    """The front's view of a trajectory run in the loop: updated as the loop reports it."""

    joint_names: tuple[str, ...]
    run: int = 0
    state: RunState = RunState.RUNNING
    code: ErrorCode = ErrorCode.SUCCESSFUL
    message: str = ""
    feedback: Feedback | None = None
    done: threading.Event = field(default_factory=threading.Event)


class _Pending:
    """An answer the client waits for, or hands to ``then`` (in the reader thread) when it comes."""

    def __init__(self, then: Callable[[object], None] | None = None) -> None:
        self.event = threading.Event()
        self.message: object = None
        self.then = then

    def settle(self, message: object) -> None:
        self.message = message
        self.event.set()
        if self.then is not None:
            self.then(message)


class LoopClient:
    """The front's handle on a loop served by a :class:`LoopServer`.

    Thread-safe: any thread may command; one reader thread takes what the loop sends.
    ``on_finished`` is called (in the reader thread) when the loop ends on its own or the
    connection breaks."""

    def __init__(self, connection: Connection, joint_names: tuple[str, ...],
                 on_finished: Callable[[Finished], None] | None = None) -> None:
        self.connection = connection
        self.joint_names = joint_names
        self.on_finished = on_finished
        self._send_lock = threading.Lock()
        self._requests = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._runs: dict[int, RunHandle] = {}
        self._early: dict[int, list[object]] = {}  # run reports that came before its Accepted was handled
        self._lock = threading.Lock()
        self._state: JointState | None = None
        self._setpoint: np.ndarray | None = None
        self._started = _Pending()
        self.finished: Finished | None = None
        self._reader: threading.Thread | None = None

    # -- life cycle -----------------------------------------------------------------------
    def wait_started(self, timeout: float | None = None) -> JointState | None:
        """Start reading and wait until the loop has brought the robot up (its first state),
        at most ``timeout`` seconds (None: not yet); raises :class:`RemoteError` with the
        loop's reason when it could not."""
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="loop-client", daemon=True)
            self._reader.start()
        if not self._started.event.wait(timeout):
            return None
        message = self._started.message
        if isinstance(message, Started):
            return message.state
        if isinstance(message, StartFailed):
            raise RemoteError(message.message)
        raise RemoteError(f"the control loop ended before it started: {getattr(message, 'reason', message)}")

    def shutdown(self) -> None:
        """Ask the loop to stop (it releases the robot and ends its runs)."""
        self._post(Shutdown())

    @property
    def state(self) -> JointState | None:
        """The latest state the loop sent (``publish_rate``)."""
        return self._state

    @property
    def setpoint(self) -> np.ndarray | None:
        """Every joint's set-point when the latest state was sent."""
        return self._setpoint

    def driven_joints(self) -> set[str]:
        """The joints of the runs the loop has not yet reported done."""
        with self._lock:
            return {name for handle in self._runs.values() for name in handle.joint_names}

    # -- commands -------------------------------------------------------------------------
    def start_trajectory(self, trajectory: ValidatedTrajectory, tolerances: Tolerances,
                         timeout: float | None = None, canceled: Callable[[], bool] = lambda: False) -> RunHandle:
        """Plan, check and start a validated trajectory in the loop; raises
        :class:`~humanoid_core.loop.validation.CommandRejectedError` when it is refused
        (CANCELED when ``canceled()`` became true while the loop checked it)."""
        answer = self._ask(lambda request: Start(request, trajectory, tolerances), timeout,
                           on_wait=lambda request: canceled() and (self._post(CancelStart(request)) or True))
        run = self._run_of(trajectory, answer)
        if isinstance(run, Exception):
            raise run
        return run

    def start_trajectory_later(self, trajectory: ValidatedTrajectory, tolerances: Tolerances,
                               then: Callable[[RunHandle | CommandRejectedError | RemoteError], None]) -> None:
        """Hand a validated trajectory to the loop without waiting: ``then`` gets its run, or
        why it was refused, in the reader thread (keep it short). Commands handed over this way
        and with :meth:`stream` reach the loop in the order they were given."""

        def answered(message: object) -> None:
            then(self._run_of(trajectory, message))

        request = next(self._requests)
        with self._lock:
            if self.finished is not None:
                raise RemoteError(f"the control loop has ended: {self.finished.reason}")
            self._pending[request] = _Pending(answered)
        self._post(Start(request, trajectory, tolerances))

    def _run_of(self, trajectory: ValidatedTrajectory,
                answer: object) -> RunHandle | CommandRejectedError | RemoteError:
        if isinstance(answer, Rejected):
            return CommandRejectedError(answer.code, answer.message)
        if isinstance(answer, Finished):
            return RemoteError(f"the control loop has ended: {answer.reason}")
        assert isinstance(answer, Accepted)
        handle = RunHandle(trajectory.joint_names, run=answer.run)
        with self._lock:
            self._runs[answer.run] = handle
            early = self._early.pop(answer.run, [])
        for message in early:
            self._update_run(handle, message)
        return handle

    def stream(self, setpoint: ValidatedSetpoint) -> None:
        self._post(Stream(setpoint))

    def stop(self, run: RunHandle | None = None, state: RunState = RunState.CANCELED,
             code: ErrorCode = ErrorCode.CANCELED, message: str = "canceled by the client") -> None:
        """Stop ``run`` (or the active run) where it is."""
        self._post(Stop(None if run is None else run.run, state, code, message))

    def hold(self, positions: np.ndarray) -> None:
        self._post(Hold(np.asarray(positions, dtype=float)))

    def count_rejection(self) -> None:
        """Count a command the front refused, in the loop's diagnostics."""
        self._post(CountRejection())

    def ready(self, participant: str, stamp: float, leaving: bool = False) -> None:
        """Relay a lockstep participant's answer (after the commands it sent before it)."""
        self._post(Ready(participant, stamp, leaving))

    def call(self, name: str, *args: object, timeout: float | None = None) -> Any:
        """Run an operation the loop's side registered; its result, or :class:`RemoteError`."""
        answer = self._ask(lambda request: Call(request, name, args), timeout)
        assert isinstance(answer, Answer)
        if answer.error is not None:
            raise RemoteError(answer.error)
        return answer.value

    # -- plumbing ---------------------------------------------------------------------------
    def _post(self, message: object) -> None:
        with self._send_lock:
            try:
                self.connection.send(message)
            except (OSError, BrokenPipeError) as error:
                raise RemoteError(f"the control loop is gone ({error})") from None

    def _ask(self, make: Callable[[int], object], timeout: float | None,
             on_wait: Callable[[int], object] | None = None) -> object:
        """Send a request and wait for its answer; ``on_wait(request)`` is called every
        ``ASK_POLL`` seconds meanwhile, until it returns true (a cancel to pass on)."""
        request = next(self._requests)
        pending = _Pending()
        with self._lock:
            if self.finished is not None:
                raise RemoteError(f"the control loop has ended: {self.finished.reason}")
            self._pending[request] = pending
        try:
            self._post(make(request))
            deadline = None if timeout is None else time.monotonic() + timeout
            while not pending.event.wait(ASK_POLL if on_wait is not None else timeout):
                if deadline is not None and time.monotonic() >= deadline:
                    raise RemoteError(f"the control loop did not answer within {timeout:g} s")
                if on_wait is not None and on_wait(request):
                    on_wait = None
        finally:
            with self._lock:
                self._pending.pop(request, None)
        if isinstance(pending.message, Finished):
            raise RemoteError(f"the control loop has ended: {pending.message.reason}")
        return pending.message

    def _read(self) -> None:
        while True:
            try:
                message = self.connection.recv()
            except (EOFError, OSError):
                self._end(Finished("the control loop's process is gone", failed=True))
                return
            if isinstance(message, State):
                self._state, self._setpoint = message.state, message.setpoint
            elif isinstance(message, Started | StartFailed):
                if isinstance(message, Started):
                    self._state, self._setpoint = message.state, message.state.position
                self._started.message = message
                self._started.event.set()
            elif isinstance(message, Accepted | Rejected | Answer):
                with self._lock:
                    pending = self._pending.get(message.request)
                if pending is not None:
                    if pending.then is not None:
                        with self._lock:
                            self._pending.pop(message.request, None)
                    pending.settle(message)
            elif isinstance(message, RunFeedback | RunDone):
                with self._lock:
                    handle = self._runs.get(message.run)
                    if handle is None:
                        self._early.setdefault(message.run, []).append(message)
                        continue
                    if isinstance(message, RunDone):
                        del self._runs[message.run]
                self._update_run(handle, message)
            elif isinstance(message, Finished):
                self._end(message)
                return

    @staticmethod
    def _update_run(handle: RunHandle, message: object) -> None:
        if isinstance(message, RunFeedback):
            handle.feedback = message.feedback
        elif isinstance(message, RunDone):
            handle.state, handle.code, handle.message = message.state, message.code, message.message
            handle.done.set()

    def _end(self, finished: Finished) -> None:
        """The loop is gone: every waiter learns it, every run ends aborted."""
        with self._lock:
            self.finished = finished
            pending, self._pending = list(self._pending.values()), {}
            runs, self._runs = list(self._runs.values()), {}
        if not self._started.event.is_set():
            self._started.message = finished
            self._started.event.set()
        for waiter in pending:
            waiter.settle(finished)
        for handle in runs:
            handle.state, handle.code = RunState.ABORTED, ErrorCode.DRIVER_FAILURE
            handle.message = f"the control loop ended: {finished.reason}"
            handle.done.set()
        if self.on_finished is not None:
            self.on_finished(finished)
