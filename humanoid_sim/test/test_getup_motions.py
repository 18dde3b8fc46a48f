"""The humanoids' get-up motions stand the laid-down robot up (in-process, real PyBullet).

Each ``getup_<side>`` of a robot's motion library, planned as the trajectory generator plans
it (limits, speed scaling, the transition from where the robot lies) and played set-point by
set-point at the node's control rate through the simulated robot the node would build (its
parameter file: servos, transmissions, physics), from the robot laid on that side in its home pose
with its joints moved by up to 3 degrees; then held 2 s. A side's get-up (left, right) rolls the
robot off that side: it must then lie on its back or its belly, whose get-up the fall manager
plays as its next attempt, played here too. Up as the fall manager decides it:
the trunk within ``up_tilt`` of the vertical, the feet carrying ``feet_loaded_fraction`` of
the weight, nothing but the feet on the ground. One trial each here; ``humanoid getup`` runs
ten per start through the fall manager in the graph."""

import math

import numpy as np
import pytest

from humanoid_core.balance import FallManagerParameters, TrunkReading, side_of
from humanoid_core.loop import JointCommand
from humanoid_core.motion import list_motions, load_motion, plan_playback
from humanoid_description import load_model
from humanoid_sim import PyBulletDriver, make_driver, simulation_settings

HUMANOIDS = ("hoap2", "bioloid")
JITTER = math.radians(3.0)
PREFIX = FallManagerParameters().getup_prefix
GETUPS = [(robot, name) for robot in HUMANOIDS for name in list_motions(robot) if name.startswith(PREFIX)]


#: Sides a get-up only rolls the robot off, onto one of these.
ROLLED_ONTO = ("back", "belly")


def test_the_bioloid_gets_up_from_every_side():
    """The library's get-ups a fallen Bioloid needs."""
    assert {f"{PREFIX}{side}" for side in ("back", "belly", "left", "right")} <= set(list_motions("bioloid"))


def test_the_hoap2_gets_up_from_its_back_and_its_belly():
    """The HOAP-2's get-ups (from its sides it has none: it rolls onto its back or belly as it
    falls, docs/energy_and_falls.md)."""
    assert {f"{PREFIX}{side}" for side in ("back", "belly")} <= set(list_motions("hoap2"))


@pytest.mark.parametrize(("robot", "name"), GETUPS)
def test_the_getup_motion_stands_the_robot_up_from_its_side(robot, name):
    side = name.removeprefix(PREFIX)
    model = load_model(robot)
    manager = FallManagerParameters.for_robot(robot)
    settings = simulation_settings(model)
    period = 1.0 / settings.interface.control_rate
    driver = make_driver(model, settings)
    driver.start()
    try:
        jitter = np.random.default_rng(1).uniform(-JITTER, JITTER, len(model.joints.names))
        lying = np.clip(model.home_positions() + jitter, model.joints.lower, model.joints.upper)
        driver.reset(lying, lying=side)
        hold(driver, lying, 1.0, period)
        assert driver.fall_state().fallen
        play(driver, model, name, period)
        if side not in ROLLED_ONTO:
            now = side_of(TrunkReading.of(0.0, driver.base_placement().rotation).up).value
            assert now in ROLLED_ONTO, f"{name} left the robot lying on its {now}"
            play(driver, model, f"{PREFIX}{now}", period)
        state = driver.fall_state()
        load = sum(foot.force[2] for foot in driver.read_sensors().feet)
        weight = model.total_mass * 9.81
        assert state.tilt_deg < manager.up_tilt and not state.touching, f"not up: {state.reason}"
        assert load >= manager.feet_loaded_fraction * weight, f"the feet carry {load:.1f} N of {weight:.1f} N"
    finally:
        driver.close()


def play(driver: PyBulletDriver, model, name: str, period: float) -> None:
    """Play library motion ``name`` from where the robot is, then hold its end 2 s."""
    motion = load_motion(model.name, name)
    playback = plan_playback(motion, current=model.joints.to_dict(driver.read().position), period=period)
    assert not playback.scaling.slowed, playback.scaling.describe()
    columns = [model.joints.index(joint) for joint in motion.joint_names]
    positions = model.home_positions().copy()
    for row in playback.trajectory.positions:
        positions[columns] = row
        hold(driver, positions, period, period)
    hold(driver, positions, 2.0, period)


def hold(driver: PyBulletDriver, positions: np.ndarray, seconds: float, period: float) -> None:
    """Command ``positions`` for ``seconds`` of simulated time, a control period at a time."""
    command = JointCommand(positions.copy())
    for _ in range(round(seconds / period)):
        driver.write(command)
        driver.sync(period)
