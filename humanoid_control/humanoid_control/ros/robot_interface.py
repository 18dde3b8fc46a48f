"""The shared robot interface: one ROS front, written once, served by sim and hw alike.

It owns every topic, action and service of the robot interface that takes commands, and
talks to the robot's control loop only through a
:class:`~humanoid_core.loop.remote.LoopClient`:

========================== ============================================ ===========
name                       type                                         direction
========================== ============================================ ===========
joint_commands             sensor_msgs/JointState (streaming set-points) subscribed
joint_trajectory           trajectory_msgs/JointTrajectory              subscribed
follow_joint_trajectory    humanoid_interfaces/action/FollowJointTrajectory action
joint_trajectory_controller/follow_joint_trajectory
                           control_msgs/action/FollowJointTrajectory    action
robot_description          std_msgs/String (transient local)            published
fall_manager_state         humanoid_interfaces/FallManagerState         subscribed
torque                     std_srvs/SetBool                             service
========================== ============================================ ===========

The second action is the standard type MoveIt and rqt_joint_trajectory_controller send, under
the name ros2_control's joint trajectory controller serves it: the same validation, execution
and results (:func:`standard_result`); its multi-DOF fields must stay empty.

When the fall manager sees a fall coming (``fall_manager_state`` entering ``FALLING``) the
running trajectory (a ``follow_joint_trajectory`` goal or a ``joint_trajectory``) stops where
it is, ``PREEMPTED`` with the manager's cause: the robot holds until the manager's protective
action or a new command. ``joint_commands`` are refused from then on (an error in the log,
at most once a second, with the manager's state and cause) while the manager says the robot
is falling, lying or getting up, and taken again once it says controllable: a stream is not
a command that ended, and a controller streaming on would undo the protective action (limp
included: a set-point takes the joints again) and fight the get-up. Trajectories and goals
are still taken once the fall is seen (to move a fallen robot by hand, or the get-up's own).

``torque`` (``data`` false) releases every joint at the loop's next cycle (torque off: the
robot goes limp, as the fall manager's ``protect: limp`` asks), and answers once the driver has
done it: ``success`` true, ``message`` "torque off: every joint released at t = <ROS time> s"
(the loop's cycle that released them).
While released the loop writes no set-point (``joint_setpoints`` falls silent; ``joint_states``
goes on). The next command (a trajectory, ``joint_commands``, a motion, a reset, or ``data``
true) takes the joints again: its set-points start from the positions measured then, and are
written before the torque comes back on. A driver that has no torque-off command answers
``success`` false with the reason (the three drivers here, PyBullet, Dynamixel and the ideal
driver, have one).

What the loop publishes every cycle (``robot_state``, ``joint_states``, the sensors, ``diagnostics``) goes
out from the loop's own process (:mod:`humanoid_control.ros.state_publisher`), so that no
command, however large, delays it: this front converts messages (rclpy holds the
interpreter lock while it does), validates them against the joint table and the robot's
latest state, and hands the loop validated arrays. Commands are validated once, here:
nothing reaches a driver unvalidated. Driver-clock times are stamped as ROS time through
:class:`~humanoid_control.ros.ros_time.DriverClock`.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
import time
from collections.abc import Callable

import numpy as np
from builtin_interfaces.msg import Time
from control_msgs.action import FollowJointTrajectory as StandardFollowJointTrajectory
from rclpy.action import CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import String
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.ros import topics
from humanoid_control.ros.action_result import action_server
from humanoid_control.ros.fall_watch import DOWN, FALL_STATE_QOS, describe_manager
from humanoid_control.ros.lockstep import LockstepAnswers
from humanoid_control.ros.offload import Offload
from humanoid_control.ros.ros_time import DriverClock, clock_seconds, seconds, to_duration, to_time
from humanoid_control.ros.throttled_log import ThrottledLog
from humanoid_core.loop import (
    TORQUE,
    CommandRejectedError,
    CommandValidator,
    ErrorCode,
    InterfaceParameters,
    JointState,
    LoopClient,
    PointData,
    RemoteError,
    RunHandle,
    RunState,
    ToleranceSpec,
    known_positions,
    start_positions,
    trajectory_tolerances,
)
from humanoid_description import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_interfaces.msg import FallManagerState, JointTolerance

__all__ = ["InterfaceParameters", "RobotInterface", "standard_result"]

#: s: how long a command waits for the loop's answer (a trajectory's self-collision check
#: included) before it is refused as a driver failure.
LOOP_ANSWER_TIMEOUT = 60.0
#: s: how long a goal stopped by its cancel's callback waits for rclpy to mark it canceling.
CANCELING_WAIT = 5.0


def standard_result(code: ErrorCode, message: str) -> StandardFollowJointTrajectory.Result:
    """Our result as control_msgs' FollowJointTrajectory has it: its six codes unchanged; ours
    beyond them (preempted, canceled, refused for a self-collision, a driver failure) as
    INVALID_GOAL, as ros2_control's controller reports a preempted goal, with our code's name
    leading the message; the goal's status (canceled or aborted) is the same on both actions."""
    standard = StandardFollowJointTrajectory.Result
    if code < ErrorCode.GOAL_TOLERANCE_VIOLATED:  # -6 and below: ours only
        return standard(error_code=standard.INVALID_GOAL, error_string=f"{code.name}: {message}")
    return standard(error_code=int(code), error_string=message)


