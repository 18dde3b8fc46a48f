"""Pausing and stepping the simulated robot while its control loop runs (in-process, real
PyBullet): a step request runs exactly the cycles asked, whenever the pause arrived."""

import threading

import pytest

from humanoid_description import load_model
from humanoid_sim import PyBulletDriver, ServoParameters, SimParameters

PERIOD = 0.01


@pytest.fixture
def running_driver():
    """The Bioloid's simulated driver, its loop running as fast as it can in a thread."""
    model = load_model("bioloid")
    driver = PyBulletDriver(model, ServoParameters.for_model(model), SimParameters(real_time_factor=0.0))
    driver.start()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            driver.sync(PERIOD)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield driver
    stop.set()
    driver.resume()
    thread.join(timeout=10.0)
    driver.close()


def test_a_pause_during_a_cycle_does_not_eat_the_next_step_request(running_driver):
    driver = running_driver
    for _ in range(50):  # the pause lands during a running cycle most of the time
        driver.pause()
        frozen = driver.step_paused(0, timeout=5.0)  # no cycle asked: answers at once
        assert driver.step_paused(3, timeout=5.0) == pytest.approx(frozen + 3 * PERIOD)
        driver.resume()
