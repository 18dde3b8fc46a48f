"""The simulation node: the PyBullet driver behind the shared robot interface, plus
what only a simulator has.

Besides the shared interface (joint_states, joint_commands, joint_trajectory,
follow_joint_trajectory, robot_description, diagnostics, imu/data, feet) it offers:

- ``clock`` (rosgraph_msgs/Clock): simulated time at ``clock_rate`` (default 100 Hz), so
  the graph can run with use_sim_time;
- ``reset`` (humanoid_interfaces/srv/ResetSimulation): stand the robot in the home pose
  or a given configuration, or lay it on its back, belly or side (a get-up's start);
  ``pause``/``resume`` (std_srvs/Trigger);
  ``step`` (humanoid_interfaces/srv/StepSimulation) while paused;
- ``apply_push`` (humanoid_interfaces/srv/ApplyPush): a constant force at a link's centre of
  mass, in the world frame, for a duration (bounds: ``push.*`` parameters);
- ``ground_truth/base_pose`` (geometry_msgs/PoseStamped, frame ``world``) and
  ``ground_truth/base_twist`` (geometry_msgs/TwistStamped) for experiments, at
  ``ground_truth_rate`` (default 50 Hz);
- ``fallen`` (std_msgs/Bool, same rate): true while the trunk tilts past ``fall_tilt``
  degrees or anything but the feet touches the ground; also reported in diagnostics.

Sensor noise (``noise.*`` parameters, off by default): :mod:`humanoid_sim.sensor_noise`.

Parameters: ``ros2 param list`` on the node; per-robot defaults in
``humanoid_description/robots/<robot>/sim.yaml``.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Bool
from std_srvs.srv import Trigger

from humanoid_control.ros import (
    STREAM_HISTORY,
    DriverSpec,
    LoopHost,
    MatchedPublisher,
    Offload,
    RobotInterface,
    declare,
    declare_dataclass,
    driver_node,
    frame_prefix,
    prefixed,
    to_time,
    topics,
)
from humanoid_core.loop import CommandRejectedError, Decimator, JointState, LockstepGate, RemoteError
from humanoid_core.processes import set_priority
from humanoid_description import SIM_NODE_PARAMETERS, RobotModel
from humanoid_interfaces.msg import RobotState
from humanoid_interfaces.srv import ApplyPush, ResetSimulation, StepSimulation
from humanoid_sim import params_file as params_files
from humanoid_sim import physics_profiles
from humanoid_sim.pace_watch import PaceWatch
from humanoid_sim.params_file import LinkCorrection
from humanoid_sim.servo_profiles import ServoParameters
from humanoid_sim.shared_world import WorldSeat
from humanoid_sim.sim_node_spec import NODE_NAME
from humanoid_sim.sim_parameters import (
    PHYSICS_PROFILE,
    LockstepParameters,
    NoiseParameters,
    ParamsFileParameters,
    PushParameters,
    SimParameters,
    SimulationPublishingParameters,
)
from humanoid_sim.transmission import TransmissionParameters

if TYPE_CHECKING:  # the driver (PyBullet, Pinocchio) is loaded in the loop's process only
    from humanoid_sim.pybullet_driver import PyBulletDriver

#: s: how long a service waits for the simulator to carry out its operation.
OPERATION_TIMEOUT = 60.0
#: The simulated world's fixed frame, the ground truth's (``a/world`` in namespace ``a``: each
#: simulation is a world of its own).
WORLD_FRAME = "world"


class Operation:
    """The simulator's operations on the loop's side of the pipe, registered and called by these names."""

    RESET = "reset"
    PAUSE = "pause"
    RESUME = "resume"
    STEP = "step"
    PUSH = "push"


@dataclasses.dataclass(frozen=True)
class SimDriverConfig:
    """The simulator's configuration, declared by the node's front, built in the loop's process."""

    sim: SimParameters
    servo: ServoParameters
    transmission: TransmissionParameters
    noise: NoiseParameters
    push: PushParameters
    corrections: dict[str, LinkCorrection] = dataclasses.field(default_factory=dict)  # per link
    seat: WorldSeat | None = None  # the robot's place in a world shared with others (humanoid_sim.world_node)


