"""The quadruped report's CPG study as configurations: its oscillator network (one oscillator
per servo, eq 12-14), its four models and six experiments (``robots/<robot>/cpg.yaml``).

- A **model** lists the servos that get an oscillator and each oscillator's own incoming link
  (one sender, or a pair of senders that share the receiver's weights); ``bidir`` adds the
  reverse link(s) with the opposite weight. Every other servo is held at the standing pose.
- An **experiment** is a model, the servos that share one set of parameters (the report's
  "L = R") and, optionally, oscillators whose frequency is searched. Each independent set has
  four free parameters: x0 (offset), sqrt(E) (amplitude) and its incoming link's weights a, b
  (the report's "4 per oscillator"); a searched frequency adds one. The report's count is kept
  in the file and checked when it is read.
- A **point** of the search is one number in [0, 1] per free parameter (the report's PSO
  output), mapped linearly to the parameter's range (:meth:`Experiment.decode`).

:class:`NetworkGait` drives the joints: each oscillating servo's command is ``sign (x0 + x)``
(sign -1 for the right-side lateral servos listed ``mirrored``, so that a shared set moves
the two sides as mirror images), clipped to the joint's limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from humanoid_core.motion import MotionError, YamlNode, compose_file, require_keys
from humanoid_core.quadruped_gaits.cpg import NORMALISATIONS, OscillatorNetwork
from humanoid_core.quadruped_gaits.patterns import GaitError
from humanoid_description import RobotModel

#: The four free parameters of an independent oscillator set.
SET_PARAMETERS = ("offset", "amplitude", "a", "b")
#: Where a robot keeps its CPG configuration.
CPG_FILE = "cpg.yaml"


@dataclass(frozen=True)
class NetworkSettings:
    """What every model shares (the ``network`` section)."""

    alpha: float
    frequency: float  # Hz
    normalisation: str
    bidir_negates: tuple[str, ...]  # "a", "b" or both
    substep: float
    standing_pose: str
    initial_seed: int
    initial_spread: float
    mirrored: tuple[str, ...]  # servo names


@dataclass(frozen=True)
class Ranges:
    """What [0, 1] maps to, per kind of parameter."""

    coupling: tuple[float, float]
    frequency: tuple[float, float]
    amplitude: tuple[float, float]
    offset: dict[str, tuple[float, float]]  # joint-name suffix -> range (rad)

    def offset_of(self, joint: str) -> tuple[float, float]:
        for suffix, bounds in self.offset.items():
            if joint.endswith(suffix):
                return bounds
        raise GaitError(f"no offset range for joint {joint} (ranges: offset: {', '.join(self.offset)})")


@dataclass(frozen=True)
class Link:
    """An oscillator's own incoming link: its senders and whether it is mirrored back."""

    senders: tuple[str, ...]
    bidir: bool


@dataclass(frozen=True)
class Model:
    number: int
    figure: int | None
    description: str
    oscillators: tuple[str, ...]  # servo names, in network order
    inputs: dict[str, Link]


@dataclass(frozen=True)
class FreeParameter:
    """One number of a search point and the range it maps to."""

    name: str
    low: float
    high: float


@dataclass(frozen=True)
class Experiment:
    """A model with its free parameters (a named configuration of the search)."""

    name: str
    model: Model
    sets: tuple[tuple[str, ...], ...]  # oscillators sharing one parameter set, model order
    frequency_oscillators: tuple[str, ...]  # whose frequency is searched (empty: none)
    report: str
    network: NetworkSettings
    ranges: Ranges
    servos: dict[str, str]  # servo name -> joint
    reported_count: int | None = None
    parameters: tuple[FreeParameter, ...] = field(default=())

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.parameters]

    def decode(self, point: np.ndarray | list[float]) -> dict[str, float]:
        """The parameters at a point of [0, 1]^D (linearly within each range)."""
        point = np.asarray(point, dtype=float)
        if point.shape != (len(self.parameters),):
            raise GaitError(f"experiment {self.name} has {len(self.parameters)} free parameters, the point "
                            f"{point.shape[0] if point.ndim == 1 else point.shape} values")
        if not np.all((point >= 0.0) & (point <= 1.0)):
            raise GaitError(f"experiment {self.name}: a point's values lie in [0, 1]")
        return {p.name: p.low + float(u) * (p.high - p.low) for p, u in zip(self.parameters, point, strict=True)}


