"""The joint table: a robot's actuated joints, their order and their limits, from its URDF.

Apart from the kinematic model (:mod:`humanoid_description.model`) because it needs no
Pinocchio: a process that only validates and maps joint values (a driver node's front, the
command validation, a viewer) loads neither Pinocchio nor Coal.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

JointPositions = np.ndarray | Mapping[str, float] | Sequence[float]


@dataclass(frozen=True)
class JointLimits:
    """Limits of one joint from the URDF (rad, rad/s, N m)."""

    lower: float
    upper: float
    velocity: float
    effort: float

    def contains(self, value: float, tolerance: float = 0.0) -> bool:
        return self.lower - tolerance <= value <= self.upper + tolerance

    def clamp(self, value: float) -> float:
        return min(self.upper, max(self.lower, value))


@dataclass(frozen=True)
class JointInfo:
    """One actuated joint: its position in the canonical order and its URDF data."""

    name: str
    index: int
    limits: JointLimits
    axis: tuple[float, float, float]
    parent_link: str
    child_link: str


class JointTable(Sequence[JointInfo]):
    """The actuated joints in canonical order, with name lookup and array helpers."""

    def __init__(self, joints: Sequence[JointInfo]) -> None:
        self._joints = tuple(joints)
        self._index = {j.name: j.index for j in self._joints}
        self.names: tuple[str, ...] = tuple(j.name for j in self._joints)
        self.lower = np.array([j.limits.lower for j in self._joints])
        self.upper = np.array([j.limits.upper for j in self._joints])
        self.velocity = np.array([j.limits.velocity for j in self._joints])
        self.effort = np.array([j.limits.effort for j in self._joints])

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self._joints[self.index(key)]
        return self._joints[key]

    def __len__(self) -> int:
        return len(self._joints)

    def __iter__(self) -> Iterator[JointInfo]:
        return iter(self._joints)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def index(self, name: str) -> int:  # type: ignore[override]
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"unknown joint {name!r}") from None

    def to_array(self, positions: JointPositions, default: np.ndarray | None = None) -> np.ndarray:
        """Canonical-order array from an array or a (partial) name -> value mapping.

        Joints missing from a mapping take ``default`` (zeros when not given).
        """
        if isinstance(positions, Mapping):
            out = np.zeros(len(self)) if default is None else np.array(default, dtype=float)
            for name, value in positions.items():
                out[self.index(name)] = float(value)
            return out
        out = np.asarray(positions, dtype=float)
        if out.shape != (len(self),):
            raise ValueError(f"expected {len(self)} joint values, got shape {out.shape}")
        return out

    def to_dict(self, values: Sequence[float]) -> dict[str, float]:
        return {name: float(v) for name, v in zip(self.names, values, strict=True)}

    def from_named(self, names: Sequence[str], values: Sequence[float],
                   default: float | np.ndarray = math.nan) -> np.ndarray:
        """Canonical-order array of the values a message names (a JointState's ``name`` and
        ``position``, read as they come): joints it does not name are ``default`` (NaN:
        unknown; or an array in canonical order), names of no joint here are passed over (a
        message may carry another robot's joints, a gripper's). Unlike :meth:`to_array`,
        which takes a command and refuses an unknown name."""
        out = np.full(len(self), default, dtype=float) if np.ndim(default) == 0 else np.array(default, dtype=float)
        for name, value in zip(names, values, strict=False):
            index = self._index.get(name)
            if index is not None:
                out[index] = value
        return out


def joint_table(urdf: str, order: Sequence[str]) -> JointTable:
    """The actuated (revolute, continuous) joints of ``urdf`` in the order ``order`` names
    them, with their URDF limits; ValueError when the two disagree."""
    root = ET.fromstring(urdf)
    found: dict[str, ET.Element] = {
        j.get("name", ""): j for j in root.iter("joint") if j.get("type") in ("revolute", "continuous")}
    missing = [n for n in order if n not in found]
    extra = [n for n in found if n not in order]
    if missing or extra:
        raise ValueError(f"joint order and URDF disagree: missing {missing}, not ordered {extra}")
    joints = []
    for index, name in enumerate(order):
        element = found[name]
        limit = element.find("limit")
        axis = element.find("axis")
        xyz = axis.get("xyz", "1 0 0") if axis is not None else "1 0 0"
        unbounded = element.get("type") == "continuous" or limit is None
        joints.append(JointInfo(
            name=name, index=index,
            limits=JointLimits(
                lower=-np.inf if unbounded else float(limit.get("lower", 0.0)),
                upper=np.inf if unbounded else float(limit.get("upper", 0.0)),
                velocity=float(limit.get("velocity", np.inf)) if limit is not None else np.inf,
                effort=float(limit.get("effort", np.inf)) if limit is not None else np.inf),
            axis=tuple(float(v) for v in xyz.split()),  # type: ignore[arg-type]
            parent_link=element.find("parent").get("link", ""),  # type: ignore[union-attr]
            child_link=element.find("child").get("link", "")))  # type: ignore[union-attr]
    return JointTable(joints)


def urdf_joint_table(urdf: str) -> JointTable:
    """The actuated (revolute, continuous) joints of a URDF in the order the URDF lists them,
    with its limits: the table of a robot known only by its ``robot_description`` (a viewer
    checking what it sends against the limits the robot interface checks)."""
    order = [j.get("name", "") for j in ET.fromstring(urdf).iter("joint")
             if j.get("type") in ("revolute", "continuous")]
    return joint_table(urdf, order)
