"""The gait controller node: plays a quadruped's gaits through the robot interface.

- ``play_gait`` (humanoid_interfaces/action/PlayGait): a gait of the robot's ``robot.yaml``
  (walk, trot, transverse_gallop, rotary_gallop, canter, amble, pace, bound, pronk: IK gaits) or a
  gait file (a CPG gait, or a gait search's best: :mod:`humanoid_core.quadruped_gaits.gait_files`),
  at a frequency (0: the gait's own), for a duration. The robot goes from where it stands to the gait's first
  set-point (the lead-in), plays the gait, and returns to its stance (the ``stance`` pose,
  home by default); a cancel returns to the stance from wherever the gait is. Feedback:
  seconds of gait played, its phase, the stage; result: an error code and message, what was
  played, and the robot time its first set-point was due. One gait at a time.
- ``joint_trajectory`` (published): the set-points, one per ``period``, computed ahead of
  the robot's clock up to ``command_lead`` and sent every ``send_period`` as a short
  trajectory (:mod:`humanoid_control.ros.setpoint_stream`), so validation, the collision
  veto, the balance monitor and recording apply as to any controller.
- ``joint_states`` (subscribed): the robot's clock and where it stands. A joint read as
  NaN stops the gait (to the stance) and says which.
- ``diagnostics`` (published): stage, gait, elapsed time, last message.
- ``fall_state`` (humanoid_interfaces/FallState, subscribed): the balance monitor's fall
  estimate, and ``fall_manager_state`` (humanoid_interfaces/FallManagerState, subscribed):
  the fall manager's. On a fall, or one the manager sees coming, the gait is abandoned at
  once (nothing more is sent, no return to the stance) and the goal ends ``FELL``; a goal
  while the robot lies is refused likewise, and ``GETTING_UP`` while the manager gets the
  robot up.

The set-points are those of :class:`~humanoid_core.quadruped_gaits.player.GaitRun` (the
same :class:`~humanoid_core.quadruped_gaits.player.GaitPlayer` ``humanoid gaits`` and the
gait search evaluate), due every ``period`` from the first reading after the goal: a
function of the gait, the frequency, the duration and the elapsed robot time, never of when
messages arrive, so the same goal sends the same set-points to the simulation and to the
hardware. Parameters: :class:`~humanoid_core.quadruped_gaits.parameters.GaitControllerParameters`,
per-robot values in ``humanoid_description/robots/<robot>/control.yaml``
(``gait_controller:``). No PyBullet, no serial port.
"""

from __future__ import annotations

import math
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from humanoid_control.ros import (
    CONNECT_TIMEOUT,
    STATE_TIMEOUT,
    WATCH_PERIOD,
    FallWatch,
    NodeHost,
    Offload,
    RobotSilence,
    SetpointStream,
    action_server,
    clock_seconds,
    declare_control_node,
    node_status,
    run_node,
    seconds,
    to_time,
    topics,
)
from humanoid_core.loop import TRAJECTORY_DELAY, VELOCITY_MARGIN, Level, Setpoint, SetpointBatcher, handled_at
from humanoid_core.quadruped_gaits import (
    NODE_NAME,
    GaitControllerParameters,
    GaitError,
    GaitPlayer,
    GaitRun,
    RunSetpoint,
    Stage,
    gaited_robot,
    load_gait,
)
from humanoid_description import RobotModel
from humanoid_interfaces.action import PlayGait


@dataclass
class Playing:
    """The goal being played and what the control cycle tells the action about it."""

    player: GaitPlayer
    duration: float
    run: GaitRun | None = None  # made at the first reading after the goal
    begins: float = math.nan  # robot time of the run's step 0
    next_step: int = 0  # the first step not computed yet
    computed: list[RunSetpoint] = field(default_factory=list)  # computed, not yet due
    due: RunSetpoint | None = None  # the latest set-point due
    #: The first set-point due of each stage since the last feedback: every stage is told,
    #: however little wall time it lasted (a lockstep simulation runs as fast as it can).
    new_stages: list[RunSetpoint] = field(default_factory=list)
    cancel: bool = False  # asked by the action
    stop_reason: str = ""  # a stop not asked for (a joint gone unknown)
    code: int = PlayGait.Result.SUCCESSFUL
    message: str = ""
    finished: threading.Event = field(default_factory=threading.Event)  # the last set-point computed
    #: Set when a stage falls due or the run finishes: the action's thread tells it at once.
    news: threading.Event = field(default_factory=threading.Event)
    in_stance: float = math.inf  # robot time the run's set-points reach the stance, at rest
    abandoned: bool = False

    def time(self, step: int) -> float:
        return self.begins + step * self.player.period

    def finish(self) -> None:
        """The last set-point is computed (or the goal ends without one)."""
        self.finished.set()
        self.news.set()


