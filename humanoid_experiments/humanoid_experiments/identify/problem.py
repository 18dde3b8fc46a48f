"""What ``humanoid identify`` fits: named simulation parameters within bounds, and the cost of
a choice of their values on the measurements (a recorded motion replayed, or the postures
protocol's limits).

Names are those of a simulation parameter file (:mod:`humanoid_sim.params_file`). Each
evaluation simulates the robot in-process (:class:`~humanoid_sim.in_process.SimulatedRobot`)
with the robot's parameter file, the physics profile, the base parameter file, then the
point's values: :func:`cost` is a plain function of picklable arguments, so that it runs as a
Ray task anywhere this project is installed.

The cost of recorded motions is the RMS joint difference (rad, the joints the motion moved)
plus, where the bag holds the readings and the weight is not 0 (:func:`motion_terms`):

- ``imu_weight`` x the RMS difference of the trunk's tilt (rad): roll and pitch of the IMU's
  orientation (yaw left out: it drifts on a real IMU, and the ground does not pin it);
- ``wrench_weight`` (rad/m) x the RMS distance (m) between the simulated and recorded ground
  reactions' lines: the point of the line of action of the feet's summed wrench nearest the
  trunk's origin, in the trunk's frame (the soles placed by the recorded joint positions),
  compared in means over :data:`WRENCH_WINDOW`. It holds the vertical force share of the feet
  and their centre of pressure; standing still it is the point over the whole body's centre of
  mass, wherever the contact solver puts the load between the feet.

The reaction is what a link's mass or centre of mass moves, which joint positions barely see
behind stiff position servos; the tilt is what the gears' stiffness and play bend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_experiments.identify.motion import Motion, WrenchSeries, replay_sensed

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
    "transmission.hip_stiffness": (10.0, 1000.0),
    "transmission.knee_stiffness": (10.0, 1000.0),
    "transmission.ankle_stiffness": (10.0, 1000.0),
    "transmission.trunk_stiffness": (10.0, 1000.0),
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
#: Default weights of the IMU's tilt term (rad per rad) and of the ground reaction's term (rad per
#: m); 0 turns a term off. A tilt error counts as a joint error of the same angle; a centimetre of
#: the reaction as 10 mrad. On the sensors' proof (Bioloid squat) at the truth the terms are
#: 2e-4 rad (tilt) and 1.3e-3 m (reaction) beside 3.3e-4 rad of joints; 8 mm off the trunk's
#: centre of mass they rise by 1e-4 rad and 1.2e-3 m while the joints change by less than 5e-5
#: rad, and 25 % off the gears' stiffness the tilt rises by 3e-4 rad: both rises stand well above
#: the joints' changes, and neither swamps a joint error that matters (the HOAP-2 servo proof's
#: fit takes its joint RMS from 86 to 0.4 mrad).
IMU_WEIGHT = 1.0
WRENCH_WEIGHT = 1.0
#: Total force (N) under which the feet's wrenches say nothing of where the ground reaction is
#: (the robot in the air, or barely touching): such readings are left out of the wrench term.
MIN_GROUND_FORCE = 1.0
#: s: the ground reaction is compared in means over windows of this length (from the motion's
#: start): the contact solver's chatter (millimetres to centimetres from one reading to the
#: next) averages out, what the body's mass distribution does to it stays. Measured on the
#: sensors' proof (docs/identification.md): the term's spread at the truth over parameter
#: changes of 1e-9 (the contacts are chaotic) is about its rise for 2 mm of the trunk's offset
#: with 0.2 s windows, half of it with 0.5 s (and no better with 1 s).
WRENCH_WINDOW = 0.5
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


def expanded(name: str) -> list[str]:
    """The parameter file's names one fitted name stands for: a link group
    ``model.links.fl_thigh+fr_thigh.com_z`` (one value for the links joined by +: identical parts)
    is each link's name; any other name is itself."""
    from humanoid_sim import LINK_PREFIX

    if not name.startswith(LINK_PREFIX) or "+" not in name:
        return [name]
    links, _, field = name[len(LINK_PREFIX):].rpartition(".")
    return [f"{LINK_PREFIX}{link}.{field}" for link in links.split("+")]


