"""The energy monitor node: supply current, power and energy of the robot, live, on sim and robot.

A thin ROS adapter around :mod:`humanoid_core.energy.model` (ROS-free): for every
``joint_states`` message, the current of equation 8 of the ODE humanoid simulator from
the joints' effort, I = K * sum(|T_i|) + N * I_servo + I_controller, the power at the
supply voltage and the energy integrated over the stamps.

========================== ============================================= ==========
name                       type                                          direction
========================== ============================================= ==========
joint_states               sensor_msgs/JointState (effort, velocity)     subscribed
diagnostics                diagnostic_msgs/DiagnosticArray (the servos'  subscribed
                           voltage_V, where the robot reports it)
energy_state               humanoid_interfaces/EnergyState               published
diagnostics                diagnostic_msgs/DiagnosticArray               published
========================== ============================================= ==========

``energy_state`` is built only while a subscription listens (the energy is integrated over
every message, for diagnostics and later listeners).

The effort is whatever the robot publishes: the simulated servos' torque, or on the
Dynamixel bus the servos' present load scaled to their stall torque (humanoid_hw). The
voltage is the mean of the servos' latest voltage readings where the hardware node
reports them in its diagnostics (``voltage_V``), else the configured ``supply_voltage``.
Parameters: :class:`~humanoid_core.energy.parameters.EnergyParameters`, per robot in
``humanoid_description/robots/<robot>/control.yaml`` (``energy_monitor:``).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from sensor_msgs.msg import JointState

from humanoid_control.ros import (
    MatchedPublisher,
    NodeHost,
    ThrottledLog,
    declare_control_node,
    node_status,
    run_node,
    seconds,
    topics,
)
from humanoid_core.energy import NODE_NAME, CurrentModel, EnergyIntegral, EnergyParameters
from humanoid_core.loop import Level
from humanoid_description import RobotModel
from humanoid_interfaces.msg import EnergyState

#: joint_states messages queued while one is handled.
QUEUE_DEPTH = 100


@dataclass(frozen=True)
class Latest:
    """What diagnostics say of the latest estimate (kept whether or not energy_state is heard)."""

    total_current: float  # A
    power: float  # W
    energy: float  # J so far
    unknown_joints: int


class EnergyMonitor:
    """One current model and one energy integral, fed by joint_states."""

    WATCHER = True  # in a container: takes each state after the nodes that command the robot

    def __init__(self, node: Node, host: NodeHost) -> None:
        self.node = node
        self.robot, self.params = declare_control_node(node, EnergyParameters, NODE_NAME)
        self._log = node.get_logger()
        self._throttled = ThrottledLog(self._log)
        joints = RobotModel(self.robot).joints
        self.model = CurrentModel.of(self.params, len(joints))
        self.integral = EnergyIntegral(self.params.max_integration_gap)
        self._voltages: dict[str, tuple[float, float]] = {}  # servo status name -> (wall time, V)
        self._answered = 0
        self._malformed = 0
        self._last_issue = ""
        self._latest: Latest | None = None
        self._publisher = MatchedPublisher(node, EnergyState, topics.ENERGY_STATE, QUEUE_DEPTH)  # built when heard
        self._diagnostics_pub = node.create_publisher(DiagnosticArray, topics.DIAGNOSTICS, 10)
        self.lockstep = host.lockstep(node)
        host.subscribe_state(node, JointState, topics.JOINT_STATES, self._on_joint_state, QUEUE_DEPTH)
        if self.params.use_reported_voltage:
            node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 50)
        node.create_timer(1.0 / self.params.diagnostics_rate, self._publish_diagnostics)
        m = self.model
        self._log.info(f"energy monitor for {self.robot}: I = {m.torque_to_current:g} A/Nm * sum|T| + "
                       f"{m.servo_count} x {m.servo_idle_current:g} A + {m.controller_current:g} A, "
                       f"{self.params.supply_voltage:g} V unless the servos report theirs")

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        now = time.monotonic()
        for status in msg.status:
            for item in status.values:
                if item.key == "voltage_V":
                    try:
                        volts = float(item.value)
                    except ValueError:
                        continue
                    if math.isfinite(volts) and volts > 0.0:
                        self._voltages[status.name] = (now, volts)

    def voltage(self) -> tuple[float, str]:
        """The supply voltage and where it comes from."""
        now = time.monotonic()
        fresh = [v for seen, v in self._voltages.values() if now - seen <= self.params.reported_voltage_timeout]
        if fresh:
            return float(np.mean(fresh)), f"the servos' readings ({len(fresh)})"
        return self.params.supply_voltage, "configured supply_voltage"

    def _on_joint_state(self, msg: JointState) -> None:
        try:
            self._answer(msg)
        finally:
            if self.lockstep is not None:
                self.lockstep.answered(msg.header.stamp)

    def _answer(self, msg: JointState) -> None:
        count = len(msg.name)
        if len(msg.effort) != count or (len(msg.velocity) not in (0, count)):
            self._malformed += 1
            self._last_issue = (f"joint_states not used: {count} names, {len(msg.effort)} efforts, "
                                f"{len(msg.velocity)} velocities")
            self._throttled.error(self._last_issue, 5.0)
            return
        effort = np.asarray(msg.effort, dtype=float)
        velocity = np.asarray(msg.velocity, dtype=float) if len(msg.velocity) else None
        estimate = self.model.estimate(effort, velocity)
        volts, _ = self.voltage()
        power = estimate.total_current * volts
        energy = self.integral.add(seconds(msg.header.stamp), power)
        if self._publisher.heard:
            out = EnergyState(name=list(msg.name), current=estimate.joint_currents.tolist(),
                              total_current=estimate.total_current, voltage=volts, power=power,
                              mechanical_power=estimate.mechanical_power, energy=energy,
                              unknown_joints=estimate.unknown_joints)
            out.header.stamp = msg.header.stamp
            out.header.frame_id = msg.header.frame_id
            self._publisher.publish(out)
        self._latest = Latest(estimate.total_current, power, energy, estimate.unknown_joints)
        self._answered += 1

    def _publish_diagnostics(self) -> None:
        latest = self._latest
        volts, source = self.voltage()
        level = Level.OK
        if latest is None:
            level, summary = Level.WARN, "waiting for joint_states"
        else:
            summary = (f"{latest.total_current:.2f} A, {latest.power:.1f} W, {latest.energy:.1f} J so far "
                       f"({source})")
            if latest.unknown_joints:
                level, summary = Level.WARN, summary + f"; {latest.unknown_joints} joint(s) effort unknown"
        if self._malformed:
            level = Level.WARN
        values = {"supply_voltage_V": f"{volts:.2f}", "voltage_source": source, "answered": str(self._answered),
                  "malformed": str(self._malformed), "gaps_not_integrated": str(self.integral.gaps),
                  "out_of_order": str(self.integral.out_of_order), "last_input_problem": self._last_issue or "none",
                  "model": "I = K sum|T| + N I_servo + I_controller (ODE humanoid simulator, equation 8)"}
        self._diagnostics_pub.publish(node_status(self.node, "energy", level, summary, self.robot, values))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, EnergyMonitor, args)


if __name__ == "__main__":
    sys.exit(main())
