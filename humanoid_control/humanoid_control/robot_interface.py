"""The shared robot interface: one ROS front, written once, served by sim and hw alike.

It owns every topic, action and service of the robot interface and talks to the
robot only through a :class:`~humanoid_control.driver.RobotDriver`:

========================== ============================================ ===========
name                       type                                         direction
========================== ============================================ ===========
joint_states               sensor_msgs/JointState                       published
joint_commands             sensor_msgs/JointState (streaming set-points) subscribed
joint_trajectory           trajectory_msgs/JointTrajectory              subscribed
follow_joint_trajectory    humanoid_interfaces/action/FollowJointTrajectory action
robot_description          std_msgs/String (transient local)            published
diagnostics                diagnostic_msgs/DiagnosticArray              published
imu/data                   sensor_msgs/Imu (if the robot has one)        published
<side>_foot/wrench         geometry_msgs/WrenchStamped (if available)   published
<side>_foot/contact        std_msgs/Bool (if available)                 published
========================== ============================================ ===========

``joint_states`` carries staleness: a joint whose reading is stale (not read this
cycle: a silent servo) is listed with NaN position, velocity and effort, and the
message is stamped with the time of the read; when no joint at all was read (the bus
is gone) nothing is published.

A topic the control thread publishes is not filled nor published while no subscription
is matched to it (:mod:`humanoid_control.matched_publisher`): its messages would reach
nobody, and each publish costs tens of microseconds of the control thread. The sensors
are read only while one of their topics has a subscriber; after a time without, the first
reading only primes the next one (a simulated IMU differentiates its velocity between
consecutive readings, which must be one publishing period apart), so the first sensor
messages come one period after the subscription was matched.

This module is only the ROS side: topics, the action and the clock mapping. The
real-time part (driver, executor, validation, command guard, rate metering) is the
ROS-free :class:`~humanoid_control.control_loop.ControlLoop`, which runs in its own
thread; ROS callbacks run in a multi-threaded executor, convert messages to plain
data and hand them to the loop, which does the per-command work in the callback's
thread. Driver-clock times are stamped as ROS time through
:class:`~humanoid_control.ros_time.DriverClock`.
"""

from __future__ import annotations

import math

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.command_guard import CommandGuard
from humanoid_control.control_loop import ControlLoop, CycleHook, ToleranceSpec, TrajectoryRequest
from humanoid_control.decimation import Decimator
from humanoid_control.driver import JointState, Level, RobotDriver, SensorReadings, StatusEntry
from humanoid_control.interface_parameters import InterfaceParameters
from humanoid_control.matched_publisher import STREAM_HISTORY, MatchedPublisher
from humanoid_control.parameters import declare_dataclass
from humanoid_control.ros_time import DriverClock, seconds, to_duration, to_time
from humanoid_control.trajectory_executor import RunState, TrajectoryRun
from humanoid_control.validation import CommandRejectedError, ErrorCode, PointData
from humanoid_description.model import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_interfaces.msg import JointTolerance

__all__ = ["InterfaceParameters", "RobotInterface"]


