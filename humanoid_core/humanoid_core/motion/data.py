"""Where humanoid_core's data files live, and the motion settings read from them.

Files are looked up in the package's share directory (installed by colcon, found by
:func:`humanoid_description.package_share.package_share_directory`) first and in the
source tree second, file by file: a file that is not installed yet (a new
motion, a folder setup.py does not install) is still found when running from a
checkout. Parameters users may change (sampling period, transition speed, the pose
demo's timing) are data in ``config/motion.yaml``, not code.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from humanoid_core.loop import Law
from humanoid_description import package_share_directory

PACKAGE = "humanoid_core"
SETTINGS_FILE = "config/motion.yaml"


def search_roots() -> list[Path]:
    """Directories that hold ``config/``: the package's share directory, then the source tree."""
    roots = [Path(__file__).resolve().parents[2]]
    with contextlib.suppress(FileNotFoundError):  # neither installed nor found by the shared lookup
        roots.insert(0, package_share_directory(PACKAGE))
    return list(dict.fromkeys(roots))


def data_path(relative: str) -> Path:
    """The first existing ``relative`` path under :func:`search_roots`."""
    for root in search_roots():
        candidate = root / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"cannot find {relative} in {', '.join(str(r) for r in search_roots())}")


@dataclass(frozen=True)
class MotionSettings:
    """Playback parameters (see ``config/motion.yaml`` for their meaning)."""

    sample_period: float
    samples_per_segment: int
    safety_margin: float
    transition_limit_fraction: float
    transition_min_duration: float
    pose_move_time: float
    pose_hold_time: float
    pose_law: Law
    pose_lift: float


@functools.cache
def load_settings() -> MotionSettings:
    """Read ``config/motion.yaml`` (cached)."""
    path = data_path(SETTINGS_FILE)
    data = yaml.safe_load(path.read_text())
    scaling, transition, demo = data["time_scaling"], data["transition"], data["pose_demo"]
    settings = MotionSettings(
        sample_period=float(data["sample_period"]),
        samples_per_segment=int(scaling["samples_per_segment"]),
        safety_margin=float(scaling["safety_margin"]),
        transition_limit_fraction=float(transition["limit_fraction"]),
        transition_min_duration=float(transition["min_duration"]),
        pose_move_time=float(demo["move_time"]),
        pose_hold_time=float(demo["hold_time"]),
        pose_law=Law.parse(str(demo["law"])),
        pose_lift=float(demo["lift"]))
    if not (settings.sample_period > 0 and settings.samples_per_segment >= 2
            and 0 <= settings.safety_margin < 0.5 and 0 < settings.transition_limit_fraction <= 1
            and settings.transition_min_duration > 0 and settings.pose_move_time > 0
            and settings.pose_hold_time >= 0 and settings.pose_lift >= 0):
        raise ValueError(f"{path}: a setting is out of range: {settings}")
    return settings
