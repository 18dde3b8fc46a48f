"""The balance monitor node: CoM, ZMP, support polygon and margin, live, on sim and robot.

A thin ROS adapter around :class:`~humanoid_core.balance.estimator.BalanceEstimator`
(the computations, ROS-free). It knows nothing of the simulator or the bus: it reads the
robot interface's topics and uses whatever the robot has.

========================== ============================================= ==========
name                       type                                          direction
========================== ============================================= ==========
joint_states               sensor_msgs/JointState                        subscribed
robot_description          std_msgs/String (transient local)             subscribed
imu/data                   sensor_msgs/Imu (orientation)                 subscribed
<side>_foot/wrench         geometry_msgs/WrenchStamped (sole frame)      subscribed
<side>_foot/contact        std_msgs/Bool                                 subscribed
ground_truth/base_pose     geometry_msgs/PoseStamped (simulation)        subscribed
fallen                     std_msgs/Bool (simulation: logs the warning's lead) subscribed
balance_state              humanoid_interfaces/BalanceState              published
fall_state                 humanoid_interfaces/FallState (latched)       published
balance_markers            visualization_msgs/MarkerArray                published
diagnostics                diagnostic_msgs/DiagnosticArray               published
========================== ============================================= ==========

One ``balance_state`` per ``joint_states`` message, stamped with its stamp, in the
order they arrive (built only while a subscription listens: the estimate, ``fall_state``, the
warnings and diagnostics are made for every message); a joint state whose sensor readings of the same instant are late
(a busy machine) waits for them, up to ``sensor_patience``
(:mod:`humanoid_core.balance.sensor_wait`). Joints
that a message does not give (stale NaN, missing) keep their last known value
(:mod:`humanoid_control.ros.joint_readings`); what was missing is counted and reported in
diagnostics, and the CoM is never NaN. A message that cannot be read is counted,
logged and not answered.

``fall_state`` is the robot's own fall estimate (:mod:`humanoid_core.balance.fall`):
from the IMU's trunk tilt where the robot has one, else from the model's CoM far outside
the reach of its feet (flat feet assumed) for ``fall_hold``; never from the simulator's ground truth (``fallen``, kept
for tests). Stamped with the joint_states stamp it was made with, published at once when it
changes and at ``fall_state_rate`` otherwise, transient local: a controller that starts
later gets the latest. The controllers stop on it (walk, gait, play_motion).
Parameters: :class:`~humanoid_core.balance.parameters.BalanceParameters`,
per-robot values in ``humanoid_description/robots/<robot>/control.yaml`` (``balance_monitor:``).
"""

from __future__ import annotations

import collections
import math
import sys
import time

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point, Point32, PoseStamped, WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Bool, String
from visualization_msgs.msg import MarkerArray

from humanoid_control.ros import (
    FALL_STATE_QOS,
    JointReadings,
    MalformedJointStateError,
    MatchedPublisher,
    NodeHost,
    ThrottledLog,
    declare_control_node,
    frame_prefix,
    node_status,
    prefixed,
    run_node,
    seconds,
    topics,
    unprefixed,
)
from humanoid_control.ros.balance_markers import balance_markers
from humanoid_core.balance import (
    AlarmChange,
    BalanceEstimate,
    BalanceEstimator,
    BalanceInputs,
    BalanceParameters,
    BasePose,
    BaseSource,
    ContactSource,
    FallDetector,
    FallEstimate,
    FootWrench,
    MarginAlarm,
    RecentReadings,
    SensorWait,
    describe_margin,
)
from humanoid_core.balance.parameters import NODE_NAME
from humanoid_core.loop import Decimator, Level
from humanoid_description import RobotModel
from humanoid_interfaces.msg import BalanceState, FallState

#: Processing times kept for the latency figures of diagnostics.
LATENCY_WINDOW = 2000


