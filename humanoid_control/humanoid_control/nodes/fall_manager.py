"""The fall manager node: the robot's state with respect to falling, on sim and robot alike.

A thin ROS adapter around :class:`~humanoid_core.balance.fall_manager.FallManager` (the
decisions, ROS-free): it feeds it the readings, publishes its state and carries out its
actions through the existing interfaces.

========================== ============================================= ==========
name                       type                                          direction
========================== ============================================= ==========
imu/data                   sensor_msgs/Imu (orientation, angular rate)   subscribed
<side>_foot/wrench         geometry_msgs/WrenchStamped (the feet's load) subscribed
fall_state                 humanoid_interfaces/FallState (no IMU)        subscribed
joint_states               sensor_msgs/JointState (robot time, pose)     subscribed
fall_manager_state         humanoid_interfaces/FallManagerState (latched) published
joint_trajectory           trajectory_msgs/JointTrajectory (protection)  published
torque                     std_srvs/SetBool (protect: limp)              service client
play_motion                humanoid_interfaces/action/PlayMotion         action client
diagnostics                diagnostic_msgs/DiagnosticArray               published
========================== ============================================= ==========

What each decision does:

- *goals stopped* (a fall seen coming): the state ``FALLING`` on ``fall_manager_state``; the
  walk and gait controllers and the trajectory generator watch it
  (:mod:`humanoid_control.ros.fall_watch`) and end their goals ``FELL`` with the manager's
  cause; the robot interface ends a running trajectory (``follow_joint_trajectory``,
  ``PREEMPTED``) with it too.
- *protective action* (``protect``): ``hold``, an empty trajectory on ``joint_trajectory``
  (every joint stops at its set-point); ``posture``, a trajectory to the robot's named pose
  ``protect_pose`` in ``protect_duration`` (lengthened to the joints' velocity limits);
  ``limp``, torque off through the robot interface's ``torque`` service (``data`` false: every
  joint released, the robot falls limp; the get-up's first command takes the joints again). A
  limp the robot interface refuses (a driver with no torque-off command) or cannot be asked
  for (no ``torque`` service) is said in one error line and replaced by ``hold``; the answer
  is in the diagnostics (``protect_result``). Sent at once and again ``protect_repeat`` later,
  so that a controller's command sent before it saw the state is overridden.
- *get up*: the side's get-up motion through ``play_motion``, its goal id published in the
  state first (the trajectory generator plays that goal and refuses other clients' while
  ``GETTING_UP``); its result and the readings that follow tell whether the robot is up.

Every decision is logged with its cause (an error when a fall is seen coming, a warning
lying, information otherwise). Decisions are taken on the node's clock (robot time; the
simulation's in simulation): a reading older than ``reading_budget`` decides nothing.
Parameters: :class:`~humanoid_core.balance.fall_manager.FallManagerParameters`, per robot in
``humanoid_description/robots/<robot>/control.yaml`` (``fall_manager:``).
"""

from __future__ import annotations

import math
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from unique_identifier_msgs.msg import UUID

from humanoid_control.ros import (
    FALL_STATE_QOS,
    ActionClient,
    NodeHost,
    ResultWaiter,
    clock_seconds,
    declare_control_node,
    node_alive,
    node_status,
    run_node,
    seconds,
    to_duration,
    to_time,
    topics,
)
from humanoid_core.balance import (
    Action,
    ActionKind,
    Decision,
    FallManager,
    FallManagerParameters,
    FeetReading,
    Protect,
    Side,
    State,
    SupportReading,
    TrunkReading,
)
from humanoid_core.balance.fall_manager import NODE_NAME
from humanoid_core.loop import Decimator, Level
from humanoid_core.motion import list_motions
from humanoid_description import RobotModel
from humanoid_interfaces.action import PlayMotion
from humanoid_interfaces.msg import FallManagerState, FallState

#: m/s^2
GRAVITY = 9.81
#: Share of a joint's velocity limit a protective posture moves at, at most.
VELOCITY_MARGIN = 0.9


