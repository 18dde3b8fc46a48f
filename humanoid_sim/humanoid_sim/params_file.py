"""Simulation parameter files: what the simulation's fidelity depends on, in one YAML file.

A parameter file spells the dotted names of the simulation node's parameters (the names
``humanoid postures --set`` and ``humanoid identify --fit`` take) as nested keys, plus
corrections of the robot model's links::

    servo: {position_gain: 0.25, max_velocity: 4.2}
    transmission: {stiffness: 80.0, backlash: 1.5}
    ground_friction: 0.9          # the foot-ground contact (and contact_erp, ... the engine's)
    model:
      links:
        torso: {mass_scale: 1.05, com_x: 0.004}

Names: every parameter of :class:`~humanoid_sim.sim_parameters.SimParameters` (the world,
its contacts and engine), ``servo.*`` (:class:`~humanoid_sim.servo_profiles.ServoParameters`),
``transmission.*`` (:class:`~humanoid_sim.transmission.TransmissionParameters`) and
``model.links.<link>.<field>`` (:class:`LinkCorrection`: a link's mass scale and the offset
of its centre of mass in the link's frame, applied to the URDF the simulation loads; the
controllers' model is not changed: the corrections say how the simulated robot differs
from the model the controllers know). An unknown name, a link the robot lacks or a value
of the wrong type is refused with a :class:`ParamsFileError` naming it.

The simulation node takes a file as its ``params_file`` parameter (``humanoid sim --params
FILE``, ``params_file:=FILE`` in the launch files), the in-process runs as
:func:`humanoid_sim.headless.simulation_settings`'s ``params_file``: both load it here. Its
values win over the robot's parameter file and the physics profile; values given one by
one (``--set``, launch arguments) win over the file's.
"""

from __future__ import annotations

import difflib
import math
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from humanoid_core import documented, flatten
from humanoid_sim.servo_profiles import ServoParameters, value_error
from humanoid_sim.sim_parameters import SimParameters
from humanoid_sim.transmission import TransmissionParameters

if TYPE_CHECKING:
    from humanoid_description import Robot

#: Where link corrections sit: ``model.links.<link>.<field>``.
LINK_PREFIX = "model.links."
#: The parameter groups a file may set: (prefix, dataclass).
GROUPS: tuple[tuple[str, type], ...] = (("", SimParameters), ("servo.", ServoParameters),
                                        ("transmission.", TransmissionParameters))


class ParamsFileError(ValueError):
    """A parameter file that cannot be used as it is (one line, naming the culprit)."""


@dataclass(frozen=True)
class LinkCorrection:
    """How one simulated link differs from the robot model's."""

    mass_scale: float = documented(1.0, "the link's mass (and inertia, keeping its shape) times this")
    com_x: float = documented(0.0, "m, the link's centre of mass moved along the link frame's x")
    com_y: float = documented(0.0, "m, ... along y")
    com_z: float = documented(0.0, "m, ... along z")

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mass_scale) and self.mass_scale > 0.0):
            raise ParamsFileError(f"mass_scale must be a finite number > 0, got {self.mass_scale}")
        for name in ("com_x", "com_y", "com_z"):
            if not math.isfinite(getattr(self, name)):
                raise ParamsFileError(f"{name} must be a finite number, got {getattr(self, name)}")


LINK_FIELDS = tuple(f.name for f in fields(LinkCorrection))


def group_defaults() -> dict[str, Any]:
    """Each settable name of the groups with its class default (whose type the value must have)."""
    return {prefix + f.name: getattr(cls(), f.name) for prefix, cls in GROUPS for f in fields(cls)}


def link_names(urdf: str) -> list[str]:
    return [link.get("name", "") for link in ET.fromstring(urdf).iter("link")]


def check_name(name: str, links: Collection[str], defaults: Mapping[str, Any] | None = None) -> None:
    """ParamsFileError unless ``name`` is a name a parameter file may set for a robot with ``links``."""
    defaults = group_defaults() if defaults is None else defaults
    if name in defaults:
        return
    if name.startswith(LINK_PREFIX):
        link, _, field = name[len(LINK_PREFIX):].rpartition(".")
        if link not in links:
            raise ParamsFileError(f"{name}: the robot has no link {link!r}" + _hint(link, links))
        if field not in LINK_FIELDS:
            raise ParamsFileError(f"{name}: a link correction has no {field!r} (fields: {', '.join(LINK_FIELDS)})")
        return
    raise ParamsFileError(f"unknown parameter {name!r}" + _hint(name, [*defaults, LINK_PREFIX + "<link>.mass_scale"])
                          + "; the names: humanoid_sim.params_file")


