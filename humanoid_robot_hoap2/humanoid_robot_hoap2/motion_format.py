"""The HOAP-2's csv motion format, as the motion library finds it (by name, ``hoap2_csv``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from humanoid_core.motion import MotionFormat, SavedPose
from humanoid_robot_hoap2.csv_motion import append_hoap2_csv_line, read_hoap2_csv

NAME = "hoap2_csv"


def _append_pose(path: Path, robot: str, positions: Mapping[str, float], label: str) -> SavedPose:
    count = append_hoap2_csv_line(path, robot, positions)
    return SavedPose(f"line {count}", f" (the csv format has no labels: {label!r} not saved)" if label else "")


#: Registered in setup.py: ``hoap2_csv = humanoid_robot_hoap2.motion_format:FORMAT``.
FORMAT = MotionFormat(NAME, read_hoap2_csv, _append_pose,
                      description="the HOAP-2's csv motion files: one line per set-point, joints in pulses")
