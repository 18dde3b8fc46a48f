"""What ``humanoid identify`` fits: named simulation parameters within bounds, and the cost of
a choice of their values on the measurements (a recorded motion replayed, or the postures
protocol's limits).

Names are those of a simulation parameter file (:mod:`humanoid_sim.params_file`). Each
evaluation simulates the robot in-process (:class:`~humanoid_sim.in_process.SimulatedRobot`)
with the robot's parameter file, the physics profile, the base parameter file, then the
point's values: :func:`cost` is a plain function of picklable arguments, so that it runs as a
Ray task anywhere this project is installed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_experiments.identify.motion import Motion, replay

#: Default bounds of the names most worth fitting (others need ``NAME=LOW:HIGH``).
DEFAULT_BOUNDS: dict[str, tuple[float, float]] = {
    "servo.position_gain": (0.05, 1.0),
    "servo.velocity_gain": (0.2, 2.0),
    "servo.max_velocity": (1.0, 8.0),
    "servo.max_acceleration": (50.0, 1000.0),
    "servo.max_torque": (1.0, 20.0),
    # the pd_torque law's gains (servo.law pd_torque): N m/rad and N m s/rad, from a servo
    # reaching its torque limit at several degrees of error to one far stiffer than the defaults
    "servo.k_theta_legs": (5.0, 2000.0),
    "servo.k_omega_legs": (0.005, 5.0),
    "servo.k_theta_others": (5.0, 2000.0),
    "servo.k_omega_others": (0.005, 5.0),
    "transmission.stiffness": (10.0, 1000.0),
    "transmission.backlash": (0.0, 5.0),
    "transmission.filter_time": (0.005, 0.5),
    "transmission.crossing_speed": (0.5, 20.0),
    "ground_friction": (0.3, 1.5),
}
#: The cost (deg) of values under which the simulated robot cannot do the postures protocol's
#: moves (a servo too weak to reach its set-point within the goal tolerance: the protocol
#: would stop there on a real robot too): far above any fit error, so that the optimiser
#: leaves such values, and finite, so that it can still compare them.
UNFIT_POSTURES_COST = 1000.0
#: Default bounds of a link correction's fields (``model.links.<link>.<field>``).
LINK_BOUNDS: dict[str, tuple[float, float]] = {"mass_scale": (0.7, 1.3), "com_x": (-0.02, 0.02),
                                               "com_y": (-0.02, 0.02), "com_z": (-0.02, 0.02)}


class FitError(ValueError):
    """A ``--fit`` that cannot be used (one line)."""


@dataclass(frozen=True)
class FitParameter:
    name: str
    low: float
    high: float


def default_bounds(name: str) -> tuple[float, float] | None:
    from humanoid_sim import LINK_PREFIX

    if name in DEFAULT_BOUNDS:
        return DEFAULT_BOUNDS[name]
    if name.startswith(LINK_PREFIX):
        return LINK_BOUNDS.get(name.rpartition(".")[2])
    return None


def parse_fit(text: str, links: Sequence[str]) -> list[FitParameter]:
    """``servo.max_velocity,transmission.backlash=0:3``: the parameters to fit, each a name a
    parameter file may set with a number, bounds from ``=LOW:HIGH`` or the defaults."""
    from humanoid_sim import ParamsFileError, check_values

    found: list[FitParameter] = []
    for item in (part.strip() for part in text.split(",")):
        name, sep, bounds = item.partition("=")
        name = name.strip()
        if not name:
            raise FitError(f"--fit: {text!r} names no parameter (NAME or NAME=LOW:HIGH, comma-separated)")
        try:
            check_values({name: 1.0}, links)
        except ParamsFileError as error:
            raise FitError(f"--fit: {error}") from None
        if sep:
            try:
                low, high = (float(v) for v in bounds.split(":"))
            except ValueError:
                raise FitError(f"--fit: {item!r}: bounds are LOW:HIGH, e.g. {name}=0.1:0.5") from None
        else:
            chosen = default_bounds(name)
            if chosen is None:
                raise FitError(f"--fit: {name} has no default bounds: give them, {name}=LOW:HIGH")
            low, high = chosen
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise FitError(f"--fit: {name}: bounds {low:g}:{high:g} are not LOW < HIGH")
        try:  # bounds the parameter cannot take (a negative gain) are refused before any run
            check_values({name: low}, links)
            check_values({name: high}, links)
        except ParamsFileError as error:
            raise FitError(f"--fit: {name}={low:g}:{high:g}: {error}") from None
        if any(p.name == name for p in found):
            raise FitError(f"--fit: {name} is named twice")
        found.append(FitParameter(name, low, high))
    return found


@dataclass(frozen=True)
class Problem:
    """The simulation whose parameters are fitted."""

    robot: str
    profile: str
    params_file: str | None  # the values the fit starts from (besides the robot's own)
    parameters: tuple[FitParameter, ...]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def bounds(self) -> list[tuple[float, float]]:
        return [(p.low, p.high) for p in self.parameters]

    def values(self, point: Sequence[float]) -> dict[str, float]:
        return {name: float(v) for name, v in zip(self.names, point, strict=True)}


@dataclass(frozen=True)
class PostureTarget:
    """One postures test and the measured limit (rad) the simulation should find."""

    test: int
    limit: float


#: What a cost compares with: recorded motions, or postures limits.
Data = tuple[Motion, ...] | tuple[PostureTarget, ...]


def cost(problem: Problem, data: Data, values: Mapping[str, float] | None) -> float:
    """The fit error of ``values`` (None: the base values alone): RMS joint difference (rad) over
    recorded motions, or RMS limit difference (deg) over postures tests."""
    if data and isinstance(data[0], PostureTarget):
        return postures_cost(problem, data, values)  # type: ignore[arg-type]
    return motions_cost(problem, data, values)  # type: ignore[arg-type]


def motions_cost(problem: Problem, motions: Sequence[Motion], values: Mapping[str, float] | None) -> float:
    from humanoid_sim import SimulatedRobot

    squares, count = 0.0, 0
    for motion in motions:
        with SimulatedRobot(problem.robot, problem.profile, values, params_file=problem.params_file) as robot:
            simulated = replay(robot, motion)
            joints = motion.commanded_joints(robot.model.joints.names)
        difference = simulated[:, joints] - motion.positions[:, joints]
        known = ~np.isnan(difference)
        squares += float(np.sum(difference[known] ** 2))
        count += int(np.sum(known))
    return math.sqrt(squares / max(count, 1))


def postures_cost(problem: Problem, targets: Sequence[PostureTarget], values: Mapping[str, float] | None) -> float:
    """RMS (deg) of simulated minus measured limits; a test the simulation finds no limit in
    counts with the end of its range (as far as it went); values under which the robot cannot
    do the protocol's moves cost :data:`UNFIT_POSTURES_COST`."""
    from humanoid_control.ros import RobotClientError
    from humanoid_experiments.postures import run_postures

    overrides = dict(values or {})
    try:
        results = run_postures(problem.robot, [t.test for t in targets], problem.profile, overrides,
                               params_file=problem.params_file)
    except RobotClientError:
        return UNFIT_POSTURES_COST
    errors = [math.degrees((r.limit if r.limit is not None else r.range_end) - t.limit)
              for r, t in zip(results, targets, strict=True)]
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def read_postures(path: Path | str, robot: str) -> tuple[PostureTarget, ...]:
    """Measured limits: a results file of ``humanoid postures --json`` (its ``limit_rad``), or
    ``reference``: the real limits of the robot's protocol (postures.yaml, ``real``)."""
    import json

    if str(path) == "reference":
        from humanoid_description import load_model
        from humanoid_experiments.postures import load_protocol

        protocol = load_protocol(load_model(robot))
        return tuple(PostureTarget(t.number, t.real_limit) for t in protocol.tests if t.real_limit is not None)
    try:
        entries: Any = json.loads(Path(path).read_text())
    except OSError as error:
        raise FitError(f"cannot read postures results {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise FitError(f"postures results {path} are not JSON: {error}") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "test" in e for e in entries):
        raise FitError(f"postures results {path}: expected humanoid postures --json's list of tests")
    targets = tuple(PostureTarget(int(e["test"]), float(e["limit_rad"])) for e in entries
                    if e.get("limit_rad") is not None)
    if not targets:
        raise FitError(f"postures results {path} hold no test with a limit")
    return targets
