"""The robots the stack knows, and where each one's files live.

A robot is a folder ``robots/<name>/`` of this package holding ``robot.yaml`` (joint
order, feet, poses, actuators, and the names of its xacro description and SRDF) and every
other file of the robot: its simulation, bus and controller parameters, its motions and
protocols (:mod:`humanoid_description.runtime_files` lists them). The robots are the
folders that hold a ``robot.yaml``: adding a robot is adding a folder. Files are found
through the ament index when the package is installed, and in the source tree otherwise.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from humanoid_description.data_file import load_package_yaml
from humanoid_description.package_share import package_share_directory

PACKAGE = "humanoid_description"
#: The folder of every robot's files, under this package's share directory.
ROBOTS_FOLDER = "robots"


def share_directory() -> Path:
    """This package's data directory (robots/, xacro/)."""
    return package_share_directory(PACKAGE)


def robot_directory(name: str) -> Path:
    """The folder of robot ``name``'s files (which may not exist)."""
    return share_directory() / ROBOTS_FOLDER / name


def _robots() -> tuple[str, ...]:
    folder = share_directory() / ROBOTS_FOLDER
    return tuple(sorted(path.parent.name for path in folder.glob("*/robot.yaml")))


#: The known robots: every folder of ``robots/`` that holds a ``robot.yaml``.
ROBOTS: tuple[str, ...] = _robots()
#: The robot a node takes when its ``robot`` parameter is not given (ROS users start nodes
#: by hand, without it; the commands ask for ``--robot``).
DEFAULT_ROBOT = "hoap2"


class UnknownRobotError(ValueError):
    """Raised for a robot name that has no folder in this package."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown robot {name!r} (known robots: {', '.join(ROBOTS)})")
        self.name = name


@dataclass(frozen=True)
class RobotFiles:
    """The files that describe one robot."""

    name: str
    config: Path
    xacro: Path
    srdf: Path

    def config_file(self, filename: str) -> Path:
        """Another file of this robot's folder (joint map, servo parameters ...)."""
        return self.config.parent / filename


def robot_files(name: str) -> RobotFiles:
    """Locate the files of robot ``name``; raises :class:`UnknownRobotError`."""
    config = robot_directory(name) / "robot.yaml"
    data = robot_document(name)
    return RobotFiles(name=name, config=config, xacro=config.parent / data["description"],
                      srdf=config.parent / data["srdf"])


@functools.cache
def robot_document(name: str) -> dict:
    """Robot ``name``'s ``robot.yaml`` as parsed, once per process (its files and its typed
    configuration are both read from it); raises :class:`UnknownRobotError`. Not to be changed."""
    if name not in ROBOTS:
        raise UnknownRobotError(name)
    return load_package_yaml((robot_directory(name) / "robot.yaml").read_text())


#: Where expanded descriptions are kept between processes (default: $XDG_CACHE_HOME/humanoid).
CACHE_VARIABLE = "HUMANOID_CACHE_DIR"


@functools.cache
def urdf_xml(name: str) -> str:
    """The robot's URDF (xacro expanded), cached per process and on disk: expanding it takes
    about 0.4 s of CPU, and every node of a graph needs it at start-up. The disk copy is
    keyed by the content of the files it can come from (every ``.xacro`` and ``.yaml`` of the
    robot's folder and of the shared ``xacro/`` folder)."""
    files = robot_files(name)
    sources = [*files.config.parent.glob("*.xacro"), *files.config.parent.glob("*.yaml"),
               *(share_directory() / "xacro").rglob("*.xacro")]
    return expanded_xacro(files.xacro, sources, cache_directory())


def cache_directory() -> Path:
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "humanoid"


def expanded_xacro(document: Path, sources: Iterable[Path], cache: Path) -> str:
    """``document`` expanded by xacro, read from ``cache`` when ``sources`` (the files it may
    read) and xacro are the same as when it was expanded last; a cache that cannot be read or
    written only costs the expansion."""
    import xacro

    key = hashlib.sha256(f"{xacro.__file__}\n{document.resolve()}\n".encode())
    for source in sorted(set(sources)):
        key.update(f"{source}\n".encode())
        key.update(source.read_bytes())
    cached = cache / f"{document.name}.{key.hexdigest()[:32]}.urdf"
    try:
        return cached.read_text()
    except OSError:
        pass
    text = xacro.process_file(str(document)).toprettyxml(indent="  ")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=cache, delete=False, suffix=".part") as part:
            part.write(text)
        os.replace(part.name, cached)  # whole or not at all: nodes start side by side
    except OSError:
        pass
    return text