class BalanceMonitor:
    """Subscriptions, publications and diagnostics around one estimator."""

    WATCHER = True  # in a container: takes each state after the nodes that command the robot

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        self.robot, self.params = declare_control_node(node, BalanceParameters, NODE_NAME)
        self._log = node.get_logger()
        self._throttled = ThrottledLog(self._log)
        self._set_model(RobotModel(self.robot))
        self.inputs = BalanceInputs()
        self.alarm = MarginAlarm(self.params.min_margin, self.params.warning_hysteresis, self.params.warning_clear_time)
        self._markers_due = Decimator(self.params.marker_rate, "marker_rate")
        self._latest: BalanceEstimate | None = None
        self._answered = 0
        self._last_issue = ""
        self._processing = collections.deque(maxlen=LATENCY_WINDOW)  # s, callback entry to publish
        self._input_age = collections.deque(maxlen=LATENCY_WINDOW)  # s, node clock at publish - stamp
        self._rate_window = (time.monotonic(), 0, 0)  # wall, messages, answered
        self._seen: dict[str, float] = {}  # topic -> wall time of its last message
        self._fallen = False
        self._wrench_stamps: dict[str, float] = {}
        self._truth_stamp: float | None = None
        #: the robot's frame prefix (``a/`` in namespace ``a``): taken off the frames read, put on those published
        self._frame_prefix = frame_prefix(node.get_namespace())
        self._messages = StateMessages(self._frame_prefix)
        p = self.params
        self.fall = FallDetector(p.fall_tilt, p.fall_tilt_hysteresis, p.fall_margin, p.fall_hold)
        self._fall_due = Decimator(p.fall_state_rate, "fall_state_rate")
        self._fall_estimate: FallEstimate | None = None
        self._fall_stamp: float | None = None  # robot time the estimate said fallen

        depth = self.params.queue_depth
        self._state_pub = MatchedPublisher(node, BalanceState, topics.BALANCE_STATE, depth)  # built when heard
        self._marker_pub = MatchedPublisher(node, MarkerArray, topics.BALANCE_MARKERS, 10)  # built only for a viewer
        self._fall_pub = node.create_publisher(FallState, topics.FALL_STATE, FALL_STATE_QOS)
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self.lockstep = host.lockstep(node)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_state, depth)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(String, topics.ROBOT_DESCRIPTION, self._on_description, latched)
        # sensors queue as deep as joint_states: every reading of a backlog gets its partner
        host.subscribe_state(node, PoseStamped, topics.BASE_POSE, self._on_base_pose, depth)
        host.subscribe_state(node, Imu, topics.IMU, self._on_imu, depth)
        for side in self.model.config.feet:
            host.subscribe_state(node, WrenchStamped, topics.foot_wrench(side),
                                 lambda msg, side=side: self._on_wrench(side, msg), depth)
            host.subscribe_state(node, Bool, topics.foot_contact(side),
                                 lambda msg, side=side: self._on_contact(side, msg), depth)
        host.subscribe_state(node, Bool, topics.FALLEN, self._on_fallen, 10)
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics)
        self._wait: SensorWait[JointState] = SensorWait(
            self._sensor_feeds, self._answer, self.params.sensor_timeout, self.params.sensor_patience, depth,
            time.monotonic)
        # the patience runs on the wall clock (a paused simulation stops the robot's)
        node.create_timer(self.params.sensor_patience / 2.0, self._wait.drain,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        p = self.params
        self._log.info(
            f"balance monitor for {self.robot}: min margin {p.min_margin * 1000:.1f} mm, CoM filter "
            f"{p.com_filter_cutoff:g} Hz (delay {self.estimator.filter_delay * 1000:.0f} ms), "
            f"foot load threshold {p.foot_load_threshold:g} N, markers {p.marker_rate:g} Hz in "
            f"{'the ground frame' if p.markers_in_ground_frame else self.model.root_link}")

    def _set_model(self, model: RobotModel) -> None:
        previous = getattr(self, "readings", None)
        self.model = model
        self.estimator = BalanceEstimator(model, self.params)
        self.readings = JointReadings(model.joints, model.home_positions())
        if previous is not None:  # keep what was measured
            self.readings.positions[:] = previous.positions
            self.readings.counts = previous.counts

    # -- inputs ---------------------------------------------------------------------
    def _on_description(self, msg: String) -> None:
        self._seen[topics.ROBOT_DESCRIPTION] = time.monotonic()
        if msg.data == self.model.urdf:
            return
        try:
            model = RobotModel(self.robot, urdf=msg.data)
        except Exception as error:  # a description that does not fit this robot's config
            self._log.error(f"robot_description not used (keeping the {self.robot} model): {error}")
            return
        self._set_model(model)
        self._log.info("using the robot_description the robot publishes (it differs from the installed xacro)")

    def _on_base_pose(self, msg: PoseStamped) -> None:
        self._seen[topics.BASE_POSE] = time.monotonic()
        p, o = msg.pose.position, msg.pose.orientation
        placement = pin.XYZQUATToSE3(np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w]))
        self._truth_stamp = seconds(msg.header.stamp)
        frame = unprefixed(self._frame_prefix, msg.header.frame_id)
        self.inputs.base_pose.add(self._truth_stamp, BasePose(frame, placement))
        self._wait.drain()

    def _on_imu(self, msg: Imu) -> None:
        self._seen[topics.IMU] = time.monotonic()
        o = msg.orientation
        norm = math.sqrt(o.x * o.x + o.y * o.y + o.z * o.z + o.w * o.w)
        if not norm > 0.5 or not math.isfinite(norm):  # no orientation estimate (all zeros) or garbage
            return
        rotation = pin.Quaternion(o.w / norm, o.x / norm, o.y / norm, o.z / norm).toRotationMatrix()
        self.inputs.imu_orientation.add(seconds(msg.header.stamp), np.array(rotation))
        self._wait.drain()

    def _on_wrench(self, side: str, msg: WrenchStamped) -> None:
        self._seen[topics.foot_wrench(side)] = time.monotonic()
        sole = self.model.config.feet[side].sole
        if unprefixed(self._frame_prefix, msg.header.frame_id) not in (sole, ""):
            self._throttled.error(f"{side}_foot/wrench ignored: expressed in {msg.header.frame_id!r}, "
                                  f"expected the sole frame {sole!r}", 10.0)
            return
        f, t = msg.wrench.force, msg.wrench.torque
        values = (f.x, f.y, f.z, t.x, t.y, t.z)
        if all(math.isfinite(v) for v in values):
            stamp = seconds(msg.header.stamp)
            self._wrench_stamps[side] = stamp
            self.inputs.wrenches.setdefault(side, RecentReadings()).add(
                stamp, FootWrench((f.x, f.y, f.z), (t.x, t.y, t.z)))
            self._wait.drain()

    def _on_contact(self, side: str, msg: Bool) -> None:
        self._seen[topics.foot_contact(side)] = time.monotonic()
        # Bool has no stamp: the robot publishes it right after the same foot's wrench
        stamp = self._wrench_stamps.get(side, self._latest.stamp if self._latest is not None else 0.0)
        self.inputs.contacts.setdefault(side, RecentReadings()).add(stamp, bool(msg.data))
        self._wait.drain()

    def _on_fallen(self, msg: Bool) -> None:
        if msg.data and not self._fallen:
            # `fallen` has no stamp: the simulator publishes it with the ground truth of the same
            # cycle, just after it (else: the robot clock now, the node running on sim time)
            now = self._truth_stamp if self._truth_stamp is not None else seconds(self.node.get_clock().now().to_msg())
            warned = self.alarm.last_raised_at
            if warned is not None:
                self._log.warning(f"the simulator reports a fall at t = {now:.3f} s: the balance warning "
                                  f"came {now - warned:.3f} s before it (t = {warned:.3f} s)")
            else:
                self._log.error(f"the simulator reports a fall at t = {now:.3f} s with no balance warning before it")
            if self._fall_stamp is not None:
                self._log.info(f"fall_state said fallen at t = {self._fall_stamp:.3f} s")
        self._fallen = bool(msg.data)

    # -- the update -----------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        self._seen[topics.JOINT_STATES] = time.monotonic()
        self._wait.offer(seconds(msg.header.stamp), msg)

    def _sensor_feeds(self) -> list[RecentReadings]:
        """The sensors' recent readings this monitor uses (a joint state waits for them)."""
        p, inputs = self.params, self.inputs
        feeds: list[RecentReadings] = []
        if p.use_ground_truth:
            feeds.append(inputs.base_pose)
        if p.use_imu:
            feeds.append(inputs.imu_orientation)
        if p.use_foot_sensors:
            feeds.extend(inputs.wrenches.values())
            feeds.extend(inputs.contacts.values())
        return feeds

    def _answer(self, msg: JointState) -> None:
        """One balance_state for one joint state, in the order they arrived (then, in lockstep,
        the simulator is told this state is handled)."""
        try:
            self._estimate(msg)
        finally:
            if self.lockstep is not None:
                self.lockstep.answered(msg.header.stamp)

    def _estimate(self, msg: JointState) -> None:
        started = time.perf_counter()
        try:
            issues = self.readings.update(msg.name, msg.position)
        except MalformedJointStateError as error:
            self._last_issue = f"joint_states not readable: {error}"
            self._throttled.error(self._last_issue, 1.0)
            return
        if issues:
            self._last_issue = f"joint_states: {issues.describe()} (last known values used)"
            self._throttled.warning(self._last_issue, 5.0)
        stamp = seconds(msg.header.stamp)
        estimate = self.estimator.update(stamp, self.readings.positions, self.inputs)
        if self._state_pub.heard:
            self._state_pub.publish(self._messages.state(estimate, msg.header.stamp))
        if self._markers_due.due(stamp) and self._marker_pub.heard:
            frame = None if self.params.markers_in_ground_frame else self.model.root_link
            self._marker_pub.publish(balance_markers(estimate, msg.header.stamp, self.params.min_margin, frame,
                                                     self._frame_prefix))
        self._latest = estimate
        self._answered += 1
        self._publish_fall(msg.header.stamp, stamp, estimate)
        event = self.alarm.update(stamp, estimate.margin)
        if event is not None:
            if event.change is AlarmChange.WARNING:  # rclpy: one severity per call site
                self._log.warning(event.describe(self.params.min_margin))
            else:
                self._log.info(event.describe(self.params.min_margin))
        self._processing.append(time.perf_counter() - started)
        if self._answered % 10 == 1:  # a sample is enough (reading the clock costs)
            self._input_age.append(seconds(self.node.get_clock().now().to_msg()) - stamp)

    def _publish_fall(self, header_stamp, stamp: float, estimate: BalanceEstimate) -> None:
        """The fall estimate of this reading: from the IMU reading of its instant if there is
        one, else from the model's support; published when it changes or is due."""
        imu = (self.inputs.imu_orientation.nearest(stamp, self.params.sensor_timeout)
               if self.params.use_imu and self.inputs.imu_orientation else None)
        fall = self.fall.from_imu(imu) if imu is not None else self.fall.from_support(estimate.reach_margin, stamp)
        previous = self._fall_estimate
        changed = previous is None or (fall.fallen, fall.posture) != (previous.fallen, previous.posture)
        self._fall_estimate = fall
        if changed and fall.fallen:
            self._fall_stamp = stamp
            self._log.error(f"the robot has fallen at t = {stamp:.3f} s: {fall.describe()}")
        elif changed and previous is not None and previous.fallen:
            self._fall_stamp = None
            self._log.info(f"the robot is up again at t = {stamp:.3f} s: {fall.describe()}")
        if self._fall_due.due(stamp) or changed:
            msg = FallState(fallen=fall.fallen, posture=fall.posture.value, tilt=fall.tilt, source=fall.source.value)
            msg.header.stamp = header_stamp
            self._fall_pub.publish(msg)

    # -- diagnostics ------------------------------------------------------------------
    def _publish_diagnostics(self) -> None:
        wall = time.monotonic()
        counts = self.readings.counts
        wall0, messages0, answered0 = self._rate_window
        elapsed = max(wall - wall0, 1e-9)
        input_rate, rate = (counts.messages - messages0) / elapsed, (self._answered - answered0) / elapsed
        self._rate_window = (wall, counts.messages, self._answered)
        estimate = self._latest
        level, summary = Level.OK, "waiting for joint_states"
        values: dict[str, str] = {}
        if estimate is not None:
            level, summary, values = self._describe(estimate)
        never = self.readings.never_measured
        if never and estimate is not None:
            level = max(level, Level.WARN)
            summary += f"; never measured (home pose value used): {', '.join(never)}"
        processing = np.array(self._processing) * 1000.0
        age = np.array(self._input_age) * 1000.0
        values.update({
            "inputs_seen": ", ".join(t for t, seen in sorted(self._seen.items()) if wall - seen < 2.0) or "none",
            "rate_hz": f"{rate:.1f}", "input_rate_hz": f"{input_rate:.1f}",
            "latency_ms_p50": _percentile(processing, 50), "latency_ms_p99": _percentile(processing, 99),
            "latency_ms_max": f"{processing.max():.3f}" if processing.size else "nan",
            "input_age_ms_p99": _percentile(age, 99),
            "messages": str(counts.messages), "answered": str(self._answered), "malformed": str(counts.malformed),
            "stale_joint_readings": str(counts.stale), "missing_joint_readings": str(counts.missing),
            "unknown_joint_names": str(counts.unknown),
            "held_for_late_sensors": str(self._wait.waited),
            "answered_without_late_sensor": str(self._wait.gave_up), "never_measured": ", ".join(never) or "none",
            "last_input_problem": self._last_issue or "none", "margin_warnings": str(self.alarm.warnings),
            "fall_state": self._fall_estimate.describe() if self._fall_estimate is not None else "none yet",
            "com_filter": f"critically damped 2nd-order low-pass, {self.params.com_filter_cutoff:g} Hz, "
                          f"delay {self.estimator.filter_delay * 1000:.0f} ms",
        })
        if counts.malformed or counts.stale or counts.missing or counts.unknown:
            level = max(level, Level.WARN)
        self._diagnostics_pub.publish(node_status(self.node, "balance", level, summary, self.robot, values))

    def _describe(self, estimate: BalanceEstimate) -> tuple[Level, str, dict[str, str]]:
        measured = ("foot force sensors" if estimate.zmp_measured is not None
                    else "not available (no loaded foot with a fresh wrench)")
        assumption = ("flat feet on flat ground (no IMU, no ground truth): the support soles are the ground"
                      if estimate.base_source is BaseSource.FLAT_FEET else "none")
        level = Level.OK if estimate.stable else Level.WARN
        summary = (f"{'stable' if estimate.stable else 'NOT STABLE'}: CoM margin {describe_margin(estimate.margin)} "
                   f"(min {self.params.min_margin * 1000:.1f} mm); base: {estimate.base_source.value}; "
                   f"contacts: {estimate.contact_source.value}")
        if estimate.contact_source is ContactSource.MODEL and estimate.base_source is BaseSource.FLAT_FEET:
            summary += "; no foot sensors"
        return level, summary, {
            "frame": estimate.frame, "base": estimate.base_source.value, "assumption": assumption,
            "contacts": estimate.contact_source.value, "measured_zmp": measured,
            "support": ", ".join(s for s, c in estimate.contacts.items() if c) or "none",
            "margin_mm": f"{estimate.margin * 1000:.1f}", "min_margin_mm": f"{self.params.min_margin * 1000:.1f}",
            "stable": str(estimate.stable).lower(),
        }