def unsupported_parts(goal: StandardFollowJointTrajectory.Goal) -> str | None:
    """Why a standard goal cannot be followed here (None: it can): the robots have only
    single-DOF joints."""
    multi_dof = goal.multi_dof_trajectory
    if multi_dof.joint_names or multi_dof.points:
        return "multi_dof_trajectory is not supported: these robots have single-DOF joints only; send trajectory"
    if goal.component_path_tolerance or goal.component_goal_tolerance:
        return "component tolerances are for multi-DOF joints, which these robots do not have; use path_tolerance " \
               "and goal_tolerance"
    return None


class RobotInterface:
    """The ROS front of one robot driver, whose control loop is behind ``loop``."""

    def __init__(self, node: Node, loop: LoopClient, model: RobotModel, params: InterfaceParameters,
                 clock_is_ros_time: bool, driver_now: Callable[[], float] = time.monotonic) -> None:
        """``clock_is_ros_time``: the driver's clock is the graph's ROS time (a simulator);
        otherwise it is ``driver_now`` (monotonic), mapped to ROS time here."""
        self.node = node
        self.loop = loop
        self.model = model
        self.params = params
        self.names = model.joints.names
        self.validator = CommandValidator(model.joints, start_tolerance=params.start_tolerance,
                                          max_points=params.max_trajectory_points,
                                          max_duration=params.max_trajectory_duration)
        self._clock_is_ros_time = clock_is_ros_time
        self._driver_now = driver_now
        self.clock = DriverClock(self.now, None if clock_is_ros_time
                                 else lambda: clock_seconds(node))
        self._log = node.get_logger()
        self._throttled = ThrottledLog(self._log)
        self._stopping = False

        #: The action's bodies (each follows its run until it ends), off the spinning thread.
        self.bodies = Offload(node, "goals", workers=4)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self._description_pub = (node.create_publisher(String, topics.ROBOT_DESCRIPTION, latched)
                                 if params.publish_robot_description else None)
        # Each command replaces the one before: commands are taken one at a time, in the order
        # received, by the node's one spinning thread (in parallel threads an older trajectory,
        # accepted last, replaced a newer one), validated there and handed to the loop without
        # waiting for its check, and of trajectories sent faster than they are validated only
        # the latest is kept. A lockstep participant's answer goes the same way, so it reaches
        # the loop after the commands the participant sent before it
        # (humanoid_core.loop.lockstep); so does the leave of one whose node went away without
        # sending it.
        node.create_subscription(JointStateMsg, topics.JOINT_COMMANDS, self._on_joint_commands, 10)
        node.create_subscription(JointTrajectory, topics.JOINT_TRAJECTORY, self._on_joint_trajectory,
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        self._answers = LockstepAnswers(node, self._on_ready)
        self._falling = False
        self._streams_refused: str | None = None  # why joint_commands are refused (a fall), or None
        node.create_subscription(FallManagerState, topics.FALL_MANAGER_STATE, self._on_fall_manager, FALL_STATE_QOS)
        self._following: dict[bytes, RunHandle] = {}  # the running goals' runs, by goal id
        self._cancel_asked: set[bytes] = set()  # goals whose cancel came before their run was known
        self._following_lock = threading.Lock()
        self._action = action_server(
            node, FollowJointTrajectory, "follow_joint_trajectory", self.bodies(self._execute_goal),
            goal_callback=self._on_goal, cancel_callback=self._on_cancel, callback_group=ReentrantCallbackGroup())
        self._standard_action = action_server(
            node, StandardFollowJointTrajectory, topics.STANDARD_FOLLOW_JOINT_TRAJECTORY,
            self.bodies(self._execute_standard_goal), goal_callback=self._on_goal,
            cancel_callback=self._on_cancel, callback_group=ReentrantCallbackGroup())
        # waits for the loop's cycle: off the spinning thread, one at a time
        node.create_service(SetBool, topics.TORQUE, Offload(node, "torque")(self._on_torque),
                            callback_group=ReentrantCallbackGroup())

    # -- life cycle ---------------------------------------------------------------------
    def start(self, timeout: float | None = None) -> JointState | None:
        """Wait until the loop has the robot up (at most ``timeout`` s: None when it is not up
        yet), then publish the robot's description; raises
        :class:`~humanoid_core.loop.remote.RemoteError` when the robot did not start."""
        state = self.loop.wait_started(timeout)
        if state is None:
            return None
        if self._description_pub is not None:
            self._description_pub.publish(String(data=self.model.urdf))
        self._log.info(f"robot interface up: {len(self.names)} joints, control {self.params.control_rate:g} Hz, "
                       f"joint_states {self.params.publish_rate:g} Hz")
        return state

    def stop(self) -> None:
        """Refuse new goals and ask the loop to stop (it ends any run and releases the robot)."""
        self._stopping = True
        with contextlib.suppress(RemoteError):  # the loop is gone already
            self.loop.shutdown()

    def hold(self, positions: np.ndarray) -> None:
        """Make every joint hold ``positions`` (a reset: see ``ControlLoop.hold``)."""
        self.loop.hold(positions)

    @property
    def state(self) -> JointState | None:
        """The robot's latest state, as the loop last reported it (``publish_rate``)."""
        return self.loop.state

    def now(self) -> float:
        """The time on the driver's clock: the latest state's stamp for a simulator (whose
        time only advances with its steps), the monotonic clock otherwise."""
        if self._clock_is_ros_time:
            state = self.loop.state
            return state.stamp if state is not None else 0.0
        return self._driver_now()

    def current_positions(self) -> np.ndarray:
        """Measured positions where known, else the set-point (a stale joint's reading is unknown)."""
        setpoint = self.loop.setpoint
        if setpoint is None:
            setpoint = self.model.home_positions()
        return known_positions(self.loop.state, setpoint)

    def start_positions(self) -> np.ndarray:
        """Where a new trajectory's speed is checked from: the set-point for the joints a run
        still drives, the measured positions elsewhere (:func:`~humanoid_core.loop.start_positions`)."""
        setpoint = self.loop.setpoint
        if setpoint is None:
            return self.current_positions()
        driven = np.array([self.model.joints.index(name) for name in self.loop.driven_joints()], dtype=int)
        return start_positions(self.loop.state, setpoint, driven)

    # -- commands (callback threads) ---------------------------------------------------
    def _on_joint_commands(self, msg: JointStateMsg) -> None:
        if self._streams_refused is not None:
            self.loop.count_rejection()
            self._throttled.error(f"joint_commands refused: {self._streams_refused}; taken again once the fall manager "
                                  "says controllable", 1.0)
            return
        try:
            setpoint = self.validator.setpoint(msg.name, msg.position, msg.velocity)
        except CommandRejectedError as error:
            self.loop.count_rejection()
            self._throttled.error(f"joint_commands rejected: {error}", 1.0)
            return
        self.loop.stream(setpoint)
        for warning in setpoint.warnings:
            self._throttled.warning(f"joint_commands: {warning}", 1.0)

    def _on_joint_trajectory(self, msg: JointTrajectory) -> None:
        if len(msg.points) == 0:
            self.loop.stop(state=RunState.PREEMPTED, code=ErrorCode.PREEMPTED,
                           message="stopped by an empty trajectory on joint_trajectory")
            self._log.info("joint_trajectory: empty trajectory, holding position")
            return
        try:
            trajectory, tolerances = self._validated(msg, None, None, 0.0)
        except CommandRejectedError as error:
            self.loop.count_rejection()
            self._log.error(f"joint_trajectory rejected ({error.code.name}): {error}")
            return
        try:
            self.loop.start_trajectory_later(trajectory, tolerances, self._on_topic_trajectory_answer)
        except RemoteError as error:
            self._log.error(f"joint_trajectory not started: {error}")

    def _on_topic_trajectory_answer(self, answer) -> None:
        if isinstance(answer, CommandRejectedError) and answer.code not in (ErrorCode.PREEMPTED, ErrorCode.CANCELED):
            self._log.error(f"joint_trajectory rejected ({answer.code.name}): {answer}")
        elif isinstance(answer, RemoteError):
            self._log.error(f"joint_trajectory not started: {answer}")

    def _on_fall_manager(self, msg: FallManagerState) -> None:
        falling = msg.state == FallManagerState.FALLING
        if falling and not self._falling:
            reason = f"{describe_manager(msg)}: trajectory stopped, the robot holds where it is"
            self.loop.stop(state=RunState.PREEMPTED, code=ErrorCode.PREEMPTED, message=reason)
            self._log.warning(reason)
        self._falling = falling
        refused = msg.state in (*DOWN, FallManagerState.GETTING_UP)
        if refused != (self._streams_refused is not None):
            self._log.info(f"joint_commands refused while {describe_manager(msg)}" if refused
                           else f"joint_commands taken again: {describe_manager(msg)}")
        self._streams_refused = describe_manager(msg) if refused else None

    def _on_torque(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        """Torque off (``data`` false: limp) or on again, carried out by the loop's next cycle."""
        what = "on" if request.data else "off"
        try:
            done, stamp = self.loop.call(TORQUE, bool(request.data), timeout=LOOP_ANSWER_TIMEOUT)
            response.message = f"{done} at t = {self.clock.to_ros(stamp):.3f} s"
            response.success = True
        except RemoteError as error:
            response.success, response.message = False, f"torque {what} refused: {error}"
            self._log.error(response.message)
            return response
        # two call sites: rclpy refuses one call site logging at two severities (the second
        # call raised, and the torque-on request after a torque off was never answered)
        if request.data:
            self._log.info(response.message)
        else:
            self._log.warning(response.message)
        return response

    def _on_ready(self, participant: str, stamp: Time, leaving: bool) -> None:
        self.loop.ready(participant, self.clock.from_ros(seconds(stamp)), leaving)

    def _start(self, msg: JointTrajectory, path: list[JointTolerance] | None = None,
               goal: list[JointTolerance] | None = None, goal_time: float = 0.0,
               canceled: Callable[[], bool] = lambda: False) -> RunHandle:
        """Validate a trajectory (and an action goal's tolerances) and start it in the loop;
        raises :class:`CommandRejectedError` with the reason (counted in the loop's diagnostics;
        CANCELED, not counted, when ``canceled()`` became true while the loop checked it)."""
        try:
            trajectory, tolerances = self._validated(msg, path, goal, goal_time)
        except CommandRejectedError:
            self.loop.count_rejection()
            raise
        try:
            return self.loop.start_trajectory(trajectory, tolerances, timeout=LOOP_ANSWER_TIMEOUT, canceled=canceled)
        except RemoteError as error:
            raise CommandRejectedError(ErrorCode.DRIVER_FAILURE, str(error)) from None

    def _validated(self, msg: JointTrajectory, path: list[JointTolerance] | None,
                   goal: list[JointTolerance] | None, goal_time: float):
        limit = self.params.max_trajectory_points
        if len(msg.points) > limit:  # before converting every point
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"the trajectory has {len(msg.points)} points, more than max_trajectory_points = {limit}: "
                "split it into several goals (or raise the parameter)")
        stamp = seconds(msg.header.stamp)
        points = [PointData(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations)
                  for p in msg.points]
        trajectory = self.validator.trajectory(msg.joint_names, points, self.start_positions(),
                                               start_time=self.clock.from_ros(stamp) if stamp > 0.0 else None,
                                               now=self.now())

        def specs(entries: list[JointTolerance] | None) -> tuple[ToleranceSpec, ...]:
            return tuple(ToleranceSpec(e.name, e.position, e.velocity, e.acceleration) for e in entries or ())

        tolerances = trajectory_tolerances(self.params, trajectory.joint_names, specs(path), specs(goal), goal_time)
        return trajectory, tolerances

    # -- action ---------------------------------------------------------------------
    def _on_goal(self, _goal) -> GoalResponse:
        # Every goal is accepted and validated in execute, so that a rejection carries an
        # error code and a message in the result (a plain REJECT carries neither).
        return GoalResponse.REJECT if self._stopping else GoalResponse.ACCEPT

    def _execute_goal(self, goal_handle) -> FollowJointTrajectory.Result:
        code, message = self._follow(goal_handle, FollowJointTrajectory.Feedback)
        return FollowJointTrajectory.Result(error_code=int(code), error_string=message)

    def _execute_standard_goal(self, goal_handle) -> StandardFollowJointTrajectory.Result:
        problem = unsupported_parts(goal_handle.request)
        if problem is not None:
            self._log.error(f"{topics.STANDARD_FOLLOW_JOINT_TRAJECTORY} goal rejected (INVALID_GOAL): {problem}")
            goal_handle.abort()
            return StandardFollowJointTrajectory.Result(error_code=StandardFollowJointTrajectory.Result.INVALID_GOAL,
                                                        error_string=problem)
        return standard_result(*self._follow(goal_handle, StandardFollowJointTrajectory.Feedback))

    def _follow(self, goal_handle, feedback_type: type) -> tuple[ErrorCode, str]:
        """A trajectory goal (either action's) validated, started and followed to its end, with
        feedback of ``feedback_type``; the goal's status set; returns the result's code and text."""
        goal = goal_handle.request
        try:
            run = self._start(goal.trajectory, goal.path_tolerance, goal.goal_tolerance,
                              seconds(goal.goal_time_tolerance), canceled=lambda: goal_handle.is_cancel_requested)
        except CommandRejectedError as error:
            with self._following_lock:
                self._cancel_asked.discard(bytes(goal_handle.goal_id.uuid))
            if error.code is ErrorCode.CANCELED:
                self._log.info(f"follow_joint_trajectory: {error}")
                goal_handle.canceled()
            else:
                self._log.error(f"follow_joint_trajectory goal rejected ({error.code.name}): {error}")
                goal_handle.abort()
            return error.code, str(error)
        point_times = [seconds(p.time_from_start) for p in goal.trajectory.points]
        key = bytes(goal_handle.goal_id.uuid)
        with self._following_lock:
            self._following[key] = run
            asked = key in self._cancel_asked  # forgotten with the run (finally below)
        if asked:  # its cancel came while the run was being started: stopped now, not at a feedback poll
            self.loop.stop(run)
        try:
            self._publish_started(goal_handle, run, feedback_type)
            period = 1.0 / self.params.feedback_rate
            while not run.done.wait(period):
                if goal_handle.is_cancel_requested:  # a cancel that came before the run was known
                    self.loop.stop(run)
                    break
                self._publish_feedback(goal_handle, run, feedback_type, point_times)
            run.done.wait()
        finally:
            with self._following_lock:
                self._following.pop(key, None)
                self._cancel_asked.discard(key)
        if run.state is RunState.SUCCEEDED:
            goal_handle.succeed()
        elif run.state is RunState.CANCELED:
            # stopped from the cancel's callback: the goal is canceling once rclpy has taken the
            # callback's answer, a moment later (canceled() before that is refused: aborted)
            deadline = time.monotonic() + CANCELING_WAIT
            while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
                time.sleep(0.001)
            goal_handle.canceled()
        else:
            goal_handle.abort()
        if run.code is not ErrorCode.SUCCESSFUL:
            self._log.warning(f"follow_joint_trajectory: {run.state.value}: {run.message}")
        return run.code, run.message

    def _on_cancel(self, goal_handle) -> CancelResponse:
        """A goal's cancel stops its run from here, in the order the node took the requests: in
        lockstep it reaches the loop before the answer the client sent after it, at the same
        state in every run (a stop at the goal's next feedback poll came at a wall-clock moment)."""
        key = bytes(goal_handle.goal_id.uuid)
        with self._following_lock:
            run = self._following.get(key)
            if run is None:  # its run not known yet (being started): the goal's body stops it once it is
                self._cancel_asked.add(key)
        if run is not None:
            self.loop.stop(run)
        return CancelResponse.ACCEPT

    def _publish_started(self, goal_handle, run: RunHandle, feedback_type: type) -> None:
        """Feedback at once when the trajectory has started in the loop: a client that waits
        for it (a lockstep participant) knows its goal is in force."""
        now = self.now()
        current = self.current_positions()[[self.model.joints.index(name) for name in run.joint_names]]
        still = np.zeros(len(run.joint_names))
        msg = feedback_type()
        msg.header.stamp = to_time(self.clock.to_ros(now))
        msg.joint_names = list(run.joint_names)
        msg.desired, msg.actual, msg.error = (_point(current, still, 0.0), _point(current, still, 0.0),
                                              _point(still, still, 0.0))
        goal_handle.publish_feedback(msg)

    def _publish_feedback(self, goal_handle, run: RunHandle, feedback_type: type, point_times: list[float]) -> None:
        feedback = run.feedback
        if feedback is None:
            return
        msg = feedback_type()
        if hasattr(msg, "index"):  # control_msgs (Kilted on): the point being approached
            msg.index = min(bisect.bisect_left(point_times, feedback.time_from_start), max(0, len(point_times) - 1))
        msg.header.stamp = to_time(self.clock.to_ros(feedback.stamp))
        msg.joint_names = list(run.joint_names)
        msg.desired = _point(feedback.desired_position, feedback.desired_velocity, feedback.time_from_start,
                             feedback.desired_acceleration)
        msg.actual = _point(feedback.actual_position, feedback.actual_velocity, feedback.time_from_start)
        msg.error = _point(feedback.position_error, feedback.velocity_error, feedback.time_from_start)
        goal_handle.publish_feedback(msg)


def _point(positions: np.ndarray, velocities: np.ndarray, t: float,
           accelerations: np.ndarray | None = None) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint()
    point.positions = positions.tolist()
    point.velocities = velocities.tolist()
    if accelerations is not None:
        point.accelerations = accelerations.tolist()
    point.time_from_start = to_duration(t)
    return point