class RobotInterface:
    """The ROS front of one robot driver (its control loop is :attr:`loop`)."""

    def __init__(self, node: Node, driver: RobotDriver, model: RobotModel,
                 params: InterfaceParameters | None = None, guard: CommandGuard | None = None) -> None:
        self.node = node
        self.driver = driver
        self.model = model
        self.params = params or declare_dataclass(node, InterfaceParameters)
        self.names = model.joints.names
        self.loop = ControlLoop(driver, model.joints, self.params, guard, on_exception=self._on_loop_exception)
        self.clock = DriverClock(driver.now, None if driver.clock_is_ros_time
                                 else lambda: node.get_clock().now().nanoseconds * 1e-9)
        self._log = node.get_logger()
        self._publishing = Decimator(self.params.publish_rate, "publish_rate")
        self._withheld = 0  # cycles due to publish in which no joint was read
        self._stale_readings = 0  # joint readings published as NaN

        group = ReentrantCallbackGroup()
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self._description_pub = (node.create_publisher(String, "robot_description", latched)
                                 if self.params.publish_robot_description else None)
        self._joint_state_pub = MatchedPublisher(node, JointStateMsg, "joint_states", STREAM_HISTORY)
        self._joint_state_msg = JointStateMsg(name=list(self.names))
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, "diagnostics", 10)
        # Each command replaces the one before: commands of a topic are taken one at a time, in
        # the order sent (in parallel threads an older trajectory, accepted last, replaced a
        # newer one), and of trajectories sent faster than they are checked only the latest is
        # kept (the others would be replaced on arrival, and waited for meanwhile).
        node.create_subscription(JointStateMsg, "joint_commands", self._on_joint_commands, 10,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        node.create_subscription(JointTrajectory, "joint_trajectory", self._on_joint_trajectory,
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE),
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self._action = ActionServer(
            node, FollowJointTrajectory, "follow_joint_trajectory",
            execute_callback=self._execute_goal, goal_callback=self._on_goal,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=group)
        self._imu_pub: MatchedPublisher | None = None
        self._foot_pubs: dict[str, tuple] = {}
        self._sensors_current = False  # the sensors were read at the previous publishing time
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics, callback_group=group)
        self.loop.add_cycle_hook(self._on_cycle)

    # -- life cycle ---------------------------------------------------------------------
    def add_cycle_hook(self, hook: CycleHook) -> None:
        """Call ``hook(state)`` once per control cycle, in the control thread (keep it cheap)."""
        self.loop.add_cycle_hook(hook)

    def start(self) -> None:
        self.loop.start()
        sensors = self.driver.read_sensors()
        self._create_sensor_publishers(sensors)
        self._sensors_current = sensors is not None
        if self._description_pub is not None:
            self._description_pub.publish(String(data=self.model.urdf))
        self.loop.run_in_thread()
        self._log.info(f"robot interface up: {len(self.names)} joints, control {self.params.control_rate:g} Hz, "
                       f"joint_states {self.params.publish_rate:g} Hz")

    def stop(self) -> None:
        """Stop the loop, end any run, release the robot (hold or limp, as the driver is configured)."""
        self.loop.stop()

    def hold(self, positions) -> None:
        """Make every joint hold ``positions`` (a reset: see :meth:`ControlLoop.hold`)."""
        self.loop.hold(positions)

    @property
    def state(self) -> JointState | None:
        return self.loop.state

    def _on_loop_exception(self, error: BaseException) -> None:
        if not self.node.context.ok():  # ROS is shutting down under us (SIGINT/SIGTERM)
            return
        raise error

    # -- publishing (control thread) -----------------------------------------------------
    def _on_cycle(self, state: JointState) -> None:
        if self._publishing.due(state.stamp):
            self._publish_state(state)

    def _publish_state(self, state: JointState) -> None:
        """joint_states with staleness: NaN for joints not read, nothing when none was read."""
        valid = state.valid
        if not valid.all():
            if not valid.any():
                self._withheld += 1
                self._sensors_current = False
                return
            self._stale_readings += int(np.count_nonzero(~valid))
        if self._joint_state_pub.subscribed:
            msg = self._joint_state_msg  # one message, refilled (only the control thread publishes it)
            msg.header.stamp = to_time(self.clock.to_ros(state.stamp))
            if valid.all():
                msg.position, msg.velocity, msg.effort = (state.position.tolist(), state.velocity.tolist(),
                                                          state.effort.tolist())
            else:
                msg.position, msg.velocity, msg.effort = (
                    np.where(valid, values, math.nan).tolist()
                    for values in (state.position, state.velocity, state.effort))
            self._joint_state_pub.publish(msg)
        self._read_sensors()

    def _read_sensors(self) -> None:
        """Read and publish the sensors while anyone listens; the first reading after a time
        without primes the next one (see the module docstring)."""
        imu_wanted = self._imu_pub is not None and self._imu_pub.subscribed
        if not imu_wanted and not any(wrench.subscribed or contact.subscribed
                                      for wrench, contact, _, _ in self._foot_pubs.values()):
            self._sensors_current = False
            return
        sensors = self.driver.read_sensors()
        if sensors is not None and self._sensors_current:
            self._publish_sensors(sensors)
        self._sensors_current = sensors is not None

    def _create_sensor_publishers(self, sensors: SensorReadings | None) -> None:
        if sensors is None:
            return
        if sensors.imu is not None:
            self._imu_pub = MatchedPublisher(self.node, Imu, "imu/data", STREAM_HISTORY)
            self._imu_msg = Imu()
        for foot in sensors.feet:
            self._foot_pubs[foot.side] = (
                MatchedPublisher(self.node, WrenchStamped, f"{foot.side}_foot/wrench", STREAM_HISTORY),
                MatchedPublisher(self.node, Bool, f"{foot.side}_foot/contact", STREAM_HISTORY), WrenchStamped(), Bool())

    def _publish_sensors(self, sensors: SensorReadings) -> None:
        """IMU and feet, to the topics someone subscribes to; the messages are refilled each
        time (only the control thread publishes them)."""
        stamp = to_time(self.clock.to_ros(sensors.stamp))
        if sensors.imu is not None and self._imu_pub is not None and self._imu_pub.subscribed:
            imu = self._imu_msg
            imu.header.stamp, imu.header.frame_id = stamp, sensors.imu.frame
            (imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w) = sensors.imu.orientation
            (imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z) = sensors.imu.angular_velocity
            (imu.linear_acceleration.x, imu.linear_acceleration.y,
             imu.linear_acceleration.z) = sensors.imu.linear_acceleration
            self._imu_pub.publish(imu)
        for foot in sensors.feet:
            if foot.side not in self._foot_pubs:
                continue
            wrench_pub, contact_pub, wrench, contact = self._foot_pubs[foot.side]
            if wrench_pub.subscribed:
                wrench.header.stamp, wrench.header.frame_id = stamp, foot.frame
                (wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z) = foot.force
                (wrench.wrench.torque.x, wrench.wrench.torque.y, wrench.wrench.torque.z) = foot.torque
                wrench_pub.publish(wrench)
            if contact_pub.subscribed:
                contact.data = foot.contact
                contact_pub.publish(contact)

    def _publish_diagnostics(self) -> None:
        state = self.state
        status = self.loop.status()
        stamp = self.clock.to_ros(state.stamp) if state is not None else 0.0
        entries = [StatusEntry(
            name=f"{self.node.get_name()}: control loop",
            level=Level.ERROR if status.error else Level.OK,
            message=status.error or "running",
            values={"loop_rate_hz": f"{status.loop_rate_hz:.1f}", "real_time_factor": f"{status.real_time_factor:.3f}",
                    "cycles": str(status.cycles), "commands_rejected": str(status.commands_rejected),
                    "driver_errors": str(status.driver_errors),
                    "joint_states_withheld": str(self._withheld),
                    "stale_joint_readings_published": str(self._stale_readings)})]
        entries.extend(self.loop.guard.status())
        entries.extend(self.driver.status())
        msg = DiagnosticArray()
        msg.header.stamp = to_time(stamp)
        for entry in entries:
            diagnostic = DiagnosticStatus(level=bytes([int(entry.level)]), name=entry.name, message=entry.message,
                                          hardware_id=self.model.name)
            diagnostic.values = [KeyValue(key=k, value=v) for k, v in entry.values.items()]
            msg.status.append(diagnostic)
        self._diagnostics_pub.publish(msg)

    # -- commands (callback threads) ---------------------------------------------------
    def _on_joint_commands(self, msg: JointStateMsg) -> None:
        try:
            setpoint = self.loop.stream(msg.name, msg.position, msg.velocity)
        except CommandRejectedError as error:
            self._log.error(f"joint_commands rejected: {error}", throttle_duration_sec=1.0)
            return
        for warning in setpoint.warnings:
            self._log.warning(f"joint_commands: {warning}", throttle_duration_sec=1.0)

    def _on_joint_trajectory(self, msg: JointTrajectory) -> None:
        if len(msg.points) == 0:
            self.loop.stop_trajectory(state=RunState.PREEMPTED, code=ErrorCode.PREEMPTED,
                                      message="stopped by an empty trajectory on joint_trajectory")
            self._log.info("joint_trajectory: empty trajectory, holding position")
            return
        try:
            self.loop.accept_trajectory(self._request(msg))
        except CommandRejectedError as error:
            self._log.error(f"joint_trajectory rejected ({error.code.name}): {error}")

    def _request(self, msg: JointTrajectory, path: list[JointTolerance] | None = None,
                 goal: list[JointTolerance] | None = None, goal_time: float = 0.0) -> TrajectoryRequest:
        """The plain-data request of a trajectory message (and an action goal's tolerances)."""
        limit = self.params.max_trajectory_points
        if len(msg.points) > limit:  # before converting every point
            self.loop.count_rejection()
            raise CommandRejectedError(
                ErrorCode.INVALID_GOAL,
                f"the trajectory has {len(msg.points)} points, more than max_trajectory_points = {limit}: "
                "split it into several goals (or raise the parameter)")
        stamp = seconds(msg.header.stamp)
        points = [PointData(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations)
                  for p in msg.points]

        def specs(entries: list[JointTolerance] | None) -> tuple[ToleranceSpec, ...]:
            return tuple(ToleranceSpec(e.name, e.position, e.velocity, e.acceleration) for e in entries or ())

        return TrajectoryRequest(msg.joint_names, points,
                                 start_time=self.clock.from_ros(stamp) if stamp > 0.0 else None,
                                 path_tolerance=specs(path), goal_tolerance=specs(goal),
                                 goal_time_tolerance=goal_time)

    # -- action ---------------------------------------------------------------------
    def _on_goal(self, _goal) -> GoalResponse:
        # Every goal is accepted and validated in execute, so that a rejection carries an
        # error code and a message in the result (a plain REJECT carries neither).
        return GoalResponse.REJECT if self.loop.stopping else GoalResponse.ACCEPT

    def _execute_goal(self, goal_handle) -> FollowJointTrajectory.Result:
        goal = goal_handle.request
        try:
            request = self._request(goal.trajectory, goal.path_tolerance, goal.goal_tolerance,
                                    seconds(goal.goal_time_tolerance))
            run = self.loop.accept_trajectory(request, canceled=lambda: goal_handle.is_cancel_requested)
        except CommandRejectedError as error:
            if error.code is ErrorCode.CANCELED:
                self._log.info(f"follow_joint_trajectory: {error}")
                goal_handle.canceled()
            else:
                self._log.error(f"follow_joint_trajectory goal rejected ({error.code.name}): {error}")
                goal_handle.abort()
            return FollowJointTrajectory.Result(error_code=int(error.code), error_string=str(error))
        period = 1.0 / self.params.feedback_rate
        while not run.done.wait(period):
            if goal_handle.is_cancel_requested:
                self.loop.stop_trajectory(run)
                break
            self._publish_feedback(goal_handle, run)
        run.done.wait()
        if run.state is RunState.SUCCEEDED:
            goal_handle.succeed()
        elif run.state is RunState.CANCELED:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        if run.code is not ErrorCode.SUCCESSFUL:
            self._log.warning(f"follow_joint_trajectory: {run.state.value}: {run.message}")
        return FollowJointTrajectory.Result(error_code=int(run.code), error_string=run.message)

    def _publish_feedback(self, goal_handle, run: TrajectoryRun) -> None:
        feedback = run.feedback
        if feedback is None:
            return
        msg = FollowJointTrajectory.Feedback()
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
