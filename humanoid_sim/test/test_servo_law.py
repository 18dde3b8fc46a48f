"""The pd_torque servo law (Lima et al.'s simulated servo, ``servo.law: pd_torque``): the
reference generator at the bus period, the torque limit, a step followed and settled, the
default law untouched, and bad values refused in one line. In-process (no ROS), on the
Bioloid at the ``pd_torque`` profile's 4 kHz."""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest

from humanoid_core import node_parameters
from humanoid_core.loop import two_segment
from humanoid_description import SIM_NODE_PARAMETERS
from humanoid_sim import (
    NODE_NAME,
    BusReference,
    ParamsFileError,
    ServoParameters,
    SimulatedRobot,
    load,
    pybullet_driver,
    stable_gains,
)

ROBOT = "bioloid"
JOINT = "r_shoulder_pitch"


def test_the_bus_reference_is_the_two_segment_law_between_bus_ticks():
    """Ticks every 48 physics steps (4 kHz, 83.33 Hz): the set-point taken at a tick is reached
    one bus period later, through the paper's two halves of constant acceleration."""
    bus = BusReference(1, 4000.0, 4000.0 / 48)
    bus.reset(np.zeros(1))
    goal = np.array([0.5])
    values = [bus.step(goal, np.zeros(1)) for _ in range(3 * 48)]
    position = np.array([p[0] for p, _ in values])
    # the first tick (step 0) takes the goal: reached at step 48, then held
    expected = [two_segment(n / 4000.0, 0.0, 48 / 4000.0, np.zeros(1), np.zeros(1), goal, np.zeros(1))[0][0]
                for n in range(49)]
    assert position[:49] == pytest.approx(expected, abs=1e-12)
    assert position[24] == pytest.approx(0.25)  # the midpoint: half the way
    assert np.all(position[48:] == pytest.approx(0.5))


def test_a_set_point_moving_on_is_joined_with_its_velocity():
    bus = BusReference(1, 1000.0, 100.0)  # a tick every 10 steps
    bus.reset(np.zeros(1))
    for n in range(40):
        t = n / 1000.0
        position, velocity = bus.step(np.array([1.0 * t]), np.array([1.0]))
    # a ramp sampled at the ticks and reached one bus period later: the ramp, 10 ms late
    assert position[0] == pytest.approx(1.0 * (39 / 1000.0 - 0.010), abs=1e-9)
    assert velocity[0] == pytest.approx(1.0)


def test_light_joints_keep_their_gains_within_the_stability_bound():
    k_theta, k_omega = stable_gains(np.array([80.0, 80.0]), np.array([0.15, 0.15]),
                                    np.array([1e-2, 1e-5]), 1.0 / 4000)
    assert k_theta[0] == 80.0 and k_omega[0] == 0.15  # a heavy link: the law's gains
    a, b = k_theta[1] / 4000**2 / 1e-5, k_omega[1] / 4000 / 1e-5
    assert a + 2 * b == pytest.approx(2.0)  # half the explicit step's bound (a + 2 b < 4)
    assert k_theta[1] == 80.0  # the stiffness kept, the damping reduced


@pytest.fixture
def torques(monkeypatch) -> list[np.ndarray]:
    """Every torque the law computes, at every physics step."""
    seen: list[np.ndarray] = []
    law = pybullet_driver.pd_torque

    def recorded(*args, **kwargs):
        torque = law(*args, **kwargs)
        seen.append(torque.copy())
        return torque
    monkeypatch.setattr(pybullet_driver, "pd_torque", recorded)
    return seen


def test_a_step_follows_the_two_segment_reference_within_the_torque_limit(torques):
    """A 0.6 rad step of one shoulder (the servo's profile at its speed, on the bus at 83 Hz):
    the joint follows the generator's reference (within 0.08 rad while the torque limit holds it
    back at the start, 0.03 rad RMS), settles within 0.005 rad of the goal, and no torque, at any
    physics step, passes max_torque (0.5 N m here, which the step reaches)."""
    with SimulatedRobot(ROBOT, "pd_torque", {"servo.max_torque": 0.5}) as robot:
        driver = robot.driver
        assert driver.params.physics_rate == 4000.0 and driver.servos.params.law == "pd_torque"
        robot.run_for(0.3)
        index = robot.model.joints.index(JOINT)
        start = driver.read().position.copy()
        goal = start.copy()
        goal[index] += 0.6
        robot.loop.hold(goal)  # a set-point step, as joint_commands would send it
        followed = []
        for _ in range(round(1.2 / robot.period)):
            state = robot.cycle()
            followed.append((driver._bus.sample()[0][index], state.position[index]))
        reference, position = np.array(followed).T
        limit = driver.servos.params.max_torque
        assert max(float(np.max(np.abs(t))) for t in torques) <= limit + 1e-12
        assert any(np.isclose(np.max(np.abs(t)), limit) for t in torques)  # the limit was reached
        assert np.max(np.abs(position - reference)) < 0.08
        assert np.sqrt(np.mean((position - reference) ** 2)) < 0.03
        assert abs(position[-1] - goal[index]) < 0.005
        assert reference[-1] == pytest.approx(goal[index])
        assert robot.fell_at is None


def test_the_default_law_is_pybullets_position_motors():
    """No robot's figures move: every robot's parameter file keeps the position motors, and the
    driver built from it applies no torque of its own."""
    assert ServoParameters().law == "position_motor"
    for robot in SIM_NODE_PARAMETERS.robots():
        values = node_parameters(SIM_NODE_PARAMETERS.path(robot), NODE_NAME)
        assert values.get("servo.law", "position_motor") == "position_motor", robot
    with SimulatedRobot(ROBOT) as robot:
        assert not robot.driver._pd and robot.driver.params.physics_rate == 1000.0


@pytest.mark.parametrize(("values", "message"), [
    ({"law": "stiff"}, "unknown servo law 'stiff' (known: position_motor, pd_torque)"),
    ({"k_theta_legs": -1.0}, "servo k_theta_legs must be a finite number >= 0, got -1.0"),
    ({"k_omega_others": math.nan}, "servo k_omega_others must be a finite number >= 0, got nan"),
    ({"bus_rate": 0.0}, "servo bus_rate must be a finite number of Hz > 0, got 0.0"),
])
def test_bad_values_are_refused_in_one_line(values, message, tmp_path):
    with pytest.raises(ValueError) as error:
        ServoParameters(**values)
    assert str(error.value) == message
    name, value = next(iter(values.items()))
    path = tmp_path / "params.yaml"
    path.write_text(f"servo: {{{name}: {value if not isinstance(value, float) or math.isfinite(value) else '.nan'}}}\n")
    with pytest.raises(ParamsFileError) as error:
        load(path, [])
    assert str(error.value) == f"parameter file {path}: {message}"


def humanoid(*args: str) -> subprocess.CompletedProcess:
    command = shutil.which("humanoid")
    assert command, "the humanoid command is not installed"
    return subprocess.run([command, *args], capture_output=True, text=True, timeout=120)


def test_commands_refuse_a_bad_law_or_gain_before_starting(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("servo: {law: pd_torqe}\n")
    done = humanoid("postures", "--robot", "hoap2", "--params", str(bad))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "unknown servo law 'pd_torqe' (known: position_motor, pd_torque)" in done.stderr
    done = humanoid("identify", "--robot", "hoap2", "--postures", "reference", "--fit", "servo.k_theta_legs=-5:10",
                    "--output", str(tmp_path / "fit.yaml"))
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "servo k_theta_legs must be a finite number >= 0, got -5.0" in done.stderr
