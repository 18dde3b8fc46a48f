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
from dataclasses import dataclass
from pathlib import Path

import yaml

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
    if name not in ROBOTS:
        raise UnknownRobotError(name)
    config = robot_directory(name) / "robot.yaml"
    data = yaml.safe_load(config.read_text())
    return RobotFiles(name=name, config=config, xacro=config.parent / data["description"],
                      srdf=config.parent / data["srdf"])


@functools.cache
def urdf_xml(name: str) -> str:
    """The robot's URDF (xacro expanded), cached per process."""
    import xacro

    files = robot_files(name)
    document = xacro.process_file(str(files.xacro))
    return document.toprettyxml(indent="  ")