class StateMessages:
    """BalanceState messages of estimates; the polygon's points are converted once per polygon
    (it changes only when the feet move)."""

    def __init__(self, frame_prefix: str = "") -> None:
        """``frame_prefix``: the robot's (its namespace's), on the ground frame's name."""
        self._frame_prefix = frame_prefix
        self._polygon: object = None
        self._points: list[Point32] = []

    def state(self, estimate: BalanceEstimate, stamp) -> BalanceState:
        """The message of ``estimate`` (``stamp``: the joint_states header stamp)."""
        msg = BalanceState()
        msg.header.stamp, msg.header.frame_id = stamp, prefixed(self._frame_prefix, estimate.frame)
        x, y, z = estimate.com
        msg.com = Point(x=x, y=y, z=z)
        msg.com_projection = Point(x=x, y=y, z=0.0)
        msg.com_velocity.x, msg.com_velocity.y, msg.com_velocity.z = estimate.com_velocity
        if estimate.zmp_measured is not None:
            msg.zmp_measured = Point(x=estimate.zmp_measured[0], y=estimate.zmp_measured[1], z=0.0)
            msg.zmp_measured_valid = True
        if estimate.zmp_model is not None:
            msg.zmp_model = Point(x=estimate.zmp_model[0], y=estimate.zmp_model[1], z=0.0)
            msg.zmp_model_valid = True
        if estimate.polygon is not self._polygon:
            self._polygon = estimate.polygon
            self._points = [Point32(x=float(px), y=float(py), z=0.0) for px, py in estimate.polygon.vertices]
        msg.support_polygon.points = self._points
        msg.left_foot_contact = bool(estimate.contacts.get("left", False))
        msg.right_foot_contact = bool(estimate.contacts.get("right", False))
        msg.stability_margin = float(estimate.margin)
        msg.zmp_margin = float(estimate.zmp_margin)
        msg.stable = bool(estimate.stable)
        return msg


def _percentile(values: np.ndarray, q: float) -> str:
    return f"{float(np.percentile(values, q)):.3f}" if values.size else "nan"


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, BalanceMonitor, args)


if __name__ == "__main__":
    sys.exit(main())
