"""The self-collision checker node: the robot's self-collision state, markers and checks.

It knows the robot only through its interface (``joint_states``) and its model (the
URDF's collision shapes, pairs filtered by the SRDF, :mod:`humanoid_description.collision`):

========================================== ============================================ ===========
name                                       type                                         direction
========================================== ============================================ ===========
joint_states                               sensor_msgs/JointState                       subscribed
self_collision_state                       humanoid_interfaces/SelfCollisionState       published, one per joint_states
self_collision_markers                     visualization_msgs/MarkerArray               published (``marker_rate``)
diagnostics                                diagnostic_msgs/DiagnosticArray              published (``diagnostics_rate``)
check_self_collision                       humanoid_interfaces/srv/CheckSelfCollision   service
check_trajectory_self_collision            humanoid_interfaces/srv/CheckTrajectorySelfCollision service
========================================== ============================================ ===========

Staleness: a joint published as NaN (its reading is stale) is unknown. The pairs whose
relative placement depends on an unknown joint are not checked; every other pair is
(it does not depend on that joint). The state lists the unknown joints and how many
pairs went unchecked, diagnostics turn to WARN naming them, and the checks count them.
A state is published for every joint_states message, so a consumer sees the checker
follow the robot (built only while a subscription listens); when joint_states stop,
diagnostics say so (STALE). Every message is checked for collisions, for the warnings and
diagnostics; while nobody listens to the state, a clear configuration is found clear from
the tracker's bounds (usually one dot product), and the exact closest pair, which costs a
placement and a distance, is computed only for diagnostics and markers, at their rates.

The trajectory service validates the trajectory as the robot interface does (bounds
included: ``max_trajectory_points``, ``max_trajectory_duration``), builds the path the
robot interface's executor would follow
(:func:`humanoid_core.loop.trajectory_executor.run_spline`, from the given start or the
current joint_states, at rest) and checks it every ``trajectory_sample_period``
seconds, between the samples too (:meth:`CollisionTracker.first_violation_along`), at
most ``max_trajectory_samples`` samples. It runs beside the stream, the configuration
check and diagnostics (callback groups and threads of their own): a long check delays
none of them.

The command guard of the robot interface (:mod:`humanoid_core.guards.self_collision_guard`)
vetoes commands with the same model and checks; this node reports and answers questions.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from humanoid_control.nodes.specs import SELF_COLLISION_CHECKER as NODE_NAME
from humanoid_control.ros import (
    MatchedPublisher,
    NodeHost,
    Offload,
    ThrottledLog,
    declare_control_node,
    frame_prefix,
    node_status,
    prefixed,
    run_node,
    seconds,
    to_duration,
    to_time,
    topics,
)
from humanoid_core import documented
from humanoid_core.guards import check_trajectory
from humanoid_core.loop import CommandRejectedError, CommandValidator, Level, PointData
from humanoid_description import CollisionModel, CollisionReport, CollisionTracker, PairDistance, RobotModel
from humanoid_interfaces.msg import LinkPair, SelfCollisionState
from humanoid_interfaces.srv import CheckSelfCollision, CheckTrajectorySelfCollision


@dataclass(frozen=True)
class SelfCollisionCheckerParameters:
    """ROS parameters of the self-collision checker (per-robot values:
    ``humanoid_description/robots/<robot>/control.yaml``, section ``self_collision_checker``)."""

    safety_distance: float = documented(
        -1.0, "m, two links closer than this count as colliding; < 0: the robot's (robot.yaml "
              "self_collision.safety_distance)")
    trajectory_sample_period: float = documented(
        0.002, "s, spacing of the samples check_trajectory_self_collision takes along a path")
    start_tolerance: float = documented(
        0.1, "rad, how far a trajectory point at time 0 may be from the start (as the robot interface's)")
    max_trajectory_points: int = documented(5000, "longest trajectory checked (points), as the robot interface's")
    max_trajectory_duration: float = documented(
        600.0, "s, longest trajectory checked (its last point's time_from_start), as the robot interface's")
    max_trajectory_samples: int = documented(
        300_000, "most samples of one trajectory check (duration / trajectory_sample_period), as the robot "
        "interface's self_collision_max_trajectory_samples; more is refused")
    marker_rate: float = documented(10.0, "Hz, self_collision_markers; 0 = not published")
    diagnostics_rate: float = documented(1.0, "Hz, diagnostics")
    stale_after: float = documented(1.0, "s without joint_states after which diagnostics say STALE")

    def __post_init__(self) -> None:
        for name in ("trajectory_sample_period", "diagnostics_rate", "stale_after", "max_trajectory_duration"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        if not math.isfinite(self.max_trajectory_duration):
            raise ValueError(f"parameter max_trajectory_duration must be finite, got {self.max_trajectory_duration}")
        if self.marker_rate < 0.0 or self.start_tolerance < 0.0 or min(self.max_trajectory_points,
                                                                         self.max_trajectory_samples) < 1:
            raise ValueError("parameters marker_rate and start_tolerance must be >= 0, max_trajectory_points and "
                             "max_trajectory_samples >= 1")


def link_pair(pair: PairDistance | None) -> LinkPair:
    if pair is None:
        return LinkPair(link_a="", link_b="", distance=math.inf)
    return LinkPair(link_a=pair.link_a, link_b=pair.link_b, distance=pair.distance)


class SelfCollisionChecker:
    """The node's work: one tracker following joint_states, one per service (each with its
    own model: Pinocchio data is not shared between threads). The stream, each service and
    diagnostics run in callback groups of their own, so that a long trajectory check
    never holds up the state, a configuration check or diagnostics."""

    WATCHER = True  # in a container: takes each state after the nodes that command the robot

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        robot, params = declare_control_node(node, SelfCollisionCheckerParameters, NODE_NAME)
        self.params = params
        stream_model = RobotModel(robot)
        self.safety_distance = params.safety_distance if params.safety_distance >= 0.0 else \
            stream_model.config.safety_distance
        self.robot = robot
        #: The robot's joints, in the order of every array the checker keeps.
        self.joints = stream_model.joints
        self._tracker = CollisionTracker(CollisionModel(stream_model), self.safety_distance)
        # the services' own models, built by each service's worker at its first check
        self._configuration_tracker: CollisionTracker | None = None
        self._path_tracker: CollisionTracker | None = None
        self._validator = CommandValidator(stream_model.joints, start_tolerance=params.start_tolerance,
                                           max_points=params.max_trajectory_points,
                                           max_duration=params.max_trajectory_duration)
        self._home = stream_model.home_positions()
        self._log = node.get_logger()
        self._throttled = ThrottledLog(self._log)

        self._lock = threading.Lock()  # latest state, shared with the services and diagnostics
        #: stamp, positions and their report (None: found clear from the bounds, see _latest_report)
        self._latest: tuple[float, np.ndarray, CollisionReport | None] | None = None
        self._received_at: float | None = None  # monotonic time of the last joint_states
        self._stats = {"states": 0, "in_collision": 0, "with_unknown_joints": 0, "check_time_total": 0.0,
                       "check_time_max": 0.0}

        # one thread takes the stream (joint_states, markers) and diagnostics (rclpy's
        # EventsExecutor); each service checks in a thread of its own, so that a long path
        # check holds up neither the stream nor the other service
        services = ReentrantCallbackGroup()
        self._state_pub = MatchedPublisher(node, SelfCollisionState, topics.SELF_COLLISION_STATE, 10)  # when heard
        self._marker_pub = MatchedPublisher(node, MarkerArray, topics.SELF_COLLISION_MARKERS, 10)  # for a viewer
        self._marker_frame_prefix = frame_prefix(node.get_namespace())  # the robot's (namespaces)
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self.lockstep = host.lockstep(node)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_states, 10)
        node.create_service(CheckSelfCollision, topics.CHECK_SELF_COLLISION,
                            Offload(node, "configuration checks")(self._check_configuration), callback_group=services)
        node.create_service(CheckTrajectorySelfCollision, topics.CHECK_TRAJECTORY_SELF_COLLISION,
                            Offload(node, "path checks")(self._check_trajectory), callback_group=services)
        node.create_timer(1.0 / params.diagnostics_rate, self._publish_diagnostics)
        if params.marker_rate > 0.0:
            node.create_timer(1.0 / params.marker_rate, self._publish_markers)
        self._log.info(f"checking {len(self._tracker.model.link_pairs)} link pairs of {robot} "
                       f"(safety distance {self.safety_distance * 1000:g} mm)")

    def _new_tracker(self) -> CollisionTracker:
        """A tracker with a model of its own (Pinocchio data is not shared between threads).
        Each service builds its own at its first check, in its worker (one at a time): most
        graphs never call the services, and a model costs a container's start 30-80 ms."""
        return CollisionTracker(CollisionModel(RobotModel(self.robot)), self.safety_distance)

    # -- the robot's state ---------------------------------------------------------------
    def positions_from(self, msg: JointState, default: np.ndarray | None = None) -> np.ndarray:
        """Canonical-order positions of a joint_states message; joints it does not carry are
        ``default`` (NaN: unknown). Raises ValueError for a malformed message."""
        if len(msg.position) != len(msg.name):
            raise ValueError(f"{len(msg.name)} names but {len(msg.position)} positions")
        return self.joints.from_named(msg.name, msg.position, math.nan if default is None else default)

    def _on_joint_states(self, msg: JointState) -> None:
        try:
            self._check(msg)
        finally:
            if self.lockstep is not None:
                self.lockstep.answered(msg.header.stamp)

    def _check(self, msg: JointState) -> None:
        try:
            q = self.positions_from(msg)
        except ValueError as error:
            self._throttled.error(f"joint_states ignored: {error}", 5.0)
            return
        heard = self._state_pub.heard
        started = time.perf_counter()
        report = self._tracker.report(q) if heard else self._collisions(q)
        elapsed = time.perf_counter() - started
        stamp = seconds(msg.header.stamp)
        with self._lock:
            self._latest = (stamp, q, report)
            self._received_at = time.monotonic()
            stats = self._stats
            stats["states"] += 1
            stats["in_collision"] += report is not None and report.in_collision
            stats["with_unknown_joints"] += report is not None and bool(report.unknown_joints)
            stats["check_time_total"] += elapsed
            stats["check_time_max"] = max(stats["check_time_max"], elapsed)
        if report is None:
            return
        if heard:
            self._state_pub.publish(SelfCollisionState(
                header=msg.header, in_collision=report.in_collision,
                colliding_pairs=[link_pair(p) for p in report.colliding], closest_pair=link_pair(report.closest),
                checked_pairs=report.checked_pairs, unknown_joints=list(report.unknown_joints),
                unchecked_pairs=len(report.unchecked), safety_distance=self.safety_distance))
        if report.in_collision:
            worst = report.colliding[0]
            self._throttled.warning(f"self-collision: {worst.link_a} and {worst.link_b} {worst.distance * 1000:.1f} mm "
                                    f"apart (safety distance {self.safety_distance * 1000:g} mm)", 1.0)

    def _collisions(self, q: np.ndarray) -> CollisionReport | None:
        """The full report when some pair may be within the safety distance or a joint is
        unknown; None when every pair clears it (the tracker's bounds, no closest pair)."""
        if math.isfinite(np.add.reduce(q)) and self._tracker.first_violation(q) is None:
            return None
        return self._tracker.report(q)

    def _latest_report(self) -> tuple[float, np.ndarray, CollisionReport] | None:
        """The latest state and its full report, computed now if the stream left it out.
        (The stream, diagnostics and markers run on the node's one executor thread, rclpy's
        EventsExecutor, alone or in a container: one of them at a time uses the stream's
        tracker; the services, on threads of their own, have trackers of their own.)"""
        with self._lock:
            latest = self._latest
        if latest is None or latest[2] is not None:
            return latest  # type: ignore[return-value]
        stamp, q, _ = latest
        full = (stamp, q, self._tracker.report(q))
        with self._lock:
            if self._latest is latest:
                self._latest = full
        return full

    # -- services -----------------------------------------------------------------------
    def _current(self) -> np.ndarray:
        """The latest measured positions (NaN where unknown), or the home pose before any."""
        with self._lock:
            return self._latest[1].copy() if self._latest is not None else self._home.copy()

    def _check_configuration(self, request, response):
        try:
            q = self.positions_from_request(request.joint_state)
        except ValueError as error:
            response.valid, response.message = False, str(error)
            return response
        if self._configuration_tracker is None:
            self._configuration_tracker = self._new_tracker()
        report = self._configuration_tracker.report(q)
        response.valid = True
        response.in_collision = report.in_collision
        response.colliding_pairs = [link_pair(p) for p in report.colliding]
        response.closest_pair = link_pair(report.closest)
        response.checked_pairs = report.checked_pairs
        response.message = describe(report, self.safety_distance)
        return response

    def positions_from_request(self, msg: JointState) -> np.ndarray:
        """A configuration to check: the named joints (validated as streaming set-points are,
        but out-of-limit values refused), the others at the robot's current position; no
        joint named (and no position): the robot's current configuration."""
        if not len(msg.name) and not len(msg.position):
            return self._current()
        try:
            setpoint = self._validator.setpoint(msg.name, msg.position, clamp=False)
        except CommandRejectedError as error:
            raise ValueError(str(error)) from None
        q = self._current()
        q[setpoint.joint_indices] = setpoint.positions
        return q

    def _check_trajectory(self, request, response):
        try:
            start = self.positions_from_request(request.start)
            points = [PointData(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations)
                      for p in request.trajectory.points]
            trajectory = self._validator.trajectory(request.trajectory.joint_names, points, start)
        except (ValueError, CommandRejectedError) as error:
            response.valid, response.message = False, str(error)
            return response
        unknown = [self.joints.names[k] for k in np.flatnonzero(~np.isfinite(start))]
        if unknown:
            response.valid = False
            response.message = f"the start position of {', '.join(unknown)} is unknown (stale): give it in start"
            return response
        if self._path_tracker is None:
            self._path_tracker = self._new_tracker()
        try:
            result = check_trajectory(self._path_tracker, trajectory, start, self.params.trajectory_sample_period,
                                      self.params.max_trajectory_samples)
        except CommandRejectedError as error:
            response.valid, response.message = False, str(error)
            return response
        response.valid = True
        response.samples, response.sample_period = result.samples, self.params.trajectory_sample_period
        response.in_collision = result.hit is not None
        if result.hit is not None:
            response.time_from_start = result.hit.time
            response.pair = link_pair(result.hit.pair)
            response.joint_state = JointState(name=list(self.joints.names), position=result.hit.positions.tolist())
        response.message = result.describe(self.joints.names, self.safety_distance, trajectory.joint_indices)
        return response

    # -- markers and diagnostics -------------------------------------------------------------
    def _publish_markers(self) -> None:
        if not self._marker_pub.heard or (latest := self._latest_report()) is None:
            return
        stamp, q, report = latest
        pairs = [(p, True) for p in report.colliding]
        if report.closest is not None and not report.in_collision:
            pairs.append((report.closest, False))
        markers = MarkerArray(markers=[Marker(action=Marker.DELETEALL, ns="self_collision")])
        model = self._tracker.model
        if pairs:
            model.place(np.where(np.isfinite(q), q, 0.0))
        for k, (pair, colliding) in enumerate(pairs):
            points = nearest_points(model, pair)
            if points is None:
                continue
            color = ColorRGBA(r=1.0, g=0.1, b=0.1, a=1.0) if colliding else ColorRGBA(r=0.1, g=0.8, b=0.2, a=0.8)
            line = Marker(ns="self_collision", id=2 * k, type=Marker.LINE_LIST, action=Marker.ADD,
                          color=color, points=[Point(x=float(a), y=float(b), z=float(c)) for a, b, c in points])
            line.scale.x = 0.003
            text = Marker(ns="self_collision", id=2 * k + 1, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD,
                          color=color, text=f"{pair.link_a} / {pair.link_b}: {pair.distance * 1000:.1f} mm")
            text.pose.position = Point(x=float(points[0][0]), y=float(points[0][1]), z=float(points[0][2]) + 0.02)
            text.scale.z = 0.015
            for marker in (line, text):
                marker.header.frame_id = prefixed(self._marker_frame_prefix, model.robot.root_link)
                marker.header.stamp = to_time(stamp)
                marker.lifetime = to_duration(0.0)
                markers.markers.append(marker)
        self._marker_pub.publish(markers)

    def _publish_diagnostics(self) -> None:
        latest = self._latest_report()
        with self._lock:
            received_at, stats = self._received_at, dict(self._stats)
        values = {"safety_distance_mm": f"{self.safety_distance * 1000:g}",
                  "link_pairs": str(len(self._tracker.model.link_pairs)),
                  "states_checked": str(stats["states"]), "states_in_collision": str(stats["in_collision"]),
                  "states_with_unknown_joints": str(stats["with_unknown_joints"]),
                  "mean_check_us": f"{stats['check_time_total'] / max(1, stats['states']) * 1e6:.0f}",
                  "max_check_us": f"{stats['check_time_max'] * 1e6:.0f}"}
        if latest is None or received_at is None:
            level, message = Level.STALE, "no joint_states received yet"
        elif time.monotonic() - received_at > self.params.stale_after:
            level, message = Level.STALE, f"no joint_states for {time.monotonic() - received_at:.1f} s"
        else:
            _, _, report = latest
            values.update({"checked_pairs": str(report.checked_pairs), "unchecked_pairs": str(len(report.unchecked)),
                           "unknown_joints": ", ".join(report.unknown_joints)})
            if report.closest is not None:
                values["closest_pair"] = f"{report.closest.link_a} / {report.closest.link_b}"
                values["closest_distance_mm"] = f"{report.closest.distance * 1000:.1f}"
            level = Level.WARN if report.in_collision or report.unknown_joints else Level.OK
            message = describe(report, self.safety_distance)
        self._diagnostics_pub.publish(node_status(self.node, "self-collision", level, message, self.robot, values))


