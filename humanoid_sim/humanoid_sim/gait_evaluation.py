"""Gaits measured in a headless simulation: the simulation node's physics and servos
(its per-robot parameter file), no ROS, no real-time pacing.

One evaluation stands the robot in the gait's first set-point, lets it settle, runs the
gait for a given simulated time and reports how far the base went along its initial
heading, sideways, how much the heading turned, its ground position every second (the
report's eq 17 samples), and whether (and when, and how) it fell
(:meth:`PyBulletDriver.fall_state`: the trunk tilted past ``fall_tilt`` or anything but
a foot touching the ground). A run ends at the first fall, or (``stop_at_fall`` false, as
the report's runs went on) plays to its end.

The set-points are a :class:`~humanoid_core.quadruped_gaits.player.GaitPlayer`'s, one per
control cycle: the generator the gait controller node plays on the robot, so what is
measured here is what ``play_gait`` sends (the node adds the lead-in from where the robot
stands and the return to the stance, which a reset and the end of the run replace here).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_core.loop import JointCommand
from humanoid_core.odometry import KinematicOdometry, planar_drift
from humanoid_core.quadruped_gaits import (
    STRUCTURES,
    Experiment,
    FitnessSettings,
    GaitPlayer,
    NetworkGait,
    cpg_player,
    parameters_from_vector,
    path_fitness,
)
from humanoid_description import RobotModel, load_model
from humanoid_sim.headless import make_driver, simulation_settings
from humanoid_sim.physics_profiles import REFERENCE

#: Seconds the robot stands in the gait's first set-point before the gait starts.
SETTLE_SECONDS = 0.5
#: Control cycles between two fall checks (a contact query each).
FALL_CHECK_CYCLES = 5


#: How a robot fell, from its body's tilt at the first fall (the report's Fig 30 has "falls on
#: head or side").
FALL_KINDS = ("head", "side", "back")


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
    samples: tuple[tuple[float, float], ...] = ()  # the base's ground position (m) every sample period
    fall_kind: str | None = None  # at the first fall: head, side or back (FALL_KINDS)
    lying: bool = False  # fallen at the end of the run (it may have got up again)
    # with an odometry: its drift against the simulator's base over the run (planar_drift)
    odometry_error_m: float | None = None
    odometry_heading_error_deg: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def path_fitness(self, alpha: float = 1.0, beta: float = 1.0) -> float:
        """The report's eq 17 on this run's samples."""
        return path_fitness(self.samples, alpha, beta)

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

    def __init__(self, robot: str, profile: str = REFERENCE, params_file: Path | None = None,
                 overrides: Mapping[str, Any] | None = None) -> None:
        """``profile``, ``params_file`` and ``overrides`` (flattened names, as ``--set NAME=VALUE``)
        as :func:`~humanoid_sim.headless.simulation_settings` takes them."""
        self.model: RobotModel = load_model(robot)
        self.settings = settings = simulation_settings(self.model, profile, overrides, params_file=params_file)
        self.control_period = 1.0 / settings.interface.control_rate
        self.driver = make_driver(self.model, settings)
        self.driver.start()

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> HeadlessSimulation:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def run(self, player: GaitPlayer, seconds: float, as_played: bool = False, stop_at_fall: bool = True,
            sample_period: float = 1.0, odometry: KinematicOdometry | None = None) -> GaitOutcome:
        """Stand in the gait's set-point 0, settle, then follow its set-point ``k`` at control
        cycle ``k`` for ``seconds`` (until the first fall with ``stop_at_fall``). The player's
        period must be the control period. Each set-point is written as a position alone (the
        servo approaches it at full speed), or, ``as_played``, with the velocity the gait
        controller sends with it (the central difference of its neighbours), which an AX-12
        takes as its moving speed. The base's ground position is sampled every
        ``sample_period`` (and at a fall that ends the run). An ``odometry`` is fed every
        cycle's joint readings from the gait's start, and its drift against the simulator's
        base reported."""
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
        odometry_start = None
        if odometry is not None:
            odometry.reset()
            reading = driver.read()
            odometry_start = odometry.update(reading.stamp, reading.position).base
        heading = _yaw(origin.rotation)
        forward = np.array([math.cos(heading), math.sin(heading)])
        left = np.array([-forward[1], forward[0]])
        samples = [origin.translation[:2].copy()]
        cycles = round(seconds / period)
        per_sample = max(1, round(sample_period / period))
        fall_time, fall_kind, fallen = None, None, False
        cycle = 0
        for cycle in range(1, cycles + 1):
            driver.write(_command(player, cycle, as_played))
            driver.sync(period)
            if odometry is not None:
                reading = driver.read()
                estimate = odometry.update(reading.stamp, reading.position)
            if cycle % per_sample == 0:
                samples.append(driver.base_placement().translation[:2].copy())
            if cycle % FALL_CHECK_CYCLES == 0:
                fallen = driver.fall_state().fallen
                if fallen and fall_time is None:
                    fall_time, fall_kind = cycle * period, _fall_kind(driver.base_placement().rotation, heading)
                    if stop_at_fall:
                        break
        end = driver.base_placement()
        if cycle % per_sample != 0:  # ended between two samples (a fall)
            samples.append(end.translation[:2].copy())
        moved = end.translation[:2] - origin.translation[:2]
        turn = math.degrees(math.remainder(_yaw(end.rotation) - heading, 2.0 * math.pi))
        path = float(sum(np.linalg.norm(b - a) for a, b in itertools.pairwise(samples)))
        drift: tuple[float | None, float | None] = (None, None)
        if odometry_start is not None and cycle > 0:
            error, heading_error = planar_drift(odometry_start, estimate.base, origin, end)
            drift = (error, math.degrees(heading_error))
        return GaitOutcome(gait=player.name, frequency=player.frequency, seconds=seconds,
                           distance=float(moved @ forward),
                           lateral=float(moved @ left), heading_deg=turn, path_length=path,
                           fell=fall_time is not None, fall_time=fall_time,
                           samples=tuple((float(x), float(y)) for x, y in samples), fall_kind=fall_kind,
                           lying=driver.fall_state().fallen, odometry_error_m=drift[0],
                           odometry_heading_error_deg=drift[1])


def _fall_kind(rotation: np.ndarray, heading: float) -> str:
    """Where the body went over, from its up axis in the initial heading's frame: onto its head
    (pitched forward), its back (pitched backward) or a side (rolled)."""
    up = np.asarray(rotation)[:, 2]
    forward = up[0] * math.cos(heading) + up[1] * math.sin(heading)
    sideways = -up[0] * math.sin(heading) + up[1] * math.cos(heading)
    if abs(sideways) > abs(forward):
        return "side"
    return "head" if forward > 0.0 else "back"


def _command(player: GaitPlayer, k: int, as_played: bool) -> JointCommand:
    here = player.setpoint(k)
    if not as_played:
        return JointCommand(position=here)
    before = player.setpoint(k - 1) if k > 0 else here
    span = (2.0 if k > 0 else 1.0) * player.period
    return JointCommand(position=here, velocity=(player.setpoint(k + 1) - before) / span)


class CPGEvaluator:
    """Runs CPG gaits given as points of the search box (:data:`~humanoid_core.quadruped_gaits.cpg.SEARCH_BOUNDS`)
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


