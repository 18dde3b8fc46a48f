"""Each robot's motion library, and loading any motion file by its format.

The library of robot ``r`` is the keyframe files of its folder's ``motions/``
(``humanoid_description/robots/<r>/motions/*.yaml``); a motion is known by its file name
without extension. :func:`load_motion` takes such a name or a path to a file in any
supported format (:mod:`humanoid_core.motion.formats`, the registry of readers):

=========================  =======================================================
``*.yaml``/``*.yml``        the format its ``format:`` key names: ``keyframes`` (default)
                            or ``bioloid_pages``
a robot's own suffix        the format its ``robot.yaml`` declares (``motion_formats``),
                            registered by the robot's package (``robot.yaml`` ``package``):
                            the HOAP-2's csv motion files, the Bioloid's thesis and raw
                            pose files (played as the thesis demo)
=========================  =======================================================
"""

from __future__ import annotations

from pathlib import Path

from humanoid_core.motion.formats import (
    YAML_SUFFIXES,
    UnknownMotionFormatError,
    suffix_format,
    yaml_format,
    yaml_formats,
)
from humanoid_core.motion.keyframes import FORMAT as KEYFRAMES_FORMAT
from humanoid_core.motion.model import Motion, MotionError
from humanoid_core.motion.yaml_nodes import compose_file
from humanoid_description import MOTION_LIBRARY, ROBOTS, load_config


def library_directories(robot: str) -> list[Path]:
    """Where robot ``robot``'s library lives (its folder's ``motions/``; none: an empty library)."""
    if robot not in ROBOTS:
        raise ValueError(f"unknown robot {robot!r} (known robots: {', '.join(ROBOTS)})")
    folder = MOTION_LIBRARY.path(robot)
    return [folder] if folder.is_dir() else []


def _library_files(robot: str) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for directory in reversed(library_directories(robot)):  # installed files win
        files.update({p.stem: p for p in directory.iterdir() if p.suffix in YAML_SUFFIXES})
    return files


def list_motions(robot: str) -> list[str]:
    """Names of the motions in the robot's library, sorted."""
    return sorted(_library_files(robot))


def load_motion(robot: str, name_or_path: str | Path) -> Motion:
    """A library motion by name, or a motion file by path (any supported format)."""
    text = str(name_or_path)
    library = _library_files(robot)
    if text in library:
        return read_motion_file(library[text], robot)
    path = Path(name_or_path)
    if path.suffix or path.parent != Path(".") or path.exists():
        return read_motion_file(path, robot)
    raise MotionError(text, f"no motion {text!r} in the {robot} library (known: {', '.join(sorted(library))}) "
                            "and no such file")


def read_motion_file(path: Path, robot: str) -> Motion:
    """Read a motion file for ``robot``, dispatching on its extension and format."""
    path = Path(path)
    if "\0" in str(path):
        raise MotionError(repr(str(path)), "not a usable file name: it contains a NUL byte")
    try:
        found = path.is_file()
    except OSError as error:  # a name too long ...
        raise MotionError(path, f"not a usable file name: {error.strerror or error}") from None
    if not found:
        raise MotionError(path, "no such file")
    suffix = path.suffix.lower()
    if suffix in YAML_SUFFIXES:
        return _read_yaml_motion(path, robot)
    try:
        own = suffix_format(robot, suffix)
    except UnknownMotionFormatError as error:  # the robot's package is not installed
        raise MotionError(path, str(error)) from None
    if own is not None:
        return own.read(path, robot)
    formats = load_config(robot).motion_formats
    known = ", ".join([".yaml/.yml keyframes or pages", *(f"{s} ({k})" for s, k in formats.items())])
    raise MotionError(path, f"unknown motion file type {suffix!r} for robot {robot} (known: {known})")


def _read_yaml_motion(path: Path, robot: str) -> Motion:
    top = compose_file(path).mapping("motion file")
    kind = top["format"].text("format") if "format" in top else KEYFRAMES_FORMAT
    found = yaml_format(kind)
    if found is not None:
        return found.read(path, robot)
    raise top["format"].error(f"unknown format {kind!r} (known: {', '.join(yaml_formats())})")
