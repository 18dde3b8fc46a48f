"""The Bioloid's pose files as a motion format, as the motion library finds it (by name,
``bioloid_thesis_poses``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from humanoid_core.motion import MotionFormat, SavedPose
from humanoid_robot_bioloid.poses import append_thesis_pose, read_pose_file_motion

NAME = "bioloid_thesis_poses"


def _append_pose(path: Path, robot: str, positions: Mapping[str, float], label: str) -> SavedPose:
    return SavedPose(f"pose {append_thesis_pose(path, robot, positions, label)}")


#: Registered in setup.py: ``bioloid_thesis_poses = humanoid_robot_bioloid.motion_format:FORMAT``.
FORMAT = MotionFormat(NAME, read_pose_file_motion, _append_pose,
                      description="the thesis' pose tables (J1..J18 deg) or raw AX-12 poses by motor ID, "
                                  "played as the thesis' demo")
