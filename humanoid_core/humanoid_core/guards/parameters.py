"""The self-collision veto's parameters, apart from the veto: a driver node's front declares
them without loading the collision model (Coal, Pinocchio), which only its loop's process needs."""

from __future__ import annotations

from dataclasses import dataclass

from humanoid_core.parameter_fields import documented

#: The guard's ROS parameters are the robot interface's, with this prefix.
PARAMETER_PREFIX = "self_collision_"


@dataclass(frozen=True)
class SelfCollisionGuardParameters:
    """ROS parameters of the veto (declared by the driver nodes as ``self_collision_<field>``;
    per-robot values in the driver's parameter file)."""

    veto: bool = documented(True, "refuse trajectories and set-points that would bring two links closer than "
                                  "the safety distance (false: every command goes through unchecked)")
    safety_distance: float = documented(
        -1.0, "m, the distance two links must keep; < 0: the robot's (robot.yaml self_collision.safety_distance)")
    trajectory_sample_period: float = documented(
        0.002, "s, spacing of the samples a trajectory's path is checked at (it is cleared between them too)")
    max_trajectory_samples: int = documented(
        300_000, "most samples of one trajectory's check (its duration / trajectory_sample_period; 300000: the "
        "600 s of max_trajectory_duration every 2 ms: seconds of an idle core, tens on a loaded one); a path "
        "needing more is refused with INVALID_GOAL")
    warning_period: float = documented(1.0, "s, at most one warning per period while set-points are refused")

    def __post_init__(self) -> None:
        if not self.trajectory_sample_period > 0.0 or not self.warning_period >= 0.0:
            raise ValueError("parameters self_collision_trajectory_sample_period must be > 0 and "
                             "self_collision_warning_period >= 0")
        if self.max_trajectory_samples < 1:
            raise ValueError(f"parameter self_collision_max_trajectory_samples must be >= 1, got "
                             f"{self.max_trajectory_samples}")