class FallManagerNode:
    """Readings in, the state and the actions out."""

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        self.robot, self.params = declare_control_node(node, FallManagerParameters, NODE_NAME)
        self._log = node.get_logger()
        self.model = RobotModel(self.robot)
        p = self.params
        self._protect_pose: np.ndarray | None = None
        if self.params.protect == Protect.POSTURE.value:
            if p.protect_pose not in self.model.config.poses:
                raise ValueError(f"parameter protect_pose: {p.protect_pose!r} is not a pose of {self.robot} "
                                 f"(robot.yaml poses: {', '.join(sorted(self.model.config.poses))})")
            self._protect_pose = self.model.pose_positions(p.protect_pose)
        self.manager = FallManager(p, getup_motion=self._getup_motion, weight=self.model.total_mass * GRAVITY)
        self._lock = threading.Lock()
        self._positions: JointState | None = None
        self._feet: dict[str, tuple[float, float]] = {}  # side -> (stamp, vertical force N)
        self._getup_goal = None  # the play_motion goal handle of the get-up in progress
        self._getup_id = bytes(16)
        self._published_due = Decimator(p.state_rate, "state_rate")
        self._last_decision = "none yet"

        self._state_pub = node.create_publisher(FallManagerState, topics.FALL_MANAGER_STATE, FALL_STATE_QOS)
        # as the robot interface takes it: the latest trajectory only, reliably
        self._trajectory_pub = node.create_publisher(JointTrajectory, topics.JOINT_TRAJECTORY,
                                                     QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self._play = ActionClient(node, PlayMotion, topics.PLAY_MOTION)
        self._torque = node.create_client(SetBool, topics.TORQUE) if p.protect == Protect.LIMP.value else None
        self._protect_result = "none yet"
        self.lockstep = host.lockstep(node)
        if p.use_imu:
            host.subscribe_state(node, Imu, topics.IMU, self._on_imu, 10)
        if p.use_foot_sensors:
            for side in self.model.config.feet:
                host.subscribe_state(node, WrenchStamped, topics.foot_wrench(side),
                                     lambda msg, side=side: self._on_wrench(side, msg), 10)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_states, 10)
        node.create_subscription(FallState, topics.FALL_STATE, self._on_fall_state, FALL_STATE_QOS)
        node.create_timer(1.0 / p.diagnostics_rate, self._publish_diagnostics,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        protect = (f"posture {p.protect_pose!r} in {p.protect_duration:g} s" if self._protect_pose is not None
                   else "limp (torque off through the robot interface's torque service)" if self._torque is not None
                   else "hold")
        getup = ("off" if not p.auto_getup else
                 f"on, at most {p.max_attempts} attempts, motions {p.getup_prefix}<side> from "
                 f"{p.getup_directory or 'the motion library'} (found: {self._found_motions()})")
        self._log.info(f"fall manager for {self.robot}: a fall is seen coming from tilt {p.warning_tilt:g} deg at "
                       f"{p.min_tilt_rate:g} deg/s reaching {p.fall_tilt:g} deg within {p.lookahead:g} s; protective "
                       f"action: {protect}; auto_getup {getup}; decisions on "
                       f"readings at most {p.reading_budget * 1000:.0f} ms old")

    # -- get-up motions ----------------------------------------------------------------
    def _getup_motion(self, side: Side) -> str | None:
        """The motion (a library name, or a file path) that gets the robot up from ``side``."""
        name = f"{self.params.getup_prefix}{side.value}"
        if self.params.getup_directory:
            path = Path(self.params.getup_directory) / f"{name}.yaml"
            return str(path) if path.is_file() else None
        return name if name in list_motions(self.robot) else None

    def _found_motions(self) -> str:
        sides = [s for s in (Side.BACK, Side.BELLY, Side.LEFT, Side.RIGHT) if self._getup_motion(s) is not None]
        return ", ".join(f"{self.params.getup_prefix}{s.value}" for s in sides) or "none"

    # -- readings -----------------------------------------------------------------------
    def _now(self) -> float:
        return clock_seconds(self.node)

    def _on_imu(self, msg: Imu) -> None:
        o = msg.orientation
        norm = math.sqrt(o.x * o.x + o.y * o.y + o.z * o.z + o.w * o.w)
        if not norm > 0.5 or not math.isfinite(norm):  # no orientation estimate (all zeros) or garbage
            return
        rotation = pin.Quaternion(o.w / norm, o.x / norm, o.y / norm, o.z / norm).toRotationMatrix()
        w = msg.angular_velocity
        gyro = None if msg.angular_velocity_covariance[0] == -1.0 else np.array([w.x, w.y, w.z])
        reading = TrunkReading.of(seconds(msg.header.stamp), rotation, gyro)
        self._decide(lambda: self.manager.trunk(reading, self._now()))

    def _on_wrench(self, side: str, msg: WrenchStamped) -> None:
        force = msg.wrench.force.z
        if not math.isfinite(force):
            return
        self._feet[side] = (seconds(msg.header.stamp), max(force, 0.0))
        if len(self._feet) == len(self.model.config.feet):
            stamps = [stamp for stamp, _ in self._feet.values()]
            with self._lock:
                self.manager.feet(FeetReading(min(stamps), sum(f for _, f in self._feet.values())))

    def _on_fall_state(self, msg: FallState) -> None:
        self._decide(lambda: self.manager.support(SupportReading(seconds(msg.header.stamp), bool(msg.fallen)),
                                                  self._now()))

    def _on_joint_states(self, msg: JointState) -> None:
        """The robot's clock goes on: what time decides, the state when due; then, in lockstep,
        the answer (the state's sensors came before it in the container's feed)."""
        try:
            self._positions = msg
            stamp = seconds(msg.header.stamp)

            def joints_then_time() -> Decision | None:
                self.manager.joints(stamp, msg.position)
                return self.manager.tick(stamp)

            self._decide(joints_then_time)
            if self._published_due.due(stamp):
                with self._lock:
                    self._publish_state(stamp)
        finally:
            if self.lockstep is not None:
                self.lockstep.answered(msg.header.stamp)

    # -- decisions ----------------------------------------------------------------------
    def _decide(self, decide: Callable[[], Decision | None]) -> None:
        """Take a decision and say it (log and state) in one hold of the lock, then act on it.
        The get-up's result comes on a thread of its own, and the next reading's decision can
        follow it within milliseconds: said after the lock, the state published for a decision
        could already be the next one's (the get-up's end published with the cause "up"), or
        the two said out of order."""
        with self._lock:
            decision = decide()
            if decision is None:
                return
            self._say(decision)
        for action in decision.actions:
            self._act(action, decision.stamp)

    def _say(self, decision: Decision) -> None:
        text = f"{decision.state.text}" + (f" ({decision.side.value})" if decision.side.value else "")
        text += f" at t = {decision.stamp:.3f} s: {decision.cause}"
        self._last_decision = text
        if any(a.kind is ActionKind.PROTECT and a.repeat for a in decision.actions):
            self._log.info(f"protective action ({self.params.protect}) sent again at t = {decision.stamp:.3f} s")
        elif decision.state is State.FALLING:
            self._log.error(text)
        elif decision.state is State.FALLEN:
            self._log.warning(text)
        else:
            self._log.info(text)
        for action in decision.actions:
            if action.kind is ActionKind.GET_UP:  # the goal id is in the state before the goal is sent
                self._getup_id = uuid.uuid4().bytes
        self._publish_state(decision.stamp)

    def _act(self, action: Action, stamp: float) -> None:
        if action.kind is ActionKind.PROTECT:
            self._protect(action.protect or Protect.HOLD, stamp)
        elif action.kind is ActionKind.GET_UP:
            self._get_up(action.motion)
        elif action.kind is ActionKind.CANCEL_GET_UP:
            goal = self._getup_goal
            self._getup_goal = None
            if goal is not None:
                goal.cancel_goal_async()

    def _protect(self, protect: Protect, stamp: float) -> None:
        if protect is Protect.LIMP and self._torque is not None:
            if self._torque.service_is_ready():
                self._torque.call_async(SetBool.Request(data=False)).add_done_callback(self._on_limp_answer)
                return
            self._limp_refused(f"no {topics.TORQUE} service (the robot interface is not running)")
            return
        msg = JointTrajectory()
        if protect is Protect.POSTURE and self._protect_pose is not None and self._positions is not None:
            known = [(n, v) for n, v in zip(self._positions.name, self._positions.position, strict=False)
                     if n in self.model.joints]
            names = [n for n, _ in known]
            index = [self.model.joints.index(n) for n in names]
            target = self._protect_pose[index]
            current = np.array([v if math.isfinite(v) else t for (_, v), t in zip(known, target, strict=True)])
            limits = np.array([self.model.joints[i].limits.velocity for i in index]) * VELOCITY_MARGIN
            duration = max(self.params.protect_duration, float(np.max(np.abs(target - current) / limits)))
            msg.joint_names = names
            msg.points = [JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * len(names),
                                               time_from_start=to_duration(duration))]
        self._trajectory_pub.publish(msg)  # empty: hold where it is (the robot interface stops every motion)

    def _on_limp_answer(self, future) -> None:
        response = future.result()
        if response is None or not response.success:
            self._limp_refused(response.message if response is not None else "no answer")
            return
        if response.message.startswith("torque already off"):  # the second sending found it released
            self._log.info(f"protective action limp: {response.message}")
            return
        self._protect_result = response.message
        self._log.warning(f"protective action limp: {response.message}")

    def _limp_refused(self, why: str) -> None:
        """Limp could not be had: say why, once per sending, and hold instead."""
        self._protect_result = f"limp refused ({why}): held instead"
        self._log.error(f"protect: limp refused ({why}); holding instead")
        self._trajectory_pub.publish(JointTrajectory())

    def _get_up(self, motion: str) -> None:
        if not self._play.server_is_ready():
            self._getup_failed("no play_motion server (the trajectory generator is not running)")
            return
        is_file = "/" in motion
        goal = PlayMotion.Goal(motion_name="" if is_file else motion, motion_file=motion if is_file else "")
        sent = self._play.send_goal_async(goal, goal_uuid=UUID(uuid=list(self._getup_id)))
        sent.add_done_callback(self._on_getup_answer)

    def _on_getup_answer(self, future) -> None:
        handle = future.result()
        if handle is None or not handle.accepted:
            self._getup_failed("play_motion did not accept the get-up motion")
            return
        self._getup_goal = handle
        threading.Thread(target=self._await_getup, args=(handle,), name="get-up result", daemon=True).start()

    def _await_getup(self, handle) -> None:
        """The get-up's result, asked again if its answer was lost (:class:`ResultWaiter`: the
        trajectory generator in a process of its own, a loaded machine), until the node ends
        (shut down, or destroyed while its process goes on: a container stopping, a test):
        then nobody is left to tell, and what rcl raises for the node's destroyed parts is
        let go."""
        try:
            waiter = ResultWaiter(handle)
            while not waiter.wait(1.0):
                if not node_alive(self.node):
                    return
            self._on_getup_result(waiter.response)
        except InvalidHandle:
            if node_alive(self.node):
                raise

    def _on_getup_result(self, response) -> None:
        self._getup_goal = None
        result = response.result if response is not None else None
        succeeded = result is not None and result.error_code == PlayMotion.Result.SUCCESSFUL
        text = result.error_string if result is not None else "no result"
        self._decide(lambda: self.manager.getup_ended(succeeded, text, self._now()))

    def _getup_failed(self, why: str) -> None:
        self._decide(lambda: self.manager.getup_ended(False, why, self._now()))

    # -- outputs ------------------------------------------------------------------------
    def _publish_state(self, stamp: float) -> None:
        m = self.manager
        msg = FallManagerState(state=m.state.code, state_name=m.state.text, side=m.side.value, cause=m.cause,
                               tilt=float(m.tilt), tilt_rate=float(m.rate), source=m.source,
                               stale=m.stale(self._now()), attempt=m.attempt, max_attempts=self.params.max_attempts,
                               getup_motion=m.getting_up_motion)
        if m.state is State.GETTING_UP:
            msg.getup_goal_id = list(self._getup_id)
        msg.header.stamp = to_time(stamp)
        msg.since = to_time(m.since)
        self._state_pub.publish(msg)

    def _torque_service(self) -> str:
        """Whether a limp can be had now: the robot interface's torque service found or not
        (a limp asked for before it is found is refused, and the robot held)."""
        if self._torque is None:
            return "not used"
        return "found" if self._torque.service_is_ready() else "not found"

    def _publish_diagnostics(self) -> None:
        m, c = self.manager, self.manager.counts
        stale = m.stale(self._now())
        level = Level.OK if m.state in (State.CONTROLLABLE, State.GETTING_UP) and not stale else Level.WARN
        summary = f"{m.state.text}: {m.cause}" + ("; the latest reading is older than reading_budget" if stale else "")
        values = {"state": m.state.text, "side": m.side.value or "none", "source": m.source,
                  "stale": str(stale).lower(), "readings": str(c.readings), "stale_readings": str(c.stale),
                  "decisions": str(c.decisions), "falls_seen": str(c.falls), "getups": str(c.getups),
                  "getups_failed": str(c.getups_failed), "last_decision": self._last_decision,
                  "protect": self.params.protect, "protect_result": self._protect_result,
                  "torque_service": self._torque_service(), "auto_getup": str(self.params.auto_getup).lower()}
        self._diagnostics_pub.publish(node_status(self.node, "falls", level, summary, self.robot, values))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, FallManagerNode, args)


if __name__ == "__main__":
    sys.exit(main())
