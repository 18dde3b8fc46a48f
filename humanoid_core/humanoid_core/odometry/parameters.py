"""Parameters of the odometry node (``odometry:`` in the robot's ``control.yaml``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_parameters

NODE_NAME = "odometry"


@dataclass(frozen=True)
class OdometryParameters:
    """Kinematic odometry (odom -> base_link) and the simulator's ground truth (world -> base_link)."""

    kinematic: bool = documented(True, "publish the kinematic odometry (odom, odom -> base_link on /tf)")
    ground_truth: bool = documented(
        False, "relay the simulator's ground truth as nav_msgs/Odometry and world -> base_link on /tf "
               "(the simulation's graph turns it on; a real robot has no such truth)")
    publish_tf: bool = documented(True, "publish the transforms on /tf (else the Odometry topics only)")
    odom_frame: str = documented("odom", "the odometry's fixed frame")
    world_frame: str = documented("world", "the ground truth's fixed frame (the simulator's)")
    base_frame: str = documented("base_link", "the robot's base frame (the URDF root)")
    use_imu: bool = documented(True, "the base's orientation from the IMU where the robot has one")
    stance_height: float = documented(
        0.004, "m, a foot on the ground stays on it while within this height of the lowest")
    landing_height: float = documented(
        0.001, "m, a foot that was off the ground stands again within this height of the lowest (and then "
               "anchors the odometry)")
    slip_speed: float = documented(
        0.03, "m/s, ball feet, three of them low: the one whose distances to the other two change fastest, "
              "if faster than this, moves (a swinging foot the levelling puts as low as the two standing): it "
              "is not standing")
    ball_rolling: bool = documented(
        True, "ball feet roll: a standing ball's centre moves its radius times its turn about the ground's "
              "horizontal axes (false: it stays where it came down)")
    slip_window: float = documented(0.1, "s, ball feet: the time over which a foot's motion is measured")
    imu_timeout: float = documented(0.1, "s, an IMU reading further than this from a joint state is not used")
    position_drift: float = documented(
        0.05, "share of the distance walked: the position's standard deviation grows by it (covariance)")
    heading_drift: float = documented(
        0.05, "rad per metre walked: the heading's standard deviation grows by it without an IMU")
    imu_heading_stddev: float = documented(0.02, "rad, the heading's standard deviation with the IMU")
    twist_stddev: float = documented(0.05, "m/s and rad/s, the twist's standard deviation (covariance)")
    twist_window: float = documented(0.1, "s, the twist is the base's motion over at least this time")

    def __post_init__(self) -> None:
        for name in ("stance_height", "landing_height", "slip_speed", "slip_window", "imu_timeout",
                     "imu_heading_stddev", "twist_stddev", "twist_window"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a finite number > 0, got {value}")
        for name in ("position_drift", "heading_drift"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
        for name in ("odom_frame", "world_frame", "base_frame"):
            if not getattr(self, name):
                raise ValueError(f"parameter {name} must name a frame")

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> OdometryParameters:
        """The robot's values from its parameter file (for in-process use: tests)."""
        return control_node_parameters(cls, robot, NODE_NAME, **overrides)
