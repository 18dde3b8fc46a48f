"""A walk in-process: the walk controller's own cycle on the simulated robot, no ROS.

``humanoid walk`` runs the node graph at real time: faithful to what a user runs, but as
slow as the wall clock and at the mercy of the machine's load. Here the same computation
runs on the robot's clock, as fast as the CPU allows, and gives the same result twice:

- the robot is :class:`~humanoid_sim.in_process.SimulatedRobot` (the simulation node's
  driver and control loop, with a physics profile);
- each reading (``joint_states`` at the node's publish rate, with the IMU) goes through
  :class:`~humanoid_core.biped_walking.streaming.WalkCycle`, the walk controller node's
  own cycle, and each trajectory it gives goes to the control loop as
  ``joint_trajectory`` would deliver it (validated, checked by the self-collision veto);
- the walk is measured as ``humanoid walk`` measures it (:func:`walk_report`: the centre
  of the soles from the ground-truth base and the measured joints, before and after).

What differs from the node graph: the trajectories arrive at once (the node's arrive a
few milliseconds later, within its ``TRAJECTORY_DELAY``), and no balance monitor runs
(``zmp_inside_ratio`` is NaN).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from humanoid_core.balance import FootWrench
from humanoid_core.biped_walking import GoalState, WalkController, WalkCycle, WalkParameters, walk_sensors
from humanoid_core.loop import CommandRejectedError
from humanoid_experiments.walk import WalkReport, feet_centre, walk_report
from humanoid_sim import REFERENCE, Reading, SimulatedRobot

#: Robot seconds the robot stands after it is put down, before the walk starts.
SETTLE_TIME = 1.0
#: Robot seconds a walk may take.
WALK_LIMIT = 600.0


class InProcessWalker:
    """The walk controller driving a :class:`SimulatedRobot` through the node's cycle."""

    def __init__(self, robot: SimulatedRobot, params: WalkParameters | None = None) -> None:
        self.robot = robot
        self.params = params or WalkParameters.for_robot(robot.model.name)
        self.controller = WalkController(robot.model, self.params)
        self.messages: list[str] = []  # what the node would have logged as warnings or errors
        self.stream = WalkCycle(self.controller, warn=self.messages.append)
        uses_sensors = self.params.stabilize and (self.params.tilt_feedback_gain > 0.0
                                                  or self.params.zmp_feedback_gain > 0.0)
        robot.listen(self._on_reading, sensors=uses_sensors)

    def _on_reading(self, reading: Reading) -> None:
        state = reading.state
        if not self.stream.is_new(state.stamp):
            return
        positions = np.where(state.valid, state.position, math.nan)
        if reading.setpoint is not None:  # as the node hears joint_setpoints
            self.stream.batcher.heard_setpoint(state.stamp, reading.setpoint)
        imu, feet = None, None
        if reading.sensors is not None:
            imu = reading.sensors.imu.orientation if reading.sensors.imu is not None else None
            feet = {f.side: FootWrench(f.force, f.torque) for f in reading.sensors.feet}
        batch = self.stream.cycle(state.stamp, positions, walk_sensors(self.params, imu, feet))
        if batch is None:
            return
        try:
            self.robot.send([s.stamp - batch.start for s in batch.setpoints], [s.positions for s in batch.setpoints],
                            batch.velocities, start_time=batch.start)
        except CommandRejectedError as error:
            self.messages.append(f"joint_trajectory rejected ({error.code.name}): {error}")

    def walk(self, distance: float, lateral: float = 0.0, turn: float = 0.0,
             limit: float = WALK_LIMIT) -> WalkReport:
        """Walk the feet's centre to (distance, lateral, turn) from where it is, as the walk
        action does, and measure it; a fall ends the run at once."""
        robot, model = self.robot, self.robot.model
        wall0, robot0 = time.perf_counter(), robot.now()
        start = feet_centre(model, robot.driver.read().position, robot.driver.base_placement())
        goal = self.controller.walk_to(distance, lateral, turn)
        fallen = lambda: robot.fell_at is not None  # noqa: E731
        robot.run_for(limit, lambda: goal.done or fallen())
        if not fallen():  # the set-points sent ahead run on: measured once the robot reached the last one
            robot.run_until(self.stream.sent_until, fallen)
        end = feet_centre(model, robot.driver.read().position, robot.driver.base_placement())
        wall = time.perf_counter() - wall0
        where = self.controller.progress(goal)
        duration = goal.ended - goal.started if math.isfinite(goal.started) and math.isfinite(goal.ended) else 0.0
        state = goal.state if goal.done else GoalState.RUNNING
        return walk_report(
            model.name, (distance, lateral, turn), start, end,
            result=state.value + (f": {goal.message}" if goal.message else ""),
            error_code=0 if state is GoalState.SUCCEEDED else 1, duration=duration,
            steps=self.controller.steps(goal), fell=fallen(),
            odometry={"distance_m": where.x, "lateral_m": where.y, "turn_rad": where.yaw},
            real_time_factor=(robot.now() - robot0) / wall if wall > 0.0 else math.nan)


def walk_in_process(robot: str, distance: float, lateral: float = 0.0, turn: float = 0.0,
                    profile: str = REFERENCE, overrides: Mapping[str, Any] | None = None,
                    settle: float = SETTLE_TIME) -> WalkReport:
    """Put the robot down, let it stand ``settle`` s, walk and measure (see the module)."""
    with SimulatedRobot(robot, profile, overrides) as simulated:
        walker = InProcessWalker(simulated)
        simulated.run_for(settle)
        return walker.walk(distance, lateral, turn)
