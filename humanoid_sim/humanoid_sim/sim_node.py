"""The simulation node: the PyBullet driver behind the shared robot interface, plus
what only a simulator has.

Besides the shared interface (joint_states, joint_commands, joint_trajectory,
follow_joint_trajectory, robot_description, diagnostics, imu/data, feet) it offers:

- ``clock`` (rosgraph_msgs/Clock): simulated time at ``clock_rate`` (default 200 Hz), so
  the graph can run with use_sim_time;
- ``reset`` (humanoid_interfaces/srv/ResetSimulation): stand the robot in the home pose
  or a given configuration; ``pause``/``resume`` (std_srvs/Trigger);
  ``step`` (humanoid_interfaces/srv/StepSimulation) while paused;
- ``ground_truth/base_pose`` (geometry_msgs/PoseStamped, frame ``world``) and
  ``ground_truth/base_twist`` (geometry_msgs/TwistStamped) for experiments, at
  ``ground_truth_rate`` (default 50 Hz);
- ``fallen`` (std_msgs/Bool, same rate): true while the trunk tilts past ``fall_tilt``
  degrees or anything but the feet touches the ground; also reported in diagnostics.

Parameters: ``ros2 param list`` on the node; per-robot defaults in
``humanoid_sim/config/<robot>.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from humanoid_control import driver_node
from humanoid_control.decimation import Decimator
from humanoid_control.driver import DriverError, JointState, RobotDriver
from humanoid_control.parameters import declare
from humanoid_control.robot_interface import RobotInterface
from humanoid_control.ros_time import to_time
from humanoid_control.validation import CommandRejectedError
from humanoid_description.model import RobotModel
from humanoid_description.package_share import package_share_directory
from humanoid_interfaces.srv import ResetSimulation, StepSimulation
from humanoid_sim.pybullet_driver import PyBulletDriver, SimParameters
from humanoid_sim.servo_models import ServoParameters


def config_directory() -> Path:
    """This package's config folder (installed share dir, or the source tree)."""
    return package_share_directory("humanoid_sim") / "config"


def make_driver(node: Node, model: RobotModel, defaults: dict[str, Any]) -> PyBulletDriver:
    def param(name: str, fallback: Any) -> Any:
        return declare(node, name, fallback, defaults)

    physics_rate = float(param("physics_rate", 1000.0))
    if physics_rate <= 0.0:
        raise ValueError(f"physics_rate must be > 0, got {physics_rate}")
    sim = SimParameters(
        physics_period=1.0 / physics_rate,
        real_time_factor=float(param("real_time_factor", 1.0)),
        gui=bool(param("gui", False)),
        ground_friction=float(param("ground_friction", 0.995)),
        contact_force_threshold=float(param("contact_force_threshold", 1.0)),
        fall_tilt=float(param("fall_tilt", 45.0)),
        solver_iterations=int(param("solver_iterations", 50)))
    servo = ServoParameters(
        kind=str(param("servo.kind", "trapezoidal")),
        max_velocity=float(param("servo.max_velocity", model.config.actuators.max_velocity)),
        max_acceleration=float(param("servo.max_acceleration", model.config.actuators.max_acceleration)),
        max_torque=float(param("servo.max_torque", float(np.min(model.joints.effort)))),
        position_gain=float(param("servo.position_gain", 0.3)),
        velocity_gain=float(param("servo.velocity_gain", 1.0)))
    node.get_logger().info(
        f"simulating {model.name}: physics {physics_rate:g} Hz, real-time factor "
        f"{sim.real_time_factor:g}{' (as fast as possible)' if sim.real_time_factor <= 0 else ''}, "
        f"{servo.kind} servos ({servo.max_velocity:g} rad/s, {servo.max_torque:g} N m), "
        f"ground friction {sim.ground_friction:g}{', GUI' if sim.gui else ''}")
    return PyBulletDriver(model, servo, sim)


