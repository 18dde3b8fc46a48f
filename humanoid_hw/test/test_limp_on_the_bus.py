"""Torque off and on again on the emulated Dynamixel bus, through the control loop (no ROS; the
fall manager's ``protect: limp``): Torque Enable 0 on every servo once released, nothing written
while limp, and the next command takes the servos again, each goal at the position its horn was
moved to meanwhile (no jump back), before Torque Enable is 1 again."""

import numpy as np
import pytest

from humanoid_core.loop import ControlLoop, InterfaceParameters, PointData, TrajectoryRequest
from humanoid_description import load_model
from humanoid_hw import DynamixelConfig, DynamixelDriver, hardware_joints, stand_in_joint_map
from humanoid_hw.emulator import BusEmulator, robot_servos

#: s: generous bound for the emulator to have handled what was sent (event-driven wait).
PATIENCE = 30.0


@pytest.fixture
def emulator(tmp_path):
    emulator = BusEmulator(robot_servos("bioloid", 1), link=tmp_path / "ttyDXL").start()
    yield emulator
    emulator.stop()


def test_released_servos_are_torque_off_and_the_next_command_takes_them_where_they_are(emulator):
    model = load_model("bioloid")
    joint_map = stand_in_joint_map(model.config.joint_map, 1)
    config = DynamixelConfig(port=emulator.port, protocol=1, latency_timer_ms=20.0)
    driver = DynamixelDriver(hardware_joints(model, joint_map), config)
    loop = ControlLoop(driver, model.joints, InterfaceParameters(control_rate=100.0))
    loop.start()
    ids = emulator.servo_ids
    torque = lambda: [emulator.register(i, "torque_enable") for i in ids]  # noqa: E731
    try:
        assert torque() == [1] * len(ids)
        loop.cycle()
        request = loop.request_torque(False)
        loop.cycle()  # the release, after this cycle's reads
        assert request.error is None and request.done.is_set()
        loop.cycle()  # reads answered after the release (the emulator takes packets in order)
        assert torque() == [0] * len(ids)
        moved = driver.servos[0]  # its horn moved by hand (the robot collapsing) while limp
        emulator.place(moved.servo_id, 300)
        goals_before = [emulator.register(i, "goal_position") for i in ids]
        for _ in range(5):
            loop.cycle()
        assert [emulator.register(i, "goal_position") for i in ids] == goals_before  # nothing written
        assert abs(loop.state.position[moved.index] - moved.joint.servo.raw_to_radians(300)) < 0.01

        other = model.joints.names[-1]
        loop.accept_trajectory(TrajectoryRequest([other], [PointData(1.0, [float(loop.state.position[-1])])]))
        loop.cycle()
        loop.cycle()  # its reads come after the writes of the cycle before
        assert torque() == [1] * len(ids)
        assert abs(emulator.register(moved.servo_id, "goal_position") - 300) <= 2  # where it was, not back
        assert emulator.wait_for(lambda: abs(emulator.register(moved.servo_id, "present_position") - 300) <= 2,
                                 PATIENCE)
        assert np.isfinite(loop.state.position).all()
    finally:
        loop.stop()
