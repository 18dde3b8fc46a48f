"""Servo profiles: how a simulated joint follows its position commands.

Each model turns the latest goal into a reference (position, velocity) per physics
step; PyBullet's position motor then tracks the reference with a PD law limited to
the servo's torque. Vectorised over the robot's joints.

- ``trapezoidal`` (HOAP-2): the measured behaviour of the HOAP-2 actuators in direct
  command mode: speed limited to 57 pulse/ms and acceleration to 5 pulse/ms^2, a far
  goal reached with a trapezoidal velocity profile (accelerate, cruise, decelerate),
  never an instant jump. A set-point with a velocity (a trajectory sampled each control
  cycle) is a goal moving at that velocity until the next one, for at most one control
  period: the servo tracks it as a position loop tracks a moving target, not coming to
  rest on every sample (which shook the robot at the control rate).
- ``speed_limited`` (Dynamixel AX-12): the goal is approached at the commanded
  moving speed (the servo's maximum when none is given), then held by a stiff,
  torque-limited PD law: the AX-12's own position loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from humanoid_core.parameter_fields import documented
from humanoid_description.model import RobotModel


@dataclass(frozen=True)
class ServoParameters:
    """Servo behaviour of every joint of a robot: ROS parameters ``servo.*`` of the
    simulation node. Defaults for a robot: :meth:`for_model` (its actuator limits);
    per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``."""

    kind: str = documented("trapezoidal", "trapezoidal (HOAP-2) or speed_limited (Dynamixel AX-12)")
    max_velocity: float = documented(4.76, "rad/s, servo speed limit")
    max_acceleration: float = documented(417.5, "rad/s^2, servo acceleration limit (trapezoidal only)")
    max_torque: float = documented(9.0, "N m, the motor's force limit in PyBullet")
    position_gain: float = documented(0.3, "PyBullet positionGain of the motor's PD law")
    velocity_gain: float = documented(1.0, "PyBullet velocityGain of the motor's PD law")

    @classmethod
    def for_model(cls, model: RobotModel) -> ServoParameters:
        """Defaults from the robot model: its actuator limits and smallest joint effort limit."""
        return cls(max_velocity=model.config.actuators.max_velocity,
                   max_acceleration=model.config.actuators.max_acceleration,
                   max_torque=float(np.min(model.joints.effort)))

    def __post_init__(self) -> None:
        if self.kind not in ("trapezoidal", "speed_limited"):
            raise ValueError(f"unknown servo kind {self.kind!r} (trapezoidal or speed_limited)")
        for name in ("max_velocity", "max_torque"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"servo {name} must be > 0")
        if self.kind == "trapezoidal" and self.max_acceleration <= 0.0:
            raise ValueError("a trapezoidal servo needs max_acceleration > 0")


class ServoBank:
    """Reference generators of all joints; call :meth:`step` once per physics step."""

    def __init__(self, params: ServoParameters, joint_count: int) -> None:
        self.params = params
        self.position = np.zeros(joint_count)
        self.velocity = np.zeros(joint_count)
        self.goal = np.zeros(joint_count)
        self.speed = np.full(joint_count, params.max_velocity)
        self.feed = np.zeros(joint_count)  # trapezoidal: the goal's own velocity ...
        self.feed_time = 0.0  # ... for this much longer (s)
        self.settled = True  # every reference rests on its goal: stepping would change nothing

    def reset(self, positions: np.ndarray) -> None:
        self.position = np.array(positions, dtype=float)
        self.velocity = np.zeros_like(self.position)
        self.goal = self.position.copy()
        self.speed = np.full_like(self.position, self.params.max_velocity)
        self.feed = np.zeros_like(self.position)
        self.feed_time = 0.0
        self.settled = True

    def command(self, positions: np.ndarray, velocities: np.ndarray | None = None, period: float = 0.0) -> None:
        """New goals; ``velocities`` (feed-forward) set the moving speed of a ``speed_limited``
        servo (a zero velocity: the servo's maximum, to arrive at rest) and make a
        ``trapezoidal`` servo's goal move on at that velocity for ``period`` (the control
        period: until the next command is due)."""
        self.goal = np.asarray(positions, dtype=float)
        if velocities is None:
            self.speed = np.full_like(self.goal, self.params.max_velocity)
            self.feed, self.feed_time = np.zeros_like(self.goal), 0.0
        else:
            velocities = np.asarray(velocities, dtype=float)
            self.speed = self._moving_speed(np.abs(velocities))
            limit = self.params.max_velocity
            self.feed, self.feed_time = np.clip(velocities, -limit, limit), period
        self._update_settled()

    def _moving_speed(self, speeds: np.ndarray) -> np.ndarray:
        # A zero feed-forward velocity means "arrive at rest", not "do not move": keep the
        # servo able to close a remaining gap at its full speed.
        return np.where(speeds > 0.0, np.minimum(speeds, self.params.max_velocity), self.params.max_velocity)

    def _update_settled(self) -> None:
        moving_goal = self.params.kind == "trapezoidal" and self.feed_time > 0.0 and np.any(self.feed)
        self.settled = not moving_goal and not np.any(self.velocity) and np.array_equal(self.position, self.goal)

    def step(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Advance the references by ``dt``; returns (target positions, target velocities)."""
        if self.settled:
            return self.position, self.velocity
        if self.params.kind == "trapezoidal":
            self._trapezoid(dt)
        else:
            self._ramp(dt)
        self._update_settled()
        return self.position, self.velocity

    def _trapezoid(self, dt: float) -> None:
        """Time-optimal bang-coast-bang towards the goal, speed and acceleration limited, the
        goal moving at its feed-forward velocity while that lasts. The speed relative to the
        goal closes the error whatever the feed-forward (a servo that only cruised at a
        set-point's speed never caught up: the HOAP-2 arm trailed a 1.5 s arm raise by 0.14
        rad); a feed-forward of zero is the HOAP-2's direct command mode, a rest-to-rest move."""
        vmax, amax = self.params.max_velocity, self.params.max_acceleration
        # the goal's velocity over this step (it moves while its feed-forward lasts), and the
        # error in the goal's frame: as it stood before the goal moved on
        moved = min(dt, self.feed_time)
        goal_velocity = self.feed * (moved / dt)
        error = self.goal - self.position
        self.goal = self.goal + self.feed * moved
        self.feed_time -= moved
        # fastest speed (relative to the goal's) from which the goal can still be reached
        # braking at amax in steps of dt: the steps v, v - a dt, ... cover v^2 / 2a + v dt / 2,
        # solved for v
        half_step = 0.5 * amax * dt
        braking = np.sqrt(half_step**2 + 2.0 * amax * np.abs(error)) - half_step
        wanted = np.clip(goal_velocity + np.sign(error) * np.minimum(vmax, braking), -vmax, vmax)
        change = np.clip(wanted - self.velocity, -amax * dt, amax * dt)
        velocity = self.velocity + change
        arrive = np.abs((velocity - goal_velocity) * dt) >= np.abs(error)  # would overshoot: land on the goal
        self.position = np.where(arrive, self.goal, self.position + velocity * dt)
        at_goal_speed = np.abs(velocity - goal_velocity) <= amax * dt * 2.0
        self.velocity = np.where(arrive & at_goal_speed, goal_velocity, velocity)

    def _ramp(self, dt: float) -> None:
        error = self.goal - self.position
        step = np.clip(error, -self.speed * dt, self.speed * dt)
        self.position = self.position + step
        self.velocity = step / dt