def set_name(members: tuple[str, ...]) -> str:
    return "=".join(members)


def free_parameters(experiment: Experiment) -> tuple[FreeParameter, ...]:
    """The experiment's free parameters, in search order: per set offset, amplitude, a, b; then
    the searched frequency."""
    found = []
    r = experiment.ranges
    for members in experiment.sets:
        name = set_name(members)
        offset = r.offset_of(experiment.servos[members[0]])
        bounds = {"offset": offset, "amplitude": r.amplitude, "a": r.coupling, "b": r.coupling}
        found += [FreeParameter(f"{name}.{kind}", *bounds[kind]) for kind in SET_PARAMETERS]
    if experiment.frequency_oscillators:
        found.append(FreeParameter(f"frequency({','.join(experiment.frequency_oscillators)})", *r.frequency))
    return tuple(found)


# -- reading the file ----------------------------------------------------------------------------
@dataclass(frozen=True)
class CPGConfiguration:
    robot: str
    source: str
    servos: dict[str, str]
    network: NetworkSettings
    ranges: Ranges
    models: dict[int, Model]
    experiments: dict[int, Experiment]
    sections: dict[str, dict]  # swarm, fitness: read by their users


def cpg_path(robot: str) -> Path:
    from humanoid_description import CPG_CONFIGURATION

    return CPG_CONFIGURATION.path(robot)


def load_cpg(model: RobotModel, path: Path | None = None) -> CPGConfiguration:
    """Read and check a CPG configuration (default: the robot's); GaitError names the file, the
    line and the problem (an unknown servo, a count that is not the report's ...)."""
    path = cpg_path(model.name) if path is None else path
    try:
        return _configuration(compose_file(path), model, str(path))
    except MotionError as error:
        raise GaitError(str(error)) from None


def _configuration(root: YamlNode, model: RobotModel, source: str) -> CPGConfiguration:
    top = root.mapping("a CPG configuration")
    require_keys(top, root, "a CPG configuration", {"robot", "servos", "network", "ranges", "models", "experiments"},
                 {"swarm", "fitness"})
    robot = top["robot"].text("robot")
    if robot != model.name:
        raise top["robot"].error(f"this configuration is for {robot!r}, not {model.name!r}")
    servos = {}
    for name, node in top["servos"].mapping("servos").items():
        joint = node.text(f"servos: {name}")
        if joint not in model.joints:
            raise node.error(f"servos: {name}: {joint!r} is not a joint of {model.name}")
        servos[name] = joint
    network = _network(top["network"], servos, model)
    ranges = _ranges(top["ranges"])
    models = {int(key): _model(key, node, servos) for key, node in _numbered(top["models"], "models")}
    experiments = {int(key): _experiment(key, node, models, servos, network, ranges)
                   for key, node in _numbered(top["experiments"], "experiments")}
    sections = {name: _plain(top[name], name) for name in ("swarm", "fitness") if name in top}
    return CPGConfiguration(robot, source, servos, network, ranges, models, experiments, sections)


def _numbered(node: YamlNode, what: str) -> list[tuple[str, YamlNode]]:
    items = list(node.mapping(what).items())
    for key, value in items:
        if not key.isdigit():
            raise value.error(f"{what}: {key!r} is not a number")
    if not items:
        raise node.error(f"{what}: none defined")
    return items


def _is_text(node: YamlNode, text: str) -> bool:
    return isinstance(node.node, yaml.ScalarNode) and node.node.value == text


