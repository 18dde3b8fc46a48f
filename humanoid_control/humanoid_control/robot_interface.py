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

The control loop runs in its own thread (no ROS calls but publishing in the hot
path); ROS callbacks run in a multi-threaded executor. Commands are validated here,
once (:mod:`humanoid_control.validation`), and executed by
:class:`~humanoid_control.trajectory_executor.TrajectoryExecutor`.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.decimation import Decimator
from humanoid_control.driver import DriverError, JointState, Level, RobotDriver, SensorReadings, StatusEntry
from humanoid_control.parameters import declare
from humanoid_control.ros_time import seconds, to_duration, to_time
from humanoid_control.trajectory_executor import RunState, Tolerances, TrajectoryExecutor, TrajectoryRun
from humanoid_control.validation import (
    CommandRejectedError,
    CommandValidator,
    ErrorCode,
    PointData,
    ValidatedTrajectory,
)
from humanoid_description.model import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_interfaces.msg import JointTolerance

CycleHook = Callable[[JointState], None]


@dataclass(frozen=True)
class InterfaceParameters:
    """ROS parameters of the front (declared on the node with these defaults)."""

    control_rate: float = 200.0  # Hz, control loop (trajectory sampling, driver write)
    publish_rate: float = 100.0  # Hz, joint_states and sensors
    feedback_rate: float = 20.0  # Hz, action feedback
    diagnostics_rate: float = 1.0  # Hz
    goal_position_tolerance: float = 0.05  # rad, default when a goal gives 0
    path_position_tolerance: float = 0.0  # rad, default when a goal gives 0; 0 = not checked
    goal_time_tolerance: float = 1.0  # s, default when a goal gives 0
    start_tolerance: float = 0.1  # rad, a point at time 0 may be this far from the robot

    @classmethod
    def declare(cls, node: Node, defaults: dict | None = None) -> InterfaceParameters:
        """Declare the parameters on ``node``; ``defaults`` (e.g. from a robot's YAML) replace
        the built-in defaults, and values given on the command line win over both."""
        params = cls(**{name: declare(node, name, default, defaults) for name, default in cls().__dict__.items()})
        for name in ("control_rate", "publish_rate", "feedback_rate", "diagnostics_rate"):
            if getattr(params, name) <= 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(params, name)}")
        return params