def declare_driver(node: Node, model: RobotModel, defaults: dict[str, Any]) -> DriverSpec:
    """The PyBullet driver's parameters (declared from :class:`SimParameters`,
    :class:`ServoParameters` and :class:`TransmissionParameters`) and the rates of what
    only a simulator publishes; their defaults those of the ``physics_profile`` parameter's
    profile (:mod:`humanoid_sim.physics_profiles`), then of the ``params_file`` parameter's
    file (:mod:`humanoid_sim.params_file`, which also corrects the model's links)."""
    profile = declare(node, PHYSICS_PROFILE, physics_profiles.REFERENCE, defaults,
                      "named set of physics settings from the parameter file's physics_profiles "
                      "(reference: the file's own values)")
    file_values, defaults = defaults, physics_profiles.apply(defaults, profile)
    for name, settings in physics_profiles.profiles(file_values).items():  # listed with the node's parameters
        for key, value in settings.items():
            declare(node, f"{physics_profiles.SECTION}.{name}.{key}", value,
                    description=f"{key} under the physics profile {name} (read at start-up)")
    path = declare_dataclass(node, ParamsFileParameters, defaults).params_file
    chosen = params_files.load(path, params_files.link_names(model.urdf)) if path else {}
    if path:
        node.get_logger().info(params_files.describe(path, chosen))
    defaults = {**defaults, **chosen}
    sim = declare_dataclass(node, SimParameters, defaults)
    servo = declare_dataclass(node, ServoParameters, defaults, prefix="servo.",
                              builtin=ServoParameters.for_model(model))
    transmission = declare_dataclass(node, TransmissionParameters, defaults, prefix="transmission.")
    noise = declare_dataclass(node, NoiseParameters, defaults, prefix="noise.")
    push = declare_dataclass(node, PushParameters, defaults, prefix="push.")
    if noise.enabled:
        node.get_logger().info(f"sensor noise on (seed {noise.seed}): " + ", ".join(
            f"{field.name} {getattr(noise, field.name)}" for field in dataclasses.fields(noise)
            if field.name not in ("enabled", "seed")))
    rates = declare_dataclass(node, SimulationPublishingParameters, defaults)
    lockstep = declare_dataclass(node, LockstepParameters, defaults)
    if lockstep.lockstep:
        node.get_logger().info("lockstep: each control cycle waits for the participants' answers"
                               + (f" (from the start: {', '.join(lockstep.participants)})"
                                  if lockstep.participants else ""))
    corrections = params_files.corrections(chosen)
    node.get_logger().info(
        f"simulating {model.name}: physics {sim.physics_rate:g} Hz, real-time factor "
        f"{sim.real_time_factor:g}{' (as fast as possible)' if sim.real_time_factor <= 0 else ''}, "
        f"{servo.kind} servos ({servo.max_velocity:g} rad/s, {servo.max_torque:g} N m), "
        f"ground friction {sim.ground_friction:g}{', GUI' if sim.gui else ''}"
        + (f"; gears: {transmission.describe_stiffness()}, {transmission.backlash:g} deg play at "
           f"{', '.join(transmission.backlash_joints) or 'no joint'}" if transmission.active else "")
        + (f"; corrected links: {', '.join(corrections)}" if corrections else ""))
    node.get_logger().info(f"physics profile {profile}: " + ", ".join(
        f"{name} {value}" for name, value in physics_profiles.values_in_force(sim, servo).items()))
    return DriverSpec(f"{__name__}:build_driver", SimDriverConfig(sim, servo, transmission, noise, push, corrections),
                      clock_is_ros_time=True, extension=f"{__name__}:SimulationPublishing",
                      extension_config=(rates, lockstep), paced=sim.real_time_factor > 0.0)


def build_driver(model: RobotModel, config: SimDriverConfig) -> PyBulletDriver:
    """The PyBullet driver (in the loop's process)."""
    from humanoid_sim.pybullet_driver import PyBulletDriver

    return PyBulletDriver(model, config.servo, config.sim, config.transmission, config.corrections, config.noise,
                          config.push, config.seat)