def _hint(name: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def check_values(values: Mapping[str, Any], links: Collection[str]) -> dict[str, Any]:
    """``values`` (flattened names) checked: known names, values of each parameter's type."""
    defaults = group_defaults()
    checked: dict[str, Any] = {}
    for name, value in values.items():
        check_name(name, links, defaults)
        default = defaults.get(name, 0.0)
        checked[name] = _typed(name, value, default)
        problem = value_error(name.removeprefix("servo."), checked[name]) if name.startswith("servo.") else None
        if problem:  # the servo law's values, refused before anything starts
            raise ParamsFileError(problem)
    corrections(checked)  # the corrections' own checks
    return checked


def _typed(name: str, value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ParamsFileError(f"{name} must be true or false, got {value!r}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParamsFileError(f"{name} must be a number, got {value!r}")
        return float(value)
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamsFileError(f"{name} must be an integer, got {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ParamsFileError(f"{name} must be a list of names, got {value!r}")
        return tuple(value)
    if not isinstance(value, str):
        raise ParamsFileError(f"{name} must be a string, got {value!r}")
    return value


def load(path: Path | str, links: Collection[str]) -> dict[str, Any]:
    """The checked values (flattened names) of the parameter file at ``path`` for a robot with ``links``."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ParamsFileError(f"cannot read parameter file {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise ParamsFileError(f"parameter file {path} is not YAML: {str(error).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParamsFileError(f"parameter file {path}: expected a mapping of names, got {type(data).__name__}")
    try:
        return check_values(flatten(data), links)
    except ParamsFileError as error:
        raise ParamsFileError(f"parameter file {path}: {error}") from None


def nested(values: Mapping[str, Any]) -> dict[str, Any]:
    """Flattened names back to nested keys (the file's form)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        *parents, leaf = name.split(".")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = list(value) if isinstance(value, tuple) else value
    return out


def write(path: Path | str, values: Mapping[str, Any], comment: str = "") -> None:
    """A parameter file holding ``values`` (flattened names), ``comment`` on top."""
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    Path(path).write_text(header + yaml.safe_dump(nested(values), sort_keys=True))


def corrections(values: Mapping[str, Any]) -> dict[str, LinkCorrection]:
    """The link corrections among ``values`` (flattened names), per link."""
    per_link: dict[str, dict[str, float]] = {}
    for name, value in values.items():
        if name.startswith(LINK_PREFIX):
            link, _, field = name[len(LINK_PREFIX):].rpartition(".")
            per_link.setdefault(link, {})[field] = float(value)
    try:
        return {link: LinkCorrection(**settings) for link, settings in per_link.items()}
    except TypeError as error:  # a field the correction lacks
        raise ParamsFileError(f"link correction: {error}") from None


def corrected_urdf(urdf: str, corrections: Mapping[str, LinkCorrection]) -> str:
    """``urdf`` with each corrected link's mass and inertia scaled and its centre of mass moved."""
    if not corrections:
        return urdf
    root = ET.fromstring(urdf)
    links = {link.get("name"): link for link in root.iter("link")}
    for name, correction in corrections.items():
        if name not in links:
            raise ParamsFileError(f"{LINK_PREFIX}{name}: the robot has no link {name!r}")
        inertial = links[name].find("inertial")
        if inertial is None:
            raise ParamsFileError(f"{LINK_PREFIX}{name}: the link has no mass to correct")
        mass = inertial.find("mass")
        if mass is not None:
            mass.set("value", repr(float(mass.get("value", "0")) * correction.mass_scale))
        inertia = inertial.find("inertia")
        if inertia is not None:
            for key, value in inertia.attrib.items():
                inertia.set(key, repr(float(value) * correction.mass_scale))
        origin = inertial.find("origin")
        if origin is None:
            origin = ET.SubElement(inertial, "origin", {"xyz": "0 0 0", "rpy": "0 0 0"})
        x, y, z = (float(v) for v in origin.get("xyz", "0 0 0").split())
        origin.set("xyz", f"{x + correction.com_x!r} {y + correction.com_y!r} {z + correction.com_z!r}")
    return ET.tostring(root, encoding="unicode")


def describe(path: Path | str, values: Mapping[str, Any]) -> str:
    """The start-up line saying what a parameter file sets."""
    settings = ", ".join(f"{name} {list(value) if isinstance(value, tuple) else value}"
                         for name, value in sorted(values.items()))
    return f"parameter file {path}: {settings or 'sets nothing'}"


def add_argument(parser: Any) -> None:
    """``--params FILE`` on a command that simulates (an argparse parser)."""
    parser.add_argument("--params", default=None, metavar="FILE", type=Path,
                        help="simulation parameter file (servo, transmission, contact, model corrections: "
                             "docs/identification.md), over the robot's own values")


def chosen(robot: Robot, path: Path | None) -> Path | None:
    """``--params``' file checked for ``robot`` (resolved once by the command; absolute, as nodes
    started elsewhere need it), or None; a UsageError naming what is wrong otherwise."""
    if path is None:
        return None
    from humanoid_core import UsageError

    try:
        load(path, link_names(robot.urdf))
    except ParamsFileError as error:
        raise UsageError(f"--params: {error}") from None
    return path.resolve()
