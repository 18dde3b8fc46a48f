"""Robot-level configuration (``robots/<robot>/robot.yaml``) as typed objects."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from humanoid_description import units
from humanoid_description.joint_map import JointMap
from humanoid_description.robots import robot_document, robot_files
from humanoid_description.support import rectangle_corners


@dataclass(frozen=True)
class Foot:
    """One foot: its link, its sole frame and its shape (m).

    A flat foot (``radius`` 0, the humanoids) has a rectangular sole of ``length`` x
    ``width`` centred on its sole frame, which lies on the ground plane when the foot
    stands flat. A ball foot (``radius`` > 0, the quadruped) is a sphere centred on its
    sole frame: it touches the ground at one point, the ball's lowest, whatever way the
    leg leans.
    """

    side: str
    link: str
    sole: str
    length: float
    width: float
    radius: float = 0.0

    @property
    def is_ball(self) -> bool:
        return self.radius > 0.0

    def load(self, force: Sequence[float]) -> float:
        """What the foot carries (N), from the ground's force on it in its sole frame (as
        ``<side>_foot/wrench`` gives it): a flat sole's is the component along its normal; a
        ball's sole frame turns with the leg, so its z is not the ground's normal, and the
        ball's load is the whole force (the ground only pushes, at the ball's lowest point)."""
        if self.is_ball:
            return math.hypot(*force)
        return float(force[2])

    def contact_points(self, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
        """Where this foot can touch a ground whose normal is +z of the frame the sole frame's
        ``rotation`` and ``translation`` are given in: the sole's corners (4, 3), or the
        ball's lowest point (1, 3)."""
        if self.is_ball:
            return np.array([[translation[0], translation[1], translation[2] - self.radius]])
        return (rotation @ rectangle_corners(self.length, self.width).T).T + translation


@dataclass(frozen=True)
class ActuatorLimits:
    """Speed and acceleration every joint of the robot can reach (rad/s, rad/s^2)."""

    max_velocity: float
    max_acceleration: float


def _actuator_limits(section: dict[str, Any]) -> ActuatorLimits:
    """Read the ``actuators`` section: SI units, or HOAP-2 pulses per ms (and ms^2)."""
    if "max_speed_pulse_per_ms" in section:
        return ActuatorLimits(
            max_velocity=units.hoap2_pulse_rate_to_rad_s(float(section["max_speed_pulse_per_ms"])),
            max_acceleration=units.hoap2_pulse_accel_to_rad_s2(float(section["max_accel_pulse_per_ms2"])))
    return ActuatorLimits(max_velocity=float(section["max_speed_rad_s"]),
                          max_acceleration=float(section["max_accel_rad_s2"]))


@dataclass(frozen=True)
class RobotConfig:
    """What every package needs to know about a robot besides its URDF."""

    name: str
    joints: tuple[str, ...]
    feet: dict[str, Foot]
    imu_frame: str
    home_pose: str
    poses: dict[str, dict[str, float]]  # rad, every joint present
    joint_map: JointMap | None
    actuators: ActuatorLimits
    #: Distance (m) two links must keep for a configuration to count as free of self-collision.
    safety_distance: float
    #: The robot's own motion file formats by file suffix (``.csv`` -> ``hoap2_csv``), read by
    #: :mod:`humanoid_core.motion.library` through the format registry
    #: (:mod:`humanoid_core.motion.formats`); keyframe YAML files are every robot's.
    motion_formats: dict[str, str]
    #: The robot's own Python package (``humanoid_robot_<robot>``: its formats, its tools), which
    #: registers the formats ``motion_formats`` names; None: the robot has no code of its own.
    package: str | None
    sections: dict[str, Any] = field(repr=False)  # robot-specific sections, as read

    def pose(self, name: str) -> dict[str, float]:
        """Named pose as joint -> rad; KeyError names the known poses."""
        try:
            return dict(self.poses[name])
        except KeyError:
            raise KeyError(f"robot {self.name} has no pose {name!r} "
                           f"(known: {', '.join(self.poses)})") from None

    @property
    def home(self) -> dict[str, float]:
        return self.pose(self.home_pose)

    @property
    def ball_feet(self) -> bool:
        """Whether the robot stands on balls (the quadruped) rather than flat soles: all its
        feet are one or the other (checked when the config is read)."""
        return any(foot.is_ball for foot in self.feet.values())


@functools.cache
def load_config(robot: str) -> RobotConfig:
    """Read and check ``robot.yaml`` (and the joint map when the robot has one)."""
    files = robot_files(robot)
    data = robot_document(robot)
    joints = tuple(data["joints"])
    joint_map_path = files.config_file("joint_map.yaml")
    joint_map = JointMap.from_file(joint_map_path) if joint_map_path.exists() else None

    poses: dict[str, dict[str, float]] = {}
    for name, values in (data.get("poses") or {}).items():
        pose = dict.fromkeys(joints, 0.0)
        for joint, degrees in (values or {}).items():
            _require_joint(joint, joints, f"{files.config}: pose {name}")
            pose[joint] = math.radians(float(degrees))
        poses[name] = pose
    for name, values in (data.get("poses_raw") or {}).items():
        if joint_map is None:
            raise ValueError(f"{files.config}: poses_raw needs a joint_map.yaml")
        pose = dict.fromkeys(joints, 0.0)
        for servo_id, raw in (values or {}).items():
            servo = joint_map.by_id(int(servo_id))
            pose[servo.joint] = servo.raw_to_radians(float(raw))
        poses[name] = pose
    if data["home_pose"] not in poses:
        raise ValueError(f"{files.config}: home_pose {data['home_pose']!r} is not a pose")
    poses.setdefault("home", poses[data["home_pose"]])  # every robot has a "home" pose

    feet = {side: Foot(side=side, **spec) for side, spec in data["feet"].items()}
    if len({foot.is_ball for foot in feet.values()}) > 1:
        raise ValueError(f"{files.config}: feet must be all flat soles or all balls")
    known = {"name", "description", "srdf", "joints", "feet", "imu_frame", "home_pose",
             "poses", "poses_raw", "actuators", "self_collision", "motion_formats", "package"}
    safety_distance = float(data["self_collision"]["safety_distance"])
    if not 0.0 <= safety_distance < 0.05:
        raise ValueError(f"{files.config}: self_collision.safety_distance {safety_distance} m is not in [0, 0.05)")
    return RobotConfig(
        name=data["name"], joints=joints, feet=feet, imu_frame=data["imu_frame"],
        home_pose=data["home_pose"], poses=poses, joint_map=joint_map,
        actuators=_actuator_limits(data["actuators"]), safety_distance=safety_distance,
        motion_formats={str(suffix).lower(): str(kind) for suffix, kind in (data.get("motion_formats") or {}).items()},
        package=str(data["package"]) if data.get("package") else None,
        sections={k: v for k, v in data.items() if k not in known})


def _require_joint(joint: str, joints: tuple[str, ...], where: str) -> None:
    if joint not in joints:
        raise ValueError(f"{where}: unknown joint {joint!r}")
