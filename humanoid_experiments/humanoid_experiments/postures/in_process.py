"""The postures protocol in-process: the simulated robot without ROS, on its own clock.

:class:`SimulatedPostureRobot` is the :class:`~humanoid_experiments.postures.runner.PostureRobot`
of a :class:`~humanoid_sim.in_process.SimulatedRobot` (the simulation node's driver and
control loop, with a physics profile), driven command for command as ``humanoid postures``
drives the simulation node in lockstep: the same resets, trajectories and looks at the feet
at the same robot times, its watch fed the readings the node would publish (feet, IMU and
joints at the publish rate, the fall watch at the ground-truth rate). A protocol run this
way is as fast as the CPU allows, gives the same limits twice, and the same limits and
set-points as the graph (test/test_postures_in_process_graph.py); ``humanoid postures`` runs
the same tests through ROS (:class:`~humanoid_experiments.postures.runner.ClientRobot`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from humanoid_control.ros import RobotClientError, seconds, to_duration, to_time
from humanoid_core.loop import CommandRejectedError, RunState
from humanoid_experiments.postures.protocol import Protocol, load_protocol
from humanoid_experiments.postures.runner import (
    LOCKSTEP_LOOK,
    EventCheck,
    PostureResult,
    PosturesRunner,
    look_until,
    move_end,
)
from humanoid_experiments.postures.watch import FootEvent, FootWatch
from humanoid_sim import REFERENCE, RUN_LIMIT, Reading, SimulatedRobot


class SimulatedPostureRobot:
    """A :class:`SimulatedRobot` as the postures runner's robot, driven as ``humanoid postures``
    drives the simulation node in lockstep (:class:`~humanoid_experiments.postures.runner.ClientRobot`),
    command for command at the same robot times: held at published states (the node's
    ``joint_states``, at ``publish_rate``), stamps read as the ROS stamps the client reads;
    resets as the node takes them while held (:meth:`SimulatedRobot.reset_held`); a move's
    trajectory starts at the held state; the feet watched at the same looks
    (:func:`~humanoid_experiments.postures.runner.look_until`), a move looked at until its
    result as the client waits for it. The limits and set-points are the graph's."""

    def __init__(self, robot: SimulatedRobot, protocol: Protocol) -> None:
        self.robot = robot
        self.names = list(robot.model.joints.names)
        self._joints: dict[str, float] | None = None
        self._published: float | None = None  # the stamp (ROS seconds) of a state published by the latest cycle
        self._held = 0.0  # the stamp of the state the robot is held at (ROS seconds)
        params = protocol.parameters
        self.watch = FootWatch(robot.model, params.contact_threshold, params.lift_time, self.now,
                               lambda: self._joints, stop_at_lift=False)
        robot.listen(self._on_reading, sensors=True)
        self._look_at(robot.now())  # the first published state, where a lockstep client is held at its start

    def _on_reading(self, reading: Reading) -> None:
        state, sensors = reading.state, reading.sensors
        stamp = seconds(to_time(state.stamp))  # as the messages carry it
        self._joints = dict(zip(self.names, state.position.tolist(), strict=True))
        assert sensors is not None
        for foot in sensors.feet:
            self.watch.on_wrench(foot.side, foot.force, stamp)
        if sensors.imu is not None:
            x, y, z, w = sensors.imu.orientation
            self.watch.on_imu((w, x, y, z), stamp)
        if self.robot.fall is not None:
            self.watch.on_fallen(self.robot.fall.fallen)
        self._published = stamp

    def _look_at(self, stamp: float) -> float:
        """Cycle to the first published state stamped ``stamp`` or later and hold there (the
        lockstep client's ``run_to``); its stamp."""
        deadline = self.robot.now() + RUN_LIMIT
        while True:
            self._published = None
            self.robot.cycle()
            if self._published is not None and self._published >= stamp:
                self._held = self._published
                return self._held
            if self.robot.now() > deadline:
                raise RobotClientError(f"no published state at or after t = {stamp:.3f} s")

    def now(self) -> float:
        return self._held

    def reset(self, positions: np.ndarray) -> None:
        self.robot.reset_held(positions)

    def current_positions(self) -> dict[str, float]:
        return dict(zip(self.names, self.robot.driver.read().position.tolist(), strict=True))

    def move(self, target: np.ndarray, duration: float, event: EventCheck | None = None) -> FootEvent | None:
        try:  # the duration as the trajectory message carries it (whole nanoseconds)
            run = self.robot.send([seconds(to_duration(duration))], [target], [np.zeros(len(self.names))])
        except CommandRejectedError as error:
            raise RobotClientError(f"the robot refused a step: {error}") from None
        found = look_until(self._look_at, self.now(), move_end(self.now(), duration), event)
        if found is not None:
            self.robot.loop.stop_trajectory(run)
            return found
        while not run.done.is_set():  # the client waits for the result at the look, runs on while it has not come
            self._look_at(self.now() + LOCKSTEP_LOOK)
        if run.state is not RunState.SUCCEEDED:
            raise RobotClientError(f"the robot refused or failed a step: {run.message}")
        return None

    def run_until(self, time: float, event: EventCheck | None = None) -> FootEvent | None:
        return look_until(self._look_at, self.now(), time, event)


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
