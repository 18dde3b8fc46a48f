"""Robots in one PyBullet world (humanoid_sim.shared_world; in process, real PyBullet): each
stands at its seat, the world steps only when every robot has come to the cycle (one held
robot holds them all, and one that left holds nobody), and robots touch each other; the
world's node refuses a bad list of namespaces."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from humanoid_control.ros import poll_until
from humanoid_description import load_model
from humanoid_sim import PyBulletDriver, ServoParameters, SimParameters, WorldSeat

ROBOT = "bioloid_quadruped"
PERIOD = 0.01


def world(count: int, spacing: float) -> list[PyBulletDriver]:
    """``count`` quadrupeds in one world, started (built first, as the loop's process does)."""
    model = load_model(ROBOT)
    drivers = [PyBulletDriver(model, ServoParameters.for_model(model), SimParameters(real_time_factor=0.0),
                              seat=WorldSeat(index, count, spacing)) for index in range(count)]
    for driver in drivers:
        driver.start()
    return drivers


@pytest.fixture
def pair(request):
    drivers = world(2, request.param)
    yield drivers
    for driver in drivers:
        driver.close()


def cycles(drivers: list[PyBulletDriver], count: int) -> None:
    """Each driver's loop runs ``count`` control cycles, in threads of its own (as the loop's
    process runs the robots of a world)."""
    threads = [threading.Thread(target=lambda d=driver: [d.sync(PERIOD) for _ in range(count)])
               for driver in drivers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60.0)
    assert not any(thread.is_alive() for thread in threads)


def time_once_at(driver: PyBulletDriver, expected: float) -> float:
    """The driver's time once it has come to ``expected``: each robot takes the world's cycle
    on its own thread, so the other robot's clock moves a moment after the stepping one's
    returns."""
    poll_until(lambda: driver.now() >= expected - 1e-9, f"robot time {expected:g} s", 5.0)
    return driver.now()


def base_y(driver: PyBulletDriver) -> float:
    return float(driver.base_placement().translation[1])


@pytest.mark.parametrize("pair", [0.5], indirect=True)
def test_each_robot_stands_at_its_seat_and_the_world_steps_only_with_all_of_them(pair):
    first, second = pair
    assert base_y(first) == pytest.approx(0.0, abs=1e-6)
    assert base_y(second) == pytest.approx(0.5, abs=1e-6)
    first.sync(PERIOD)  # alone: the other robot does not come, nothing steps
    assert first.now() == second.now() == 0.0
    cycles(pair, 20)
    # the world stepped only with both: one clock (a robot whose thread did not come within
    # ARRIVAL_WAIT periods gave its place back, and that cycle was nobody's: on a loaded machine)
    assert first.now() == second.now()
    while first.now() < 20 * PERIOD - 1e-9:
        cycles(pair, 1)
        assert first.now() == second.now()
    assert first.now() == pytest.approx(20 * PERIOD)
    # standing where they were put, each on its own feet
    assert base_y(first) == pytest.approx(0.0, abs=0.001)
    assert base_y(second) == pytest.approx(0.5, abs=0.001)
    assert not first.fall_state().fallen and not second.fall_state().fallen


@pytest.mark.parametrize("pair", [0.5], indirect=True)
def test_a_robot_that_left_holds_nobody(pair):
    first, second = pair
    second.close()
    cycles([first], 5)
    assert first.now() == pytest.approx(5 * PERIOD)


@pytest.mark.parametrize("pair", [0.17], indirect=True)
def test_robots_put_into_each_other_push_each_other_apart(pair):
    """Two quadrupeds 0.17 m apart overlap by about 1 cm (each is 0.182 m across): their
    bodies collide, and the world moves them apart, which no robot alone in its world does."""
    cycles(pair, 50)
    # apart, each pushed away from the other (alone, a standing robot moves by microns)
    assert base_y(pair[0]) < -0.002 and base_y(pair[1]) > 0.172


def test_a_pause_of_one_robot_pauses_the_world_and_its_step_steps_all():
    drivers = world(2, 0.5)
    stop = threading.Event()

    def loop(driver: PyBulletDriver) -> None:
        while not stop.is_set():
            driver.sync(PERIOD)

    threads = [threading.Thread(target=loop, args=(driver,), daemon=True) for driver in drivers]
    try:
        for thread in threads:
            thread.start()
        drivers[0].pause()
        frozen = drivers[0].step_paused(0, timeout=5.0)
        assert time_once_at(drivers[1], frozen) == pytest.approx(frozen)
        assert drivers[0].step_paused(3, timeout=5.0) == pytest.approx(frozen + 3 * PERIOD)
        assert time_once_at(drivers[1], frozen + 3 * PERIOD) == pytest.approx(frozen + 3 * PERIOD)
        drivers[0].resume()
    finally:
        stop.set()
        drivers[0].resume()
        for thread in threads:
            thread.join(timeout=10.0)
        for driver in drivers:
            driver.close()


@pytest.mark.parametrize(("namespaces", "reason"), [("/a,/a", "two robots in one namespace (/a, /a)"),
                                                    ("", "none given (one namespace per robot)")])
def test_a_world_node_given_no_or_twice_the_same_namespace_does_not_start(namespaces, reason):
    """The world's node as a launch file would start it, with bad ``namespaces``: it ends with
    status 1 before any robot starts, saying why (its DDS settings are the session's: conftest.py)."""
    done = subprocess.run([sys.executable, "-m", "humanoid_sim.world_node", "--ros-args", "-p", f"robot:={ROBOT}",
                           "-p", f"namespaces:='{namespaces}'"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"cannot start: parameter namespaces: {reason}" in done.stdout + done.stderr
    assert "robot interface up" not in done.stdout + done.stderr