def describe(report: CollisionReport, safety_distance: float) -> str:
    """One line saying what a report found."""
    parts = []
    if report.in_collision:
        parts.append(", ".join(f"{p.link_a} / {p.link_b} {p.distance * 1000:.1f} mm" for p in report.colliding)
                     + f" within the safety distance ({safety_distance * 1000:g} mm)")
    elif report.closest is not None:
        parts.append(f"no self-collision; closest {report.closest.link_a} / {report.closest.link_b} "
                     f"{report.closest.distance * 1000:.1f} mm")
    if report.unknown_joints:
        parts.append(f"{len(report.unchecked)} pairs unchecked: unknown (stale) {', '.join(report.unknown_joints)}")
    return "; ".join(parts)


def nearest_points(model: CollisionModel, pair: PairDistance) -> list[np.ndarray] | None:
    """The nearest points of a link pair's closest shapes (root-link frame), at the last placement."""
    best = None
    for k, (a, b) in enumerate(model.pairs):
        if {a, b} == {pair.link_a, pair.link_b}:
            result = pin.computeDistance(model.geometry, model.data, k)
            if best is None or result.min_distance < best.min_distance:
                best = result
    if best is None:
        return None
    return [np.array(best.getNearestPoint1()), np.array(best.getNearestPoint2())]


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, SelfCollisionChecker, args)


if __name__ == "__main__":
    sys.exit(main())