def check_values(values: Mapping[str, float], links: Sequence[str]) -> None:
    """The parameter file's check of fitted names and values, link groups each link's."""
    from humanoid_sim import check_values as check

    check({each: value for name, value in values.items() for each in expanded(name)}, links)


def parse_fit(text: str, links: Sequence[str]) -> list[FitParameter]:
    """``servo.max_velocity,transmission.backlash=0:3``: the parameters to fit, each a name a
    parameter file may set with a number (or a link group, :func:`expanded`), bounds from
    ``=LOW:HIGH`` or the defaults."""
    from humanoid_sim import ParamsFileError

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
    imu_weight: float = 0.0  # of the trunk tilt's RMS (rad) in a motion's cost; 0: not counted
    wrench_weight: float = 0.0  # rad/m, of the ground reaction's RMS (m); 0: not counted

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def bounds(self) -> list[tuple[float, float]]:
        return [(p.low, p.high) for p in self.parameters]

    def values(self, point: Sequence[float]) -> dict[str, float]:
        """The parameter file's values of a point (a link group's value for each of its links)."""
        return {each: float(v) for name, v in zip(self.names, point, strict=True) for each in expanded(name)}


@dataclass(frozen=True)
class PostureTarget:
    """One postures test and the measured limit (rad) the simulation should find."""

    test: int
    limit: float


@dataclass(frozen=True)
class EquilibriumTarget:
    """One of the reference's static experiments (``humanoid postures --experiments``): the servo
    stepped (the one its results inferred: the reference lost it), the way, and the register value
    where the real robot fell."""

    experiment: int
    servo: str  # the reference's name (FL1, PELVIS ...)
    way: str  # "+": raw increasing, "-": decreasing
    real: int  # raw

    @property
    def test(self) -> int:  # what --hold-out numbers
        return self.experiment


#: What a cost compares with: recorded motions, postures limits, or static experiments' equilibria.
Data = tuple[Motion, ...] | tuple[PostureTarget, ...] | tuple[EquilibriumTarget, ...]


def cost(problem: Problem, data: Data, values: Mapping[str, float] | None) -> float:
    """The fit error of ``values`` (None: the base values alone): RMS joint difference (rad) over
    recorded motions (plus their weighted IMU and wrench terms: :func:`motions_cost`), RMS limit
    difference (deg) over postures tests, or RMS equilibrium difference (deg) over static experiments."""
    if data and isinstance(data[0], EquilibriumTarget):
        return _rms(equilibrium_errors(problem, data, values))  # type: ignore[arg-type]
    if data and isinstance(data[0], PostureTarget):
        return postures_cost(problem, data, values)  # type: ignore[arg-type]
    return motions_cost(problem, data, values)  # type: ignore[arg-type]


def target_errors(problem: Problem, data: Data, values: Mapping[str, float] | None) -> list[float]:
    """Each postures test's or static experiment's error (deg, simulated - real), as the cost
    counts it (a Ray task)."""
    if data and isinstance(data[0], EquilibriumTarget):
        return equilibrium_errors(problem, data, values)  # type: ignore[arg-type]
    return postures_errors(problem, data, values)  # type: ignore[arg-type]


def _rms(errors: Sequence[float]) -> float:
    return math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else 0.0


def motions_cost(problem: Problem, motions: Sequence[Motion], values: Mapping[str, float] | None) -> float:
    """Joint RMS (rad) + ``imu_weight`` x tilt RMS (rad) + ``wrench_weight`` x ground reaction RMS (m),
    each over every motion that has its readings (:func:`motion_terms`)."""
    terms = motion_terms(problem, motions, values)
    return (terms["joints"] + problem.imu_weight * (terms["imu"] or 0.0)
            + problem.wrench_weight * (terms["wrench"] or 0.0))


