"""The postures protocol in-process: the simulated robot without ROS, on its own clock.

:class:`SimulatedPostureRobot` is the :class:`~humanoid_experiments.postures.runner.PostureRobot`
of a :class:`~humanoid_sim.in_process.SimulatedRobot` (the simulation node's driver and
control loop, with a physics profile): the runner's moves are trajectories into its
control loop, its watch is fed the readings the node would publish (feet, IMU and
joints at the publish rate, the fall watch at the ground-truth rate), and the foot
events are checked at every reading. A protocol run this way is as fast as the CPU
allows and gives the same limits twice; ``humanoid postures`` runs the same tests
through ROS (:class:`~humanoid_experiments.postures.runner.ClientRobot`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from humanoid_control.ros import RobotClientError
from humanoid_core.loop import CommandRejectedError, RunState
from humanoid_experiments.postures.protocol import Protocol, load_protocol
from humanoid_experiments.postures.runner import EventCheck, PostureResult, PosturesRunner
from humanoid_experiments.postures.watch import FootEvent, FootWatch
from humanoid_sim import REFERENCE, RUN_LIMIT, Reading, SimulatedRobot


class SimulatedPostureRobot:
    """A :class:`SimulatedRobot` as the postures runner's robot."""

    def __init__(self, robot: SimulatedRobot, protocol: Protocol) -> None:
        self.robot = robot
        self.names = list(robot.model.joints.names)
        self._joints: dict[str, float] | None = None
        self._fresh = False  # a reading arrived since the last event check
        params = protocol.parameters
        self.watch = FootWatch(robot.model, params.contact_threshold, params.lift_time, robot.now,
                               lambda: self._joints, stop_at_lift=False)
        robot.listen(self._on_reading, sensors=True)

    def _on_reading(self, reading: Reading) -> None:
        state, sensors = reading.state, reading.sensors
        self._joints = dict(zip(self.names, state.position.tolist(), strict=True))
        assert sensors is not None
        for foot in sensors.feet:
            self.watch.on_wrench(foot.side, foot.force, sensors.stamp)
        if sensors.imu is not None:
            x, y, z, w = sensors.imu.orientation
            self.watch.on_imu((w, x, y, z))
        if self.robot.fall is not None:
            self.watch.on_fallen(self.robot.fall.fallen)
        self._fresh = True

    def _checked(self, event: EventCheck | None):
        """A stop condition for the robot's runs: ``event`` looked at once per reading."""
        found: list[FootEvent] = []

        def stop() -> bool:
            if event is None or not self._fresh:
                return False
            self._fresh = False
            if (result := event()) is not None:
                found.append(result)
            return bool(found)
        return stop, found

    def now(self) -> float:
        return self.robot.now()

    def reset(self, positions: np.ndarray) -> None:
        self.robot.reset(positions)
        self._fresh = False

    def current_positions(self) -> dict[str, float]:
        return dict(zip(self.names, self.robot.driver.read().position.tolist(), strict=True))

    def move(self, target: np.ndarray, duration: float, event: EventCheck | None = None) -> FootEvent | None:
        stop, found = self._checked(event)
        try:
            run, stopped = self.robot.follow([duration], [target], [np.zeros(len(self.names))], stop, RUN_LIMIT)
        except CommandRejectedError as error:
            raise RobotClientError(f"the robot refused a step: {error}") from None
        if stopped:
            self.robot.loop.stop_trajectory(run)
            return found[0]
        if run.state is not RunState.SUCCEEDED:
            raise RobotClientError(f"the robot did not complete a move: {run.message}")
        return None

    def run_until(self, time: float, event: EventCheck | None = None) -> FootEvent | None:
        stop, found = self._checked(event)
        self.robot.run_until(time, stop)
        if found:
            return found[0]
        return None if event is None else event()


def run_postures(robot: str, tests: Sequence[int] | None = None, profile: str = REFERENCE,
                 overrides: Mapping[str, Any] | None = None, protocol: Protocol | None = None,
                 out: TextIO | None = None, params_file: Path | str | None = None) -> list[PostureResult]:
    """The protocol's ``tests`` (default: all) on the simulated robot in-process, with the
    protocol's simulation settings, ``profile``, a simulation parameter file, then ``overrides``;
    progress to ``out`` (default: none)."""
    from humanoid_description import load_model

    model = load_model(robot)
    protocol = protocol or load_protocol(model)
    simulation = protocol_simulation(protocol, model, params_file)
    with SimulatedRobot(robot, profile, {**simulation, **(overrides or {})}, model=model,
                        params_file=params_file) as simulated:
        runner = PosturesRunner(SimulatedPostureRobot(simulated, protocol), model, protocol,
                                out=out if out is not None else io.StringIO())
        return [runner.run(test) for test in protocol.select(tests)]



def protocol_simulation(protocol: Protocol, model: Any, params_file: Path | str | None) -> dict[str, Any]:
    """The protocol's simulation settings less those a simulation parameter file sets: the file
    (a fitted model) wins over the protocol's choices, values given one by one over both."""
    if params_file is None:
        return dict(protocol.simulation)
    from humanoid_sim import link_names, load

    chosen = load(params_file, link_names(model.urdf))
    return {name: value for name, value in protocol.simulation.items() if name not in chosen}
