"""Which gait to play, from a name or a file: one resolver for the gait controller's
``play_gait`` action, ``humanoid play-gait`` and ``humanoid gaits``.

- A gait of the robot's ``robot.yaml`` (``gaits.phases``: walk, trot, transverse_gallop,
  rotary_gallop, canter, amble, pace, bound, pronk): an IK gait with the robot's foot-path
  parameters.
- A CPG gait file (``.yaml``)::

      # the coupled oscillators of humanoid_core.quadruped_gaits.cpg
      robot: bioloid_quadruped     # optional: refused on another robot
      cpg:                         # any CPGParameters field; the others keep their defaults
        structure: paired          # independent, paired or symmetric
        frequency: 1.2             # Hz
        hip_amplitude: 0.25        # rad
        knee_amplitude: 0.2        # rad
        hip_offset: 0.0            # rad, on the home pose's hip pitch
        knee_offset: 0.0           # rad, on the home pose's knee
        knee_coupling: -0.5        # within +-0.7
        leg_coupling: -0.5         # within +-0.7
        alpha: 0.7
        initial_phases: [0.0, 3.1416, 3.1416, 0.0]   # rad, one per leg (robot.yaml legs order)

  Every problem is reported with the file and line of the value.
- An IK gait file (``.yaml``): a gait of ``robot.yaml`` on a foot path of its own::

      robot: bioloid_quadruped     # optional: refused on another robot
      ik:
        gait: trot                 # a gait of robot.yaml gaits.phases
        foot_path: flat            # any GaitParameters field; the others keep robot.yaml's
        frequency: 0.5             # Hz
        lift: 0.015                # m
      transition: step             # optional, beside ik or cpg: how a run joins and leaves this gait
                                   # (glide or step; default: the gait controller's transition parameter)

  So a gait can be tuned without editing the robot's description; errors name the line too.
- A gait search (``humanoid optimize-gait``): its ``search.json``, or the search directory
  holding it; the search's best gait is played (a CPG gait of one of our structures, or the
  oscillator network of one of the report's experiments, read again from the search's CPG
  configuration: it must still give the experiment the free parameters the search saved).

A frequency other than 0 replaces the gait's own.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, TypeVar

from humanoid_core.motion import MotionError, YamlNode, compose_file, require_keys
from humanoid_core.quadruped_gaits.cpg import CPGGait, CPGParameters
from humanoid_core.quadruped_gaits.cpg_models import NetworkGait, load_cpg
from humanoid_core.quadruped_gaits.parameters import TRANSITIONS
from humanoid_core.quadruped_gaits.patterns import (
    GaitError,
    GaitParameters,
    IKGait,
    default_parameters,
    gait_phases,
    robot_legs,
)
from humanoid_core.quadruped_gaits.player import GaitPlayer
from humanoid_description import RobotModel

#: The file a gait search keeps its state and best gait in (humanoid_experiments.gait_search).
SEARCH_FILE = "search.json"
_CPG_FIELDS = {f.name for f in fields(CPGParameters)}
_IK_FIELDS = {f.name for f in fields(GaitParameters)}
_Params = TypeVar("_Params", CPGParameters, GaitParameters)
#: A YAML gait file's sections: a CPG gait, or an IK gait of robot.yaml.
_SECTIONS = ("cpg", "ik")
_YAML_SUFFIXES = (".yaml", ".yml")


def load_gait(model: RobotModel, gait: str, period: float, frequency: float = 0.0) -> GaitPlayer:
    """The player of ``gait`` (a robot.yaml gait name or a gait file's path) at ``frequency``
    (Hz, 0: the gait's own), one set-point every ``period`` s. GaitError says what is wrong
    (for a file: the file, the line and the problem)."""
    if not (math.isfinite(frequency) and frequency >= 0.0):
        raise GaitError(f"the frequency must be a finite number of Hz >= 0 (0: the gait's own), got {frequency}")
    phases = gait_phases(model)
    if gait in phases:
        overrides = {"frequency": frequency} if frequency > 0.0 else {}
        return ik_player(model, gait, period, **overrides)
    if not gait.strip():
        raise GaitError("no gait given: a gait name (" + ", ".join(phases) + ") or a gait file")
    path = Path(gait).expanduser()
    if not path.exists():
        names = ", ".join(phases) or "none"
        raise GaitError(f"unknown gait {gait!r}: not a gait of {model.name} ({names}) nor an existing gait file")
    if (network := _network_search(path, model)) is not None:
        if frequency > 0.0:
            raise GaitError(f"{path}: an experiment's network runs at its own frequencies: no --frequency")
        return GaitPlayer(network, period, f"experiment {network.experiment.name} (best of {path})")
    if path.suffix in _YAML_SUFFIXES and not path.is_dir():
        return _yaml_gait(path, model, period, frequency)
    params, name = _search_gait(path, model)
    if frequency > 0.0:
        params = _checked(params, "frequency", frequency)
    return cpg_player(model, params, period, name)


def ik_player(model: RobotModel, gait: str, period: float, **overrides: Any) -> GaitPlayer:
    """The player of robot.yaml's IK gait ``gait``, ``overrides`` replacing its parameters
    (GaitParameters' fields: ``frequency``, ``foot_path`` ...), one set-point every ``period`` s."""
    return GaitPlayer(IKGait(model, gait, default_parameters(model, **overrides)), period, gait)


def cpg_player(model: RobotModel, params: CPGParameters, period: float, name: str | None = None) -> GaitPlayer:
    """The player of a CPG gait (named by its coupling structure unless ``name`` is given)."""
    robot_legs(model)  # a robot without legs has no CPG gait: said here, not at the first set-point
    return GaitPlayer(CPGGait(model, params), period, name or f"cpg {params.structure}")


def _search_gait(path: Path, model: RobotModel) -> tuple[CPGParameters, str]:
    """A search's best gait (its search.json or directory), and a name for it."""
    if path.is_dir():
        path = path / SEARCH_FILE
    if path.suffix == ".json":
        params = _search_best(path, model)
        return params, f"cpg {params.structure} (best of {path})"
    raise GaitError(f"{path}: not a gait file (a CPG or IK gait .yaml, a search's {SEARCH_FILE} or its directory)")


def _yaml_gait(path: Path, model: RobotModel, period: float, frequency: float) -> GaitPlayer:
    """The player of a YAML gait file, read once: its one section says which kind."""
    try:
        kind, section, transition = _section(path, model)
        if kind == "ik":
            player = _ik_player(section, path, model, period, frequency)
        else:
            params = _cpg_parameters(section, model)
            if frequency > 0.0:
                params = _checked(params, "frequency", frequency)
            player = cpg_player(model, params, period, f"cpg {params.structure} ({path})")
    except MotionError as error:
        raise GaitError(str(error)) from None
    player.transition = transition
    return player


def _section(path: Path, model: RobotModel) -> tuple[str, YamlNode, str | None]:
    """A YAML gait file's one section (``cpg`` or ``ik``) by name, its node, and the
    ``transition`` beside it (None when not given); an optional ``robot`` beside it must be
    ``model``'s."""
    root = compose_file(path)
    top = root.mapping("a gait file")
    require_keys(top, root, "a gait file", set(), set(_SECTIONS) | {"robot", "transition"})
    present = [name for name in _SECTIONS if name in top]
    if len(present) != 1:
        raise root.error(f"a gait file: one section, {' or '.join(_SECTIONS)}; found "
                         f"{' and '.join(present) or 'none'}")
    if "robot" in top and (robot := top["robot"].text("robot")) != model.name:
        raise top["robot"].error(f"this gait is for {robot!r}, not {model.name!r}")
    transition = None
    if "transition" in top and (transition := top["transition"].text("transition")) not in TRANSITIONS:
        raise top["transition"].error(f"transition: {transition!r} is not one of {', '.join(TRANSITIONS)}")
    return present[0], top[present[0]], transition


def _ik_player(section: YamlNode, path: Path, model: RobotModel, period: float, frequency: float) -> GaitPlayer:
    """An ``ik`` section's gait: a gait of robot.yaml, the fields given replacing robot.yaml's."""
    entries = section.mapping("ik")
    require_keys(entries, section, "ik", {"gait"}, _IK_FIELDS)
    gait = entries["gait"].text("ik: gait")
    phases = gait_phases(model)
    if gait not in phases:
        raise entries["gait"].error(f"ik: unknown gait {gait!r} ({', '.join(phases)})")
    params = default_parameters(model)
    for key, node in entries.items():  # one field at a time: an error names its line
        if key != "gait":
            params = _checked(params, key, _ik_value(key, node), node)
    if frequency > 0.0:
        params = _checked(params, "frequency", frequency)
    return GaitPlayer(IKGait(model, gait, params), period, f"{gait} ({path})")


def _ik_value(key: str, node: YamlNode) -> object:
    if key == "foot_path":
        return node.text("ik: foot_path")
    if key == "points_per_cycle":
        return node.integer("ik: points_per_cycle")
    return node.number(f"ik: {key}")


def _cpg_parameters(section: YamlNode, model: RobotModel) -> CPGParameters:
    """A ``cpg`` section's gait: any CPGParameters field, the others their defaults."""
    entries = section.mapping("cpg")
    require_keys(entries, section, "cpg", set(), _CPG_FIELDS)
    params = CPGParameters()
    for key, node in entries.items():  # one field at a time: an error names its line
        params = _checked(params, key, _value(key, node, len(robot_legs(model))), node)
    return params


def _value(key: str, node: YamlNode, legs: int) -> object:
    if key == "structure":
        return node.text("cpg: structure")
    if key == "initial_phases":
        return tuple(node.numbers("cpg: initial_phases", legs))
    return node.number(f"cpg: {key}")


def _checked(params: _Params, key: str, value: object, node: YamlNode | None = None) -> _Params:
    try:
        return replace(params, **{key: value})
    except GaitError as error:
        if node is None:
            raise
        raise node.error(str(error)) from None


def _search_data(path: Path, model: RobotModel) -> dict:
    """A search's saved state, checked to be one for ``model`` with a best gait."""
    try:
        data = json.loads(path.read_text())
    except OSError as error:
        raise GaitError(f"{path}: cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise GaitError(f"{path}: not a gait search's {SEARCH_FILE}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("settings"), dict) or "best" not in data:
        raise GaitError(f"{path}: not a gait search's {SEARCH_FILE} (no settings and best gait)")
    robot = data["settings"].get("robot")
    if robot != model.name:
        raise GaitError(f"{path}: a search for {robot!r}, not {model.name!r}")
    if data["best"] is None:
        raise GaitError(f"{path}: the search has no best gait yet (no iteration ended)")
    return data


def _network_search(path: Path, model: RobotModel) -> NetworkGait | None:
    """The best network of a search of one of the report's experiments (None: not such a search)."""
    search = path / SEARCH_FILE if path.is_dir() else path
    if search.suffix != ".json":
        return None
    data = _search_data(search, model)
    experiment = data["settings"].get("experiment")
    if experiment is None:
        return None
    config = data["settings"].get("config")
    configuration = load_cpg(model, None if config is None else Path(config))
    if not str(experiment).isdigit() or int(experiment) not in configuration.experiments:
        raise GaitError(f"{search}: experiment {experiment!r} is not in {configuration.source}")
    chosen = configuration.experiments[int(experiment)]
    parameters = data["best"].get("parameters") if isinstance(data["best"], dict) else None
    values = {k: v for k, v in parameters.items() if k != "experiment"} if isinstance(parameters, dict) else None
    if values is None or sorted(values) != sorted(chosen.names) or not all(
            isinstance(v, int | float) for v in values.values()):
        raise GaitError(f"{search}: the best gait's parameters are not experiment {experiment}'s free parameters in "
                        f"{configuration.source} ({len(chosen.names)}: {', '.join(chosen.names[:4])} ...)")
    return NetworkGait(model, chosen, values)


def _search_best(path: Path, model: RobotModel) -> CPGParameters:
    best = _search_data(path, model)["best"]
    parameters = best.get("parameters") if isinstance(best, dict) else None
    if not isinstance(parameters, dict) or set(parameters) - _CPG_FIELDS:
        raise GaitError(f"{path}: the best gait's parameters are not a CPG gait's ({', '.join(sorted(_CPG_FIELDS))})")
    if isinstance(parameters.get("initial_phases"), list):
        parameters = {**parameters, "initial_phases": tuple(parameters["initial_phases"])}
    try:
        return CPGParameters(**parameters)
    except (GaitError, TypeError) as error:
        raise GaitError(f"{path}: the best gait: {error}") from None