def motion_terms(problem: Problem, motions: Sequence[Motion],
                 values: Mapping[str, float] | None) -> dict[str, float | None]:
    """The cost's terms, unweighted: ``joints`` (RMS rad), ``imu`` (RMS tilt, rad) and ``wrench``
    (RMS ground reaction distance, m), each None where its weight is 0 or no motion has the readings."""
    from humanoid_sim import SimulatedRobot

    sums = {"joints": [0.0, 0], "imu": [0.0, 0], "wrench": [0.0, 0]}

    def add(term: str, squares: np.ndarray) -> None:
        known = ~np.isnan(squares)
        sums[term][0] += float(np.sum(squares[known]))
        sums[term][1] += int(np.sum(known))

    for motion in motions:
        imu = problem.imu_weight > 0.0 and motion.imu is not None
        wrench = problem.wrench_weight > 0.0 and motion.wrenches is not None
        with SimulatedRobot(problem.robot, problem.profile, values, params_file=problem.params_file) as robot:
            simulated = replay_sensed(robot, motion, sensors=imu or wrench)
            joints = motion.commanded_joints(robot.model.joints.names)
            model = robot.model
        add("joints", (simulated.positions[:, joints] - motion.positions[:, joints]) ** 2)
        if imu and simulated.imu is not None:
            assert motion.imu is not None
            measured = tilt(motion.imu.orientation)
            found = tilt(simulated.imu.orientation)
            at = np.column_stack([np.interp(motion.imu.times, simulated.imu.times, found[:, k]) for k in (0, 1)])
            add("imu", (at - measured) ** 2)
        sides = motion.wrenches.sides if motion.wrenches is not None else ()
        if wrench and simulated.wrenches is not None and set(sides) <= set(simulated.wrenches.sides):
            assert motion.wrenches is not None
            measured = ground_reaction(model, motion, motion.wrenches)
            found = ground_reaction(model, motion, _feet(simulated.wrenches, sides))
            at = np.column_stack([np.interp(motion.wrenches.times, simulated.wrenches.times, found[:, k])
                                  for k in range(3)])
            windows = _windows(motion.wrenches.times, WRENCH_WINDOW)
            add("wrench", np.sum((_window_means(at, windows) - _window_means(measured, windows)) ** 2, axis=1))
    return {term: (math.sqrt(total / count) if count else (0.0 if term == "joints" else None))
            for term, (total, count) in sums.items()}


def _feet(wrenches: WrenchSeries, sides: Sequence[str]) -> WrenchSeries:
    """The wrenches of the feet ``sides`` alone, in that order (those a bag holds)."""
    order = [wrenches.sides.index(side) for side in sides]
    return WrenchSeries(wrenches.times, tuple(sides), wrenches.force[:, order], wrenches.torque[:, order])


def _windows(times: np.ndarray, window: float) -> np.ndarray:
    """Each time's window number (windows of ``window`` s from time 0)."""
    return np.floor(np.asarray(times) / window).astype(int)


