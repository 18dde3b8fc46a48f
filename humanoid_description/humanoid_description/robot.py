"""One robot, resolved from its folder once.

A command (``humanoid sim``, ``humanoid real``) resolves the robot it was given into a
:class:`Robot` (its files, its ``robot.yaml``, which control nodes its ``control.yaml``
configures, what it can do) and hands that object down to the graph it builds: the graph
asks the object, rather than every step re-finding the folder by name and re-reading its
files. Node processes are started with the robot's name (a parameter crosses a process
boundary as text) and resolve it once themselves.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from humanoid_description.config import RobotConfig, load_config
from humanoid_description.data_file import load_package_yaml
from humanoid_description.robots import RobotFiles, robot_files, urdf_xml
from humanoid_description.runtime_files import CONTROL_NODE_PARAMETERS, RuntimeFile


@dataclass(frozen=True)
class Robot:
    """A robot's folder, read once: what graphs, commands and node specs need to know of it."""

    name: str
    files: RobotFiles
    config: RobotConfig
    #: The control nodes the robot's ``control.yaml`` has a section for (by node name).
    control_sections: frozenset[str]

    @property
    def folder(self) -> Path:
        return self.files.config.parent

    def path(self, runtime_file: RuntimeFile) -> Path:
        """Where one of the robot's runtime files is (:mod:`humanoid_description.runtime_files`)."""
        return runtime_file.path(self.name)

    @functools.cached_property
    def urdf(self) -> str:
        """The robot's URDF, its xacro description expanded (once: :func:`~humanoid_description.robots.urdf_xml`)."""
        return urdf_xml(self.name)

    def configures(self, node_name: str) -> bool:
        """Whether ``control.yaml`` has a section for control node ``node_name`` (the walk
        controller's: the robot walks)."""
        return node_name in self.control_sections

    @property
    def has_gaits(self) -> bool:
        """Whether the robot has gaits (``robot.yaml`` ``gaits.phases``: the quadruped)."""
        return bool((self.config.sections.get("gaits") or {}).get("phases"))

    @property
    def on_dynamixel_bus(self) -> bool:
        """Whether the robot has a Dynamixel joint map (can run on a bus or its emulator)."""
        return self.config.joint_map is not None


@functools.cache
def _resolved(name: str) -> Robot:
    control = CONTROL_NODE_PARAMETERS.path(name)
    sections = load_package_yaml(control.read_text()) if control.is_file() else {}
    return Robot(name=name, files=robot_files(name), config=load_config(name),
                 control_sections=frozenset(str(key).lstrip("/") for key in (sections or {})
                                            if key != "/**"))


def resolve_robot(robot: Robot | str) -> Robot:
    """``robot`` resolved (once per process; a :class:`Robot` is returned as it is);
    :class:`~humanoid_description.robots.UnknownRobotError` for a name with no folder."""
    return robot if isinstance(robot, Robot) else _resolved(robot)