class RobotInterface:
    """The ROS front of one robot driver."""

    def __init__(self, node: Node, driver: RobotDriver, model: RobotModel,
                 params: InterfaceParameters | None = None) -> None:
        self.node = node
        self.driver = driver
        self.model = model
        self.params = params or InterfaceParameters.declare(node)
        self.names = model.joints.names
        if tuple(driver.joint_names) != tuple(self.names):
            raise ValueError(f"driver joints {driver.joint_names} differ from the model's {self.names}")
        self.validator = CommandValidator(model.joints, start_tolerance=self.params.start_tolerance)
        self.executor = TrajectoryExecutor(self.names)
        self._log = node.get_logger()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._hooks: list[CycleHook] = []
        self._state: JointState | None = None
        self._state_lock = threading.Lock()
        self._stats = {"cycles": 0, "rejected": 0, "errors": 0}
        self._loop_error = ""
        self._rate_window: tuple[float, float, int] | None = None  # wall, driver time, cycles
        self._rates = (math.nan, math.nan)  # loop Hz (wall), real-time factor

        group = ReentrantCallbackGroup()
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self._description_pub = node.create_publisher(String, "robot_description", latched)
        self._joint_state_pub = node.create_publisher(JointStateMsg, "joint_states", 10)
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, "diagnostics", 10)
        node.create_subscription(JointStateMsg, "joint_commands", self._on_joint_commands, 10,
                                 callback_group=group)
        node.create_subscription(JointTrajectory, "joint_trajectory", self._on_joint_trajectory, 10,
                                 callback_group=group)
        self._action = ActionServer(
            node, FollowJointTrajectory, "follow_joint_trajectory",
            execute_callback=self._execute_goal, goal_callback=self._on_goal,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT, callback_group=group)
        self._imu_pub = None
        self._foot_pubs: dict[str, tuple] = {}
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics, callback_group=group)

    # -- life cycle ---------------------------------------------------------------------
    def add_cycle_hook(self, hook: CycleHook) -> None:
        """Call ``hook(state)`` once per control cycle, in the control thread (keep it cheap)."""
        self._hooks.append(hook)

    def start(self) -> None:
        state = self.driver.start()
        self._set_state(state)
        self.executor.hold(state.position)
        self._create_sensor_publishers(self.driver.read_sensors())
        self._description_pub.publish(String(data=self.model.urdf))
        self._thread = threading.Thread(target=self._loop, name="control-loop", daemon=True)
        self._thread.start()
        self._log.info(f"robot interface up: {len(self.names)} joints, control {self.params.control_rate:g} Hz, "
                       f"joint_states {self.params.publish_rate:g} Hz")

    def stop(self) -> None:
        """Stop the loop, end any run, release the robot (hold or limp, as the driver is configured)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self.executor.stop(state=RunState.ABORTED, code=ErrorCode.DRIVER_FAILURE,
                           message="the robot interface is shutting down")
        self.driver.close()

    def hold_current(self) -> None:
        """Make every joint hold its measured position (after a reset, for instance)."""
        state = self.driver.read()
        self._set_state(state)
        self.executor.hold(state.position)

    @property
    def state(self) -> JointState | None:
        with self._state_lock:
            return self._state

    def _set_state(self, state: JointState) -> None:
        with self._state_lock:
            self._state = state

    # -- control loop -----------------------------------------------------------------
    def _loop(self) -> None:
        period = 1.0 / self.params.control_rate
        publishing = Decimator(self.params.publish_rate)
        while not self._stop.is_set():
            try:
                self.driver.sync(period)
                state = self.driver.read()
                self._set_state(state)
                self.driver.write(self.executor.update(state))
                for hook in self._hooks:
                    hook(state)
                if publishing.due(state.stamp):
                    self._publish_state(state)
                self._stats["cycles"] += 1
                self._measure_rates(state.stamp)
                self._loop_error = ""
            except DriverError as error:
                self._stats["errors"] += 1
                self._loop_error = str(error)
                self._log.error(f"driver: {error}", throttle_duration_sec=1.0)
                self._stop.wait(period)
            except Exception:
                if not self.node.context.ok():  # ROS is shutting down under us (SIGINT/SIGTERM)
                    return
                raise

    def _measure_rates(self, stamp: float) -> None:
        wall = time.monotonic()
        if self._rate_window is None:
            self._rate_window = (wall, stamp, self._stats["cycles"])
            return
        wall0, stamp0, cycles0 = self._rate_window
        if wall - wall0 >= 1.0:
            self._rates = ((self._stats["cycles"] - cycles0) / (wall - wall0), (stamp - stamp0) / (wall - wall0))
            self._rate_window = (wall, stamp, self._stats["cycles"])

    # -- publishing -----------------------------------------------------------------
    def _publish_state(self, state: JointState) -> None:
        msg = JointStateMsg()
        msg.header.stamp = to_time(state.stamp)
        msg.name = list(self.names)
        msg.position = state.position.tolist()
        msg.velocity = state.velocity.tolist()
        msg.effort = state.effort.tolist()
        self._joint_state_pub.publish(msg)
        sensors = self.driver.read_sensors()
        if sensors is not None:
            self._publish_sensors(sensors)

    def _create_sensor_publishers(self, sensors: SensorReadings | None) -> None:
        if sensors is None:
            return
        if sensors.imu is not None:
            self._imu_pub = self.node.create_publisher(Imu, "imu/data", 10)
        for foot in sensors.feet:
            self._foot_pubs[foot.side] = (
                self.node.create_publisher(WrenchStamped, f"{foot.side}_foot/wrench", 10),
                self.node.create_publisher(Bool, f"{foot.side}_foot/contact", 10))

    def _publish_sensors(self, sensors: SensorReadings) -> None:
        stamp = to_time(sensors.stamp)
        if sensors.imu is not None and self._imu_pub is not None:
            imu = Imu()
            imu.header.stamp, imu.header.frame_id = stamp, sensors.imu.frame
            (imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w) = sensors.imu.orientation
            (imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z) = sensors.imu.angular_velocity
            (imu.linear_acceleration.x, imu.linear_acceleration.y,
             imu.linear_acceleration.z) = sensors.imu.linear_acceleration
            self._imu_pub.publish(imu)
        for foot in sensors.feet:
            if foot.side not in self._foot_pubs:
                continue
            wrench_pub, contact_pub = self._foot_pubs[foot.side]
            wrench = WrenchStamped()
            wrench.header.stamp, wrench.header.frame_id = stamp, foot.frame
            (wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z) = foot.force
            (wrench.wrench.torque.x, wrench.wrench.torque.y, wrench.wrench.torque.z) = foot.torque
            wrench_pub.publish(wrench)
            contact_pub.publish(Bool(data=foot.contact))

    def _publish_diagnostics(self) -> None:
        state = self.state
        stamp = state.stamp if state is not None else 0.0
        loop_hz, rtf = self._rates
        entries = [StatusEntry(
            name=f"{self.node.get_name()}: control loop",
            level=Level.ERROR if self._loop_error else Level.OK,
            message=self._loop_error or "running",
            values={"loop_rate_hz": f"{loop_hz:.1f}", "real_time_factor": f"{rtf:.3f}",
                    "cycles": str(self._stats["cycles"]), "commands_rejected": str(self._stats["rejected"]),
                    "driver_errors": str(self._stats["errors"])})]
        entries.extend(self.driver.status())
        msg = DiagnosticArray()
        msg.header.stamp = to_time(stamp)
        for entry in entries:
            status = DiagnosticStatus(level=bytes([int(entry.level)]), name=entry.name, message=entry.message,
                                      hardware_id=self.model.name)
            status.values = [KeyValue(key=k, value=v) for k, v in entry.values.items()]
            msg.status.append(status)
        self._diagnostics_pub.publish(msg)

    # -- commands -------------------------------------------------------------------
    def _current_positions(self) -> np.ndarray:
        state = self.state
        return state.position if state is not None else np.zeros(len(self.names))

    def _reject(self, source: str, error: CommandRejectedError) -> None:
        self._stats["rejected"] += 1
        self._log.error(f"{source} rejected ({error.code.name}): {error}")

    def _on_joint_commands(self, msg: JointStateMsg) -> None:
        try:
            setpoint = self.validator.setpoint(msg.name, msg.position, msg.velocity)
        except CommandRejectedError as error:
            self._stats["rejected"] += 1
            self._log.error(f"joint_commands rejected: {error}", throttle_duration_sec=1.0)
            return
        for warning in setpoint.warnings:
            self._log.warning(f"joint_commands: {warning}", throttle_duration_sec=1.0)
        self.executor.stream(setpoint)

    def _on_joint_trajectory(self, msg: JointTrajectory) -> None:
        if len(msg.points) == 0:
            self.executor.stop(state=RunState.PREEMPTED, code=ErrorCode.PREEMPTED,
                               message="stopped by an empty trajectory on joint_trajectory")
            self._log.info("joint_trajectory: empty trajectory, holding position")
            return
        try:
            trajectory = self._validate(msg)
        except CommandRejectedError as error:
            self._reject("joint_trajectory", error)
            return
        self.executor.run(trajectory, self._tolerances(trajectory.joint_names, [], [], 0.0), self.driver.now())

    def _validate(self, msg: JointTrajectory) -> ValidatedTrajectory:
        stamp = seconds(msg.header.stamp)
        points = [PointData(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations)
                  for p in msg.points]
        return self.validator.trajectory(msg.joint_names, points, self._current_positions(),
                                         start_time=stamp if stamp > 0.0 else None, now=self.driver.now())

    def _tolerances(self, joint_names: Sequence[str], path: Sequence[JointTolerance],
                    goal: Sequence[JointTolerance], goal_time: float) -> Tolerances:
        """Per-joint tolerances: 0 = the default parameter, < 0 = not checked."""
        names = list(joint_names)

        def table(entries: Sequence[JointTolerance], default: float) -> np.ndarray:
            values = np.full(len(names), default if default > 0.0 else math.inf)
            for entry in entries:
                if entry.name not in names:
                    raise CommandRejectedError(ErrorCode.INVALID_JOINTS,
                                          f"tolerance given for joint {entry.name!r}, which is not in the trajectory")
                if entry.position < 0.0:
                    values[names.index(entry.name)] = math.inf
                elif entry.position > 0.0:
                    values[names.index(entry.name)] = entry.position
            return values

        return Tolerances(path=table(path, self.params.path_position_tolerance),
                          goal=table(goal, self.params.goal_position_tolerance),
                          goal_time=goal_time if goal_time > 0.0 else self.params.goal_time_tolerance)

    # -- action ---------------------------------------------------------------------
    def _on_goal(self, _goal) -> GoalResponse:
        # Every goal is accepted and validated in execute, so that a rejection carries an
        # error code and a message in the result (a plain REJECT carries neither).
        return GoalResponse.REJECT if self._stop.is_set() else GoalResponse.ACCEPT

    def _execute_goal(self, goal_handle) -> FollowJointTrajectory.Result:
        goal = goal_handle.request
        try:
            trajectory = self._validate(goal.trajectory)
            tolerances = self._tolerances(trajectory.joint_names, goal.path_tolerance, goal.goal_tolerance,
                                          seconds(goal.goal_time_tolerance))
        except CommandRejectedError as error:
            self._reject("follow_joint_trajectory goal", error)
            goal_handle.abort()
            return FollowJointTrajectory.Result(error_code=int(error.code), error_string=str(error))
        run = self.executor.run(trajectory, tolerances, self.driver.now())
        period = 1.0 / self.params.feedback_rate
        while not run.done.wait(period):
            if goal_handle.is_cancel_requested:
                self.executor.stop(run)
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
        msg.header.stamp = to_time(feedback.stamp)
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