def _plain(node: YamlNode, what: str) -> dict[str, float | str | bool]:
    """A section of plain values (numbers, names, true/false), checked by its user."""
    values: dict[str, float | str | bool] = {}
    for key, item in node.mapping(what).items():
        if _is_text(item, "true") or _is_text(item, "false"):
            values[key] = item.node.value == "true"
        elif isinstance(item.node, yaml.ScalarNode) and not _is_number(item.node.value):
            values[key] = item.text(f"{what}: {key}")
        elif isinstance(item.node, yaml.ScalarNode) and item.node.value.lstrip("+-").isdigit():
            values[key] = item.integer(f"{what}: {key}")
        else:
            values[key] = item.number(f"{what}: {key}")
    return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _servo(node: YamlNode, servos: dict[str, str], what: str) -> str:
    name = node.text(what)
    if name not in servos:
        raise node.error(f"{what}: unknown servo {name!r} (servos: {', '.join(servos)})")
    return name


def _servo_list(node: YamlNode, servos: dict[str, str], what: str) -> tuple[str, ...]:
    names = tuple(_servo(item, servos, what) for item in node.sequence(what))
    if len(set(names)) != len(names):
        raise node.error(f"{what}: a servo named twice")
    return names


def _network(node: YamlNode, servos: dict[str, str], model: RobotModel) -> NetworkSettings:
    entries = node.mapping("network")
    keys = {"alpha", "frequency", "normalisation", "bidir_negates", "substep", "standing_pose", "initial_seed",
            "initial_spread", "mirrored"}
    require_keys(entries, node, "network", keys, set())
    values = {key: entries[key].number(f"network: {key}") for key in ("alpha", "frequency", "substep",
                                                                       "initial_spread")}
    for key, value in values.items():
        if value <= 0.0:
            raise entries[key].error(f"network: {key} must be > 0, got {value:g}")
    normalisation = entries["normalisation"].text("network: normalisation")
    if normalisation not in NORMALISATIONS:
        raise entries["normalisation"].error(f"network: normalisation must be one of {', '.join(NORMALISATIONS)}, "
                                             f"got {normalisation!r}")
    negates = tuple(item.text("network: bidir_negates") for item in entries["bidir_negates"].sequence(
        "network: bidir_negates"))
    if not negates or set(negates) - {"a", "b"}:
        raise entries["bidir_negates"].error("network: bidir_negates lists a, b or both")
    pose = entries["standing_pose"].text("network: standing_pose")
    if pose not in model.config.poses:
        raise entries["standing_pose"].error(f"network: standing_pose: {model.name} has no pose {pose!r} "
                                             f"(poses: {', '.join(model.config.poses)})")
    return NetworkSettings(values["alpha"], values["frequency"], normalisation, negates, values["substep"], pose,
                           entries["initial_seed"].integer("network: initial_seed"), values["initial_spread"],
                           _servo_list(entries["mirrored"], servos, "network: mirrored"))


def _range(node: YamlNode, what: str) -> tuple[float, float]:
    low, high = node.numbers(what, 2)
    if not low < high:
        raise node.error(f"{what}: [low, high] with low < high, got [{low:g}, {high:g}]")
    return low, high


def _ranges(node: YamlNode) -> Ranges:
    entries = node.mapping("ranges")
    require_keys(entries, node, "ranges", {"coupling", "frequency", "amplitude", "offset"}, set())
    amplitude = _range(entries["amplitude"], "ranges: amplitude")
    frequency = _range(entries["frequency"], "ranges: frequency")
    if amplitude[0] <= 0.0 or frequency[0] <= 0.0:
        raise node.error("ranges: amplitude and frequency must stay > 0 (E divides, tau = 1 / (2 pi f))")
    offsets = {key: _range(value, f"ranges: offset: {key}") for key, value in entries["offset"].mapping(
        "ranges: offset").items()}
    return Ranges(_range(entries["coupling"], "ranges: coupling"), frequency, amplitude, offsets)


