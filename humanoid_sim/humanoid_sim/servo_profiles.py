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

Two laws turn the profile into joint torques (``law``):

- ``position_motor`` (the default): PyBullet's position motors track the profile at every
  physics step (a velocity constraint, ``position_gain`` of the error per step).
- ``pd_torque``: the servo of Lima et al.'s ODE simulator. Every bus period (``bus_rate``)
  the servo takes the profile's position and velocity as its new set-point, reached one
  bus period later through the constant-acceleration reference generator
  (:func:`humanoid_core.loop.interpolation.two_segment`, :class:`BusReference`); at every
  physics step the joint gets ``T = k_theta (ref - q) + k_omega (ref' - q')`` limited to
  ``max_torque``, through PyBullet's torque control. Gains per joint group: the legs (the
  joints that move a foot) and the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_core import documented
from humanoid_core.loop import two_segment
from humanoid_description import RobotModel


def _within(values: np.ndarray, bound: np.ndarray | float) -> np.ndarray:
    """``values`` clipped to ±``bound`` (bound ≥ 0): np.clip's values without its Python
    wrappers, which cost more than the clip at every physics step."""
    return np.minimum(np.maximum(values, -bound), bound)


@dataclass(frozen=True)
class ServoParameters:
    """Servo behaviour of every joint of a robot: ROS parameters ``servo.*`` of the
    simulation node. Defaults for a robot: :meth:`for_model` (its actuator limits);
    per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``."""

    kind: str = documented("trapezoidal", "trapezoidal (HOAP-2) or speed_limited (Dynamixel AX-12)")
    max_velocity: float = documented(4.76, "rad/s, servo speed limit")
    max_acceleration: float = documented(417.5, "rad/s^2, servo acceleration limit (trapezoidal only)")
    speed_unit: float = documented(0.0, "rad/s, one unit of the moving-speed register (speed_limited; 0: any speed): "
                                        "a commanded speed is rounded to whole units as the hardware driver writes "
                                        "it, and one that rounds to none is the servo's maximum (register 0)")
    max_torque: float = documented(9.0, "N m, the motor's force limit in PyBullet")
    position_gain: float = documented(0.3, "PyBullet positionGain of the motor's PD law")
    velocity_gain: float = documented(1.0, "PyBullet velocityGain of the motor's PD law")
    law: str = documented("position_motor", "position_motor (PyBullet's position motors track the profile) or "
                                            "pd_torque (Lima et al.: T = k_theta (ref - q) + k_omega (ref' - q'), "
                                            "limited to max_torque, ref from the two-segment generator at bus_rate)")
    bus_rate: float = documented(83.0, "Hz, pd_torque: how often a servo takes a new set-point (the bus period; "
                                       "the Bioloid's 83 Hz of Lima et al.)")
    k_theta_legs: float = documented(60.0, "N m/rad, pd_torque: position gain of the leg joints (those moving a "
                                           "foot)")
    k_omega_legs: float = documented(0.08, "N m s/rad, pd_torque: velocity gain of the leg joints")
    k_theta_others: float = documented(60.0, "N m/rad, pd_torque: position gain of the other joints")
    k_omega_others: float = documented(0.08, "N m s/rad, pd_torque: velocity gain of the other joints")

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
        if not self.speed_unit >= 0.0:
            raise ValueError("servo speed_unit must be >= 0")
        if self.kind == "trapezoidal" and self.max_acceleration <= 0.0:
            raise ValueError("a trapezoidal servo needs max_acceleration > 0")
        for name in ("law", "bus_rate", *PD_GAINS):
            problem = value_error(name, getattr(self, name))
            if problem:
                raise ValueError(problem)


#: The laws that turn a servo's profile into joint torques.
LAWS = ("position_motor", "pd_torque")
#: The pd_torque law's gains (ServoParameters fields).
PD_GAINS = ("k_theta_legs", "k_omega_legs", "k_theta_others", "k_omega_others")


def value_error(name: str, value: object) -> str | None:
    """What is wrong with ``value`` for the servo law's parameter ``name`` (a ServoParameters
    field: law, bus_rate or a gain), in one line; None when it is fine or not one of them.
    Parameter files check their values with it before anything starts."""
    if name == "law" and value not in LAWS:
        return f"unknown servo law {value!r} (known: {', '.join(LAWS)})"
    if name == "bus_rate" and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
        return f"servo bus_rate must be a finite number of Hz > 0, got {value!r}"
    if name in PD_GAINS and not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0):
        return f"servo {name} must be a finite number >= 0, got {value!r}"
    return None


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
            self.feed, self.feed_time = _within(velocities, limit), period
        self._update_settled()

    def _moving_speed(self, speeds: np.ndarray) -> np.ndarray:
        # A zero feed-forward velocity means "arrive at rest", not "do not move": keep the
        # servo able to close a remaining gap at its full speed. The register holds whole
        # units: a speed that rounds to none (floating-point dust on a set-point at rest) is
        # written as 0, the maximum, by the driver.
        unit = self.params.speed_unit
        if unit > 0.0:
            speeds = np.round(speeds / unit) * unit
        return np.where(speeds > 0.0, np.minimum(speeds, self.params.max_velocity), self.params.max_velocity)

    def _update_settled(self) -> None:
        # count_nonzero and the comparison's own any(): the same answers as np.any and
        # np.array_equal on these equal-shaped float arrays, without their Python wrappers
        # (this runs at every physics step)
        moving_goal = self.params.kind == "trapezoidal" and self.feed_time > 0.0 and np.count_nonzero(self.feed)
        self.settled = (not moving_goal and not np.count_nonzero(self.velocity)
                        and not (self.position != self.goal).any())

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
        distance = np.abs(error)
        braking = np.sqrt(half_step**2 + 2.0 * amax * distance) - half_step
        wanted = _within(goal_velocity + np.sign(error) * np.minimum(vmax, braking), vmax)
        change = _within(wanted - self.velocity, amax * dt)
        velocity = self.velocity + change
        relative = velocity - goal_velocity
        arrive = np.abs(relative * dt) >= distance  # would overshoot: land on the goal
        self.position = np.where(arrive, self.goal, self.position + velocity * dt)
        at_goal_speed = np.abs(relative) <= amax * dt * 2.0
        self.velocity = np.where(arrive & at_goal_speed, goal_velocity, velocity)

    def _ramp(self, dt: float) -> None:
        error = self.goal - self.position
        step = _within(error, self.speed * dt)
        self.position = self.position + step
        self.velocity = step / dt