class NetworkEvaluator:
    """Runs one experiment's oscillator networks, given as points of [0, 1]^D, in one headless
    simulation reused from run to run (each run reset in full), scored by eq 17."""

    def __init__(self, robot: str, experiment: Experiment, fitness: FitnessSettings) -> None:
        self.experiment, self.fitness = experiment, fitness
        self.simulation = HeadlessSimulation(robot)

    def player(self, point: list[float]) -> GaitPlayer:
        model = self.simulation.model
        gait = NetworkGait(model, self.experiment, self.experiment.decode(point))
        return GaitPlayer(gait, self.simulation.control_period, f"experiment {self.experiment.name}")

    def evaluate(self, point: list[float]) -> GaitOutcome:
        f = self.fitness
        return self.simulation.run(self.player(point), f.seconds, stop_at_fall=f.stop_at_fall,
                                   sample_period=f.sample_period)

    def close(self) -> None:
        self.simulation.close()


def evaluate_network(robot: str, experiment: Experiment, fitness: FitnessSettings, point: list[float]) -> GaitOutcome:
    """One network gait in a simulation of its own: a Ray task (the experiment travels with it,
    so a cluster's machines need no copy of a configuration file)."""
    evaluator = NetworkEvaluator(robot, experiment, fitness)
    try:
        return evaluator.evaluate(point)
    finally:
        evaluator.close()
