"""Running postures tests through the robot interface, in simulation or on the real robot.

Each test: put the robot in its start pose and let it settle; then, step by step, move
the test's joints one ``step`` further (a smooth rest-to-rest trajectory of
``step_time`` through ``follow_joint_trajectory``, every joint commanded) and hold for
``settle_time`` while watching the feet; stop when the robot loses its balance: every sole
tipped past ``tip_angle`` (the robot pivots about an edge of its support; on ball feet the
body tipped that far) or a fall; with ``real`` already at the first foot that leaves the
ground. The limit is the commanded angle of that step, from the start pose; on a robot
with a joint map it is also given as each servo's register value there. A test that
reaches the end of its joints' range without an event has no limit. In simulation the
search first goes in ``coarse_step`` steps, then again from the last coarse step that stood
in ``step`` steps (the same result as fine steps all the way when nothing before the limit
depends on the path, in fewer steps).

- **Simulation**: the start pose is set with the simulator's ``reset`` service (which
  also picks a fallen robot up).
- **Real robot** (``real=True``): never a simulator service, always ``step`` steps. Before
  each test the ``operator`` says ``ready``; the robot then moves to the start pose at
  ``return_speed``. With ``operator_judges`` (a robot without foot sensors or IMU) the
  operator says after each step's settle time whether the robot stood or fell, as on the
  reference's HOAP-2; otherwise the robot stops at the first foot event (no ``fallen``
  topic on a real robot). ``fell`` at step k gives step k's angle as the limit: the angle at
  which the robot fell, as a foot event's step in simulation and the reference's
  "equilibrium value". An ``abort``
  (:class:`~humanoid_experiments.postures.operator.OperatorStopError`) leaves the robot holding
  its last pose.

The runner drives a :class:`PostureRobot`: :class:`ClientRobot`, any robot serving the
robot interface (simulated or real, through ROS), or the simulated robot in-process
(:mod:`humanoid_experiments.postures.in_process`, no ROS, on the robot's clock).
"""

from __future__ import annotations

import math
import sys
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from humanoid_control.ros import ResultWaiter, RobotClient, RobotClientError, make_trajectory, poll_until
from humanoid_core.loop import STAMP_TOLERANCE
from humanoid_description import RobotModel, ServoJoint
from humanoid_experiments.postures.operator import Operator
from humanoid_experiments.postures.protocol import PostureTest, Protocol
from humanoid_experiments.postures.watch import FootEvent, FootWatch, tip_direction, watch_topics

#: Wall-clock seconds allowed for anything that takes robot seconds (a slow, loaded machine
#: runs the simulation well below real time).
WALL_TIMEOUT = 300.0
#: How often the wait loops look at the watch (wall seconds).
POLL = 0.01
#: A real robot this close (rad, every joint) to a test's start pose starts from where it is.
START_TOLERANCE = math.radians(0.2)
#: joint_states read for a reading of every joint before giving up.
READING_TRIES = 20
#: Robot seconds between two looks at the watch in lockstep (the simulation held at each).
LOCKSTEP_LOOK = 0.05