class GaitControllerNode:
    """The play_gait action and the control cycle that sends a run's set-points."""

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        robot, self.params = declare_control_node(node, GaitControllerParameters, NODE_NAME)
        if not gaited_robot(robot):
            raise ValueError(f"the gait controller plays quadruped gaits: {robot} has none (robot.yaml gaits.phases)")
        self.model = RobotModel(robot)
        try:
            self.stance = self.model.joints.to_array(self.model.config.pose(self.params.stance))
        except KeyError as error:
            raise ValueError(f"parameter stance: {error.args[0]}") from None
        self._lock = threading.Lock()
        self._log = node.get_logger()
        self._joints = self.model.joints
        self._positions: np.ndarray | None = None  # the latest reading, canonical order (NaN: unknown)
        self._silence = RobotSilence(STATE_TIMEOUT)  # since the latest joint_states
        self._robot_time = -math.inf  # its stamp
        self._playing: Playing | None = None
        self._last_message = ""
        self.lockstep = host.lockstep(node)

        # one thread takes the readings and runs the cycle (rclpy's EventsExecutor); a goal's
        # body, which follows the gait to its end, runs off it
        self.bodies = Offload(node, "gaits", workers=4)
        actions = ReentrantCallbackGroup()
        # the run's velocities are exact (central differences on its grid, the cubics' own)
        self._stream = SetpointStream(node, host, self._joints, SetpointBatcher(
            VELOCITY_MARGIN * self._joints.velocity, self.params.command_lead, self.params.send_period,
            smooth_velocities=False, warn=self._log.warning))
        self._diagnostics = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_states, QoSProfile(depth=1))
        self._action = action_server(node, PlayGait, topics.PLAY_GAIT, execute_callback=self.bodies(self._execute),
                                     goal_callback=self._on_goal,
                                     cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=actions)
        node.create_timer(WATCH_PERIOD, self._watch)
        self.falls = FallWatch(node, self._on_fall)
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics)
        p = self.params
        self._log.info(f"gait controller for {robot}: gaits {', '.join(self.model.config.sections['gaits']['phases'])} "
                       f"or gait files; a set-point every {p.period:g} s, {p.command_lead:g} s ahead; stance "
                       f"{p.stance!r}")

    # -- the control cycle ----------------------------------------------------------------
    def _on_joint_states(self, msg: JointState) -> None:
        self._handle(msg)
        if self.lockstep is not None:
            self.lockstep.answered(msg.header.stamp)

    def _handle(self, msg: JointState) -> None:
        now = seconds(msg.header.stamp)
        if now <= self._robot_time:  # out of order, or a restarted clock
            return
        positions = self._stream.positions(msg)
        clock = clock_seconds(self.node)
        with self._lock:
            self._robot_time, self._positions = now, positions
            self._silence.heard()
            playing = self._playing
            if playing is None:
                return
            if playing.finished.is_set():  # every set-point computed: they only fall due now
                self._fall_due(playing, handled_at(now, clock))
                return
            final = self._cycle(playing, handled_at(now, clock), positions)
        self._stream.flush(now, final, clock, positions)

    def _cycle(self, playing: Playing, now: float, positions: np.ndarray) -> bool:
        """Compute the run's set-points up to ``command_lead`` ahead of ``now`` (the robot's time
        as the reading is handled: :func:`~humanoid_core.loop.setpoint_window.handled_at`), with
        the lock held; True when the last one (at rest in the stance) was computed."""
        if playing.run is None and not self._begin(playing, now, positions):
            return False
        assert playing.run is not None
        unknown = [self._joints.names[i] for i in np.flatnonzero(np.isnan(positions))]
        if unknown and not playing.stop_reason:
            playing.stop_reason = (f"joint {', '.join(unknown)} read as unknown (NaN): the gait stopped, back to the "
                                   "stance")
            playing.code, playing.message = PlayGait.Result.STOPPED, playing.stop_reason
            self._log.error(playing.stop_reason)
        if (playing.cancel or playing.stop_reason) and self._stop(playing, now):
            self._log.info(f"{'canceled' if playing.cancel else 'stopped'}: back to the stance")
        final = False
        while playing.time(playing.next_step) <= now + self.params.command_lead + 1e-9:
            point = playing.run.setpoint(playing.next_step)
            playing.computed.append(point)
            self._stream.ahead.append(Setpoint(playing.time(point.step), point.positions, point.velocities))
            playing.next_step += 1
            if point.stage is Stage.DONE:
                playing.in_stance = min(playing.in_stance, playing.time(point.step))
            # the stance is sent on for one more command lead: every trajectory of that time ends in
            # it, so a late one refused by the robot interface leaves the robot there all the same
            if playing.time(point.step) >= playing.in_stance + self.params.command_lead - 1e-9:
                final = True
                playing.finish()
                break
        self._fall_due(playing, now)
        return final

    @staticmethod
    def _fall_due(playing: Playing, now: float) -> None:
        """The set-points due by ``now`` (the robot's time as handled), the first of each stage kept
        for the feedback; with the lock held."""
        while playing.computed and playing.time(playing.computed[0].step) <= now:
            point = playing.computed.pop(0)
            if playing.due is None or point.stage is not playing.due.stage:
                playing.new_stages.append(point)
                playing.news.set()
            playing.due = point

    def _begin(self, playing: Playing, now: float, positions: np.ndarray) -> bool:
        """The run from where the robot stands (its set-point where known: ``origin``), its
        step 0 a trajectory's delay after ``now`` (as handled: a node behind its readings on a
        loaded machine starts the whole gait late, rather than skip what fell due while it
        waited); False (the goal ends) with a joint unknown."""
        unknown = [self._joints.names[i] for i in np.flatnonzero(np.isnan(positions))]
        if unknown:
            playing.code = PlayGait.Result.CANNOT_START
            playing.message = f"joint {', '.join(unknown)} read as unknown (NaN): the gait cannot start"
            playing.finish()
            return False
        start = self._stream.batcher.origin(now, positions)  # where the robot's set-point is
        playing.run = GaitRun(playing.player, start, self.stance, playing.duration, self.params.timing,
                              self.params.stepper(self.model, playing.player.transition))
        playing.begins = now + TRAJECTORY_DELAY
        self._stream.abandon()  # anything left of a gait abandoned before
        return True

    def _stop(self, playing: Playing, now: float) -> bool:
        """Start the return to the stance at the first set-point a trajectory sent now still
        reaches; the ones computed beyond it are dropped."""
        run = playing.run
        assert run is not None
        step = max(0, math.ceil((now + TRAJECTORY_DELAY - playing.begins) / playing.player.period + 1e-6))
        while playing.next_step <= step:  # computed up to it (a command lead shorter than the delay)
            point = run.setpoint(playing.next_step)
            playing.computed.append(point)
            self._stream.ahead.append(Setpoint(playing.time(point.step), point.positions, point.velocities))
            playing.next_step += 1
        at = next((p for p in playing.computed if p.step == step), None)
        if at is None or at.stage not in (Stage.STARTING, Stage.PLAYING):
            return False  # already returning to the stance
        if not run.stop(step, at.positions):
            return False
        playing.computed = [p for p in playing.computed if p.step <= step]
        self._stream.ahead = [s for s in self._stream.ahead if s.stamp <= playing.time(step) + 1e-9]
        playing.next_step = step + 1
        return True

    def _watch(self) -> None:
        """Wall-clock watchdog: a robot that stopped publishing joint_states ends the gait
        under way (nothing else would: cycles follow the readings). Not in lockstep: the
        simulation's clock stands still while it waits, for this node too (it waited for a
        whole graph slower than real time, and ended gaits that were playing)."""
        if self.lockstep is not None:
            return
        silent = self._silence.look()
        with self._lock:
            playing = self._playing
            if playing is None or playing.run is None or playing.finished.is_set() or silent <= self._silence.timeout:
                return
            playing.abandoned = True
            playing.code = PlayGait.Result.STOPPED
            playing.message = (f"no joint_states from the robot for {silent:.2f} s: gait abandoned (the robot "
                               "interface holds the last set-point it was sent)")
            playing.finish()
        self._log.error(playing.message)

    def _on_fall(self, reason: str) -> None:
        """The robot fell, or the fall manager sees it falling: the gait in hand ends at once,
        nothing more is sent."""
        with self._lock:
            playing = self._playing
            if playing is None or playing.finished.is_set():
                return
            playing.abandoned = True
            playing.code = PlayGait.Result.FELL
            playing.message = f"{reason}: gait stopped, nothing more sent"
            playing.finish()
            self._stream.abandon()
        self._log.error(playing.message)

    # -- the action -------------------------------------------------------------------------
    def _execute(self, goal_handle) -> PlayGait.Result:
        """Whatever happens, the goal ends with a result whose code says what happened."""
        try:
            return self._play(goal_handle)
        except Exception as error:  # a bug must still end the goal, with its reason
            self._log.error(f"play_gait failed: {traceback.format_exc()}")
            with self._lock:
                if self._playing is not None and self._playing.finished.is_set():
                    self._playing = None
            if goal_handle.is_active:
                goal_handle.abort()
            return PlayGait.Result(error_code=PlayGait.Result.STOPPED,
                                   error_string=f"internal error: {type(error).__name__}: {error}")

    def _on_goal(self, _request) -> GoalResponse:
        """Every goal is accepted (a refusal is told in the result). In lockstep the simulation
        is held from here until the goal is installed or refused, so that its run begins at the
        same state in every run."""
        if self.lockstep is not None:
            self.lockstep.take_hold()
        return GoalResponse.ACCEPT

    def _play(self, goal_handle) -> PlayGait.Result:
        held = [self.lockstep is not None]

        def installed() -> None:  # the goal's hold on a lockstep simulation ends (once)
            if held[0]:
                held[0] = False
                self.lockstep.release()

        try:
            return self._played(goal_handle, installed)
        finally:
            installed()

    def _played(self, goal_handle, installed: Callable[[], None]) -> PlayGait.Result:
        request = goal_handle.request
        try:
            player = self._player(request.gait, request.frequency, request.duration)
        except GaitError as error:
            return self._refuse(goal_handle, PlayGait.Result.INVALID_GOAL, str(error))
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while self._positions is None and time.monotonic() < deadline and rclpy.ok():
            time.sleep(0.05)
        if self._positions is None:
            return self._refuse(goal_handle, PlayGait.Result.CANNOT_START,
                                f"no joint_states from the robot within {CONNECT_TIMEOUT:g} s")
        unheard = self._stream.unheard_until(deadline, rclpy.ok)
        if unheard is not None:
            return self._refuse(goal_handle, PlayGait.Result.CANNOT_START, f"{unheard} after {CONNECT_TIMEOUT:g} s")
        getting_up = self.falls.getting_up_text()
        if getting_up is not None:
            return self._refuse(goal_handle, PlayGait.Result.GETTING_UP, f"{getting_up}: no gait now")
        fallen = self.falls.fallen_text()
        if fallen is not None:
            return self._refuse(goal_handle, PlayGait.Result.FELL, f"{fallen}: no gait on a fallen robot")
        with self._lock:
            if self._playing is not None:
                return self._refuse(goal_handle, PlayGait.Result.CANNOT_START,
                                    f"a gait is playing ({self._playing.player.name}): cancel it first")
            playing = self._playing = Playing(player, request.duration)
        installed()
        self._log.info(f"playing {player.name} at {player.frequency:g} Hz for {request.duration:g} s")
        period = 1.0 / self.params.feedback_rate
        while rclpy.ok():  # feedback every period, and at once when a stage falls due
            playing.news.wait(period)
            playing.news.clear()
            if goal_handle.is_cancel_requested:
                playing.cancel = True
            self._tell(goal_handle, playing, now=not playing.finished.is_set())
            if playing.finished.is_set():
                break
        # the set-points sent ahead run on: the result once the robot's clock has reached the stance
        in_stance = playing.in_stance if math.isfinite(playing.in_stance) else -math.inf  # never there: no wait
        while (rclpy.ok() and not playing.abandoned and self._robot_time < in_stance
               and (self.lockstep is not None or not self._silence.gone())):
            playing.news.wait(period)
            playing.news.clear()
            self._tell(goal_handle, playing, now=False)  # the stages that fell due meanwhile
        self._tell(goal_handle, playing, now=False)
        short = self._short_of_the_stance(period) if playing.code == PlayGait.Result.SUCCESSFUL else None
        with self._lock:
            self._playing = None
        if short is not None:
            playing.code, playing.message = PlayGait.Result.STOPPED, short
        return self._result(goal_handle, playing)

    def _short_of_the_stance(self, period: float) -> str | None:
        """Which joint is how far from the last set-point sent once it is due (None: all
        within ``final_tolerance``): :meth:`SetpointStream.short_of_the_end`."""
        def reading() -> tuple[float, np.ndarray | None]:
            with self._lock:
                return self._robot_time, self._positions

        def going_on() -> bool:  # nothing sent again to a robot going down (the fall manager's)
            return (rclpy.ok() and self.falls.fall is None
                    and (self.lockstep is not None or not self._silence.gone()))

        return self._stream.short_of_the_end(reading, self._joints.names, self.params.final_tolerance,
                                             self.params.final_settle_time, going_on, period)

    def _player(self, gait: str, frequency: float, duration: float) -> GaitPlayer:
        """The goal's gait, checked: GaitError says what is wrong with it."""
        if not (math.isfinite(duration) and duration > 0.0):
            raise GaitError(f"the duration must be a finite number of seconds > 0, got {duration}")
        player = load_gait(self.model, gait, self.params.period, frequency)
        player.check_speeds(VELOCITY_MARGIN * self._joints.velocity, self._joints.names)
        return player

    def _refuse(self, goal_handle, code: int, message: str) -> PlayGait.Result:
        self._log.error(f"play_gait goal refused: {message}")
        goal_handle.abort()
        return PlayGait.Result(error_code=code, error_string=message, gait=goal_handle.request.gait)

    def _tell(self, goal_handle, playing: Playing, now: bool) -> None:
        """Feedback for the stages that fell due since the last (each one's first set-point);
        with ``now`` and no such stage, for the latest set-point due."""
        with self._lock:
            points, playing.new_stages = playing.new_stages, []
            due = playing.due
        if now and not points:
            points.append(due)
        for point in points:
            goal_handle.publish_feedback(
                PlayGait.Feedback(elapsed=0.0, phase=0.0, stage=Stage.STARTING.value) if point is None
                else PlayGait.Feedback(elapsed=point.elapsed, phase=point.phase, stage=point.stage.value))

    def _result(self, goal_handle, playing: Playing) -> PlayGait.Result:
        run = playing.run
        result = PlayGait.Result(error_code=playing.code, error_string=playing.message, gait=playing.player.name,
                                 frequency=playing.player.frequency, elapsed=run.played if run is not None else 0.0)
        if run is not None:
            result.started = to_time(playing.time(run.gait_start))
        if playing.code == PlayGait.Result.SUCCESSFUL and playing.cancel and run is not None and run.stopped_early:
            result.error_code, result.error_string = PlayGait.Result.CANCELED, "canceled: back in the stance"
        if result.error_code == PlayGait.Result.SUCCESSFUL:
            goal_handle.succeed()
        elif result.error_code == PlayGait.Result.CANCELED:
            goal_handle.canceled()
        else:
            goal_handle.abort()
            self._log.warning(f"play_gait ended: {result.error_string}")
        self._last_message = result.error_string
        self._log.info(f"{playing.player.name}: {result.elapsed:.2f} s of gait played")
        return result

    # -- diagnostics ---------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        with self._lock:
            playing = self._playing
            due = playing.due if playing is not None else None
            values = {"stage": "standing" if playing is None else (due.stage.value if due else Stage.STARTING.value),
                      "gait": playing.player.name if playing is not None else "",
                      "elapsed_s": f"{due.elapsed:.2f}" if due is not None else "0"}
            message = self._last_message or values["stage"]
        self._diagnostics.publish(node_status(self.node, "gaits", Level.OK, message, self.model.name, values))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, GaitControllerNode, args)


if __name__ == "__main__":
    sys.exit(main())
