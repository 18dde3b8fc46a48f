"""Torque off on the simulated robot (in-process, real PyBullet; the fall manager's ``protect:
limp``): the motors let go and the standing robot collapses under gravity; torque on again, the
joints hold where they came to rest: the Bioloid with either servo law, the quadruped and the
HOAP-2 with their default one."""

import dataclasses

import numpy as np
import pytest

from humanoid_core.loop import JointCommand
from humanoid_description import load_model
from humanoid_sim import PyBulletDriver, ServoParameters, SimParameters

PERIOD = 0.01


def run(driver, seconds, command=None):
    for _ in range(round(seconds / PERIOD)):
        if command is not None:
            driver.write(command)
        driver.sync(PERIOD)
    return driver.read()


@pytest.mark.parametrize(("robot", "law"), [("bioloid", "position_motor"), ("bioloid", "pd_torque"),
                                            ("bioloid_quadruped", "position_motor"), ("hoap2", "position_motor")])
def test_the_released_robot_collapses_and_holds_where_it_lies_when_taken_again(robot, law):
    model = load_model(robot)
    servo = dataclasses.replace(ServoParameters.for_model(model), law=law)
    driver = PyBulletDriver(model, servo, SimParameters(real_time_factor=0.0))
    driver.start()
    try:
        home = JointCommand(model.home_positions())
        standing = run(driver, 0.5, home)
        height = driver.base_placement().translation[2]
        assert not driver.fall_state().fallen
        assert driver.releases_torque
        driver.set_torque(False)
        lying = run(driver, 1.5)  # nothing written: limp
        assert driver.base_placement().translation[2] < 0.8 * height  # the trunk came down
        assert np.max(np.abs(lying.position - standing.position)) > 0.3  # joints gave way
        if law == "pd_torque":  # the law applies no torque (the position motors report their own figure)
            assert np.allclose(lying.effort, 0.0)
        # taken again where it lies (the control loop writes the measured positions first)
        driver.write(JointCommand(lying.position.copy()))
        driver.set_torque(True)
        held = run(driver, 0.5, JointCommand(lying.position.copy()))
        assert np.max(np.abs(held.position - lying.position)) < 0.15  # no jump back to the standing pose
        assert np.max(np.abs(held.position - standing.position)) > 0.3
    finally:
        driver.close()