class SimulationServices:
    """Clock, world services, ground truth and fall reporting of the simulation node."""

    def __init__(self, node: Node, interface: RobotInterface, driver: RobotDriver) -> None:
        assert isinstance(driver, PyBulletDriver)
        self.node, self.interface, self.driver = node, interface, driver
        self.model = interface.model
        # like every simulator's /clock (and rclpy's own time source): best effort, latest only
        self._clock_pub = node.create_publisher(
            Clock, "clock", QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        self._pose_pub = node.create_publisher(PoseStamped, "ground_truth/base_pose", 10)
        self._twist_pub = node.create_publisher(TwistStamped, "ground_truth/base_twist", 10)
        self._fallen_pub = node.create_publisher(Bool, "fallen", 10)
        group = MutuallyExclusiveCallbackGroup()
        node.create_service(ResetSimulation, "reset", self._reset, callback_group=group)
        node.create_service(Trigger, "pause", self._pause, callback_group=group)
        node.create_service(Trigger, "resume", self._resume, callback_group=group)
        node.create_service(StepSimulation, "step", self._step, callback_group=group)
        self._ground_truth = Decimator(declare(node, "ground_truth_rate", 50.0), "ground_truth_rate")
        self._clock = Decimator(declare(node, "clock_rate", 200.0), "clock_rate")
        self._fallen = False
        interface.add_cycle_hook(self._on_cycle)

    # -- per control cycle ------------------------------------------------------------
    def _on_cycle(self, state: JointState) -> None:
        if self._clock.due(state.stamp):
            self._clock_pub.publish(Clock(clock=to_time(state.stamp)))
        if not self._ground_truth.due(state.stamp):
            return
        stamp = to_time(state.stamp)
        base = self.driver.base_placement()
        fall = self.driver.fall_state(base)
        pose = PoseStamped()
        pose.header.stamp, pose.header.frame_id = stamp, "world"
        xyzquat = pin.SE3ToXYZQUAT(base)
        (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z) = (float(v) for v in xyzquat[:3])
        (pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z,
         pose.pose.orientation.w) = (float(v) for v in xyzquat[3:])
        self._pose_pub.publish(pose)
        linear, angular = self.driver.base_velocity()
        twist = TwistStamped()
        twist.header.stamp, twist.header.frame_id = stamp, "world"
        (twist.twist.linear.x, twist.twist.linear.y, twist.twist.linear.z) = (float(v) for v in linear)
        (twist.twist.angular.x, twist.twist.angular.y, twist.twist.angular.z) = (float(v) for v in angular)
        self._twist_pub.publish(twist)
        if fall.fallen and not self._fallen:
            self.node.get_logger().warning(f"the robot fell at t = {state.stamp:.3f} s: {fall.reason}")
        self._fallen = fall.fallen
        self._fallen_pub.publish(Bool(data=fall.fallen))

    # -- services ---------------------------------------------------------------------
    def _reset(self, request: ResetSimulation.Request, response: ResetSimulation.Response):
        home = self.model.home_positions()
        msg = request.joint_state
        try:
            positions = home
            if msg.name:
                setpoint = self.interface.validator.setpoint(msg.name, msg.position, clamp=False)
                positions = home.copy()
                positions[setpoint.joint_indices] = setpoint.positions
        except CommandRejectedError as error:
            response.success, response.message = False, f"reset refused: {error}"
            self.node.get_logger().error(response.message)
            return response
        self.driver.reset(positions)
        self.interface.hold_current()
        self._fallen = False
        response.success = True
        response.message = "robot reset to " + ("the home pose" if not msg.name else
                                                f"the given configuration ({len(msg.name)} joints)")
        self.node.get_logger().info(response.message)
        return response

    def _pause(self, _request, response: Trigger.Response):
        self.driver.pause()
        response.success, response.message = True, f"paused at t = {self.driver.now():.3f} s"
        return response

    def _resume(self, _request, response: Trigger.Response):
        self.driver.resume()
        response.success, response.message = True, f"resumed at t = {self.driver.now():.3f} s"
        return response

    def _step(self, request: StepSimulation.Request, response: StepSimulation.Response):
        try:
            now = self.driver.step_paused(int(request.cycles))
        except DriverError as error:
            response.success, response.message = False, str(error)
            response.sim_time = to_time(self.driver.now())
            return response
        response.success, response.message = True, f"stepped {request.cycles} cycles"
        response.sim_time = to_time(now)
        return response


def main(args: list[str] | None = None) -> int:
    return driver_node.run("humanoid_sim", config_directory(), make_driver, SimulationServices, args)


if __name__ == "__main__":
    sys.exit(main())