@dataclass(frozen=True)
class PostureResult:
    """What one test found."""

    test: PostureTest
    limit: float | None  # rad (URDF sign), the commanded angle of the step that ended it; None: no limit
    stopped_by: str  # what ended the test
    tipped: str  # which way the feet tipped at the end (forward/backward/left/right/level/unknown; none: no event)
    steps: int
    range_end: float  # rad (URDF sign), how far the joints can go in the test's direction
    start_positions: tuple[float, ...] = ()  # rad, the test's joints in the start pose
    servos: tuple[ServoJoint, ...] | None = None  # the test's joints' servos (robots with a joint map)

    @property
    def limit_raw(self) -> tuple[int, ...] | None:
        """Each servo's register value at the limit (its joint at the start pose's angle plus
        the limit), in the order of the test's joints; None without a limit or a joint map."""
        if self.limit is None or self.servos is None:
            return None
        return tuple(servo.radians_to_raw(start + self.limit)
                     for servo, start in zip(self.servos, self.start_positions, strict=True))

    @property
    def error_deg(self) -> float | None:
        """Limit found minus the real robot's, in degrees (None when either is unknown)."""
        if self.test.real_limit is None or self.limit is None:
            return None
        return math.degrees(self.limit - self.test.real_limit)

    def as_dict(self) -> dict:
        """``limit_raw`` (a list, one register value per joint, or null) only for a robot with a joint map."""
        test = self.test
        raw = {} if self.servos is None else {"limit_raw": None if self.limit_raw is None else list(self.limit_raw)}
        return {"test": test.number, "name": test.name, "joints": list(test.joints), "direction": test.direction,
                "start": test.start, "limit_rad": self.limit,
                "limit_deg": None if self.limit is None else math.degrees(self.limit), **raw,
                "real_rad": test.real_limit, "error_deg": self.error_deg, "stopped_by": self.stopped_by,
                "expected_fall": test.falls, "tipped": self.tipped, "steps": self.steps,
                "range_end_rad": self.range_end}


#: The event that ends a watched motion, if any yet.
EventCheck = Callable[[], "FootEvent | None"]


class PostureRobot(typing.Protocol):
    """What the runner needs of a robot. Failures raise :class:`RobotClientError`."""

    watch: FootWatch

    def now(self) -> float:
        """The robot's clock (s)."""

    def reset(self, positions: np.ndarray) -> None:
        """Simulation only: stand the robot in ``positions`` (canonical order)."""

    def current_positions(self) -> dict[str, float]:
        """The latest joint readings by name."""

    def move(self, target: np.ndarray, duration: float, event: EventCheck | None = None) -> FootEvent | None:
        """A smooth rest-to-rest move of every joint to ``target`` in ``duration`` s; with
        ``event``, stopped (canceled) at the first event, which is returned."""

    def run_until(self, time: float, event: EventCheck | None = None) -> FootEvent | None:
        """Wait for robot time ``time``; with ``event``, the first event before it, if any."""


