"""The HOAP-2's trapezoidal servo model following what the robot interface sends it: a
far goal (rest to rest, within the measured speed and acceleration limits), and a
trajectory sampled once per control cycle (position and velocity), which it must
track smoothly: coming to rest on every sample made the joints shake at the control
rate, the feet chatter and the simulated HOAP-2 fall within a few steps of a walk."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim import ServoBank, ServoParameters

PHYSICS = 0.001  # s
CONTROL = 0.005  # s, the HOAP-2's control period
HOAP2 = ServoParameters(kind="trapezoidal", max_velocity=4.76, max_acceleration=417.5)


def follow(bank: ServoBank, positions, velocities, seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """Command the samples of a trajectory each control cycle; the reference's velocity
    and position at every physics step."""
    speeds, places = [], []
    cycles = round(seconds / CONTROL)
    for k in range(cycles):
        t = k * CONTROL
        bank.command(np.array([positions(t)]), np.array([velocities(t)]), CONTROL)
        for _ in range(round(CONTROL / PHYSICS)):
            position, velocity = bank.step(PHYSICS)
            speeds.append(velocity[0])
            places.append(position[0])
    return np.array(places), np.array(speeds)


def test_a_trajectory_sampled_each_cycle_is_tracked_at_its_speed_without_ripple():
    bank = ServoBank(HOAP2, 1)
    bank.reset(np.zeros(1))
    speed = 1.0  # rad/s, a walking knee's
    places, speeds = follow(bank, lambda t: speed * t, lambda t: speed, 1.0)
    cruising = speeds[100:]  # after the first 0.1 s
    assert np.ptp(cruising) < 0.05 * speed  # rest-to-rest per sample: ripple of about 1 rad/s
    lag = speed * np.arange(len(places)) * PHYSICS - places
    assert np.max(np.abs(lag[100:])) < speed * CONTROL  # within one sample of the trajectory


def test_a_servo_behind_its_trajectory_catches_up():
    bank = ServoBank(HOAP2, 1)
    bank.reset(np.array([-0.2]))  # 0.2 rad behind a trajectory moving at 1 rad/s
    places, _ = follow(bank, lambda t: 1.0 * t, lambda t: 1.0, 0.5)
    assert abs(places[-1] - 1.0 * (0.5 - PHYSICS)) < 0.01


def test_the_goal_stops_one_control_period_after_the_last_sample():
    """A stream that ends on a moving sample (a streaming client gone quiet) does not
    carry the joint on: the goal moves on for one control period, then holds."""
    bank = ServoBank(HOAP2, 1)
    bank.reset(np.zeros(1))
    follow(bank, lambda t: 1.0 * t, lambda t: 1.0, 0.2)
    last = 1.0 * (0.2 - CONTROL)
    for _ in range(1000):
        position, velocity = bank.step(PHYSICS)
    assert velocity[0] == 0.0 and bank.settled
    assert position[0] == pytest.approx(last + 1.0 * CONTROL)


@pytest.mark.parametrize("velocities", [None, np.zeros(1)])
def test_a_far_goal_at_rest_is_reached_with_the_measured_limits(velocities):
    bank = ServoBank(HOAP2, 1)
    bank.reset(np.zeros(1))
    bank.command(np.array([1.0]), velocities, CONTROL)
    speeds, position = [], None
    for _ in range(2000):
        position, velocity = bank.step(PHYSICS)
        speeds.append(velocity[0])
    speeds = np.array(speeds)
    assert position[0] == 1.0 and bank.settled
    assert speeds.max() <= HOAP2.max_velocity + 1e-9
    assert np.max(np.abs(np.diff(speeds))) <= HOAP2.max_acceleration * PHYSICS * 2.0 + 1e-9


AX12 = ServoParameters(kind="speed_limited", max_velocity=5.34, max_acceleration=200.0, max_torque=1.5,
                       speed_unit=0.011624)


@pytest.mark.parametrize(("goal", "velocity", "seconds"), [(0.3, 1e-5, 0.3 / 5.34),
                                                             (0.03, 0.0175, 0.03 / (2 * 0.011624))])  # 1.5 units: 2
def test_an_ax12_goal_is_approached_at_the_speed_its_register_can_hold(goal, velocity, seconds):
    """A commanded speed is the moving speed, in whole register units as the hardware driver
    writes it; one that rounds to none (a set-point at rest but for floating-point dust) is
    the servo's maximum: taken as a speed, a servo 0.3 rad behind crawled there for eight hours."""
    bank = ServoBank(AX12, 1)
    bank.reset(np.zeros(1))
    bank.command(np.array([goal]), np.array([velocity]), 0.01)
    steps = 0
    while not bank.settled and steps < 10_000:
        bank.step(PHYSICS)
        steps += 1
    assert steps * PHYSICS == pytest.approx(seconds, abs=0.01)
