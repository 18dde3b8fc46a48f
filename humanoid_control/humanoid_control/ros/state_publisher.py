"""What a driver node publishes from its control loop: ``robot_state``, ``joint_states``, the
sensors and the loop's diagnostics.

It runs beside the control loop (in the loop's process: :mod:`humanoid_control.ros.loop_process`),
so that the robot's state goes out on time whatever the front is doing with commands.

``joint_states`` carries staleness: a joint whose reading is stale (not read this cycle: a
silent servo) is listed with NaN position, velocity and effort, and the message is stamped
with the time of the read; when no joint at all was read (the bus is gone) nothing is
published. ``robot_state`` carries the same joint state with the sensors' readings of its
instant, the set-points the loop wrote to the driver in that cycle (``joint_setpoints``: what
the robot executed, whatever the command's source) and what :attr:`StatePublisher.contributors`
add (a simulator's ground truth), in one message (:mod:`humanoid_control.ros.robot_state`).

Where the loop runs faster than it publishes (the HOAP-2's 200 Hz loop, 100 Hz states), the
set-points of a cycle between two published states go out too, stamped with that cycle's time,
before the state's own, when they lie off the straight line between the two states' set-points
by more than :data:`OFF_THE_LINE` on some joint: a step on ``joint_commands`` is then a step at
its own cycle, where the states' set-points alone would put it anywhere between them (a replay
interpolating them ramps it over 10 ms: 1.7 mrad RMS over a 1 rad step's path). A trajectory's
set-points change every cycle but smoothly, and stay that close to the line but at their
sharpest bends: the states' own are enough (``humanoid identify`` interpolates them), at no
extra message.

A topic the control thread publishes is not filled nor published while no subscription is
matched to it (:mod:`humanoid_control.ros.matched_publisher`): its messages would reach
nobody, and each publish costs tens of microseconds of the control thread. The sensors are
read only while ``robot_state`` or one of their topics has a subscriber; after a time
without, the first reading only primes the next one (a simulated IMU differentiates its
velocity between consecutive readings, which must be one publishing period apart), so the
first sensor messages come one period after the subscription was matched.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import Imu
from sensor_msgs.msg import JointState as JointStateMsg
from std_msgs.msg import Bool, Header

from humanoid_control.ros import robot_state, topics
from humanoid_control.ros.diagnostics import diagnostic_array
from humanoid_control.ros.matched_publisher import STREAM_HISTORY, MatchedPublisher
from humanoid_control.ros.namespaces import frame_prefix, prefixed
from humanoid_control.ros.robot_state import RobotState
from humanoid_control.ros.ros_time import DriverClock, to_time
from humanoid_core.loop import (
    RESEND_PERIOD,
    ControlLoop,
    Decimator,
    JointCommand,
    JointState,
    Level,
    SensorReadings,
    StatusEntry,
)

__all__ = ["OFF_THE_LINE", "StatePublisher"]

#: rad: how far a set-point between two published states may lie off the line between theirs
#: and not go out (a replay interpolating the line is then that close). A smooth trajectory lies
#: off it by a dt^2 / 2 at acceleration a (dt = 5 ms: 0.25 mrad at 20 rad/s^2, 5 mrad at the
#: HOAP-2's limit of 417 rad/s^2): only its sharpest bends go out.
OFF_THE_LINE = 1e-3


class StatePublisher:
    """``robot_state``, joint_states and sensors at ``publish_rate`` (:meth:`on_cycle`, a cycle
    hook of ``loop`` the host adds), and the loop's, guard's and driver's health on
    ``diagnostics`` at ``diagnostics_rate``."""

    def __init__(self, node: Node, loop: ControlLoop, clock: DriverClock, name: str, hardware_id: str) -> None:
        """``name`` is the driver node's (the status entries are named after it)."""
        self.node, self.loop, self.clock, self.name, self.hardware_id = node, loop, clock, name, hardware_id
        self.driver = loop.driver
        params = loop.params
        self._publishing = Decimator(params.publish_rate, "publish_rate")
        self._withheld = 0  # cycles due to publish in which no joint was read
        self._frame_prefix = frame_prefix(node.get_namespace())  # the sensors' frames carry the robot's
        self._stale_readings = 0  # joint readings published as NaN
        # the one-message state first: a node that takes it never sees joint_states' publisher
        # alone (the recorder decides by the publishers it sees: humanoid_tools.recording)
        self._state_pub = MatchedPublisher(node, RobotState, robot_state.TOPIC, STREAM_HISTORY)
        self._joint_state_pub = MatchedPublisher(node, JointStateMsg, robot_state.JOINT_STATES, STREAM_HISTORY)
        #: One message of each kind, refilled (only the control thread publishes them); the
        #: one-message state holds the very objects the standard topics publish.
        self._state_msg = RobotState(joint_states=JointStateMsg(name=list(loop.names)))
        self._joint_state_msg = self._state_msg.joint_states
        self._setpoint_pub = MatchedPublisher(node, JointStateMsg, robot_state.JOINT_SETPOINTS, STREAM_HISTORY)
        # NaN, never an empty array, for what is not commanded: a message with an empty float64
        # array comes out of rclpy.serialization (the recorder's split of robot_state) with
        # trailing bytes that rosbags refuses to read
        self._unknown = [math.nan] * len(loop.names)
        self._setpoint_msg = JointStateMsg(name=list(loop.names), effort=self._unknown)
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self._imu_pub: MatchedPublisher | None = None
        self._imu_msg = Imu()
        self._foot_pubs: dict[str, tuple] = {}
        self._sensors_current = False  # the sensors were read at the previous publishing time
        self._last_sensors: SensorReadings | None = None
        self._published: tuple[float, float] | None = None  # stamp and wall time of the latest joint_states
        #: The set-points written in the cycles since the latest published state, (stamp, command):
        #: at most a state's worth of cycles.
        self._between: list[tuple[float, JointCommand]] = []
        self._between_limit = max(1, round(params.control_rate / params.publish_rate))
        self._last_setpoint: tuple[float, np.ndarray] | None = None  # of the latest published state
        self._previous_stamp = math.nan  # of the previous cycle's state
        #: What else goes into a state's message (the simulator's ground truth): called with
        #: the state's stamp and the message, before it is published.
        self.contributors: list[Callable[[float, RobotState], None]] = []
        node.create_timer(1.0 / params.diagnostics_rate, self._publish_diagnostics)
        loop.resend_state = self.resend

    def on_started(self, _state: JointState) -> None:
        """Create the sensors' publishers once the driver says what it has."""
        sensors = self.driver.read_sensors()
        if sensors is not None:
            if sensors.imu is not None:
                self._imu_pub = MatchedPublisher(self.node, Imu, robot_state.IMU, STREAM_HISTORY)
            for foot in sensors.feet:
                self._foot_pubs[foot.side] = (
                    MatchedPublisher(self.node, WrenchStamped, robot_state.foot_wrench_topic(foot.side),
                                     STREAM_HISTORY),
                    MatchedPublisher(self.node, Bool, robot_state.foot_contact_topic(foot.side), STREAM_HISTORY),
                    WrenchStamped(), Bool())
            self._state_msg.foot_sides = [foot.side for foot in sensors.feet]
        self._sensors_current = sensors is not None

    # -- the control thread ---------------------------------------------------------------
    def on_cycle(self, state: JointState) -> None:
        still, self._previous_stamp = state.stamp == self._previous_stamp, state.stamp
        if self._publishing.due(state.stamp):
            self._publish_state(state)
            self._published = (state.stamp, time.monotonic())
        elif still and (self._published is None or state.stamp != self._published[0]):
            # the clock stands still (a paused simulation) between two publishing times: the
            # state it stands at goes out, so that every node knows where the robot is
            self._publish_state(state)
            self._published = (state.stamp, time.monotonic())
        elif self._published is not None and state.stamp == self._published[0]:
            now = time.monotonic()
            if now - self._published[1] >= RESEND_PERIOD:  # the clock stands still (a paused simulation):
                self.resend()  # a node that started meanwhile gets the state too
                self._published = (state.stamp, now)
        elif not still and self.loop.written is not None:
            self._between = [*self._between, (state.stamp, self.loop.written)][-self._between_limit:]

    def _publish_state(self, state: JointState) -> None:
        """robot_state and joint_states with staleness: NaN for joints not read, nothing when
        none was read; each to whoever subscribes, and in lockstep robot_state always (the loop
        waits for answers to it)."""
        valid, between, self._between = state.valid, self._between, []
        if not valid.all():
            if not valid.any():
                self._withheld += 1
                self._sensors_current = False
                return
            self._stale_readings += int(np.count_nonzero(~valid))
        # heard, not the matched events' flag alone: when the flag says nobody listens the
        # middleware is asked (about 5 us); a container restarted after a SIGKILL once got no
        # robot_state for 60 s while its subscription was matched (clean-clone run 151)
        whole = self._state_pub.heard or self.loop.gate is not None
        joints = self._joint_state_pub.heard
        if whole or joints or self._setpoint_pub.subscribed:
            stamp = to_time(self.clock.to_ros(state.stamp))
            msg = self._joint_state_msg
            msg.header.stamp = stamp
            if valid.all():
                msg.position, msg.velocity, msg.effort = (state.position.tolist(), state.velocity.tolist(),
                                                          state.effort.tolist())
            else:
                msg.position, msg.velocity, msg.effort = (
                    np.where(valid, values, math.nan).tolist()
                    for values in (state.position, state.velocity, state.effort))
            self._read_sensors(whole)  # first: a participant answering joint_states finds its sensors
            self._fill_setpoints(state.stamp, stamp, whole, between)
            if whole:
                self._state_msg.header.stamp = stamp
                for contribute in self.contributors:
                    contribute(state.stamp, self._state_msg)
                self._state_pub.publish(self._state_msg)
            if joints:
                self._joint_state_pub.publish(msg)
            if self.loop.gate is not None:
                self.loop.gate.published(state.stamp)
        else:
            self._read_sensors(False)

    def _fill_setpoints(self, at: float, stamp: Time, whole: bool, between: list[tuple[float, JointCommand]]) -> None:
        """``joint_setpoints``: what the loop wrote to the driver in this cycle, after those of
        the cycles ``between`` the previous state and this one that lie off the line (in the
        one-message state, and to the topic's subscribers); ``at``: this state's time on the
        driver's clock, ``stamp`` in ROS time."""
        written, last = self.loop.written, self._last_setpoint
        self._last_setpoint = None if written is None else (at, written.position)
        if written is None and whole:
            self._state_msg.setpoints = []  # released: no set-point written (not the last one again)
        if written is None or not (whole or self._setpoint_pub.subscribed):
            return
        msg = self._setpoint_msg
        msg.header.stamp = stamp
        msg.position = written.position.tolist()
        msg.velocity = self._velocities(written)
        earlier = [JointStateMsg(header=Header(stamp=to_time(self.clock.to_ros(when))), name=msg.name,
                                 position=command.position.tolist(), velocity=self._velocities(command),
                                 effort=self._unknown)
                   for when, command in self._off_the_line(last, between, (at, written))]
        if whole:
            self._state_msg.setpoints = [*earlier, msg]
        if self._setpoint_pub.subscribed:
            for message in (*earlier, msg):
                self._setpoint_pub.publish(message)

    def _velocities(self, command: JointCommand) -> list[float]:
        return self._unknown if command.velocity is None else command.velocity.tolist()

    @staticmethod
    def _off_the_line(last: tuple[float, np.ndarray] | None, between: list[tuple[float, JointCommand]],
                      now: tuple[float, JointCommand]) -> list[tuple[float, JointCommand]]:
        """The set-points of ``between`` that the line from the previous state's set-point
        (``last``: time, positions) to this state's (``now``) misses by more than
        :data:`OFF_THE_LINE` on some joint (all of them when there is no previous one)."""
        if last is None:
            return between
        (start, before), (end, written) = last, now
        if end <= start:
            return []
        slope = (written.position - before) / (end - start)
        return [(at, command) for at, command in between
                if np.max(np.abs(command.position - before - slope * (at - start))) > OFF_THE_LINE]

    def resend(self) -> None:
        """Publish the latest state (and the sensors' latest readings) again, unchanged: a
        lockstep simulation waiting at that state for a participant that missed it."""
        if self._last_sensors is not None:
            self._publish_sensors(self._last_sensors, False)
        if self._state_pub.heard or self.loop.gate is not None:
            self._state_pub.publish(self._state_msg)
        if self._joint_state_pub.heard:
            self._joint_state_pub.publish(self._joint_state_msg)

    def _read_sensors(self, whole: bool) -> None:
        """Read the sensors while anyone takes them (the one-message state or a sensor topic),
        publish them; the first reading after a time without primes the next one (see the
        module docstring)."""
        topics = (self._imu_pub is not None and self._imu_pub.subscribed) or any(
            wrench.subscribed or contact.subscribed for wrench, contact, _, _ in self._foot_pubs.values())
        if not whole and not topics:
            self._sensors_current = False
            self._set_sensor_parts(None)
            return
        sensors = self.driver.read_sensors()
        if sensors is not None and self._sensors_current:
            self._publish_sensors(sensors, whole)
            self._last_sensors = sensors
        else:
            self._set_sensor_parts(None)
        self._sensors_current = sensors is not None

    def _set_sensor_parts(self, sensors: SensorReadings | None) -> None:
        """The one-message state's IMU and feet: those of ``sensors`` (filled already), or none."""
        msg = self._state_msg
        msg.imu = [self._imu_msg] if sensors is not None and sensors.imu is not None else []
        feet = [self._foot_pubs[foot.side] for foot in sensors.feet if foot.side in self._foot_pubs] \
            if sensors is not None else []
        msg.foot_sides = [foot.side for foot in sensors.feet if foot.side in self._foot_pubs] \
            if sensors is not None else []
        msg.foot_wrenches = [wrench for _, _, wrench, _ in feet]
        msg.foot_contacts = [contact for _, _, _, contact in feet]

    def _publish_sensors(self, sensors: SensorReadings, whole: bool) -> None:
        """IMU and feet: filled when the one-message state (``whole``) or their topic takes
        them, published to the topics someone subscribes to; the messages are refilled each
        time (only the control thread publishes them)."""
        stamp = to_time(self.clock.to_ros(sensors.stamp))
        imu_pub = self._imu_pub
        if sensors.imu is not None and imu_pub is not None and (whole or imu_pub.subscribed):
            imu = self._imu_msg
            imu.header.stamp, imu.header.frame_id = stamp, prefixed(self._frame_prefix, sensors.imu.frame)
            (imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w) = sensors.imu.orientation
            (imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z) = sensors.imu.angular_velocity
            (imu.linear_acceleration.x, imu.linear_acceleration.y,
             imu.linear_acceleration.z) = sensors.imu.linear_acceleration
            if imu_pub.subscribed:
                imu_pub.publish(imu)
        for foot in sensors.feet:
            if foot.side not in self._foot_pubs:
                continue
            wrench_pub, contact_pub, wrench, contact = self._foot_pubs[foot.side]
            if whole or wrench_pub.subscribed:
                wrench.header.stamp, wrench.header.frame_id = stamp, prefixed(self._frame_prefix, foot.frame)
                (wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z) = foot.force
                (wrench.wrench.torque.x, wrench.wrench.torque.y, wrench.wrench.torque.z) = foot.torque
                if wrench_pub.subscribed:
                    wrench_pub.publish(wrench)
            if whole or contact_pub.subscribed:
                contact.data = foot.contact
                if contact_pub.subscribed:
                    contact_pub.publish(contact)
        if whole:
            self._set_sensor_parts(sensors)

    # -- diagnostics (the node's executor) ----------------------------------------------------
    def _publish_diagnostics(self) -> None:
        state = self.loop.state
        status = self.loop.status()
        stamp = self.clock.to_ros(state.stamp) if state is not None else 0.0
        entries = [StatusEntry(
            name=f"{self.name}: control loop",
            level=Level.ERROR if status.error else Level.WARN if status.limp else Level.OK,
            message=status.error or (LIMP_MESSAGE if status.limp else "running"),
            values={"torque": "off" if status.limp else "on",
                    "loop_rate_hz": f"{status.loop_rate_hz:.1f}", "real_time_factor": f"{status.real_time_factor:.3f}",
                    "cycles": str(status.cycles), "commands_rejected": str(status.commands_rejected),
                    "driver_errors": str(status.driver_errors),
                    "joint_states_withheld": str(self._withheld),
                    "stale_joint_readings_published": str(self._stale_readings)})]
        if self.loop.gate is not None:
            entries.append(self.loop.gate.status_entry(self.name))
        entries.extend(self.loop.guard.status())
        entries.extend(self.driver.status())
        self._diagnostics_pub.publish(diagnostic_array(entries, stamp, self.hardware_id))


#: The control loop's diagnostics message while the joints are released (torque off).
LIMP_MESSAGE = "torque off: every joint released (limp) until the next command takes them again"
