"""Parameters of the shared robot interface (control loop and ROS front), one typed source.

Every field is a ROS parameter of a driver node (sim and hw), declared from this
dataclass with its default (:func:`humanoid_control.ros.parameters.declare_dataclass`);
a robot's parameter file sets per-robot values, the command line or a launch file
overrides them. The description of each field is the parameter's description.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from humanoid_core.parameter_fields import documented


@dataclass(frozen=True)
class InterfaceParameters:
    """ROS parameters of the robot interface (control loop and front)."""

    control_rate: float = documented(200.0, "Hz, control loop: trajectory sampling and driver writes")
    publish_rate: float = documented(100.0, "Hz, joint_states and sensors")
    feedback_rate: float = documented(20.0, "Hz, follow_joint_trajectory feedback")
    diagnostics_rate: float = documented(1.0, "Hz, diagnostics")
    goal_position_tolerance: float = documented(0.05, "rad, goal tolerance where a goal gives 0")
    path_position_tolerance: float = documented(
        0.0, "rad, path tolerance where a goal gives 0; 0 = not checked")
    goal_time_tolerance: float = documented(1.0, "s, time allowed after the end to reach the goal (goal gives 0)")
    start_tolerance: float = documented(
        0.1, "rad, how far a trajectory point at time 0 may be from the measured position")
    max_trajectory_points: int = documented(
        5000, "longest trajectory accepted (points); longer ones are rejected with INVALID_GOAL (rclpy converts "
        "a received trajectory holding the GIL, about 0.1 ms per point, which the control thread waits for)")
    max_trajectory_duration: float = documented(
        600.0, "s, longest trajectory accepted, from its receipt (or later header stamp) to its last point; longer "
        "ones are rejected with INVALID_GOAL. The self-collision guard checks the whole path before it starts "
        "(self_collision_max_trajectory_samples); library motions last seconds, a walk is sent 0.4 s at a time")
    publish_robot_description: bool = documented(
        True, "publish robot_description (false where robot_state_publisher owns it, as under ros2 launch)")
    loop_nice: int = documented(
        -5, "scheduling priority (nice value, -20..19) of the control loop's process, below the front's 0 so that "
        "the front's handling of large commands never takes the CPU from the loop; where the kernel schedules by "
        "session (autogroup) the node's session gets this nice too, since a process's nice then weighs only within "
        "its session; a value the process may not set (an unprivileged user and a negative value) is logged and "
        "the loop runs at the default priority. On the robot the control container runs at it too (its "
        "controllers stream set-points to the loop ahead of its clock: docs/graph_cost.md). A simulation at "
        "real_time_factor 0 (as fast as possible, lockstep's default) keeps the default priority: it has no "
        "deadline, and raised it took the CPU from the nodes it waits for")
    world_on_one_cpu: bool = documented(
        True, "a simulated world of several robots (humanoid sim --count N) runs its loops' process on one CPU, "
        "one no other loop of this machine runs on, else the one it starts on: its threads (a control thread per "
        "robot, their pipes' and publishers') take turns at the interpreter lock, and spread over two cores each "
        "turn waited for the other core while the one it left went idle (docs/graph_cost.md, \"One CPU for a "
        "world\"); false: the kernel's choice")
    unpaced_loop_on_one_cpu: bool = documented(
        True, "a simulation at real_time_factor 0 (as fast as possible, lockstep's default) runs its loop's process "
        "on one CPU, as a world does: one no other loop of this machine runs on (a lock file per CPU in the "
        "temporary directory), else any; the HOAP-2's lockstep walk ran about a tenth faster so "
        "(docs/graph_cost.md, \"One CPU for a lockstep loop\"); false: the kernel's choice. A loop kept to the "
        "wall clock stays with the kernel's choice (pinned, it gained nothing)")
    gil_turn_period: float = documented(
        0.05, "s, a control loop that keeps the CPU (a simulation at real_time_factor 0) sleeps 0.1 ms this often, "
        "so that the node's other threads (action feedback, cancels, services) get the interpreter lock")

    def __post_init__(self) -> None:
        for name in ("control_rate", "publish_rate", "feedback_rate", "diagnostics_rate", "gil_turn_period",
                     "max_trajectory_duration"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        if not -20 <= self.loop_nice <= 19:
            raise ValueError(f"parameter loop_nice must be within -20..19, got {self.loop_nice}")
        if not math.isfinite(self.max_trajectory_duration):
            raise ValueError(f"parameter max_trajectory_duration must be finite, got {self.max_trajectory_duration}")
        if self.max_trajectory_points < 1:
            raise ValueError(f"parameter max_trajectory_points must be >= 1, got {self.max_trajectory_points}")
        for name in ("goal_position_tolerance", "path_position_tolerance", "goal_time_tolerance",
                     "start_tolerance"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"parameter {name} must be >= 0, got {getattr(self, name)}")
