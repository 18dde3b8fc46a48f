"""Sensor noise of the simulated robot: what its encoders, IMU and foot sensors read,
given what the physics says.

Model (parameters :class:`humanoid_sim.sim_parameters.NoiseParameters`, ``noise.*``):

- **Joint encoders**: the angle plus white Gaussian noise (``encoder_noise``), read as a whole
  number of counts from the joint's zero (``encoder_resolution``: the HOAP-2's 209 pulses
  per degree, the AX-12's 0.2932 deg per step); the velocity plus white Gaussian noise.
- **IMU**: angular velocity and linear acceleration plus a constant bias and white
  Gaussian noise, per axis of the IMU frame; the orientation turned by a small random
  rotation (Gaussian per axis).
- **Foot force sensors**: force and torque plus white Gaussian noise per axis; the foot's
  contact flag is decided from the noisy force, as on a robot.

Each sensor kind draws from its own generator, all three derived from ``seed`` and
restarted at every reset: a sensor read more or less often (its topic subscribed or not)
does not shift another's sequence, and a run repeated from a reset with the same seed
reads the same values.
"""

from __future__ import annotations

import math

import numpy as np

from humanoid_sim.sim_parameters import NoiseParameters

Vector = tuple[float, float, float]
Quaternion = tuple[float, float, float, float]  # x, y, z, w


def _quaternion_product(a: Quaternion, b: Quaternion) -> Quaternion:
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def _rotation(vector: np.ndarray) -> Quaternion:
    """The quaternion of a rotation vector (axis times angle, rad)."""
    angle = float(np.linalg.norm(vector))
    if angle == 0.0:
        return 0.0, 0.0, 0.0, 1.0
    s = math.sin(angle / 2.0) / angle
    return float(vector[0] * s), float(vector[1] * s), float(vector[2] * s), math.cos(angle / 2.0)


class SensorNoise:
    """Corrupts readings as :class:`NoiseParameters` say (only while ``enabled``)."""

    def __init__(self, params: NoiseParameters) -> None:
        self.params = params
        self.enabled = params.enabled
        self._resolution = math.radians(params.encoder_resolution)
        self._encoder_sigma = math.radians(params.encoder_noise)
        self._velocity_sigma = math.radians(params.velocity_noise)
        self._orientation_sigma = math.radians(params.orientation_noise)
        self.restart()

    def restart(self) -> None:
        """Start every sequence again from the seed (a reset of the simulation)."""
        joints, imu, feet = np.random.SeedSequence(self.params.seed).spawn(3)
        self._joints, self._imu, self._feet = (np.random.default_rng(s) for s in (joints, imu, feet))

    def joints(self, position: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Encoder readings of the joints' angles and velocities (rad, rad/s)."""
        noisy = position + self._joints.normal(0.0, self._encoder_sigma, position.shape) \
            if self._encoder_sigma > 0.0 else position.copy()
        if self._resolution > 0.0:
            noisy = np.round(noisy / self._resolution) * self._resolution
        if self._velocity_sigma > 0.0:
            velocity = velocity + self._joints.normal(0.0, self._velocity_sigma, velocity.shape)
        return noisy, velocity

    def imu(self, orientation: Quaternion, angular_velocity: Vector, linear_acceleration: Vector,
            ) -> tuple[Quaternion, Vector, Vector]:
        """IMU readings (orientation in the world, rates and accelerations in the IMU frame)."""
        p, rng = self.params, self._imu
        gyro = np.asarray(angular_velocity) + np.asarray(p.gyro_bias) + rng.normal(0.0, p.gyro_noise, 3)
        accel = (np.asarray(linear_acceleration) + np.asarray(p.accelerometer_bias)
                 + rng.normal(0.0, p.accelerometer_noise, 3))
        turned = rng.normal(0.0, self._orientation_sigma, 3)
        if self._orientation_sigma > 0.0:
            orientation = _quaternion_product(orientation, _rotation(turned))
        return orientation, _vector(gyro), _vector(accel)

    def foot(self, force: Vector, torque: Vector) -> tuple[Vector, Vector]:
        """A foot sensor's force (N) and torque (N m)."""
        p, rng = self.params, self._feet
        return (_vector(np.asarray(force) + rng.normal(0.0, p.foot_force_noise, 3)),
                _vector(np.asarray(torque) + rng.normal(0.0, p.foot_torque_noise, 3)))


def _vector(values: np.ndarray) -> Vector:
    return float(values[0]), float(values[1]), float(values[2])
