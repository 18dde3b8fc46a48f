"""On the hardware node (the Bioloid on the emulated bus, ``humanoid real``'s graph): the energy
monitor uses the servos' own voltage readings (the hardware's per-joint diagnostics,
``voltage_V``: the emulated AX-12s report 12.0 V, the robot's configured supply is 11.1 V),
and the balance monitor's fall estimate, without an IMU, comes from the model's support
(upright, standing in the emulated servos' pose)."""

from __future__ import annotations

import threading

import pytest
from system_support import collector, on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_control.ros import FALL_STATE_QOS, poll_until
from humanoid_core.energy import EnergyParameters
from humanoid_interfaces.msg import EnergyState, FallState

pytestmark = pytest.mark.system

PATIENCE = 120.0
#: The emulated AX-12's Present Voltage (humanoid_hw/emulator/servo.py), V.
EMULATED_VOLTAGE = 12.0


def test_energy_uses_the_servos_voltage_and_the_fall_estimate_runs_on_the_hardware(robot_graph):
    from humanoid_hw.emulator import emulator_process

    assert EnergyParameters.for_robot("bioloid").supply_voltage != EMULATED_VOLTAGE
    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        _, client = robot_graph(on_emulated_bus(real_nodes("bioloid", port=port)))
        lock, energy, falls = threading.Lock(), [], []

        client.node.create_subscription(EnergyState, "energy_state", collector(lock, energy), 100)
        client.node.create_subscription(FallState, "fall_state", collector(lock, falls), FALL_STATE_QOS)

        def at_the_servos_voltage():
            with lock:
                latest = energy[-1] if energy else None
            return latest if latest is not None and latest.voltage == pytest.approx(EMULATED_VOLTAGE) else None

        state = poll_until(at_the_servos_voltage, "energy_state at the servos' voltage", PATIENCE)
        assert state.power == pytest.approx(EMULATED_VOLTAGE * state.total_current)
        assert len(state.current) == len(state.name) == 18 and state.total_current > 0.0
        fall = poll_until(lambda: falls[-1] if falls else None, "a fall_state", PATIENCE)
        assert fall.source == "support" and not fall.fallen and fall.posture == FallState.UPRIGHT
