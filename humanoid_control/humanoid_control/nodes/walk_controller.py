"""The walk controller node: cmd_vel and the walk action to joint set-points.

Topics and actions (named in humanoid_control.ros.topics and the README):

- ``cmd_vel`` (geometry_msgs/Twist, subscribed): walk at this velocity (linear.x forward,
  linear.y left, angular.z counter-clockwise; m/s, rad/s), within the robot's step
  limits and acceleration limits; zero, or nothing for ``cmd_vel_timeout``, stops the
  walk in double support with the feet side by side. Before the robot's first
  ``joint_states`` a velocity is ignored, with an error in the log.
- ``walk`` (humanoid_interfaces/action/Walk): walk the centre of the feet to a pose
  relative to where it is, then stop; feedback (distance, lateral, turn, phase, steps),
  cancel (the walk stops cleanly), result with an error code and a message.
- ``joint_trajectory`` (trajectory_msgs/JointTrajectory, published): while walking,
  every ``send_period`` the set-points (one per control period, positions and
  velocities) computed ahead of the robot's clock up to ``command_lead``, into the
  shared front, so validation, the collision veto and the balance monitor apply as to
  any controller. Each trajectory replaces the previous one where the robot is, so the
  robot walks on through a controller that gets no CPU for a while (a loaded machine)
  instead of holding a stale set-point mid-step. Nothing is sent while the robot stands.
- ``joint_states``, ``imu/data``, ``<side>_foot/wrench`` (subscribed): the robot's
  readings. A joint read as NaN is unknown: the walk stops (stands) and says why.
- ``diagnostics`` (published): phase, last message, step count, IK residual, sensors used.
- ``fall_state`` (humanoid_interfaces/FallState, subscribed): the balance monitor's fall
  estimate, and ``fall_manager_state`` (humanoid_interfaces/FallManagerState, subscribed):
  the fall manager's. On a fall, or one the manager sees coming, the walk is abandoned at
  once (nothing more is sent), the goal ends ``FELL`` with the reason in its message; a goal
  or ``cmd_vel`` while the robot lies is refused likewise, and ``GETTING_UP`` while the
  manager gets the robot up.

The controller runs once per ``joint_states`` message, on the robot's clock (the
message's stamp: simulated time in simulation), so it needs no ``/clock``: each reading
advances the pattern to its stamp plus ``command_lead``; the set-points still ahead of
the reading are sent every ``send_period``. On the real robot, whose readings carry the
system clock this node reads too, a node behind its readings (a loaded computer) sends
only what is still ahead of that clock, and the walk's final set-point retimed from it
(:meth:`~humanoid_core.loop.setpoint_window.SetpointBatcher.flush`). The computation is
:class:`~humanoid_core.biped_walking.controller.WalkController`; parameters are declared
from :class:`~humanoid_core.biped_walking.parameters.WalkParameters`, per-robot values in
``humanoid_description/robots/<robot>/control.yaml`` (``walk_controller:``). No PyBullet, no
serial port: the same node drives the simulator and the hardware.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist, WrenchStamped
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, JointState

from humanoid_control.ros import (
    CONNECT_TIMEOUT,
    STATE_TIMEOUT,
    WATCH_PERIOD,
    FallWatch,
    NodeHost,
    Offload,
    RobotSilence,
    SetpointStream,
    ThrottledLog,
    action_server,
    clock_seconds,
    declare_control_node,
    node_status,
    run_node,
    seconds,
    topics,
)
from humanoid_core.balance import FootWrench
from humanoid_core.biped_walking import (
    LATE_WARNING,
    NODE_NAME,
    GoalState,
    Mode,
    Phase,
    Sensors,
    WalkController,
    WalkCycle,
    WalkGoal,
    WalkParameters,
    WalkRefusedError,
    checked_walk_goal,
    walk_sensors,
    walking_robot,
)
from humanoid_core.loop import Level
from humanoid_description import RobotModel
from humanoid_interfaces.action import Walk

_RESULT_CODES = {GoalState.SUCCEEDED: Walk.Result.SUCCESSFUL, GoalState.STOPPED: Walk.Result.STOPPED,
                 GoalState.CANCELED: Walk.Result.CANCELED, GoalState.REFUSED: Walk.Result.CANNOT_START}


class FellError(Exception):
    """A walk goal on a robot that lies (the fall estimate's description)."""


class GettingUpError(Exception):
    """A walk goal while the fall manager gets the robot up (its description)."""


class CannotStartError(Exception):
    """A walk goal the robot would not hear (why)."""


class WalkControllerNode:
    """The ROS side of a :class:`WalkController`."""

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        robot, self.params = declare_control_node(node, WalkParameters, NODE_NAME)
        if not walking_robot(robot):
            raise ValueError(f"the walk controller walks bipeds: {robot} has no walk_controller section in its "
                             "parameter file (humanoid_description/robots/<robot>/control.yaml)")
        self.model = RobotModel(robot)
        self.controller = WalkController(self.model, self.params)
        self._lock = threading.Lock()
        self._log = node.get_logger()
        self._throttled = ThrottledLog(self._log)
        self._joints = self.model.joints
        self._state: JointState | None = None
        self._silence = RobotSilence(STATE_TIMEOUT)  # since the latest joint_states
        self._robot_time = 0.0  # its stamp
        self._imu: tuple[float, tuple[float, float, float, float]] | None = None
        self._feet: dict[str, tuple[float, FootWrench]] = {}
        self._phase = Phase.IDLE
        self._message = ""
        self._abandoned = False
        self._waiting: JointState | None = None  # lockstep: a state waiting for its IMU reading
        # by id() of the request, until executed
        self._goals: dict[int, WalkGoal | WalkRefusedError | FellError | GettingUpError | CannotStartError] = {}
        self._executing: dict[int, WalkGoal] = {}  # the goals whose action bodies run (each checks its end)
        self._fell: str | None = None  # why the goal in hand ended: the robot fell
        self.lockstep = host.lockstep(node)

        # One thread takes the readings, the commands and the cycle, in the order they come
        # (rclpy's EventsExecutor); what blocks runs off it: a goal's check waits for the first
        # joint_states, a goal's body follows the walk to its end.
        self.goal_checks, self.bodies = Offload(node, "walk goal checks"), Offload(node, "walks", workers=4)
        actions = ReentrantCallbackGroup()
        self.cycle = WalkCycle(self.controller, warn=self._log.warning)
        self._stream = SetpointStream(node, host, self._joints, self.cycle.batcher)
        self._diagnostics = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_states, QoSProfile(depth=1))
        # the sensors only when a correction uses them (each subscription costs CPU at 100 Hz); in
        # lockstep a state is handled with the IMU reading of its instant, which may come after
        # it on its own topic (_on_joint_states)
        self._uses_imu = self.params.stabilize and self.params.tilt_feedback_gain > 0.0
        if self._uses_imu:
            host.subscribe_state(node, Imu, topics.IMU, self._on_imu, QoSProfile(depth=1))
        if self.params.stabilize and self.params.zmp_feedback_gain > 0.0:
            for side in ("right", "left"):
                host.subscribe_state(node, WrenchStamped, topics.foot_wrench(side),
                                     lambda msg, side=side: self._on_wrench(side, msg), QoSProfile(depth=1))
        node.create_subscription(Twist, topics.CMD_VEL, self._on_cmd_vel, 10)
        self.falls = FallWatch(node, self._on_fall)
        self._action = action_server(node, Walk, topics.WALK, execute_callback=self.bodies(self._execute),
                                     goal_callback=self.goal_checks(self._on_goal),
                                     cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=actions)
        node.create_timer(WATCH_PERIOD, self._watch)
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics)
        p = self.params
        self._log.info(
            f"walk controller for {robot}: step {p.step_period:g} s, up to {p.max_step_forward:g} m forward, "
            f"{p.max_step_lateral:g} m sideways, {p.max_step_turn:g} rad per step; CoM at {p.com_height:g} m; "
            f"{1.0 / p.period:g} Hz; " + self._stabilisation_text())

    def _stabilisation_text(self) -> str:
        p = self.params
        if not p.stabilize or (p.tilt_feedback_gain == 0.0 and p.zmp_feedback_gain == 0.0):
            return ("stabilisation off: the pattern runs OPEN LOOP (no IMU or foot-sensor feedback; conservative "
                    "step limits)")
        parts = []
        if p.tilt_feedback_gain > 0.0:
            parts.append(f"trunk tilt from imu/data (gain {p.tilt_feedback_gain:g})")
        if p.zmp_feedback_gain > 0.0:
            parts.append(f"ZMP from the foot wrenches (gain {p.zmp_feedback_gain:g}/s)")
        return "stabilisation: " + " and ".join(parts) + " when those readings arrive"

    # -- readings -----------------------------------------------------------------------
    def _on_joint_states(self, msg: JointState) -> None:
        self._state = msg
        self._silence.heard()
        if self.lockstep is not None and self._uses_imu and (self._imu is None
                                                              or self._imu[0] < seconds(msg.header.stamp)):
            self._waiting = msg  # until the IMU reading of its instant comes (_on_imu)
            return
        self._handle(msg)

    def _handle(self, msg: JointState) -> None:
        self._cycle(msg)
        if self.lockstep is not None:
            self.lockstep.answered(msg.header.stamp)

    def _on_imu(self, msg: Imu) -> None:
        q = msg.orientation
        self._imu = (seconds(msg.header.stamp), (q.x, q.y, q.z, q.w))
        waiting = self._waiting
        if waiting is not None and self._imu[0] >= seconds(waiting.header.stamp):
            self._waiting = None
            self._handle(waiting)

    def _on_wrench(self, side: str, msg: WrenchStamped) -> None:
        f, t = msg.wrench.force, msg.wrench.torque
        self._feet[side] = (seconds(msg.header.stamp), FootWrench((f.x, f.y, f.z), (t.x, t.y, t.z)))

    def _sensors(self, now: float) -> Sensors | None:
        timeout = self.params.sensor_timeout
        imu = self._imu[1] if self._imu is not None and abs(now - self._imu[0]) <= timeout else None
        feet = {side: wrench for side, (stamp, wrench) in self._feet.items() if abs(now - stamp) <= timeout}
        return walk_sensors(self.params, imu, feet)

    def _on_fall(self, reason: str) -> None:
        """The robot fell, or the fall manager sees it falling: stop commanding at once (no step
        is finished, no stance restored) and end the goal in hand as fallen."""
        with self._lock:
            controller = self.controller
            walking = controller.phase is not Phase.IDLE
            if walking:
                self._fell = reason
                controller.abandon(f"{reason}: walk stopped, nothing more sent")
                self.cycle.batcher.abandon()
                self._report(controller)
        if walking:
            self._log.error(f"{reason}: walk stopped, nothing more sent")

    # -- commands -----------------------------------------------------------------------
    def _on_cmd_vel(self, msg: Twist) -> None:
        now = self._now()
        if self._state is None and (msg.linear.x or msg.linear.y or msg.angular.z):
            self._throttled.error("cmd_vel ignored: no joint_states from the robot yet (a walk starts from where the "
                                  "robot is; is the robot interface up?)", 1.0)
            return
        fallen = self.falls.getting_up_text() or self.falls.fallen_text()
        if fallen is not None and (msg.linear.x or msg.linear.y or msg.angular.z):
            self._throttled.error(f"cmd_vel ignored: {fallen}", 1.0)
            return
        if self.controller.phase is Phase.IDLE and (msg.linear.x or msg.linear.y or msg.angular.z):
            unheard = self._stream.unheard()
            if unheard is not None:
                self._throttled.error(f"cmd_vel ignored: {unheard} (a walk's first set-points would be lost)", 1.0)
                return
        with self._lock:
            try:
                self.controller.walk_velocity(msg.linear.x, msg.linear.y, msg.angular.z, now)
            except WalkRefusedError as error:
                self._throttled.error(f"cmd_vel ignored: {error}", 1.0)
                return
        if msg.linear.z or msg.angular.x or msg.angular.y:
            self._throttled.warning("cmd_vel: linear.z, angular.x and angular.y are ignored (a walking robot moves "
                                    "in the ground plane)", 5.0)

    def _now(self) -> float:
        """Robot time: the stamp of the latest joint_states."""
        return self._robot_time

    # -- the control cycle --------------------------------------------------------------------
    def _watch(self) -> None:
        """Wall-clock watchdog: a robot that stopped publishing joint_states (the bus is
        gone) ends the walk under way; nothing else would, as cycles follow the readings. Not
        in lockstep: the simulation's clock stands still while it waits, for this node too."""
        if self.lockstep is not None:
            return
        silent = self._silence.look()
        with self._lock:
            controller = self.controller
            if controller.phase is Phase.IDLE or silent <= self._silence.timeout or self._abandoned:
                return
            self._abandoned = True
            self._log.error(f"no joint_states for {silent:.2f} s: the robot stopped answering; walk abandoned, the "
                            "robot interface holds the last set-point")
            controller.abandon(f"no joint_states from the robot for {silent:.2f} s: walk abandoned")
            self._report(controller)

    def _cycle(self, state: JointState) -> None:
        """One pass of the walk's cycle (:class:`~humanoid_core.biped_walking.streaming.WalkCycle`)
        per reading; the trajectory it gives, if any, goes out on joint_trajectory."""
        now = seconds(state.header.stamp)
        if not self.cycle.is_new(now):
            return
        self._robot_time = now
        positions, sensors = self._stream.positions(state), self._sensors(now)
        with self._lock:
            self._abandoned = False
            batch = self.cycle.cycle(now, positions, sensors, clock_seconds(self.node))
            self._report(self.controller)
        self._stream.publish(batch)

    def _report(self, controller: WalkController) -> None:
        """Log phase changes, new messages and a controller falling behind its clock (called
        with the lock held)."""
        if controller.phase is Phase.WALKING and controller.lag > LATE_WARNING:
            self._throttled.warning(f"the walk pattern is {controller.lag * 1000:.0f} ms behind the robot's clock "
                                    "(this process does not get enough CPU): the walk slows down", 2.0)
        if controller.phase is not self._phase:
            text = {Phase.PREPARING: "preparing to walk (crouching to the walking posture)",
                    Phase.WALKING: "walking", Phase.IDLE: "standing"}[controller.phase]
            if controller.phase is Phase.IDLE and controller.pattern is not None:
                text += f" ({controller.pattern.landed} steps since the walk began)"
            self._log.info(text)
            self._phase = controller.phase
            if controller.phase is Phase.IDLE and self._fell is None and not self._abandoned \
                    and not any(goal.state is GoalState.SUCCEEDED for goal in self._executing.values()):
                # no walk goal's end checks this stop (cmd_vel's, a canceled or stopped goal's)
                threading.Thread(target=self._check_stop, name="walk stop check", daemon=True).start()
        if controller.message and controller.message != self._message:
            self._log.warning(controller.message)
        self._message = controller.message

    # -- the walk action ------------------------------------------------------------------
    def _on_goal(self, request) -> GoalResponse:
        """Every goal is accepted (a refusal is told in the result, with its reason), and a
        valid one takes effect here, before the client hears of it: the cycle after the
        acceptance walks it (in lockstep, at the same state in every run)."""
        try:  # a bad goal is refused at once, whether the robot is there or not
            checked_walk_goal(request.distance, request.lateral, request.turn, self.params)
            getting_up = self.falls.getting_up_text()
            if getting_up is not None:
                self._goals[id(request)] = GettingUpError(getting_up)
                return GoalResponse.ACCEPT
            fallen = self.falls.fallen_text()
            if fallen is not None:
                self._goals[id(request)] = FellError(fallen)
                return GoalResponse.ACCEPT
            deadline = time.monotonic() + CONNECT_TIMEOUT
            while self._state is None and time.monotonic() < deadline:
                time.sleep(0.05)
            unheard = self._stream.unheard_until(deadline)
            if self._state is not None and unheard is not None:
                self._goals[id(request)] = CannotStartError(f"{unheard} after {CONNECT_TIMEOUT:g} s: no walk")
            elif self._state is not None:
                with self._lock:
                    self._fell = None
                    self._goals[id(request)] = self.controller.walk_to(request.distance, request.lateral,
                                                                       request.turn)
        except WalkRefusedError as error:
            self._goals[id(request)] = error
        return GoalResponse.ACCEPT

    def _execute(self, goal_handle) -> Walk.Result:
        request = goal_handle.request
        goal = self._goals.pop(id(request), None)
        if isinstance(goal, WalkRefusedError):
            return self._refused(goal_handle, goal)
        if isinstance(goal, GettingUpError):
            goal_handle.abort()
            self._log.error(f"walk goal refused: {goal}")
            return Walk.Result(error_code=Walk.Result.GETTING_UP, error_string=f"{goal}: no walk now")
        if isinstance(goal, FellError):
            goal_handle.abort()
            self._log.error(f"walk goal refused: {goal}")
            return Walk.Result(error_code=Walk.Result.FELL, error_string=f"{goal}: no walk on a fallen robot")
        if goal is None or isinstance(goal, CannotStartError):
            goal_handle.abort()
            why = str(goal) if goal is not None else f"no joint_states from the robot within {CONNECT_TIMEOUT:g} s"
            self._log.error(f"walk goal refused: {why}")
            return Walk.Result(error_code=Walk.Result.CANNOT_START, error_string=why)
        self._log.info(f"walk goal: {request.distance:g} m forward, {request.lateral:g} m left, "
                       f"{request.turn:g} rad")
        with self._lock:
            self._executing[id(goal)] = goal
        try:
            return self._follow(goal_handle, goal)
        finally:
            with self._lock:
                del self._executing[id(goal)]

    def _follow(self, goal_handle, goal: WalkGoal) -> Walk.Result:
        """A valid walk goal to its result: feedback, cancel, the end check."""
        period = 1.0 / self.params.feedback_rate
        canceled = False
        while not goal.done:
            if goal_handle.is_cancel_requested and not canceled:
                canceled = True
                with self._lock:
                    self.controller.cancel(goal)
            if not rclpy.ok():
                break
            goal_handle.publish_feedback(self._feedback(goal))
            time.sleep(period)
        # the set-points sent ahead run on: the result when the robot has reached the last
        # one (or stopped answering, or fell)
        self._wait_for_the_last_setpoint(period)
        short = self._short_of_the_stance(period) if goal.state is GoalState.SUCCEEDED else None
        result = self._result(goal)
        with self._lock:
            fell, self._fell = self._fell, None
        fell = fell or self.falls.fall  # going down as it came to a stop: a fall of this walk
        if fell is not None:
            goal_handle.abort()
            result.error_code, result.error_string = Walk.Result.FELL, f"{fell}: walk stopped"
            self._log.error(f"walk goal ended: {result.error_string}")
            return result
        if short is not None:
            goal_handle.abort()
            result.error_code, result.error_string = Walk.Result.STOPPED, short
            self._log.error(f"walk goal ended: {short}")
        elif goal.state is GoalState.SUCCEEDED:
            goal_handle.succeed()
        elif goal.state is GoalState.CANCELED:
            goal_handle.canceled()
        else:
            goal_handle.abort()
            self._log.warning(f"walk goal {goal.state.value}: {goal.message}")
        return result

    def _check_stop(self) -> None:
        """A walk that stopped with no goal to report it (``cmd_vel`` set to zero, a goal
        canceled or stopped): once its last set-point is due, the robot is checked to be there
        and sent it again from where it is if not (its last trajectory refused as late or too
        fast on a starved machine would otherwise leave it where it was, unsaid); a robot
        still short is logged. A new walk ends the check."""
        period = 1.0 / self.params.feedback_rate
        self._wait_for_the_last_setpoint(period, self._idle)
        if not self._idle():
            return
        short = self._short_of_the_stance(period, self._idle)
        if short is not None and self._idle():
            self._log.error(f"walk stopped: {short}")

    def _wait_for_the_last_setpoint(self, period: float, going_on: Callable[[], bool] = lambda: True) -> None:
        """Until the last set-point sent is due on the robot's clock, the robot fell or went
        silent, the node ends, or ``going_on`` says no more."""
        while (rclpy.ok() and going_on() and self._robot_time < self.cycle.sent_until and self._fell is None
               and (self.lockstep is not None or not self._silence.gone())):
            time.sleep(period)

    def _idle(self) -> bool:
        """No walk under way or about to start."""
        with self._lock:
            return not self.controller.active and rclpy.ok()

    def _short_of_the_stance(self, period: float, going_on: Callable[[], bool] = lambda: True) -> str | None:
        """Which joint is how far from the walk's last set-point once it is due (None: all
        within ``final_tolerance``): :meth:`SetpointStream.short_of_the_end` (``going_on``
        False ends the wait, as does a fall, the node's end or a robot gone silent)."""
        def reading() -> tuple[float, np.ndarray | None]:
            with self._lock:
                state = self._state
            return self._robot_time, None if state is None else self._stream.positions(state)

        def still() -> bool:  # nothing sent again to a robot going down (the fall manager's)
            return (rclpy.ok() and self.falls.fall is None and going_on()
                    and (self.lockstep is not None or not self._silence.gone()))

        return self._stream.short_of_the_end(reading, self._joints.names, self.params.final_tolerance,
                                             self.params.final_settle_time, still, period)

    def _refused(self, goal_handle, error: WalkRefusedError) -> Walk.Result:
        goal_handle.abort()
        self._log.error(f"walk goal rejected: {error}")
        return Walk.Result(error_code=Walk.Result.INVALID_GOAL, error_string=str(error))

    def _feedback(self, goal: WalkGoal) -> Walk.Feedback:
        with self._lock:
            where = self.controller.progress(goal)
            steps = self.controller.steps(goal)
            phase = self.controller.phase
            stopping = self.controller.pattern is not None and self.controller.pattern.mode is Mode.STANDING
        text = "stopping" if phase is Phase.WALKING and stopping else phase.value
        return Walk.Feedback(distance=where.x, lateral=where.y, turn=where.yaw, phase=text, steps=steps)

    def _result(self, goal: WalkGoal) -> Walk.Result:
        with self._lock:
            where = self.controller.progress(goal)
            steps = self.controller.steps(goal)
        duration = goal.ended - goal.started if math.isfinite(goal.started) and math.isfinite(goal.ended) else 0.0
        return Walk.Result(error_code=_RESULT_CODES.get(goal.state, Walk.Result.STOPPED), error_string=goal.message,
                           distance=where.x, lateral=where.y, turn=where.yaw, duration=duration, steps=steps)

    # -- diagnostics ------------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        with self._lock:
            c = self.controller
            values = {"phase": c.phase.value, "steps": str(c.pattern.landed if c.pattern is not None else 0),
                      "behind_clock_s": f"{c.lag:.3f}",
                      "ik_residual": f"{c.solver.error:.2e}", "sensors_used": ",".join(c.stabilizer.using) or "none",
                      "open_loop": str(not c.stabilizer.using).lower()}
            message = c.message or c.phase.value
            level = Level.WARN if c.message else Level.OK
        self._diagnostics.publish(node_status(self.node, "walking", level, message, self.model.name, values))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, WalkControllerNode, args)


if __name__ == "__main__":
    sys.exit(main())