class BusReference:
    """The reference generator of Lima et al.'s simulated servo, one per robot (vectorised over
    its joints), called once per physics step.

    Every bus period the set-point the servo holds (the profile's position and velocity, as a
    bus would carry them) becomes the end of the next interval: from the reference where it is
    now (position and velocity) to that set-point one bus period later, with the two-segment
    constant-acceleration law. A set-point thus reaches the joint's reference one bus period
    after the bus took it, as in the paper, where the controller sends the angle and speed the
    servo is to have at the end of the period. Bus ticks fall on the physics steps nearest to
    whole bus periods since the reset."""

    def __init__(self, joint_count: int, physics_rate: float, bus_rate: float) -> None:
        self.steps_per_tick = physics_rate / bus_rate
        self.dt = 1.0 / physics_rate
        self.reset(np.zeros(joint_count))

    def reset(self, positions: np.ndarray) -> None:
        positions = np.array(positions, dtype=float)
        zero = np.zeros_like(positions)
        self.start, self.end = (positions, zero), (positions.copy(), zero.copy())
        self.interval = (0, 0)  # physics steps of the interval's start and end
        self.step_index = 0
        self.next_tick = 0

    def sample(self) -> tuple[np.ndarray, np.ndarray]:
        """The reference (position, velocity) at the current physics step."""
        first, last = self.interval
        if self.step_index >= last:
            return self.end
        (p1, w1), (p2, w2) = self.start, self.end
        position, velocity, _ = two_segment(self.step_index * self.dt, first * self.dt, last * self.dt, p1, w1, p2, w2)
        return position, velocity

    def step(self, setpoint: np.ndarray, setpoint_velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The reference at this physics step (a bus tick first takes ``setpoint`` as the next
        interval's end); then the step counts as done."""
        n = self.step_index
        if n >= self.next_tick:
            now = self.sample()
            ticks = math.floor(n / self.steps_per_tick + 1e-9) + 1
            following = max(n + 1, round(ticks * self.steps_per_tick))
            self.start = (np.array(now[0], dtype=float), np.array(now[1], dtype=float))
            self.end = (np.array(setpoint, dtype=float), np.array(setpoint_velocity, dtype=float))
            self.interval = (n, following)
            self.next_tick = following
        reference = self.sample()
        self.step_index = n + 1
        return reference


def pd_torque(reference: tuple[np.ndarray, np.ndarray], position: np.ndarray, velocity: np.ndarray,
              k_theta: np.ndarray, k_omega: np.ndarray, max_torque: float) -> np.ndarray:
    """Lima et al.'s servo torque: ``k_theta (ref - q) + k_omega (ref' - q')``, limited to the servo's torque."""
    target, target_velocity = reference
    torque = k_theta * (target - position) + k_omega * (target_velocity - velocity)
    return np.clip(torque, -max_torque, max_torque)


def group_gains(params: ServoParameters, joint_names: Sequence[str],
                leg_joints: frozenset[str] | set[str]) -> tuple[np.ndarray, np.ndarray]:
    """The pd_torque law's (k_theta, k_omega) per joint: the legs' gains for the joints in
    ``leg_joints`` (those that move a foot), the others' for the rest."""
    legs = np.array([name in leg_joints for name in joint_names], dtype=bool)
    return (np.where(legs, params.k_theta_legs, params.k_theta_others),
            np.where(legs, params.k_omega_legs, params.k_omega_others))


#: The share of the explicit integration's stability bound the pd_torque gains may use (below).
STABILITY_MARGIN = 0.5


def stable_gains(k_theta: np.ndarray, k_omega: np.ndarray, inertia: np.ndarray,
                 dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The gains each joint can take at the physics step ``dt``. The torque is computed from the
    state at the start of each step (explicit), which PyBullet's semi-implicit Euler step keeps
    stable on a joint of inertia ``J`` only while ``a + 2 b < 4``, ``a = k_theta dt^2 / J`` and
    ``b = k_omega dt / J``. A joint whose gains pass half that bound (the lightest links: hands,
    elbows, ankle rolls) keeps its ``k_theta`` up to ``a = 1`` and gets the ``k_omega`` that
    brings it back to ``a + 2 b = 2``: its stiffness is kept as far as it can be, its damping
    is what the step allows. ``inertia``: each joint's smallest (free-floating) inertia."""
    limit = 4.0 * STABILITY_MARGIN
    k_theta = np.minimum(k_theta, 0.5 * limit * inertia / dt**2)
    a = k_theta * dt**2 / inertia
    k_omega = np.minimum(k_omega, 0.5 * (limit - a) * inertia / dt)
    return k_theta, k_omega
