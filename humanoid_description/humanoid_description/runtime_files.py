"""Every YAML file the stack reads at run time, listed once.

Node specs (``humanoid_sim.sim_node_spec``, ``humanoid_hw.hw_node_spec``), the hardware
driver, the launch files and the tests find these files through this list, so a file
is added, moved or renamed in one place. A robot's files sit together in its folder,
``humanoid_description/robots/<robot>/`` (installed under the package's share directory);
``{robot}`` stands for a robot's name (:data:`humanoid_description.robots.ROBOTS`). A
per-robot file that does not exist for a robot means that robot is not served by its
reader (only the Bioloids have a Dynamixel bus configuration, for instance):
:meth:`RuntimeFile.robots` says which are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from humanoid_description.package_share import package_share_directory
from humanoid_description.robots import ROBOTS, UnknownRobotError


@dataclass(frozen=True)
class RuntimeFile:
    """One runtime YAML file (or one per robot)."""

    package: str
    pattern: str  # path under the package's share directory; "{robot}" = the robot's name
    reader: str  # who reads it
    ros_parameters: bool  # a ROS parameter file (/**: ros__parameters:) rather than plain data

    @property
    def per_robot(self) -> bool:
        return "{robot}" in self.pattern

    def path(self, robot: str | None = None) -> Path:
        """The file; for a per-robot file, ``robot`` is a known robot's name. Anything else
        (a Robot object, a typo) raises UnknownRobotError: its path would not exist, and it
        would read as a robot without the file."""
        if self.per_robot and robot is None:
            raise ValueError(f"{self.package}/{self.pattern} is per robot: name the robot")
        if self.per_robot and robot not in ROBOTS:
            raise UnknownRobotError(str(robot))
        relative = self.pattern.format(robot=robot) if self.per_robot else self.pattern
        return package_share_directory(self.package) / relative

    def robots(self) -> tuple[str, ...]:
        """The robots this file exists for (every robot for a file that is not per robot)."""
        if not self.per_robot:
            return ROBOTS
        return tuple(robot for robot in ROBOTS if self.path(robot).exists())


#: ROS parameters of the simulation node (per-robot values of its dataclasses' parameters).
SIM_NODE_PARAMETERS = RuntimeFile("humanoid_description", "robots/{robot}/sim.yaml", "humanoid_sim node", True)
#: ROS parameters of the hardware node's robot interface.
HW_NODE_PARAMETERS = RuntimeFile("humanoid_description", "robots/{robot}/hw.yaml", "humanoid_hw node", True)
#: Dynamixel bus parameters (DynamixelConfig); also ROS parameters of the hardware node.
HW_BUS_CONFIGURATION = RuntimeFile("humanoid_description", "robots/{robot}/bus.yaml", "humanoid_hw driver", False)
#: Motion playback (sampling, time scaling, transitions).
MOTION_PLAYBACK = RuntimeFile("humanoid_core", "config/motion.yaml", "trajectory generator, motion tools",
                              False)
#: ROS parameters of the control-layer nodes, one section per node name (``balance_monitor:``,
#: ``self_collision_checker:``).
CONTROL_NODE_PARAMETERS = RuntimeFile("humanoid_description", "robots/{robot}/control.yaml", "control-layer nodes",
                                      True)
#: The robot model's configuration (joint order, feet, poses, actuators) and data files.
ROBOT_CONFIGURATION = RuntimeFile("humanoid_description", "robots/{robot}/robot.yaml", "robot model", False)
#: Joint <-> servo table of a Dynamixel robot.
JOINT_MAP = RuntimeFile("humanoid_description", "robots/{robot}/joint_map.yaml", "robot model, hw driver", False)

#: The postures protocol of a robot (humanoid_experiments.postures).
POSTURES_PROTOCOL = RuntimeFile("humanoid_description", "robots/{robot}/postures.yaml", "postures protocol", False)
#: The quadruped report's CPG study: oscillator network, models, experiments, swarm, fitness
#: (humanoid_core.quadruped_gaits.cpg_models).
CPG_CONFIGURATION = RuntimeFile("humanoid_description", "robots/{robot}/cpg.yaml", "CPG gaits, gait search", False)
#: The robot's motion library (a folder of keyframe files, not one YAML file).
MOTION_LIBRARY = RuntimeFile("humanoid_description", "robots/{robot}/motions", "trajectory generator", False)

RUNTIME_FILES: tuple[RuntimeFile, ...] = (
    SIM_NODE_PARAMETERS, HW_NODE_PARAMETERS, HW_BUS_CONFIGURATION, MOTION_PLAYBACK, CONTROL_NODE_PARAMETERS,
    ROBOT_CONFIGURATION, JOINT_MAP, POSTURES_PROTOCOL, CPG_CONFIGURATION)
