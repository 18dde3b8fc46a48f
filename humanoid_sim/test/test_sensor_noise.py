"""Sensor noise of the simulated robot (real PyBullet, in-process, a second each): the
readings are quantised to the encoders' resolution and spread around the noiseless ones as
configured, the IMU's bias shows in its mean, one seed gives one sequence, and noise off
(every robot's default) reads exactly what the physics says.

Two drivers stepped alike without commands live the same physics (noise never reaches it),
so the difference of their readings is the noise alone."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pybullet
import pytest

from humanoid_core import node_parameters
from humanoid_description import ROBOTS, SIM_NODE_PARAMETERS, load_model
from humanoid_sim import NODE_NAME, NoiseParameters, PyBulletDriver, SensorNoise, ServoParameters, SimParameters

PERIOD = 0.005
CYCLES = 300
#: the HOAP-2's encoders: 209 pulses per degree
HOAP2_RESOLUTION = 1.0 / 209.0


@pytest.fixture(scope="module")
def model():
    return load_model("hoap2")


def run(model, noise: NoiseParameters | None, cycles: int = CYCLES):
    """Joint positions, gyro, accelerometer and right-foot force read every cycle of a robot
    standing uncommanded."""
    driver = PyBulletDriver(model, ServoParameters.for_model(model), SimParameters(real_time_factor=0.0),
                            noise=noise)
    driver.start()
    try:
        joints, gyro, accel, force = [], [], [], []
        for _ in range(cycles):
            driver.sync(PERIOD)
            joints.append(driver.read().position)
            sensors = driver.read_sensors()
            gyro.append(sensors.imu.angular_velocity)
            accel.append(sensors.imu.linear_acceleration)
            force.append(next(f.force for f in sensors.feet if f.side == "right"))
        base = driver.base_placement()
        return {"joints": np.array(joints), "gyro": np.array(gyro), "accel": np.array(accel),
                "force": np.array(force), "base": base.homogeneous}
    finally:
        driver.close()


def test_joint_readings_are_quantised_and_spread_as_configured(model):
    sigma_deg = 0.05  # about ten encoder counts
    noise = NoiseParameters(enabled=True, seed=3, encoder_resolution=HOAP2_RESOLUTION, encoder_noise=sigma_deg)
    clean, noisy = run(model, None), run(model, noise)
    assert np.array_equal(clean["base"], noisy["base"])  # the same physics: the noise never reached it
    counts = noisy["joints"] / math.radians(HOAP2_RESOLUTION)
    assert np.allclose(counts, np.round(counts), rtol=0.0, atol=1e-6)  # whole encoder counts
    error = noisy["joints"] - clean["joints"]
    # Gaussian noise, then rounding to a count (uniform error of variance q^2 / 12)
    expected = math.sqrt(math.radians(sigma_deg) ** 2 + math.radians(HOAP2_RESOLUTION) ** 2 / 12.0)
    # 7500 samples: the standard deviation is known to within 1 % (one sigma); 5 % is ample
    assert error.std() == pytest.approx(expected, rel=0.05)
    assert abs(error.mean()) < 4.0 * expected / math.sqrt(error.size)


def test_the_imu_bias_shows_in_the_mean_and_the_noise_in_the_spread(model):
    gyro_bias, accel_bias = (0.1, -0.2, 0.05), (0.3, 0.0, -0.2)
    noise = NoiseParameters(enabled=True, seed=5, gyro_noise=0.02, gyro_bias=gyro_bias, accelerometer_noise=0.1,
                            accelerometer_bias=accel_bias, foot_force_noise=0.5)
    clean, noisy = run(model, None), run(model, noise)
    for key, bias, sigma in (("gyro", gyro_bias, 0.02), ("accel", accel_bias, 0.1)):
        error = noisy[key] - clean[key]
        assert error.mean(axis=0) == pytest.approx(bias, abs=4.0 * sigma / math.sqrt(CYCLES))
        assert error.std(axis=0) == pytest.approx([sigma] * 3, rel=0.15)  # 300 samples per axis: 4 % (one sigma)
    force_error = noisy["force"] - clean["force"]
    assert force_error.std(axis=0) == pytest.approx([0.5] * 3, rel=0.15)
    assert np.abs(force_error.mean(axis=0)).max() < 4.0 * 0.5 / math.sqrt(CYCLES)


def test_the_same_seed_reads_the_same_values(model):
    noise = NoiseParameters(enabled=True, seed=11, encoder_resolution=HOAP2_RESOLUTION, encoder_noise=0.05,
                            gyro_noise=0.02, accelerometer_noise=0.1, foot_force_noise=0.5)
    first, second = run(model, noise, 100), run(model, noise, 100)
    other = run(model, dataclasses.replace(noise, seed=12), 100)
    for key in ("joints", "gyro", "accel", "force"):
        assert np.array_equal(first[key], second[key]), key
        assert not np.array_equal(first[key], other[key]), key


def test_a_restart_repeats_the_sequence():
    """A reset of the simulation restarts the noise: a run from a reset reads as from the start."""
    noise = SensorNoise(NoiseParameters(enabled=True, seed=2, encoder_noise=0.1, gyro_noise=0.1))
    zeros = np.zeros(5)
    first = [noise.joints(zeros, zeros)[0] for _ in range(3)], noise.imu((0.0, 0.0, 0.0, 1.0), (0, 0, 0), (0, 0, 0))
    noise.restart()
    again = [noise.joints(zeros, zeros)[0] for _ in range(3)], noise.imu((0.0, 0.0, 0.0, 1.0), (0, 0, 0), (0, 0, 0))
    assert all(np.array_equal(a, b) for a, b in zip(first[0], again[0], strict=True))
    assert first[1] == again[1]


@pytest.mark.parametrize("robot", ROBOTS)
def test_noise_is_off_in_every_robots_file(robot):
    values = node_parameters(SIM_NODE_PARAMETERS.path(robot), NODE_NAME)
    assert values["noise.enabled"] is False


def test_noise_off_reads_exactly_what_the_physics_says(model):
    """Disabled, the noise parameters change nothing, whatever their values: the joint readings
    are PyBullet's, and the IMU and feet read as with no noise parameters at all."""
    disabled = NoiseParameters(enabled=False, encoder_resolution=HOAP2_RESOLUTION, encoder_noise=1.0,
                               gyro_noise=1.0, gyro_bias=(1.0, 1.0, 1.0), accelerometer_noise=1.0,
                               foot_force_noise=1.0)
    clean, off = run(model, None), run(model, disabled)
    for key in ("joints", "gyro", "accel", "force"):
        assert np.array_equal(clean[key], off[key]), key
    driver = PyBulletDriver(model, ServoParameters.for_model(model), SimParameters(real_time_factor=0.0),
                            noise=disabled)
    driver.start()
    try:
        for _ in range(20):
            driver.sync(PERIOD)
            states = pybullet.getJointStates(driver._body, driver._joint_ids, physicsClientId=driver._client)
            assert np.array_equal(driver.read().position, np.array([s[0] for s in states]))
    finally:
        driver.close()