class ClientRobot:
    """A robot serving the robot interface, through a :class:`RobotClient` (simulation or real)."""

    def __init__(self, client: RobotClient, model: RobotModel, contact_threshold: float, lift_time: float,
                 stop_at_lift: bool) -> None:
        self.client, self.model = client, model
        self.names = list(model.joints.names)
        self.watch = watch_topics(client, model, contact_threshold, lift_time, stop_at_lift)
        #: A lockstep client holds the simulation between its acts (``run_to``): each reset,
        #: goal and look at the feet happens at the same simulated time in every run.
        self.lockstep = client.lockstep

    def now(self) -> float:
        if self.lockstep is not None:
            held = self.lockstep.held_at
            if held is not None:
                return held
        return self.client.now()

    def reset(self, positions: np.ndarray) -> None:
        self.client.reset(dict(zip(self.names, map(float, positions), strict=True)))

    def current_positions(self) -> dict[str, float]:
        return self.client.current_positions()

    def move(self, target: np.ndarray, duration: float, event: EventCheck | None = None) -> FootEvent | None:
        trajectory = make_trajectory(self.names, [duration], [target], velocities=[np.zeros(len(self.names))])
        if event is None and self.lockstep is None:
            outcome = self.client.follow(trajectory, timeout=WALL_TIMEOUT)
            if not outcome.succeeded:
                raise RobotClientError(f"the robot did not complete a move: {outcome.error_string}")
            return None
        if self.lockstep is not None:
            feedback: list = []
            handle = self.client.send_goal_held(trajectory, feedback, WALL_TIMEOUT)
            return self._lockstep_move(handle, feedback, duration, event)
        handle = self.client.send_goal(trajectory, timeout=WALL_TIMEOUT)
        result = ResultWaiter(handle)  # asks again for a result whose answer was lost (a loaded machine)
        deadline = time.monotonic() + WALL_TIMEOUT
        while not result.wait(POLL):
            if (found := event()) is not None:
                self.client.cancel(handle)
                return found
            if time.monotonic() > deadline:
                raise RobotClientError(f"a move of {duration:g} s did not end within {WALL_TIMEOUT:g} s")
        outcome = result.response
        if outcome.result.error_code != 0:
            raise RobotClientError(f"the robot refused or failed a step: {outcome.result.error_string}")
        return None

    def run_until(self, until: float, event: EventCheck | None = None) -> FootEvent | None:
        if self.lockstep is not None:
            return self._lockstep_run(until, event)
        if event is None:
            self.client.wait_until(until, WALL_TIMEOUT)
            return None
        deadline = time.monotonic() + WALL_TIMEOUT
        while self.client.now() < until:
            if (found := event()) is not None:
                return found
            if time.monotonic() > deadline:
                raise RobotClientError(f"robot time did not reach {until:.3f} s within {WALL_TIMEOUT:g} s")
            time.sleep(POLL)
        return event()


    # -- lockstep: the simulation held between looks ----------------------------------------
    def _lockstep_run(self, until: float, event: EventCheck | None) -> FootEvent | None:
        """:func:`look_until` on the held simulation, each look with the sensors' readings of its state."""
        return look_until(self._look_at, self.now(), until, event)

    def _look_at(self, stamp: float) -> float:
        """Run the held simulation to its first state at or after ``stamp`` and hold it there,
        every sensor's reading of that state in (they come on topics of their own)."""
        assert self.lockstep is not None
        try:
            now = self.lockstep.run_to(stamp, WALL_TIMEOUT)
        except TimeoutError as error:
            raise RobotClientError(f"robot time did not advance: {error}") from None
        poll_until(lambda: self.watch.has_read(now), f"the sensors' readings of t = {now:.3f} s",
                   WALL_TIMEOUT, interval=0.001)
        return now

    def _lockstep_move(self, handle, feedback: list, duration: float, event: EventCheck | None) -> FootEvent | None:
        """A goal in force at the held state runs ``duration`` from it: run to its end
        (canceled, held, at the first event), then take its result."""
        found = self._lockstep_run(move_end(self.now(), duration), event)
        if found is not None:
            self.client.cancel(handle)
            return found
        outcome = self.client.held_result(handle, feedback, WALL_TIMEOUT)
        if outcome.error_code != 0:
            raise RobotClientError(f"the robot refused or failed a step: {outcome.error_string}")
        return None


def look_until(look_at: Callable[[float], float], now: float, until: float,
               event: EventCheck | None) -> FootEvent | None:
    """The protocol's watch in lockstep, the same for every robot that is held between looks
    (the graph's lockstep client, the in-process robot): from the held state at ``now``, run
    to ``until`` in looks ``LOCKSTEP_LOOK`` apart (``look_at(stamp)`` runs to the first
    published state at or after ``stamp``, holds it and returns its stamp); the first event
    seen at a look ends it there, held; else the event at ``until``'s look, if any."""
    while now < until:
        now = look_at(min(now + LOCKSTEP_LOOK, until))
        if event is not None and (found := event()) is not None:
            return found
    return None if event is None else event()


def move_end(now: float, duration: float) -> float:
    """Where a move of ``duration`` started at the held state ``now`` is looked at last: just past
    its end by the stamps' rounding (the state at the end may fall short of it by that)."""
    return now + duration + STAMP_TOLERANCE


