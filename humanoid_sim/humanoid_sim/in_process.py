"""The simulated robot in-process: the simulation node's driver and control loop, no ROS.

Experiments that only need the robot's physics and its interface's control loop (the
walk and postures benchmarks, model identification, pushes) run here on the robot's
clock, one control cycle after the other, as fast as the CPU allows and with the same
result every time: no transport, no scheduling, nothing but the simulation decides.
What the node would do between the cycles is done at the node's rates:

- every ``publish_rate`` period a *reading* (the joint state, and the sensors when a
  listener asks for them), handed to the listeners as ``joint_states`` and the sensor
  topics would hand it to a controller;
- every ``ground_truth_rate`` period the fall watch (:meth:`PyBulletDriver.fall_state`).

Commands go through the same :class:`~humanoid_core.loop.control_loop.ControlLoop` as the
node's (validation, the self-collision veto, the trajectory executor), with the node's
parameters from the robot's simulation parameter file and a physics profile.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_core.guards import PARAMETER_PREFIX as GUARD_PREFIX
from humanoid_core.guards import SelfCollisionGuard, SelfCollisionGuardParameters
from humanoid_core.loop import (
    ControlLoop,
    Decimator,
    JointState,
    PointData,
    SensorReadings,
    TrajectoryRequest,
    TrajectoryRun,
)
from humanoid_description import RobotModel, load_model
from humanoid_sim.headless import make_driver, simulation_settings, typed
from humanoid_sim.physics_profiles import REFERENCE
from humanoid_sim.pybullet_driver import FallState
from humanoid_sim.sim_parameters import SimulationPublishingParameters

#: Robot seconds a run may take before it is given up (a runaway experiment).
RUN_LIMIT = 3600.0


@dataclass(frozen=True)
class Reading:
    """What the node would publish at one publishing period."""

    state: JointState
    sensors: SensorReadings | None  # None unless a listener asked for sensors
    #: The set-points the loop wrote in this cycle (``joint_setpoints``; None: released, none written)
    setpoint: np.ndarray | None = None


Listener = Callable[[Reading], None]


class SimulatedRobot:
    """A simulated robot stepped by its caller, control cycle by control cycle."""

    def __init__(self, robot: str, profile: str = REFERENCE, overrides: Mapping[str, Any] | None = None,
                 model: RobotModel | None = None, params_file: Path | str | None = None) -> None:
        self.model = model or load_model(robot)
        self.settings = simulation_settings(self.model, profile, overrides, params_file)
        self.driver = make_driver(self.model, self.settings)
        guard = SelfCollisionGuard(self.model.name, typed(SelfCollisionGuardParameters, self.settings.values,
                                                          GUARD_PREFIX))
        self.loop = ControlLoop(self.driver, self.model.joints, self.settings.interface, guard)
        rates = typed(SimulationPublishingParameters, self.settings.values)
        self._publish = Decimator(self.settings.interface.publish_rate, "publish_rate")
        self._ground_truth = Decimator(rates.ground_truth_rate, "ground_truth_rate")
        self._listeners: list[tuple[Listener, bool]] = []
        self.fall: FallState | None = None  # the latest fall watch
        self.fell_at: float | None = None  # robot time of the first fall seen
        self._reset_ahead: np.ndarray | None = None  # a reset the next cycle makes after its step (reset_held)
        self.loop.start()

    @property
    def period(self) -> float:
        return self.loop.period

    def close(self) -> None:
        self.loop.stop()

    def __enter__(self) -> SimulatedRobot:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def now(self) -> float:
        return self.driver.now()

    def listen(self, listener: Listener, sensors: bool = False) -> None:
        """Call ``listener`` with every reading (with the sensors' when ``sensors``)."""
        self._listeners.append((listener, sensors))

    def unlisten(self, listener: Listener) -> None:
        """Stop calling ``listener`` (a robot that replays several motions)."""
        self._listeners = [(kept, sensors) for kept, sensors in self._listeners if kept is not listener]

    # -- running ----------------------------------------------------------------------
    def cycle(self) -> JointState:
        """One control cycle, then what the node does at this time (readings, fall watch)."""
        if self._reset_ahead is None:
            state = self.loop.cycle()
        else:  # reset_held: the step, then the reset, then the cycle's reading and command
            positions, self._reset_ahead = self._reset_ahead, None
            self.driver.sync(self.period)
            self.driver.reset(positions)
            state = self.loop._act()
        if self._listeners and self._publish.due(state.stamp):
            sensors = self.driver.read_sensors() if any(wants for _, wants in self._listeners) else None
            written = self.loop.written
            reading = Reading(state, sensors, None if written is None else written.position)
            for listener, _ in self._listeners:
                listener(reading)
        if self._ground_truth.due(state.stamp):
            self.fall = self.driver.fall_state()
            if self.fall.fallen and self.fell_at is None:
                self.fell_at = state.stamp
        return state

    def run_until(self, time: float, stop: Callable[[], bool] | None = None) -> bool:
        """Cycle until robot time ``time``, or until ``stop()`` is true after a cycle (then True)."""
        while self.now() < time - 1e-9:
            self.cycle()
            if stop is not None and stop():
                return True
        return False

    def run_for(self, seconds: float, stop: Callable[[], bool] | None = None) -> bool:
        return self.run_until(self.now() + seconds, stop)

    # -- commands -----------------------------------------------------------------------
    def reset(self, positions: np.ndarray | None = None) -> None:
        """Stand the robot in ``positions`` (default: home), as the node's ``reset`` service."""
        positions = self.model.home_positions() if positions is None else np.asarray(positions, dtype=float)
        self.loop.hold(positions)
        self.driver.reset(positions)
        self.fall, self.fell_at = None, None

    def reset_held(self, positions: np.ndarray) -> None:
        """Stand the robot in ``positions`` as the node's ``reset`` service does while a lockstep
        client holds it at its latest published state: the node's control thread has already
        stepped the physics on to the next cycle (with the set-points written at the held state;
        it steps while the participants work on that state), so the robot is put in ``positions``
        after that step and read at that cycle unstepped. The set-points hold ``positions`` from
        now on (a trajectory sent before the next cycle starts from them)."""
        positions = np.asarray(positions, dtype=float)
        self.loop.hold(positions)
        self._reset_ahead = positions
        self.fall, self.fell_at = None, None

    def send(self, times: Sequence[float], positions: Sequence[np.ndarray],
             velocities: Sequence[np.ndarray] | None = None, start_time: float | None = None) -> TrajectoryRun:
        """A trajectory of every joint (times from ``start_time``, default now), as
        ``joint_trajectory`` would deliver it; CommandRejectedError when refused."""
        names = self.model.joints.names
        velocities = velocities if velocities is not None else [()] * len(times)
        points = [PointData(float(t), np.asarray(p, dtype=float).tolist(), np.asarray(v, dtype=float).tolist())
                  for t, p, v in zip(times, positions, velocities, strict=True)]
        return self.loop.accept_trajectory(TrajectoryRequest(names, points, start_time=start_time))

    def follow(self, times: Sequence[float], positions: Sequence[np.ndarray],
               velocities: Sequence[np.ndarray] | None = None, stop: Callable[[], bool] | None = None,
               limit: float = RUN_LIMIT) -> tuple[TrajectoryRun, bool]:
        """Send a trajectory and run until it is done or ``stop()``: (its run, stopped)."""
        run = self.send(times, positions, velocities)
        deadline = self.now() + limit
        stopped = False
        while not run.done.is_set() and not stopped and self.now() < deadline:
            self.cycle()
            stopped = stop is not None and stop()
        return run, stopped
