"""Where each robot's files live, and turning its xacro into a URDF string.

A robot is known by name (``hoap2``, ``bioloid``); its configuration file
``config/<name>/robot.yaml`` names the xacro description and the SRDF. Files are
found through the ament index when the package is installed, and next to this module
when running from a source checkout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from humanoid_description.package_share import package_share_directory

PACKAGE = "humanoid_description"
ROBOTS: tuple[str, ...] = ("hoap2", "bioloid", "bioloid_quadruped")


class UnknownRobotError(ValueError):
    """Raised for a robot name that has no configuration in this package."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown robot {name!r} (known robots: {', '.join(ROBOTS)})")
        self.name = name


def share_directory() -> Path:
    """This package's data directory (xacro/, config/)."""
    return package_share_directory(PACKAGE)


@dataclass(frozen=True)
class RobotFiles:
    """The files that describe one robot."""

    name: str
    config: Path
    xacro: Path
    srdf: Path

    def config_file(self, filename: str) -> Path:
        """Another file of this robot's config folder (joint map, servo parameters ...)."""
        return self.config.parent / filename


def robot_files(name: str) -> RobotFiles:
    """Locate the files of robot ``name``; raises :class:`UnknownRobotError`."""
    if name not in ROBOTS:
        raise UnknownRobotError(name)
    share = share_directory()
    config = share / "config" / name / "robot.yaml"
    data = yaml.safe_load(config.read_text())
    return RobotFiles(name=name, config=config, xacro=share / data["description"],
                      srdf=share / data["srdf"])


@functools.cache
def urdf_xml(name: str) -> str:
    """The robot's URDF (xacro expanded), cached per process."""
    import xacro

    files = robot_files(name)
    document = xacro.process_file(str(files.xacro))
    return document.toprettyxml(indent="  ")
