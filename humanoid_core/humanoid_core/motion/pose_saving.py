"""Appending a robot's current pose to a motion or pose file (``humanoid pose``'s save).

Each file is read first with its format's reader, so that a malformed file is refused
(a :class:`~humanoid_core.motion.model.MotionError`), never extended, and written
with its format's writer, all or nothing (a file that cannot be written is left as it
was; OSError says why). Here: a keyframe YAML file gets one more keyframe, the pose demo's
move time (``config/motion.yaml``) after the last one. A robot's own formats bring their
pose writers with them (:class:`humanoid_core.motion.formats.MotionFormat`), saving a pose
:func:`keyframe_step` after the previous one where the format has times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np

from humanoid_core.motion.data import load_settings
from humanoid_core.motion.keyframes import read_keyframes, write_keyframes
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import Motion

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
