"""The energy monitor node, alone, fed synthetic joint_states over DDS: its current, power and
energy against the model worked out by hand in the test (equation 8 of the ODE humanoid
simulator, I = K sum|T_i| + N I_servo + I_controller, at the supply voltage, integrated
over the stamps by trapezoids), with the Bioloid's constants from its control.yaml. Also:
a NaN effort, a gap in the stamps, a malformed message (the node goes on), and the servos'
reported voltage used when the robot's diagnostics carry it."""

from __future__ import annotations

import math
import threading

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState

from humanoid_control.nodes import energy_monitor_node_spec
from humanoid_control.ros import RobotClient, poll_until, seconds, to_time
from humanoid_core.energy import EnergyParameters
from humanoid_core.processes import Graph
from humanoid_description import load_model
from humanoid_interfaces.msg import EnergyState

pytestmark = pytest.mark.system

ROBOT = "bioloid"
PATIENCE = 60.0


class Listener:
    def __init__(self, client: RobotClient) -> None:
        self.lock = threading.Lock()
        self.states: list[EnergyState] = []
        client.node.create_subscription(EnergyState, "energy_state", self._on_state, 1000)

    def _on_state(self, msg: EnergyState) -> None:
        with self.lock:
            self.states.append(msg)

    def at(self, stamp: float) -> EnergyState | None:
        with self.lock:
            return next((s for s in self.states if s.header.stamp == to_time(stamp)), None)


@pytest.fixture(scope="module")
def monitor(tmp_path_factory):
    with Graph([energy_monitor_node_spec(ROBOT)], log_dir=tmp_path_factory.mktemp("logs")) as graph, \
            RobotClient("energy_test") as client:
        listener = Listener(client)
        publisher = client.node.create_publisher(JointState, "joint_states", 10)
        try:
            yield client, listener, publisher
        except BaseException:
            print(graph.log_text("energy_monitor")[-4000:])
            raise
        assert graph.exited() == {}, graph.log_text("energy_monitor")[-4000:]


def send(listener: Listener, publisher, names: list[str], stamp: float, effort: list[float],
         velocity: list[float]) -> EnergyState:
    """Publish one reading until it is answered (the first ones may precede discovery)."""
    msg = JointState(name=names, position=[0.0] * len(names), velocity=velocity, effort=effort)
    msg.header.stamp = to_time(stamp)
    return poll_until(lambda: publisher.publish(msg) or listener.at(stamp), f"the answer to {stamp}", PATIENCE,
                      interval=0.05)


def test_the_energy_of_a_known_motion_is_the_hand_calculation(monitor):
    _client, listener, publisher = monitor
    names = list(load_model(ROBOT).joints.names)
    p = EnergyParameters.for_robot(ROBOT)
    k, idle, controller, volts = p.torque_to_current, p.servo_idle_current, p.controller_current, p.supply_voltage
    n = len(names)
    assert (k, volts) == (1.0, 11.1)  # the AX-12A's 1.5 A at 1.5 N m, 11.1 V (control.yaml)
    # a known motion: each joint's torque a sine of its own amplitude, 100 Hz for 1 s, then a
    # gap of 2 s (not integrated), then 0.5 s more
    stamps = [100.0 + 0.01 * i for i in range(101)] + [103.0 + 0.01 * i for i in range(51)]
    efforts = [[0.1 * (j + 1) * math.sin(2.0 * math.pi * t + j) for j in range(n)] for t in stamps]
    speeds = [[0.5 * math.cos(t + j) for j in range(n)] for t in stamps]
    # by hand: P = V (K sum|T| + N I_servo + I_controller); E = sum of trapezoids where dt <= 0.5 s
    power = [volts * (k * sum(abs(e) for e in row) + n * idle + controller) for row in efforts]
    expected = sum(0.5 * (power[i] + power[i - 1]) * (stamps[i] - stamps[i - 1])
                   for i in range(1, len(stamps)) if stamps[i] - stamps[i - 1] <= p.max_integration_gap)
    first = None
    for stamp, effort, speed in zip(stamps, efforts, speeds, strict=True):
        state = send(listener, publisher, names, stamp, effort, speed)
        first = first or state
    assert first.energy == 0.0
    assert state.energy == pytest.approx(expected, rel=1e-9)
    assert state.total_current == pytest.approx(k * sum(abs(e) for e in efforts[-1]) + n * idle + controller)
    assert state.power == pytest.approx(power[-1])
    assert state.voltage == pytest.approx(volts)
    assert list(state.name) == names
    assert list(state.current) == pytest.approx([k * abs(e) for e in efforts[-1]])
    assert state.mechanical_power == pytest.approx(sum(abs(e * w) for e, w in zip(efforts[-1], speeds[-1],
                                                                                   strict=True)))


def test_an_unknown_effort_counts_zero_and_is_said(monitor):
    _client, listener, publisher = monitor
    names = list(load_model(ROBOT).joints.names)
    effort = [0.2] * len(names)
    effort[3] = math.nan
    state = send(listener, publisher, names, 200.0, effort, [0.0] * len(names))
    p = EnergyParameters.for_robot(ROBOT)
    assert state.unknown_joints == 1 and math.isnan(state.current[3])
    assert state.total_current == pytest.approx(0.2 * (len(names) - 1) + len(names) * p.servo_idle_current
                                                + p.controller_current)


def test_a_malformed_message_is_not_answered_and_the_node_goes_on(monitor):
    _client, listener, publisher = monitor
    names = list(load_model(ROBOT).joints.names)
    bad = JointState(name=names, position=[0.0] * len(names), effort=[0.1] * 3)
    bad.header.stamp = to_time(300.0)
    publisher.publish(bad)
    good = send(listener, publisher, names, 300.5, [0.0] * len(names), [0.0] * len(names))
    assert listener.at(300.0) is None and seconds(good.header.stamp) == 300.5


def test_the_servos_reported_voltage_is_used(monitor):
    client, listener, publisher = monitor
    names = list(load_model(ROBOT).joints.names)
    diagnostics = client.node.create_publisher(DiagnosticArray, "diagnostics", 10)
    report = DiagnosticArray(status=[DiagnosticStatus(name=f"joint {name} (ID {i + 1})", values=[
        KeyValue(key="joint", value=name), KeyValue(key="voltage_V", value="12.0")]) for i, name in enumerate(names)])
    stamp = [400.0]

    def answered_at_12_v():
        diagnostics.publish(report)
        stamp[0] += 0.01
        state = send(listener, publisher, names, stamp[0], [0.0] * len(names), [0.0] * len(names))
        return state if state.voltage == pytest.approx(12.0) else None

    state = poll_until(answered_at_12_v, "an answer at the servos' 12.0 V", PATIENCE, interval=0.05)
    assert state.power == pytest.approx(12.0 * state.total_current)
