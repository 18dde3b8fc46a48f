"""Bioloid poses in the thesis' convention, analysed in the thesis' frame.

Input poses are the 18 angles J1..J18 in degrees, numbered and signed as in
Tyropoulos (2008) (the raw servo angle, ``(raw - 512) * 0.2932``). The joint map
(``config/bioloid/joint_map.yaml``) links each J number to a URDF joint and its
direction. Results are expressed in the thesis frame: origin at the right-foot CoM,
+X backward, +Y robot's right, +Z up, millimetres.

The right foot is the support foot (the thesis' root). The left foot is in contact
where its sole corners lie within ``CONTACT_TOLERANCE_MM`` of the right sole's
plane; the support polygon is the convex hull of the corners in contact.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from humanoid_description import bioloid_thesis as thesis
from humanoid_description.model import RobotModel
from humanoid_description.support import convex_hull, signed_margin

CONTACT_TOLERANCE_MM = 2.0
JOINT_COUNT = len(thesis.JOINTS)


class PoseFileError(ValueError):
    """A malformed pose file; the message names the file, the line and the problem."""


@dataclass(frozen=True)
class ThesisPose:
    """One pose read from a file: where it came from and its J1..J18 angles (deg)."""

    line: int
    label: str
    angles_deg: tuple[float, ...]


@dataclass(frozen=True)
class PoseAnalysis:
    """Static analysis of one pose in the thesis frame (mm)."""

    com_mm: np.ndarray
    links_mm: dict[str, np.ndarray]  # thesis link name -> link CoM
    margin_mm: float
    left_foot_contact: bool


def read_pose_csv(path: Path) -> list[ThesisPose]:
    """Read one pose per line: 18 comma-separated angles J1..J18 in degrees.

    A line may start with a non-numeric label (19 fields); blank lines, lines
    starting with ``#`` and a ``J1,...,J18`` header are skipped. Anything else that
    is not 18 finite numbers raises :class:`PoseFileError` naming the line.
    """
    poses = []
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise PoseFileError(f"{path}: cannot read: {error.strerror or error}") from None
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        fields = [f.strip() for f in row]
        if not any(fields) or fields[0].startswith("#"):
            continue
        if all(f.upper() == f"J{i}" for i, f in enumerate(fields, start=1)) and len(fields) == JOINT_COUNT:
            continue
        label = f"line {number}"
        if len(fields) == JOINT_COUNT + 1 and not is_number(fields[0]):
            label, fields = fields[0], fields[1:]
        if len(fields) != JOINT_COUNT:
            raise PoseFileError(f"{path}:{number}: expected {JOINT_COUNT} angles J1..J18, "
                                f"got {len(fields)} fields")
        angles = []
        for column, field in enumerate(fields, start=1):
            if not is_number(field) or not math.isfinite(float(field)):
                raise PoseFileError(f"{path}:{number}: J{column} is not a finite number: {field!r}")
            angles.append(float(field))
        poses.append(ThesisPose(line=number, label=label, angles_deg=tuple(angles)))
    if not poses:
        raise PoseFileError(f"{path}: no poses found")
    return poses


def is_number(text: str) -> bool:
    """Does this csv field read as a number (so it cannot be a pose label)?"""
    try:
        float(text)
    except ValueError:
        return False
    return True


class ThesisFrame:
    """Converts thesis poses to joint positions and world points to the thesis frame."""

    def __init__(self, model: RobotModel) -> None:
        joint_map = model.config.joint_map
        if joint_map is None or any(s.thesis is None for s in joint_map.values()):
            raise ValueError(f"robot {model.name} has no thesis joint numbering "
                             "(balance poses are defined for the Bioloid)")
        self.model = model
        self._servo_of = {s.thesis: s for s in joint_map.values()}
        self._link_of = dict(thesis.URDF_LINK)

    def joint_positions(self, angles_deg: Sequence[float]) -> np.ndarray:
        """URDF joint positions (rad, canonical order) for thesis angles J1..J18."""
        if len(angles_deg) != JOINT_COUNT:
            raise ValueError(f"expected {JOINT_COUNT} angles, got {len(angles_deg)}")
        positions = {self._servo_of[j].joint: self._servo_of[j].direction * math.radians(a)
                     for j, a in enumerate(angles_deg, start=1)}
        return self.model.joints.to_array(positions)

    def angles_deg(self, positions: Sequence[float]) -> tuple[float, ...]:
        """Thesis angles J1..J18 (deg) of URDF joint positions (rad, canonical order): the
        inverse of :meth:`joint_positions`."""
        servos = [self._servo_of[j] for j in range(1, JOINT_COUNT + 1)]
        return tuple(s.direction * math.degrees(float(positions[self.model.joints.index(s.joint)])) for s in servos)

    def analyse(self, angles_deg: Sequence[float]) -> PoseAnalysis:
        """CoM, link CoMs and static margin of a pose, in the thesis frame (mm)."""
        q = self.joint_positions(angles_deg)
        link_coms = self.model.link_coms(q)
        masses = self.model.link_masses()
        foot_link = self._link_of[thesis.ROOT_LINK]
        foot = self.model.frame_placement(foot_link, q)
        origin = link_coms[foot_link]

        def to_thesis(points: np.ndarray) -> np.ndarray:
            local = (np.atleast_2d(points) - origin) @ foot.rotation
            return local @ thesis.THESIS_TO_REP.T * 1000.0

        com = sum(masses[k] * link_coms[k] for k in masses) / sum(masses.values())
        right = to_thesis(self.model.sole_corners("right", q))
        left = to_thesis(self.model.sole_corners("left", q))
        ground = float(np.mean(right[:, 2]))
        touching = left[np.abs(left[:, 2] - ground) <= CONTACT_TOLERANCE_MM]
        polygon = convex_hull(np.vstack([right, touching])[:, :2])
        com_t = to_thesis(com)[0]
        return PoseAnalysis(
            com_mm=com_t,
            links_mm={name: to_thesis(link_coms[urdf])[0] for name, urdf in self._link_of.items()},
            margin_mm=signed_margin(com_t[:2], polygon),
            left_foot_contact=len(touching) > 0)
