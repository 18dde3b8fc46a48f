"""Pose files in the thesis convention: one pose per line, 18 angles J1..J18 in degrees.

Angles are numbered and signed as in Tyropoulos (2008) (the raw servo angle,
``(raw - 512) * 0.2932``). A line may start with a non-numeric label (19 fields);
blank lines, lines starting with ``#`` and a ``J1,...,J18`` header are skipped. An angle
beyond +-180 deg cannot be a servo's and is refused.

Files are read line by line (:func:`iter_pose_csv`), so a file of any length is read in
bounded memory, and every problem — a file that is not text, a line too long or not 18
finite numbers — is a :class:`DataFileError` naming the file and line.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from humanoid_description import DataFileError, text_lines, write_text_atomically
from humanoid_robot_bioloid.thesis.equations import JOINTS

JOINT_COUNT = len(JOINTS)
#: No servo angle is larger (the AX-12 turns 300 deg: +-150 deg); a larger value is a
#: mistake in the file, not a pose.
MAX_ANGLE_DEG = 180.0


@dataclass(frozen=True)
class ThesisPose:
    """One pose read from a file: where it came from and its J1..J18 angles (deg)."""

    line: int
    label: str
    angles_deg: tuple[float, ...]


def iter_pose_csv(path: Path) -> Iterator[ThesisPose]:
    """The poses of a file, one at a time, as they are read (see the module docstring);
    raises :class:`DataFileError` at the first line that is not a pose."""
    for number, text in text_lines(path):
        pose = _parse_line(path, number, text)
        if pose is not None:
            yield pose


def read_pose_csv(path: Path) -> list[ThesisPose]:
    """Every pose of a file (at least one, else :class:`DataFileError`)."""
    poses = list(iter_pose_csv(path))
    if not poses:
        raise DataFileError(path, "no poses found")
    return poses


def _parse_line(path: Path, number: int, text: str) -> ThesisPose | None:
    """The pose of one line, None for a line that holds none (blank, comment, header)."""
    try:
        row = next(csv.reader([text]), [])
    except csv.Error as error:
        raise DataFileError(path, f"not a csv line: {error}", number) from None
    fields = [f.strip() for f in row]
    if not any(fields) or fields[0].startswith("#"):
        return None
    if len(fields) == JOINT_COUNT and all(f.upper() == f"J{i}" for i, f in enumerate(fields, start=1)):
        return None
    label = f"line {number}"
    if len(fields) == JOINT_COUNT + 1 and not is_number(fields[0]):
        label, fields = fields[0], fields[1:]
    if len(fields) != JOINT_COUNT:
        raise DataFileError(path, f"expected {JOINT_COUNT} angles J1..J18, got {len(fields)} fields", number)
    angles = []
    for column, field in enumerate(fields, start=1):
        if not is_number(field) or not math.isfinite(float(field)):
            raise DataFileError(path, f"J{column} is not a finite number: {field!r}", number)
        if abs(float(field)) > MAX_ANGLE_DEG:
            raise DataFileError(path, f"J{column} = {field} is not a servo angle (|J| <= {MAX_ANGLE_DEG:g} deg)",
                                number)
        angles.append(float(field))
    return ThesisPose(line=number, label=label, angles_deg=tuple(angles))


def is_number(text: str) -> bool:
    """Does this csv field read as a number (so it cannot be a pose label)?"""
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_pose_csv(poses: Sequence[ThesisPose], path: Path) -> None:
    """Write poses, all or nothing: a header comment, then ``label,J1,...,J18`` per pose."""
    lines = ["# Bioloid poses in the thesis convention: label, J1..J18 in degrees (Tyropoulos 2008)"]
    for pose in poses:
        if "," in pose.label or not pose.label or is_number(pose.label):
            raise ValueError(f"pose label {pose.label!r} must be a non-numeric text without commas")
        lines.append(",".join([pose.label, *(repr(float(a)) for a in pose.angles_deg)]))
    write_text_atomically(path, "\n".join(lines) + "\n")