class PosturesRunner:
    """Runs tests of one protocol on a robot; progress lines go to ``out``. ``robot``: a
    :class:`PostureRobot`, or a connected :class:`RobotClient` (driven as a :class:`ClientRobot`)."""

    def __init__(self, robot: PostureRobot | RobotClient, model: RobotModel, protocol: Protocol,
                 real: bool = False, operator: Operator | None = None, operator_judges: bool = False,
                 out: TextIO = sys.stderr) -> None:
        if real and operator is None:
            raise ValueError("the real robot needs an operator")
        if operator_judges and not real:
            raise ValueError("the operator judges the steps on the real robot only")
        self.model, self.protocol = model, protocol
        self.params = protocol.parameters
        if isinstance(robot, RobotClient):
            robot = ClientRobot(robot, model, self.params.contact_threshold, self.params.lift_time, stop_at_lift=real)
        self.robot: PostureRobot = robot
        self.real, self.operator, self.operator_judges, self.out = real, operator, operator_judges, out
        self.names = list(model.joints.names)
        self.watch = robot.watch

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    # -- one test -----------------------------------------------------------------------
    def run(self, test: PostureTest) -> PostureResult:
        start = (np.array(test.start_positions) if test.start_positions is not None
                 else self.model.joints.to_array(self.model.config.pose(test.start)))
        columns = [self.names.index(j) for j in test.joints]
        range_end = self._range_end(test, start, columns)
        if self.real:
            self._ready(test, start)
        coarse = self.params.coarse_step
        refine = not self.real and coarse > self.params.step
        angle, steps, event = self._search(test, start, columns, 0.0, abs(range_end),
                                           coarse if refine else self.params.step)
        if refine and event is not None:
            # again from the last coarse step that stood, in fine steps
            safe = max(0.0, angle - coarse)
            self.say(f"  {test}: the foot event came at {math.degrees(test.direction * angle):+.2f} deg: "
                     f"again from {math.degrees(test.direction * safe):+.2f} deg in steps of "
                     f"{math.degrees(self.params.step):g} deg")
            angle, fine_steps, event = self._search(test, start, columns, safe, abs(range_end), self.params.step)
            steps += fine_steps
        starts = tuple(float(start[c]) for c in columns)
        if event is None:
            return PostureResult(test, None, f"no lift nor fall up to the end of the joints' range "
                                             f"({math.degrees(range_end):+.1f} deg)", "none", steps, range_end,
                                 starts, self._servos(test))
        if not self.real:  # let the fall show which way it goes
            self.robot.run_until(self.robot.now() + self.params.settle_time)
        return PostureResult(test, test.direction * angle, event.detail, tip_direction(self.watch.feet_tilt()),
                             steps, range_end, starts, self._servos(test))

    def _servos(self, test: PostureTest) -> tuple[ServoJoint, ...] | None:
        """The servos of the test's joints, when the robot's joint map has them all."""
        joint_map = self.model.config.joint_map
        if joint_map is None or not all(joint in joint_map for joint in test.joints):
            return None
        return tuple(joint_map[joint] for joint in test.joints)

    def _search(self, test: PostureTest, start: np.ndarray, columns: list[int], begin: float, end: float,
                step: float) -> tuple[float, int, FootEvent | None]:
        """From the start pose, settled, move to ``begin`` (rad from the start, in the test's
        direction), then on in ``step`` until a foot event or ``end``: (angle reached, steps, event)."""
        self._to_start(start)
        if begin > 0.0:  # at the speed of the coarse steps, without their pauses
            speed = max(step, self.params.coarse_step) / self.params.step_time
            self._move(self._pose(test, start, columns, begin), begin / speed)
        self.robot.run_until(self.robot.now() + self.params.start_settle_time)
        self.watch.arm(self.robot.now())
        angle, steps, event = begin, 0, None
        reported: FootEvent | None = None  # the foot lift already logged
        while event is None and angle < end - 1e-9:
            angle = min(angle + step, end)
            steps += 1
            event = self._step(self._pose(test, start, columns, angle))
            step_text = f"step {steps}: {math.degrees(test.direction * angle):+.2f} deg"
            if self.operator_judges:  # no foot sensors to show: the operator's word
                event = event or self._judge(test, step_text)
                continue
            forces = "/".join(f"{self.watch.forces.get(side, math.nan):.1f}" for side in self.model.config.feet)
            lifted = self.watch.lifted
            if lifted is not None and lifted is not reported:
                reported = lifted
                forces += f" ({lifted})"
            self.say(f"  {test} {step_text}, feet {forces} N{'; ' + str(event) if event else ''}")
        return angle, steps, event

    def _judge(self, test: PostureTest, step_text: str) -> FootEvent | None:
        """The operator's word on the step just held: a ``fell`` event, or None."""
        assert self.operator is not None
        if not self.operator.fell(f"  {test} {step_text}: did the robot stand or fall?", f"after {test} {step_text}"):
            return None
        return FootEvent("fell", self.robot.now(), f"the operator saw it fall at {step_text}")

    @staticmethod
    def _pose(test: PostureTest, start: np.ndarray, columns: list[int], angle: float) -> np.ndarray:
        target = start.copy()
        target[columns] = start[columns] + test.direction * angle
        return target

    def _range_end(self, test: PostureTest, start: np.ndarray, columns: list[int]) -> float:
        """How far (signed) the test's joints can move from the start pose before a limit."""
        bounds = self.model.joints.upper if test.direction > 0 else self.model.joints.lower
        reach = float(np.min(np.abs(bounds[columns] - start[columns])))
        return test.direction * (reach if test.max_travel is None else min(reach, test.max_travel))

    def _step(self, target: np.ndarray) -> FootEvent | None:
        """Move smoothly to ``target`` over step_time, hold settle_time; the first foot event, if any."""
        event = self.robot.move(target, self.params.step_time, self._event)
        if event is not None:
            return event
        return self.robot.run_until(self.robot.now() + self.params.settle_time, self._event)

    def _event(self) -> FootEvent | None:
        self.watch.check_tip(self.params.tip_angle)
        return self.watch.event

    # -- start pose ---------------------------------------------------------------------
    def _ready(self, test: PostureTest, start: np.ndarray) -> None:
        """The operator's ``ready`` for ``test``, told what the robot is about to do."""
        assert self.operator is not None
        distance = self._distance(start)
        judged = ("you say after each step whether it stood or fell" if self.operator_judges
                  else f"it stops at the first foot lift (it should tip {test.falls})")
        move = ("" if distance < START_TOLERANCE else
                f"move {math.degrees(distance):.1f} deg at most to the {test.start} pose at "
                f"{math.degrees(self.params.return_speed):g} deg/s, then ")
        self.operator.ready(f"{test}: the robot will {move}move {', '.join(test.joints)} "
                            f"{'+' if test.direction > 0 else '-'}{math.degrees(self.params.step):g} deg a step "
                            f"from the {test.start} pose; {judged}. Stand by to catch it.", f"before {test}")

    def _distance(self, target: np.ndarray) -> float:
        """How far (rad) the farthest joint is from ``target``, from a reading of every joint (a
        real bus misses one now and then: its reading is NaN until the next)."""
        for _ in range(READING_TRIES):
            current = self.robot.current_positions()
            missing = [name for name in self.names if not math.isfinite(current[name])]
            if not missing:
                return max(abs(current[name] - value) for name, value in zip(self.names, target, strict=True))
            self.robot.run_until(self.robot.now() + POLL)
        raise RobotClientError(f"no reading of {', '.join(missing)} in {READING_TRIES} joint_states: how far the "
                               "robot is from the start pose is not known")

    def _to_start(self, start: np.ndarray) -> None:
        """Simulation: a reset; real robot: a slow move (the operator said ready)."""
        if not self.real:
            self.robot.reset(start)
            return
        distance = self._distance(start)
        if distance >= START_TOLERANCE:
            self._move(start, max(distance / self.params.return_speed, self.params.step_time))

    def _move(self, target: np.ndarray, duration: float) -> None:
        """A smooth rest-to-rest move of every joint to ``target``."""
        self.robot.move(target, duration)