def _window_means(values: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """Mean of the known (not NaN) rows of ``values`` in each window (NaN for a window with none)."""
    found = np.full((int(windows.max()) + 1 if len(windows) else 0, values.shape[1]), np.nan)
    for number in np.unique(windows):
        rows = values[windows == number]
        known = rows[~np.isnan(rows).any(axis=1)]
        if len(known):
            found[number] = known.mean(axis=0)
    return found


def tilt(orientation: np.ndarray) -> np.ndarray:
    """Roll and pitch (rad, Z-Y-X angles: free of the yaw) of orientations (quaternions x, y, z, w)."""
    q = np.asarray(orientation, dtype=float)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    return np.column_stack([roll, pitch])


def ground_reaction(model: Any, motion: Motion, wrenches: WrenchSeries) -> np.ndarray:
    """Per reading, the point (m, trunk frame) of the feet's summed wrench's line of action nearest
    the trunk's origin, the soles placed by the motion's recorded joint positions at the reading's
    time; NaN where the feet carry less than :data:`MIN_GROUND_FORCE` in total."""
    import pinocchio as pin

    data = model.model.createData()
    q = pin.neutral(model.model)
    soles = [model.frame_id(model.config.feet[side].sole) for side in wrenches.sides]
    names = list(model.joints.names)
    points = np.full((len(wrenches.times), 3), np.nan)
    measured = np.column_stack([np.interp(wrenches.times, motion.times, motion.positions[:, j])
                                for j in range(len(names))])
    for row, positions in enumerate(measured):
        if np.isnan(positions).any():
            continue
        q[model.q_index] = positions
        pin.framesForwardKinematics(model.model, data, q)
        force, moment = np.zeros(3), np.zeros(3)
        for k, frame in enumerate(soles):
            placement = data.oMf[frame]
            f = placement.rotation @ wrenches.force[row, k]
            force += f
            moment += placement.rotation @ wrenches.torque[row, k] + np.cross(placement.translation, f)
        size = float(force @ force)
        if size > MIN_GROUND_FORCE**2:
            points[row] = np.cross(force, moment) / size
    return points


def postures_cost(problem: Problem, targets: Sequence[PostureTarget], values: Mapping[str, float] | None) -> float:
    """RMS (deg) of simulated minus measured limits; a test the simulation finds no limit in
    counts with the end of its range (as far as it went); values under which the robot cannot
    do the protocol's moves cost :data:`UNFIT_POSTURES_COST`."""
    return _rms(postures_errors(problem, targets, values))


def postures_errors(problem: Problem, targets: Sequence[PostureTarget],
                    values: Mapping[str, float] | None) -> list[float]:
    """Each test's simulated minus measured limit (deg), as :func:`postures_cost` counts it.

    The tests run as ``humanoid postures`` runs them: the protocol's tests in its order, from
    its first to the last one targeted, the others (held out, or without a measured limit) run
    but not scored. A test's limit depends on the tests run before it (docs/postures.md): a fit
    of the targets run alone fitted runs no user makes."""
    from humanoid_control.ros import RobotClientError
    from humanoid_experiments.postures import run_postures

    overrides = dict(values or {})
    try:
        results = run_postures(problem.robot, postures_run_order(problem.robot, [t.test for t in targets]),
                               problem.profile, overrides, params_file=problem.params_file)
    except RobotClientError:
        return [UNFIT_POSTURES_COST] * len(targets)
    limits = {r.test.number: r.limit if r.limit is not None else r.range_end for r in results}
    return [math.degrees(limits[t.test] - t.limit) for t in targets]


def postures_run_order(robot: str, targeted: Sequence[int]) -> list[int]:
    """The protocol's tests in its order, from its first up to the last of ``targeted``."""
    from humanoid_description import load_model
    from humanoid_experiments.postures import load_protocol

    last = max(targeted)
    return [test.number for test in load_protocol(load_model(robot)).tests if test.number <= last]


def equilibrium_errors(problem: Problem, targets: Sequence[EquilibriumTarget],
                       values: Mapping[str, float] | None) -> list[float]:
    """Each static experiment's simulated minus real equilibrium (deg of the servo's register, the
    measure of ``humanoid postures --experiments``'s table, signed): the experiment's servo stepped
    the target's way from its starting posture in the in-process simulation
    (:func:`~humanoid_experiments.postures.reference.run_candidate`). A servo that never makes the
    robot fall counts with the end of its travel (as far as it went)."""
    from humanoid_description import load_model
    from humanoid_experiments.postures import load_protocol, overlapping_links, run_candidate

    model = load_model(problem.robot)
    reference = load_protocol(model).reference
    assert reference is not None
    scale, errors = reference.scale, []
    for target in targets:
        experiment = next(e for e in reference.experiments if e.number == target.experiment)
        overlapping = bool(overlapping_links(model, experiment))
        result = run_candidate(problem.robot, target.experiment, target.servo, target.way, problem.profile,
                               problem.params_file, overlapping, values)
        raw: float
        if result.raw is not None:
            raw = result.raw
        else:  # no fall: the end of the travel
            start = experiment.start_raw.get(target.servo, reference.neutral_raw)
            travel = (reference.max_travel_deg or 0.0) / scale.degrees_per_unit
            raw = start + (travel if target.way == "+" else -travel)
        errors.append(scale.raw_to_degrees(raw) - scale.raw_to_degrees(target.real))
    return errors


def split_held_out(data: tuple[Any, ...], numbers: Sequence[int],
                   source: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The targets fitted and those held out (``--hold-out``: test or experiment numbers of the
    postures data): the held-out ones are never seen by the fit."""
    known = [t.test for t in data]
    unknown = [n for n in numbers if n not in known]
    if unknown:
        raise FitError(f"--hold-out: {source} has no test or experiment {', '.join(map(str, unknown))} "
                       f"(it has {', '.join(map(str, known))})")
    fitted = tuple(t for t in data if t.test not in numbers)
    if not fitted:
        raise FitError(f"--hold-out: {', '.join(map(str, numbers))} hold out every test of {source}: "
                       "nothing left to fit")
    return fitted, tuple(t for t in data if t.test in numbers)


def read_postures(path: Path | str, robot: str) -> tuple[PostureTarget, ...]:
    """Measured limits: a results file of ``humanoid postures --json`` (its ``limit_rad``), or
    ``reference``: the real limits of the robot's protocol (postures.yaml, ``real``); or static
    experiments: a results file of ``humanoid postures --experiments ... --json`` (each
    experiment's real equilibrium and the servo its run inferred as the one stepped)."""
    import json

    if str(path) == "reference":
        from humanoid_description import load_model
        from humanoid_experiments.postures import load_protocol

        protocol = load_protocol(load_model(robot))
        found = tuple(PostureTarget(t.number, t.real_limit) for t in protocol.tests if t.real_limit is not None)
        if not found and protocol.reference is not None:
            raise FitError(f"--postures reference: {robot}'s reference experiments do not say which servo was "
                           f"stepped: give the results of humanoid postures --robot {robot} --experiments reference "
                           "--json (the servos they inferred), e.g. docs/data/quadruped_static_reference.json")
        if not found:
            raise FitError(f"--postures reference: {robot}'s postures protocol has no real limit")
        return found
    try:
        entries: Any = json.loads(Path(path).read_text())
    except OSError as error:
        raise FitError(f"cannot read postures results {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise FitError(f"postures results {path} are not JSON: {error}") from None
    if isinstance(entries, dict) and "experiments" in entries:
        return read_experiments(entries["experiments"], path, robot)
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "test" in e for e in entries):
        raise FitError(f"postures results {path}: expected humanoid postures --json's list of tests")
    targets = tuple(PostureTarget(int(e["test"]), float(e["limit_rad"])) for e in entries
                    if e.get("limit_rad") is not None)
    if not targets:
        raise FitError(f"postures results {path} hold no test with a limit")
    return targets


def read_experiments(entries: Any, path: Path | str, robot: str) -> tuple[EquilibriumTarget, ...]:
    """The static experiments of ``humanoid postures --experiments ... --json``: those whose run
    found an equilibrium (a servo to step), checked against the robot's protocol."""
    from humanoid_description import load_model
    from humanoid_experiments.postures import load_protocol

    reference = load_protocol(load_model(robot)).reference
    if reference is None:
        raise FitError(f"postures results {path} are static experiments; {robot}'s protocol has none")
    known = {e.number: e for e in reference.experiments}
    targets = []
    try:
        for entry in entries:
            number = int(entry["experiment"])
            if number not in known or entry["real"] != known[number].real:
                raise FitError(f"postures results {path}: experiment {number} is not {robot}'s "
                               f"(experiments: {', '.join(map(str, known))})")
            if entry.get("stepped") is None:
                continue  # cannot be set, or no servo made it fall: nothing to compare
            if entry["stepped"] not in reference.servos or entry.get("stepped_way") not in ("+", "-"):
                raise FitError(f"postures results {path}: experiment {number} steps {entry['stepped']!r} "
                               f"{entry.get('stepped_way')!r}: not a servo and way of {robot}")
            targets.append(EquilibriumTarget(number, entry["stepped"], entry["stepped_way"], int(entry["real"])))
    except (TypeError, KeyError, ValueError) as error:
        if isinstance(error, FitError):
            raise
        raise FitError(f"postures results {path}: expected humanoid postures --experiments --json's "
                       f"experiments ({error})") from None
    if not targets:
        raise FitError(f"postures results {path} hold no experiment with an equilibrium")
    return tuple(targets)