def _model(key: str, node: YamlNode, servos: dict[str, str]) -> Model:
    what = f"model {key}"
    entries = node.mapping(what)
    require_keys(entries, node, what, {"oscillators", "inputs"}, {"figure", "description"})
    oscillators = _servo_list(entries["oscillators"], servos, f"{what}: oscillators")
    inputs: dict[str, Link] = {}
    for name, item in entries["inputs"].mapping(f"{what}: inputs").items():
        if name not in oscillators:
            raise item.error(f"{what}: inputs: {name!r} is not one of the model's oscillators "
                             f"({', '.join(oscillators)})")
        link = item.mapping(f"{what}: inputs: {name}")
        require_keys(link, item, f"{what}: inputs: {name}", {"from"}, {"bidir"})
        senders = _servo_list(link["from"], servos, f"{what}: inputs: {name}: from")
        for sender in senders:
            if sender not in oscillators or sender == name:
                raise link["from"].error(f"{what}: inputs: {name}: {sender!r} is not another oscillator of the "
                                         "model")
        bidir = False
        if "bidir" in link:
            if not (_is_text(link["bidir"], "true") or _is_text(link["bidir"], "false")):
                raise link["bidir"].error(f"{what}: inputs: {name}: bidir is true or false")
            bidir = link["bidir"].node.value == "true"
        inputs[name] = Link(senders, bidir)
    missing = [name for name in oscillators if name not in inputs]
    if missing:
        raise entries["inputs"].error(f"{what}: inputs: every oscillator has one incoming link; none for "
                                      f"{', '.join(missing)}")
    figure = entries["figure"].integer(f"{what}: figure") if "figure" in entries else None
    description = entries["description"].text(f"{what}: description") if "description" in entries else ""
    return Model(int(key), figure, description, oscillators, inputs)


def _experiment(key: str, node: YamlNode, models: dict[int, Model], servos: dict[str, str],
                network: NetworkSettings, ranges: Ranges) -> Experiment:
    what = f"experiment {key}"
    entries = node.mapping(what)
    require_keys(entries, node, what, {"model"}, {"parameters", "shared", "frequency", "report"})
    number = entries["model"].integer(f"{what}: model")
    if number not in models:
        raise entries["model"].error(f"{what}: no model {number} (models: {', '.join(map(str, models))})")
    model = models[number]
    shared: list[tuple[str, ...]] = []
    for item in entries["shared"].sequence(f"{what}: shared") if "shared" in entries else []:
        members = _servo_list(item, servos, f"{what}: shared")
        stray = [m for m in members if m not in model.oscillators]
        if len(members) < 2 or stray:
            raise item.error(f"{what}: shared: a group of two or more of model {number}'s oscillators"
                             + (f" ({', '.join(stray)} is not one)" if stray else ""))
        if any(m in group for group in shared for m in members):
            raise item.error(f"{what}: shared: a servo in two groups")
        shared.append(members)
    grouped = {m for group in shared for m in group}
    sets = tuple(group for group in _in_model_order(shared, model)) + tuple(
        (name,) for name in model.oscillators if name not in grouped)
    sets = tuple(sorted(sets, key=lambda s: model.oscillators.index(s[0])))
    frequency: tuple[str, ...] = ()
    if "frequency" in entries:
        if _is_text(entries["frequency"], "all"):
            frequency = model.oscillators
        else:
            frequency = _servo_list(entries["frequency"], servos, f"{what}: frequency")
            stray = [name for name in frequency if name not in model.oscillators]
            if stray:
                raise entries["frequency"].error(f"{what}: frequency: {', '.join(stray)} has no oscillator in "
                                                 f"model {number}")
    report = entries["report"].text(f"{what}: report") if "report" in entries else ""
    experiment = Experiment(key, model, sets, frequency, report, network, ranges, servos)
    try:
        parameters = free_parameters(experiment)
    except GaitError as error:
        raise node.error(f"{what}: {error}") from None
    reported = entries["parameters"].integer(f"{what}: parameters") if "parameters" in entries else None
    if reported is not None and reported != len(parameters):
        raise entries["parameters"].error(f"{what}: the configuration gives {len(parameters)} free parameters, "
                                          f"not the report's {reported}")
    return Experiment(key, model, sets, frequency, report, network, ranges, servos, reported, parameters)