@dataclasses.dataclass(frozen=True)
class GroundTruth:
    """The robot as the simulator knows it at ``stamp`` (s): base pose (x, y, z, qx, qy, qz, qw),
    twist (m/s, rad/s, world frame) and whether it fell."""

    stamp: float
    pose: tuple[float, ...]
    linear: tuple[float, ...]
    angular: tuple[float, ...]
    fallen: bool


class SimulationPublishing:
    """The loop's side of the simulator: /clock, ground truth and the fall watch every cycle,
    and the operations the front's services call (reset, pause, resume, step, push)."""

    def __init__(self, node: Node, host: LoopHost,
                 config: tuple[SimulationPublishingParameters, LockstepParameters]) -> None:
        import pinocchio

        from humanoid_sim.pybullet_driver import PyBulletDriver

        rates, lockstep = config
        driver = host.driver
        assert isinstance(driver, PyBulletDriver)
        self._xyz_quaternion = pinocchio.SE3ToXYZQUAT
        self.node, self.host, self.driver = node, host, driver
        # like every simulator's /clock (and rclpy's own time source): best effort, latest only
        self._clock_pub = MatchedPublisher(node, Clock, topics.CLOCK,
                                           QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        self._pose_pub = MatchedPublisher(node, PoseStamped, topics.BASE_POSE, STREAM_HISTORY)
        self._twist_pub = MatchedPublisher(node, TwistStamped, topics.BASE_TWIST, STREAM_HISTORY)
        self._fallen_pub = MatchedPublisher(node, Bool, topics.FALLEN, STREAM_HISTORY)
        self._ground_truth = Decimator(rates.ground_truth_rate, "ground_truth_rate")
        self._clock = Decimator(rates.clock_rate, "clock_rate")
        self._fallen = False
        # one message per topic, refilled (only the control thread publishes them)
        self._clock_msg = Clock()
        self._pose_msg = PoseStamped()
        self._twist_msg = TwistStamped()
        self._pose_msg.header.frame_id = self._twist_msg.header.frame_id = prefixed(
            frame_prefix(node.get_namespace()), WORLD_FRAME)
        self._fallen_msg = Bool()
        sim = driver.params
        self._pace = (PaceWatch(sim.real_time_factor, sim.pace_window, sim.pace_share)
                      if sim.real_time_factor > 0.0 and sim.pace_share > 0.0 else None)
        host.loop.add_cycle_hook(self._on_cycle)
        host.publisher.contributors.append(self._contribute)
        self._latest_stamp: float | None = None  # of the latest state (s), for a resend
        self._truth: GroundTruth | None = None
        resend_state = host.loop.resend_state

        def resend() -> None:  # a waiting lockstep simulation sends its clock and ground truth again too
            resend_state()
            self._resend()

        host.loop.resend_state = resend
        if lockstep.lockstep:
            host.loop.gate = LockstepGate(lockstep.participants, lockstep.lockstep_timeout,
                                          report=node.get_logger().warning)
        server = host.server
        server.register(Operation.RESET, self.reset)
        server.register(Operation.PAUSE, self.pause)
        server.register(Operation.RESUME, self.resume)
        server.register(Operation.STEP, self.step)
        server.register(Operation.PUSH, self.driver.apply_push)

    # -- per control cycle ------------------------------------------------------------
    def _on_cycle(self, state: JointState) -> None:
        """/clock, ground truth and the fall watch, each at its rate. Like the robot interface's
        topics, a topic no subscription is matched to is not filled nor published
        (:mod:`humanoid_control.ros.matched_publisher`); the ground truth is measured (and a
        fall logged) whoever listens, and kept for a resend."""
        self._latest_stamp = state.stamp
        if self._pace is not None:
            self._watch_pace(state.stamp)
        if self._clock.due(state.stamp):
            self._publish_clock(state.stamp)
        if self._ground_truth.due(state.stamp):
            self._truth = self._measure_truth(state.stamp)
            self._publish_truth(self._truth)

    def _watch_pace(self, stamp: float) -> None:
        """A simulation that cannot keep its real-time factor gives its loop's raised priority
        up, once (:mod:`humanoid_sim.pace_watch`)."""
        reached = self._pace.update(time.monotonic(), stamp, self.driver.paused)
        if reached is None:
            return
        window, self._pace = self._pace.window, None
        log = self.node.get_logger()
        log.warning(f"the simulation reached {reached:.2f} of its real-time factor over the last {window:g} s: "
                    "this machine cannot keep real time; its control loop goes back to the default priority "
                    "(nice 0) so that its graph's nodes get their share of the CPU")
        set_priority(0, log.warning, "the control loop")

    def _resend(self) -> None:
        """The latest clock and ground truth again, as first sent: in lockstep the driver has
        already stepped past the state the simulation waits at."""
        if self._latest_stamp is not None:
            self._publish_clock(self._latest_stamp)
        if self._truth is not None:
            self._publish_truth(self._truth)

    def _publish_clock(self, stamp: float) -> None:
        if self._clock_pub.subscribed:
            self._clock_msg.clock = to_time(stamp)
            self._clock_pub.publish(self._clock_msg)

    def _measure_truth(self, stamp: float) -> GroundTruth:
        """The robot's ground truth now (and the fall watch: logged whoever listens); measured
        whether or not anyone listens, so that one who comes later is sent the same."""
        fall = self.driver.fall_state()
        if fall.fallen and not self._fallen:
            self.node.get_logger().warning(f"the robot fell at t = {stamp:.3f} s: {fall.reason}")
        self._fallen = fall.fallen
        linear, angular = self.driver.base_velocity()
        return GroundTruth(stamp, tuple(float(v) for v in self._xyz_quaternion(self.driver.base_placement())),
                           tuple(float(v) for v in linear), tuple(float(v) for v in angular), fall.fallen)

    def _publish_truth(self, truth: GroundTruth) -> None:
        """The ground truth on its topics, to those subscribed."""
        pose, twist, fallen = self._pose_pub.subscribed, self._twist_pub.subscribed, self._fallen_pub.subscribed
        if pose or twist or fallen:
            self._fill_truth(truth)
        if pose:
            self._pose_pub.publish(self._pose_msg)
        if twist:
            self._twist_pub.publish(self._twist_msg)
        if fallen:
            self._fallen_pub.publish(self._fallen_msg)

    def _fill_truth(self, truth: GroundTruth) -> None:
        """The ground truth's messages (one of each, refilled: only the control thread uses them)."""
        stamp = to_time(truth.stamp)
        pose, twist = self._pose_msg, self._twist_msg
        pose.header.stamp = twist.header.stamp = stamp
        (pose.pose.position.x, pose.pose.position.y, pose.pose.position.z) = truth.pose[:3]
        (pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z,
         pose.pose.orientation.w) = truth.pose[3:]
        (twist.twist.linear.x, twist.twist.linear.y, twist.twist.linear.z) = truth.linear
        (twist.twist.angular.x, twist.twist.angular.y, twist.twist.angular.z) = truth.angular
        self._fallen_msg.data = truth.fallen

    def _contribute(self, stamp: float, msg: RobotState) -> None:
        """The ground truth measured at this state (at ``ground_truth_rate``) goes out with it."""
        truth = self._truth
        if truth is not None and truth.stamp == stamp:
            self._fill_truth(truth)
            msg.base_pose, msg.base_twist, msg.fallen = [self._pose_msg], [self._twist_msg], [self._fallen_msg]
        else:
            msg.base_pose, msg.base_twist, msg.fallen = [], [], []

    # -- operations (called by the front's services) ------------------------------------
    def reset(self, positions: np.ndarray, lying: str | None = None) -> None:
        self.host.loop.hold(positions)  # first: no cycle may drive the reset robot to the old set-points
        self.driver.reset(positions, lying)
        self._fallen = False

    def pause(self) -> float:
        self.driver.pause()
        return self.driver.now()

    def resume(self) -> float:
        self.driver.resume()
        return self.driver.now()

    def step(self, cycles: int) -> float:
        return self.driver.step_paused(cycles)


class SimulationServices:
    """The simulator's services on the front: reset, pause, resume, step and apply_push, carried
    out by the loop's side (:class:`SimulationPublishing`)."""

    def __init__(self, node: Node, interface: RobotInterface, _defaults: dict[str, Any] | None = None) -> None:
        self.node, self.interface = node, interface
        self.model = interface.model
        # each waits for the loop: one at a time, off the node's spinning thread
        serial = Offload(node, "simulation services")
        group = ReentrantCallbackGroup()
        node.create_service(ResetSimulation, topics.RESET, serial(self._reset), callback_group=group)
        node.create_service(Trigger, topics.PAUSE, serial(self._pause), callback_group=group)
        node.create_service(Trigger, topics.RESUME, serial(self._resume), callback_group=group)
        node.create_service(StepSimulation, topics.STEP, serial(self._step), callback_group=group)
        node.create_service(ApplyPush, topics.APPLY_PUSH, serial(self._push), callback_group=group)

    def _reset(self, request: ResetSimulation.Request, response: ResetSimulation.Response):
        home = self.model.home_positions()
        msg = request.joint_state
        try:  # an unknown side too: the driver names the sides it knows
            positions = home
            if msg.name:
                setpoint = self.interface.validator.setpoint(msg.name, msg.position, clamp=False)
                positions = home.copy()
                positions[setpoint.joint_indices] = setpoint.positions
            self.interface.loop.call(Operation.RESET, positions, request.lying or None, timeout=OPERATION_TIMEOUT)
        except (CommandRejectedError, RemoteError) as error:
            response.success, response.message = False, f"reset refused: {error}"
            self.node.get_logger().error(response.message)
            return response
        response.success = True
        response.message = ("robot reset to " + ("the home pose" if not msg.name else
                                                 f"the given configuration ({len(msg.name)} joints)")
                            + (f", lying on its {request.lying}" if request.lying else ""))
        self.node.get_logger().info(response.message)
        return response

    def _pause(self, _request, response: Trigger.Response):
        return self._trigger(Operation.PAUSE, "paused", response)

    def _resume(self, _request, response: Trigger.Response):
        return self._trigger(Operation.RESUME, "resumed", response)

    def _trigger(self, operation: str, done: str, response: Trigger.Response):
        try:
            now = self.interface.loop.call(operation, timeout=OPERATION_TIMEOUT)
        except RemoteError as error:
            response.success, response.message = False, f"{operation} failed: {error}"
            return response
        response.success, response.message = True, f"{done} at t = {now:.3f} s"
        return response

    def _step(self, request: StepSimulation.Request, response: StepSimulation.Response):
        try:
            now = self.interface.loop.call(Operation.STEP, int(request.cycles), timeout=OPERATION_TIMEOUT)
        except RemoteError as error:
            response.success, response.message = False, str(error)
            response.sim_time = to_time(self.interface.now())
            return response
        response.success, response.message = True, f"stepped {request.cycles} cycles"
        response.sim_time = to_time(now)
        return response

    def _push(self, request: ApplyPush.Request, response: ApplyPush.Response):
        force = (request.force.x, request.force.y, request.force.z)
        try:
            response.message = self.interface.loop.call(Operation.PUSH, request.link, force, request.duration,
                                                        timeout=OPERATION_TIMEOUT)
        except RemoteError as error:
            response.success, response.message = False, f"push refused: {error}"
            self.node.get_logger().error(response.message)
            return response
        response.success = True
        self.node.get_logger().info(response.message)
        return response


#: What the simulation node adds to the shared interface.
EXTENSION = SimulationServices


def main(args: list[str] | None = None) -> int:
    return driver_node.run(NODE_NAME, SIM_NODE_PARAMETERS, declare_driver, EXTENSION, args)


if __name__ == "__main__":
    sys.exit(main())

