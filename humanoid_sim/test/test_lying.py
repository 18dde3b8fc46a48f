"""A reset that lays the simulated robot down (in-process, real PyBullet): on the side asked,
its lowest point on the ground, so that it lies still as a fallen robot would."""

import numpy as np
import pytest

from humanoid_core.loop import DriverError, JointCommand
from humanoid_description import load_model
from humanoid_sim import PyBulletDriver, ServoParameters, SimParameters

#: The base axis that points down when lying on each side (x forward, y left).
DOWN = {"back": np.array([-1.0, 0.0, 0.0]), "belly": np.array([1.0, 0.0, 0.0]),
        "left": np.array([0.0, 1.0, 0.0]), "right": np.array([0.0, -1.0, 0.0])}


@pytest.fixture(scope="module")
def driver():
    model = load_model("bioloid")
    driver = PyBulletDriver(model, ServoParameters.for_model(model), SimParameters(real_time_factor=0.0))
    driver.start()
    yield driver
    driver.close()


@pytest.mark.parametrize("side", DOWN)
def test_the_robot_lies_on_the_side_asked_and_stays_there(driver, side):
    driver.reset(lying=side)
    base = driver.base_placement()
    down = base.rotation @ DOWN[side]
    assert down[2] < -0.95, f"lying on its {side}: that side faces {down}"
    lowest = driver.lowest_point()
    assert lowest == pytest.approx(driver.params.drop_height, abs=1e-4)
    home = driver.model.home_positions()
    for _ in range(100):  # a second holding its pose: it settles, it does not bounce or roll over
        driver.write(JointCommand(home))
        driver.sync(0.01)
    state = driver.fall_state()
    assert state.fallen and state.tilt_deg > 60.0 and state.touching
    assert (driver.base_placement().rotation @ DOWN[side])[2] < -0.8
    assert np.linalg.norm(driver.base_velocity()[0]) < 0.05


def test_an_unknown_side_is_refused_and_the_robot_keeps_its_place(driver):
    driver.reset()
    before = driver.base_placement()
    with pytest.raises(DriverError, match="cannot lay the robot on 'sideways': one of back, belly, left, right"):
        driver.reset(lying="sideways")
    assert np.allclose(driver.base_placement().homogeneous, before.homogeneous)
