"""Gaits measured in a headless simulation: the simulation node's physics and servos
(its per-robot parameter file), no ROS, no real-time pacing.

One evaluation stands the robot in the gait's first set-point, lets it settle, runs the
gait for a given simulated time and reports how far the base went along its initial
heading, sideways, how much the heading turned, and whether (and when) it fell
(:meth:`PyBulletDriver.fall_state`: the trunk tilted past ``fall_tilt`` or anything but
a foot touching the ground).

The set-points are a :class:`~humanoid_control.quadruped_gaits.player.GaitPlayer`'s, one per
control cycle: the generator the gait controller node plays on the robot, so what is
measured here is what ``play_gait`` sends (the node adds the lead-in from where the robot
stands and the return to the stance, which a reset and the end of the run replace here).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from humanoid_control.loop.driver import JointCommand
from humanoid_control.quadruped_gaits.cpg import STRUCTURES, parameters_from_vector
from humanoid_control.quadruped_gaits.gait_files import cpg_player
from humanoid_control.quadruped_gaits.player import GaitPlayer
from humanoid_description.model import RobotModel, load_model
from humanoid_sim.headless import make_driver, simulation_settings
from humanoid_sim.physics_profiles import REFERENCE

#: Seconds the robot stands in the gait's first set-point before the gait starts.
SETTLE_SECONDS = 0.5
#: Control cycles between two fall checks (a contact query each).
FALL_CHECK_CYCLES = 5


@dataclass(frozen=True)
class GaitOutcome:
    """What one run of a gait did (lengths in m, angles in deg, times in s)."""

    gait: str
    frequency: float
    seconds: float
    distance: float  # along the initial heading (forward positive)
    lateral: float  # to the left of the initial heading
    heading_deg: float  # turn of the heading, counter-clockwise positive
    path_length: float  # the base's horizontal path, sampled every second (the reference's fitness term)
    fell: bool
    fall_time: float | None

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def fitness(self) -> float:
        """The quadruped report's search fitness: distance covered plus the path sampled every
        second (m). The report keeps no word on falls; here a run that fell scores what it
        covered times the share of the time it stood, so a gait that falls late is not worth
        as much as one that goes as far standing, and one that falls at once is worth nothing."""
        standing = 1.0 if self.fall_time is None else self.fall_time / self.seconds
        return (self.distance + self.path_length) * standing


def _yaw(rotation: np.ndarray) -> float:
    return math.atan2(float(rotation[1, 0]), float(rotation[0, 0]))


class HeadlessSimulation:
    """A robot's PyBullet world with the simulation node's settings, stepped as fast as it goes."""

    def __init__(self, robot: str, profile: str = REFERENCE, params_file: Path | None = None) -> None:
        self.model: RobotModel = load_model(robot)
        self.settings = settings = simulation_settings(self.model, profile, params_file=params_file)
        self.control_period = 1.0 / settings.interface.control_rate
        self.driver = make_driver(self.model, settings)
        self.driver.start()

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> HeadlessSimulation:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def run(self, player: GaitPlayer, seconds: float, as_played: bool = False) -> GaitOutcome:
        """Stand in the gait's set-point 0, settle, then follow its set-point ``k`` at control
        cycle ``k`` for ``seconds``. The player's period must be the control period. Each
        set-point is written as a position alone (the servo approaches it at full speed), or,
        ``as_played``, with the velocity the gait controller sends with it (the central
        difference of its neighbours), which an AX-12 takes as its moving speed."""
        driver, period = self.driver, self.control_period
        if not math.isclose(player.period, period, rel_tol=0.0, abs_tol=1e-12):
            raise ValueError(f"the gait's set-point period {player.period:g} s is not the simulation's control period "
                             f"{period:g} s")
        start = player.setpoint(0)
        driver.reset(start)
        command = JointCommand(position=start)
        for _ in range(round(SETTLE_SECONDS / period)):
            driver.write(command)
            driver.sync(period)
        origin = driver.base_placement()
        heading = _yaw(origin.rotation)
        forward = np.array([math.cos(heading), math.sin(heading)])
        left = np.array([-forward[1], forward[0]])
        samples = [origin.translation[:2].copy()]
        cycles = round(seconds / period)
        per_second = max(1, round(1.0 / period))
        fall_time = None
        for cycle in range(1, cycles + 1):
            driver.write(_command(player, cycle, as_played))
            driver.sync(period)
            if cycle % per_second == 0:
                samples.append(driver.base_placement().translation[:2].copy())
            if cycle % FALL_CHECK_CYCLES == 0 and driver.fall_state().fallen:
                fall_time = cycle * period
                break
        end = driver.base_placement()
        samples.append(end.translation[:2].copy())
        moved = end.translation[:2] - origin.translation[:2]
        turn = math.degrees(math.remainder(_yaw(end.rotation) - heading, 2.0 * math.pi))
        path = float(sum(np.linalg.norm(b - a) for a, b in itertools.pairwise(samples)))
        return GaitOutcome(gait=player.name, frequency=player.frequency, seconds=seconds,
                           distance=float(moved @ forward),
                           lateral=float(moved @ left), heading_deg=turn, path_length=path,
                           fell=fall_time is not None, fall_time=fall_time)


def _command(player: GaitPlayer, k: int, as_played: bool) -> JointCommand:
    here = player.setpoint(k)
    if not as_played:
        return JointCommand(position=here)
    before = player.setpoint(k - 1) if k > 0 else here
    span = (2.0 if k > 0 else 1.0) * player.period
    return JointCommand(position=here, velocity=(player.setpoint(k + 1) - before) / span)


class CPGEvaluator:
    """Runs CPG gaits given as points of the search box (:data:`~humanoid_control.quadruped_gaits.cpg.SEARCH_BOUNDS`)
    in one headless simulation, reused from run to run (a run is reset in full, so its
    outcome does not depend on the runs before it: a search gives the same result however
    its evaluations are spread over processes)."""

    def __init__(self, robot: str, structure: str, seconds: float) -> None:
        if structure not in STRUCTURES:
            raise ValueError(f"unknown coupling structure {structure!r} ({', '.join(STRUCTURES)})")
        self.structure, self.seconds = structure, seconds
        self.simulation = HeadlessSimulation(robot)

    def evaluate(self, vector: list[float]) -> GaitOutcome:
        params = parameters_from_vector(np.asarray(vector), self.structure)
        player = cpg_player(self.simulation.model, params, self.simulation.control_period)
        return self.simulation.run(player, self.seconds)

    def close(self) -> None:
        self.simulation.close()


def evaluate_cpg(robot: str, structure: str, seconds: float, vector: list[float]) -> GaitOutcome:
    """One CPG gait in a simulation of its own (built in about 30 ms): a task that can run
    in any process, in any order, with the same outcome."""
    evaluator = CPGEvaluator(robot, structure, seconds)
    try:
        return evaluator.evaluate(vector)
    finally:
        evaluator.close()
