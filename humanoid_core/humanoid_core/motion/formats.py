"""The motion file formats by name: each one's reader and, where it has one, its pose writer.

The shared formats are registered here: ``keyframes`` (the project's keyframe YAML, every
robot's) and ``bioloid_pages`` (the maker's Motion Editor pages, in YAML, for any robot on a
Dynamixel joint map). Both are YAML documents naming their format in a ``format:`` key.

A robot's own formats come with the robot's package (``humanoid_robot_<robot>``, named by
``package`` in its ``robot.yaml``), which registers each under the entry-point group
:data:`humanoid_core.registrations.MOTION_FORMATS`, the format's name pointing at its :class:`MotionFormat`::

    entry_points={"humanoid.motion_formats": ["hoap2_csv = humanoid_robot_hoap2.motion_format:FORMAT"]}

and the robot's folder declares which of them its files use, by file suffix (``robot.yaml``
``motion_formats: {.csv: hoap2_csv}``). Nothing here knows a robot or a robot's format:
:func:`suffix_format` and :func:`pose_file_format` answer from the robot's declaration and
the registry, so a robot brings a format without touching this package.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from humanoid_core.motion.bioloid_pages import FORMAT as PAGES_FORMAT
from humanoid_core.motion.bioloid_pages import pages_to_motion, read_pages
from humanoid_core.motion.keyframes import FORMAT as KEYFRAMES_FORMAT
from humanoid_core.motion.keyframes import read_keyframes
from humanoid_core.motion.model import Motion
from humanoid_core.motion.pose_saving import append_keyframe
from humanoid_core.registrations import MOTION_FORMATS, registered
from humanoid_description import load_config

#: Suffixes of YAML motion files: their ``format:`` key names the format (default: keyframes).
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class SavedPose:
    """What a pose writer appended, told as ``saved <what> to <file><note>``."""

    what: str
    note: str = ""


#: Reads a file of the format for a robot: ``read(path, robot)``; MotionError when malformed.
Reader = Callable[[Path, str], Motion]
#: Appends a pose (joint -> rad) to a file of the format, all or nothing, after reading the
#: file with the format's reader: ``append_pose(path, robot, positions, label)``.
PoseWriter = Callable[[Path, str, Mapping[str, float], str], SavedPose]


@dataclass(frozen=True)
class MotionFormat:
    """One motion file format: its name, reader and (optional) pose writer."""

    name: str
    read: Reader
    append_pose: PoseWriter | None = None
    #: A YAML document naming the format in its ``format:`` key (else: known by a robot's suffix).
    yaml: bool = False
    description: str = ""


class UnknownMotionFormatError(ValueError):
    """A format name nothing registers (a robot's package not installed, or a typo in robot.yaml)."""


def _keyframe_pose(path: Path, robot: str, positions: Mapping[str, float], label: str) -> SavedPose:
    motion = append_keyframe(path, robot, positions, label)
    return SavedPose(f"keyframe {motion.keyframe_count - 1} (t = {motion.times[-1]:g} s)")


def _read_pages(path: Path, robot: str) -> Motion:
    return pages_to_motion(read_pages(path, robot))


#: The formats of this package, in the order their names are listed to users.
SHARED_FORMATS: tuple[MotionFormat, ...] = (
    MotionFormat(KEYFRAMES_FORMAT, read_keyframes, _keyframe_pose, yaml=True,
                 description="keyframes of named joints (YAML), every robot's"),
    MotionFormat(PAGES_FORMAT, _read_pages, yaml=True,
                 description="the Motion Editor's pages (YAML): poses by motor ID with a speed and a pause"),
)


@functools.cache
def registered_formats() -> dict[str, MotionFormat]:
    """Every format by name: the shared ones, then those robots' packages register (read once
    per process; a package registering a name twice, or a shared one, is refused)."""
    formats = {f.name: f for f in SHARED_FORMATS}
    for entry in sorted(registered(MOTION_FORMATS), key=lambda e: e.name):
        loaded = entry.load()
        if not isinstance(loaded, MotionFormat) or loaded.name != entry.name:
            raise TypeError(f"entry point {entry.name} = {entry.value} ({MOTION_FORMATS}) is not the "
                            f"MotionFormat named {entry.name!r}")
        if entry.name in formats and formats[entry.name] is not loaded:
            raise TypeError(f"motion format {entry.name!r} is registered twice (again by {entry.value})")
        formats[entry.name] = loaded
    return formats


#: The shared formats by name: found without reading the installed packages' entry points
#: and importing the robots' format modules, which only a robot's own format needs.
_SHARED_BY_NAME = {f.name: f for f in SHARED_FORMATS}


def motion_format(name: str, robot: str | None = None) -> MotionFormat:
    """The format registered as ``name``; UnknownMotionFormatError says which package should bring it."""
    if name in _SHARED_BY_NAME:
        return _SHARED_BY_NAME[name]
    formats = registered_formats()
    if name in formats:
        return formats[name]
    package = load_config(robot).package if robot is not None else None
    brought = (f"robot {robot} declares it (robot.yaml motion_formats); its package {package} registers it: "
               "build and install it" if package else
               f"robot {robot} declares it (robot.yaml motion_formats) but names no package (robot.yaml "
               "package) to bring it" if robot is not None else "no installed package registers it")
    raise UnknownMotionFormatError(f"unknown motion format {name!r}: {brought} (known formats: "
                                   f"{', '.join(formats)})")


def yaml_format(name: str) -> MotionFormat | None:
    """The format of a YAML motion file whose ``format:`` key says ``name``, or None."""
    found = _SHARED_BY_NAME.get(name) or registered_formats().get(name)
    return found if found is not None and found.yaml else None


def yaml_formats() -> dict[str, MotionFormat]:
    """The formats of YAML motion files, by the name their ``format:`` key gives."""
    return {name: f for name, f in registered_formats().items() if f.yaml}


def suffix_format(robot: str, suffix: str) -> MotionFormat | None:
    """The format of the robot's own files with this suffix (robot.yaml ``motion_formats``), or None."""
    name = load_config(robot).motion_formats.get(suffix.lower())
    return None if name is None else motion_format(name, robot)


def pose_file_format(robot: str, suffix: str) -> MotionFormat | None:
    """The format a pose is saved in to a file with this suffix: a keyframe file for YAML, else
    the robot's own format for the suffix when it has a pose writer; None: no such file."""
    chosen = (_SHARED_BY_NAME[KEYFRAMES_FORMAT] if suffix.lower() in YAML_SUFFIXES
              else suffix_format(robot, suffix))
    return chosen if chosen is not None and chosen.append_pose is not None else None
