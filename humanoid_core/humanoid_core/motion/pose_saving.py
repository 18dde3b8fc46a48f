"""Appending a robot's current pose to a motion or pose file (``humanoid pose``'s save).

Each file is read first with its format's reader, so that a malformed file is refused
(a :class:`~humanoid_core.motion.model.MotionError`), never extended, and written
with its format's writer, all or nothing (a file that cannot be written is left as it
was; OSError says why):

- keyframe YAML: one more keyframe, the pose demo's move time (``config/motion.yaml``)
  after the last one;
- HOAP-2 csv motion: one more line, lasting that long;
- Bioloid thesis poses: one more ``LABEL,J1..J18`` line (degrees).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from humanoid_core.loop.interpolation import Law
from humanoid_core.motion.data import load_settings
from humanoid_core.motion.hoap2_csv import CsvLayout, hoap2_csv_text, read_hoap2_csv
from humanoid_core.motion.keyframes import read_keyframes, write_keyframes
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import Motion, MotionError
from humanoid_description.bioloid_thesis.pose_analysis import ThesisFrame
from humanoid_description.bioloid_thesis.pose_file import ThesisPose, read_pose_csv, write_pose_csv
from humanoid_description.data_file import DataFileError, write_text_atomically
from humanoid_description.model import load_model

#: Decimals (deg) of the values a new keyframe is saved with; the keyframe file is written
#: with KEEP_DECIMALS, which keeps every earlier value of the file as it was read.
KEYFRAME_DECIMALS = 4
KEEP_DECIMALS = 10


def keyframe_step() -> float:
    """Seconds between saved poses: the pose demo's move time (config/motion.yaml)."""
    return load_settings().pose_move_time


def append_keyframe(path: Path, robot: str, positions: Mapping[str, float], label: str = "") -> Motion:
    """Append a keyframe to a keyframe file (a new one-keyframe motion of every joint when the
    file is missing); the writer's header replaces the file's comments. Returns the motion
    written."""
    motion = read_keyframes(path, robot) if path.exists() else None
    joints = motion.joint_names if motion is not None else JointBounds.for_robot(robot).joint_names
    bounds = JointBounds.for_robot(robot, joints)
    # rounded in degrees, then kept within the limits, so the file reads back within them
    rounded = np.clip(np.round(np.degrees([positions[j] for j in joints]), KEYFRAME_DECIMALS),
                      np.degrees(bounds.lower), np.degrees(bounds.upper))
    row = np.radians(rounded)
    if motion is None:
        motion = Motion(name=path.stem, robot=robot, joint_names=joints, times=[0.0], positions=[row],
                        labels=(label,), description=f"Poses of the {robot} saved by humanoid pose.",
                        source=str(path))
    else:
        labels = motion.labels or ("",) * motion.keyframe_count
        supports = motion.supports or ("both",) * motion.keyframe_count
        motion = replace(
            motion, times=np.append(motion.times, motion.duration + keyframe_step()),
            positions=np.vstack([motion.positions, row]),
            velocities=None if motion.velocities is None else np.vstack([motion.velocities, np.zeros(len(joints))]),
            holds=None if motion.holds is None else np.append(motion.holds, 0.0),
            labels=(*labels, label), supports=(*supports, "both"))
    write_keyframes(motion, path, units="deg", decimals=KEEP_DECIMALS,
                    header=f"Keyframes of the {robot} saved by `humanoid pose`.")
    return motion


def append_hoap2_csv_line(path: Path, robot: str, positions: Mapping[str, float]) -> int:
    """Append the pose as one line of the HOAP-2 csv motion format (the line lasts the keyframe
    step). Returns the line count."""
    count = read_hoap2_csv(path, robot).keyframe_count if path.exists() else 0
    columns = CsvLayout.for_robot(robot).columns
    line = Motion(name=path.stem, robot=robot, joint_names=columns, times=[0.0],
                  positions=[[positions[c] for c in columns]], law=Law.LINEAR, holds=[keyframe_step()])
    text = path.read_text() if path.exists() else ""
    write_text_atomically(path, text + ("" if not text or text.endswith("\n") else "\n") + hoap2_csv_text(line))
    return count + 1


def append_thesis_pose(path: Path, robot: str, positions: Mapping[str, float], label: str = "") -> int:
    """Append the pose to a thesis pose file (LABEL,J1..J18 deg). Returns the pose count."""
    model = load_model(robot)
    try:
        frame = ThesisFrame(model)
    except ValueError as error:
        raise MotionError(path, str(error)) from None
    try:
        poses = read_pose_csv(path) if path.exists() else []
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
    angles = frame.angles_deg(model.joints.to_array(dict(positions)))
    poses.append(ThesisPose(line=0, label=label or f"pose {len(poses) + 1}", angles_deg=angles))
    try:
        write_pose_csv(poses, path)
    except ValueError as error:
        raise MotionError(path, str(error)) from None
    return len(poses)