def _in_model_order(groups: list[tuple[str, ...]], model: Model) -> list[tuple[str, ...]]:
    return [tuple(sorted(group, key=model.oscillators.index)) for group in groups]


# -- the gait ------------------------------------------------------------------------------------
class NetworkGait:
    """Joint set-points of one experiment's network at one point of its parameters.

    :meth:`positions` must be asked at non-decreasing times (the network integrates forward)."""

    def __init__(self, model: RobotModel, experiment: Experiment, values: dict[str, float]) -> None:
        self.model, self.experiment, self.values = model, experiment, dict(values)
        missing = [name for name in experiment.names if name not in values]
        if missing:
            raise GaitError(f"experiment {experiment.name}: no value for {', '.join(missing)}")
        settings = experiment.network
        oscillators = experiment.model.oscillators
        index = {name: i for i, name in enumerate(oscillators)}
        set_of = {member: set_name(members) for members in experiment.sets for member in members}
        n = len(oscillators)
        offset = np.array([values[f"{set_of[o]}.offset"] for o in oscillators])
        amplitude = np.array([values[f"{set_of[o]}.amplitude"] for o in oscillators])
        energy = amplitude ** 2
        a, b = np.zeros((n, n)), np.zeros((n, n))
        for receiver, link in experiment.model.inputs.items():
            i = index[receiver]
            wa, wb = values[f"{set_of[receiver]}.a"], values[f"{set_of[receiver]}.b"]
            for sender in link.senders:
                j = index[sender]
                a[i, j] += wa
                b[i, j] += wb
                if link.bidir:  # the reverse link, with the opposite weight(s)
                    a[j, i] += -wa if "a" in settings.bidir_negates else wa
                    b[j, i] += -wb if "b" in settings.bidir_negates else wb
        frequency = np.full(n, settings.frequency)
        if experiment.frequency_oscillators:
            searched = values[experiment.parameters[-1].name]
            frequency[[index[o] for o in experiment.frequency_oscillators]] = searched
        self.frequency = settings.frequency
        rng = np.random.default_rng(settings.initial_seed)
        start = rng.uniform(-1.0, 1.0, (2, n)) * settings.initial_spread * amplitude
        self.network = OscillatorNetwork(1.0 / (2.0 * math.pi * frequency), settings.alpha, energy, a, b,
                                         start[0], start[1], settings.substep, settings.normalisation)
        self.offset = offset
        self.sign = np.array([-1.0 if o in settings.mirrored else 1.0 for o in oscillators])
        self.columns = np.array([model.joints.index(experiment.servos[o]) for o in oscillators])
        self.standing = model.joints.to_array(model.config.pose(settings.standing_pose))
        self._last = 0.0

    def positions(self, t: float) -> np.ndarray:
        if t < self._last - 1e-12:
            raise GaitError(f"a CPG runs forward: asked for t = {t} after {self._last}")
        x = self.network.advance(t - self._last) if t > self._last else self.network.x
        self._last = t
        if not np.all(np.isfinite(x)):
            raise GaitError(f"experiment {self.experiment.name}'s network diverged at t = {t:g} s")
        q = self.standing.copy()
        q[self.columns] = self.sign * (self.offset + x)
        return np.clip(q, self.model.joints.lower, self.model.joints.upper)

    def fresh(self) -> NetworkGait:
        """The same gait at its start."""
        return NetworkGait(self.model, self.experiment, self.values)
