"""The odometry node: where the robot has walked, for RViz, navigation and the walk's measures.

A thin ROS adapter around :mod:`humanoid_core.odometry` (ROS-free).

========================== ============================================= ==========
name                       type                                          direction
========================== ============================================= ==========
joint_states, imu/data     sensor_msgs/JointState, sensor_msgs/Imu       subscribed
ground_truth/base_pose,    geometry_msgs/PoseStamped, TwistStamped       subscribed
ground_truth/base_twist    (simulation, ``ground_truth`` true)
odom                       nav_msgs/Odometry, ``odom`` -> ``base_link``  published
                           with covariances (kinematic odometry)
ground_truth/odom          nav_msgs/Odometry, ``world`` -> ``base_link`` published
                           (the simulator's ground truth)
/tf                        tf2_msgs/TFMessage: ``odom`` -> ``base_link``; published
                           in simulation ``world`` -> ``base_link``
========================== ============================================= ==========

The kinematic odometry runs on the simulated and the real robot alike; the ground truth only
where the simulator publishes one (``ground_truth`` parameter: the simulation's graph sets it,
off by default, so never on the real robot). A TF frame has one parent: with both on, the
ground truth's transform is ``world -> odom`` (the truth times the odometry's inverse, at the
same stamp), as a localisation publishes ``map -> odom``, so that the chain ``world -> odom ->
base_link`` is the ground truth and ``odom -> base_link`` the odometry; with the kinematic
odometry off it is ``world -> base_link``. ``ground_truth/odom`` always carries ``world ->
base_link`` (the Gazebo ``p3d`` ground-truth plugin's message: frame ``world``, child the base).
Parameters: :class:`~humanoid_core.odometry.parameters.OdometryParameters`, per robot in
``control.yaml`` (``odometry:``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PoseStamped, TransformStamped, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from tf2_msgs.msg import TFMessage

from humanoid_control.ros import (
    JointReadings,
    MalformedJointStateError,
    MatchedPublisher,
    NodeHost,
    ThrottledLog,
    declare_control_node,
    frame_prefix,
    prefixed,
    run_node,
    seconds,
    topics,
)
from humanoid_core.odometry import NODE_NAME, KinematicOdometry, OdometryParameters
from humanoid_description import RobotModel

QUEUE_DEPTH = 100


def _to_pose(msg_pose, placement: pin.SE3) -> None:
    x, y, z, qx, qy, qz, qw = pin.SE3ToXYZQUAT(placement).tolist()
    msg_pose.position.x, msg_pose.position.y, msg_pose.position.z = x, y, z
    msg_pose.orientation.x, msg_pose.orientation.y, msg_pose.orientation.z, msg_pose.orientation.w = qx, qy, qz, qw


def _transform(stamp, parent: str, child: str, placement: pin.SE3) -> TransformStamped:
    out = TransformStamped()
    out.header.stamp, out.header.frame_id, out.child_frame_id = stamp, parent, child
    x, y, z, qx, qy, qz, qw = pin.SE3ToXYZQUAT(placement).tolist()
    out.transform.translation.x, out.transform.translation.y, out.transform.translation.z = x, y, z
    r = out.transform.rotation
    r.x, r.y, r.z, r.w = qx, qy, qz, qw
    return out


@dataclass(frozen=True)
class Frames:
    """The frames the node publishes, with the robot's frame prefix (``a/odom`` in namespace
    ``a``: /tf is global, humanoid_control.ros.namespaces)."""

    prefix: str
    odom: str
    base: str

    @classmethod
    def of(cls, node: Node, params: OdometryParameters) -> Frames:
        prefix = frame_prefix(node.get_namespace())
        return cls(prefix, prefixed(prefix, params.odom_frame), prefixed(prefix, params.base_frame))


class OdometryNode:
    """Kinematic odometry of the robot and, in simulation, its ground truth, on topics and /tf."""

    WATCHER = True  # in a container: takes each state after the nodes that command the robot

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        self.robot, self.params = declare_control_node(node, OdometryParameters, NODE_NAME)
        p = self.params
        model = RobotModel(self.robot)
        self.frames = Frames.of(node, p)
        self.odometry = KinematicOdometry(model, p)
        self.readings = JointReadings(model.joints, model.home_positions())
        self._imu: list[tuple[float, np.ndarray]] = []
        self._twist: TwistStamped | None = None
        # messages built only while some subscription listens (the odometry itself always runs)
        self._odom_pub = MatchedPublisher(node, Odometry, topics.ODOM, QUEUE_DEPTH) if p.kinematic else None
        self._truth_pub = (MatchedPublisher(node, Odometry, topics.GROUND_TRUTH_ODOM, QUEUE_DEPTH)
                           if p.ground_truth else None)
        self._tf_pub = MatchedPublisher(node, TFMessage, topics.TF, QUEUE_DEPTH) if p.publish_tf else None
        # a state's odometry and ground truth by stamp (ns) until both came, for world -> odom
        self._odom_at: dict[int, pin.SE3] = {}
        self._truth_at: dict[int, tuple[pin.SE3, str]] = {}
        self.lockstep = host.lockstep(node)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_state, QUEUE_DEPTH)
        if p.kinematic and p.use_imu and self.odometry.has_imu_frame:
            host.subscribe_state(node, Imu, topics.IMU, self._on_imu, QUEUE_DEPTH)
        if p.ground_truth:
            host.subscribe_state(node, TwistStamped, topics.BASE_TWIST, self._on_twist, QUEUE_DEPTH)
            host.subscribe_state(node, PoseStamped, topics.BASE_POSE, self._on_pose, QUEUE_DEPTH)
        what = [w for w, on in (("kinematic odometry on odom", p.kinematic),
                                (f"ground truth on {topics.GROUND_TRUTH_ODOM}", p.ground_truth)) if on]
        self._throttled = ThrottledLog(node.get_logger())
        node.get_logger().info(f"odometry of {self.robot}: {', '.join(what) or 'nothing (both off)'}"
                               f"{'; /tf' if p.publish_tf else ''}")

    # -- inputs ---------------------------------------------------------------------------
    def _on_imu(self, msg: Imu) -> None:
        o = msg.orientation
        if not all(math.isfinite(v) for v in (o.x, o.y, o.z, o.w)) or (o.x, o.y, o.z, o.w) == (0.0, 0.0, 0.0, 0.0):
            return
        rotation = pin.Quaternion(o.w, o.x, o.y, o.z).normalized().toRotationMatrix()
        self._imu.append((seconds(msg.header.stamp), rotation))
        del self._imu[:-64]

    def _imu_at(self, stamp: float) -> np.ndarray | None:
        best = min(self._imu, key=lambda r: abs(r[0] - stamp), default=None)
        return best[1] if best is not None and abs(best[0] - stamp) <= self.params.imu_timeout else None

    def _on_joint_state(self, msg: JointState) -> None:
        try:
            if self.params.kinematic:
                self._answer(msg)
        finally:
            if self.lockstep is not None:
                self.lockstep.answered(msg.header.stamp)

    def _answer(self, msg: JointState) -> None:
        try:
            self.readings.update(msg.name, msg.position)
        except MalformedJointStateError as error:
            self._throttled.error(f"joint_states not used: {error}", 5.0)
            return
        stamp = seconds(msg.header.stamp)
        estimate = self.odometry.update(stamp, self.readings.positions, self._imu_at(stamp))
        if self._odom_pub.heard:  # type: ignore[union-attr]
            self._publish_odom(msg.header.stamp, estimate)
        if self._tf_pub is not None and self._tf_pub.heard:
            self._tf_pub.publish(TFMessage(transforms=[_transform(msg.header.stamp, self.frames.odom,
                                                                  self.frames.base, estimate.base)]))
            if self.params.ground_truth:
                self._pair(msg.header.stamp, odom=estimate.base)

    def _publish_odom(self, stamp, estimate) -> None:
        pose_cov, twist_cov = self.odometry.covariances(estimate)
        out = Odometry()
        out.header.stamp, out.header.frame_id, out.child_frame_id = stamp, self.frames.odom, \
            self.frames.base
        _to_pose(out.pose.pose, estimate.base)
        out.pose.covariance = pose_cov
        t = out.twist.twist
        t.linear.x, t.linear.y, t.linear.z = estimate.linear
        t.angular.x, t.angular.y, t.angular.z = estimate.angular
        out.twist.covariance = twist_cov
        self._odom_pub.publish(out)  # type: ignore[union-attr]

    def _on_twist(self, msg: TwistStamped) -> None:
        self._twist = msg

    def _on_pose(self, msg: PoseStamped) -> None:
        """The simulator's ground truth as nav_msgs/Odometry (twist in the base's axes, as
        Odometry has it) and on /tf."""
        to_tf = self._tf_pub is not None and self._tf_pub.heard
        to_truth = self._truth_pub.heard  # type: ignore[union-attr]
        if not (to_truth or to_tf):
            return
        p = msg.pose
        placement = pin.XYZQUATToSE3(np.array([p.position.x, p.position.y, p.position.z, p.orientation.x,
                                               p.orientation.y, p.orientation.z, p.orientation.w]))
        out = Odometry()
        out.header.stamp = msg.header.stamp
        out.header.frame_id = prefixed(self.frames.prefix, msg.header.frame_id or self.params.world_frame)
        out.child_frame_id = self.frames.base
        out.pose.pose = msg.pose
        twist = self._twist
        if twist is not None and twist.header.stamp == msg.header.stamp:
            rotation = placement.rotation.T  # world axes -> base axes
            lin = rotation @ np.array([twist.twist.linear.x, twist.twist.linear.y, twist.twist.linear.z])
            ang = rotation @ np.array([twist.twist.angular.x, twist.twist.angular.y, twist.twist.angular.z])
            t = out.twist.twist
            t.linear.x, t.linear.y, t.linear.z = lin.tolist()
            t.angular.x, t.angular.y, t.angular.z = ang.tolist()
        if to_truth:
            self._truth_pub.publish(out)  # type: ignore[union-attr]
        if not to_tf:
            return
        if not self.params.kinematic:
            self._tf_pub.publish(TFMessage(transforms=[_transform(msg.header.stamp, out.header.frame_id,
                                                                  self.frames.base, placement)]))
            return
        self._pair(msg.header.stamp, truth=placement, frame=out.header.frame_id)

    def _pair(self, stamp, odom: pin.SE3 | None = None, truth: pin.SE3 | None = None,
              frame: str | None = None) -> None:
        """``world -> odom`` once a state's odometry and its ground truth have both come, in
        whichever order the state's parts are handled."""
        key = stamp.sec * 10**9 + stamp.nanosec
        other = self._truth_at.pop(key, None) if odom is not None else self._odom_at.pop(key, None)
        if other is None:  # the first of the pair: kept until the other comes
            kept = self._odom_at if odom is not None else self._truth_at
            kept[key] = odom if odom is not None else (truth, frame)
            while len(kept) > 256:
                del kept[next(iter(kept))]
            return
        if self._tf_pub is None or not self.params.kinematic:
            return
        (truth, frame), odom = (other, odom) if odom is not None else ((truth, frame), other)
        self._tf_pub.publish(TFMessage(transforms=[_transform(stamp, frame, self.frames.odom,
                                                              truth * odom.inverse())]))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, OdometryNode, args)


if __name__ == "__main__":
    sys.exit(main())
