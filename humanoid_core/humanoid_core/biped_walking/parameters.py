"""Parameters of the walk controller: one frozen dataclass, per-robot values in YAML.

The node declares one ROS parameter per field (same name); the per-robot values are
the ``walk_controller:`` section of ``humanoid_description/robots/<robot>/control.yaml`` (a ROS
parameter file, passed with ``--params-file`` by the launch files and the CLI), and
values given on the command line or by a launch file win over both. The defaults
here are conservative generic values; each robot's file says why it differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from humanoid_core.biped_walking.footsteps import StepLimits
from humanoid_core.biped_walking.pattern import Timing
from humanoid_core.biped_walking.swing import SwingProfile
from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_defaults
from humanoid_description import Foot, Robot, resolve_robot

NODE_NAME = "walk_controller"


@dataclass(frozen=True)
class WalkParameters:
    """What a user may tune (SI units: m, s, rad); each field is a ROS parameter."""

    # -- gait ---------------------------------------------------------------------------
    step_period: float = documented(0.6, "s, one step: double support then single support")
    double_support_ratio: float = documented(0.25, "share of each step with both feet down, 0 < ratio < 1")
    start_duration: float = documented(
        0.8, "s, the first double support from standing (half of it with the ZMP reference still between "
        "the feet, so that the CoM starts first)")
    stop_duration: float = documented(0.6, "s, the last double support, back to between the feet")
    prepare_duration: float = documented(
        1.5, "s, the move from the standing posture to the walking posture (knees bent to com_height, the "
        "other joints to posture) before the first step; shorter when the robot is nearly there")
    com_height: float = documented(0.2, "m, constant CoM height while walking (the cart-table's z_c)")
    foot_height: float = documented(0.015, "m, how high the swing foot rises at mid-swing")
    swing_lift_share: float = documented(
        0.15, "share of the swing at each end in which the foot only rises (lands) before (after) moving "
        "horizontally, 0 <= share < 0.5: no scraping or sliding, but a shorter time for the step's way")
    swing_ramp_share: float = documented(
        0.5, "share of the swing foot's horizontal motion spent accelerating, and again braking, 0 < share <= "
        "0.5; cruising in between. 0.5: the minimum-jerk quintic, peak speed 1.875 x the mean; smaller, a "
        "lower peak (0.2: 1.23 x) for a harder start and stop. The swing leg's joints peak with the foot's speed")
    stance_width: float = documented(0.08, "m, lateral distance between the sole centres, feet side by side")
    min_foot_gap: float = documented(0.004, "m, the closest two soles may come to each other (step planning)")
    max_step_forward: float = documented(0.03, "m, largest forward displacement of the feet's centre per step")
    max_step_backward: float = documented(0.02, "m, largest backward displacement per step")
    max_step_lateral: float = documented(
        0.02, "m, largest sideways opening of the stance per step (every other step: the average speed is "
        "half of it per step period)")
    max_step_turn: float = documented(0.2, "rad, largest turn of a foot per step (every other step, as sideways)")
    linear_acceleration: float = documented(0.1, "m/s^2, how fast the walking velocity may change")
    angular_acceleration: float = documented(0.5, "rad/s^2, how fast the turning velocity may change")
    zmp_offset_x: float = documented(0.0, "m, ZMP reference in the support foot, forward of the sole centre")
    zmp_offset_y: float = documented(0.0, "m, ZMP reference in the support foot, inwards of the sole centre")
    trunk_pitch: float = documented(0.0, "rad, forward lean of the trunk while walking")
    posture: str = documented("home", "named pose (robot.yaml) the joints other than the legs hold while walking")

    # -- preview control ----------------------------------------------------------------
    period: float = documented(
        0.01, "s, control period of the walk: the pattern's sampling and one joint set-point each (the robot's "
        "control period: servos between set-points only interpolate)")
    preview_horizon: float = documented(1.2, "s, how far ahead the preview controller reads the ZMP reference")
    preview_error_weight: float = documented(1.0, "Kajita's cost: weight of the ZMP tracking error")
    preview_jerk_weight: float = documented(1e-6, "Kajita's cost: weight of the CoM jerk")

    # -- stabilisation (robots with an IMU / foot force sensors) --------------------------
    stabilize: bool = documented(
        True, "use the IMU and foot sensors where the robot has them (false, or no sensors: open loop)")
    tilt_feedback_gain: float = documented(
        0.0, "share of the trunk roll/pitch measured by the IMU (beyond the pattern's) given to the IK's trunk "
        "target, so that the soles stay flat on the ground under a leaning trunk (1 = all of it; 0 = off)")
    tilt_feedback_limit: float = documented(0.05, "rad, bound of the trunk correction")
    tilt_feedback_cutoff: float = documented(
        0.3, "Hz, low-pass on the measured tilt. A correction reaches the robot command_lead (and the transport) "
        "after the reading: only tilts slower than that can be corrected")
    zmp_feedback_gain: float = documented(
        0.0, "1/s, the CoM target moves against the error of the ZMP measured by the feet (0 = off)")
    zmp_feedback_limit: float = documented(0.01, "m, bound of the CoM correction")
    foot_load_threshold: float = documented(5.0, "N, a foot carrying less is left out of the measured ZMP")
    sensor_timeout: float = documented(0.1, "s, IMU and foot readings older than this are not used")

    # -- commands -----------------------------------------------------------------------
    cmd_vel_timeout: float = documented(0.5, "s, without a new cmd_vel for this long the walk stops")
    command_lead: float = documented(
        0.4, "s, set-points are computed this far ahead of the robot's clock and sent as a short trajectory "
        "(joint_trajectory), so that the robot walks on through a late or CPU-starved controller; also the "
        "delay before a new cmd_vel or a stop takes effect")
    send_period: float = documented(
        0.1, "s of robot time between two trajectories sent (each holds the set-points computed ahead; each "
             "is planned, checked against self-collision and recorded: at 0.05 s the HOAP-2's walk graph took "
             "about a tenth more CPU, docs/graph_cost.md)")
    max_goal_distance: float = documented(
        20.0, "m, farthest walk goal forward or backward; beyond, the goal is refused (INVALID_GOAL). A room or a "
        "corridor: the walk follows its planned footsteps without localisation (a few cm of drift per metre), "
        "and 20 m is minutes of walking for these robots; a unit slip (cm typed as m) is caught")
    max_goal_lateral: float = documented(
        5.0, "m, farthest walk goal sideways, either way; beyond, refused (sideways steps open every other step: "
        "5 m is minutes of walking)")
    goal_position_tolerance: float = documented(0.005, "m, the walk action's goal counts as reached within this")
    goal_turn_tolerance: float = documented(0.02, "rad, the walk action's goal counts as reached within this")
    final_tolerance: float = documented(
        0.1, "rad: a walk goal ends SUCCESSFUL only once every joint is measured within this of the walk's last "
        "set-point (allowed final_settle_time after it is due); else STOPPED, naming the joint (its set-points "
        "refused or late: the robot interface's log says why)")
    final_settle_time: float = documented(0.5, "s of robot time the joints have to reach the walk's last set-point")
    feedback_rate: float = documented(5.0, "Hz, walk action feedback")
    diagnostics_rate: float = documented(1.0, "Hz, diagnostics")

    def __post_init__(self) -> None:
        positive = ("step_period", "start_duration", "stop_duration", "prepare_duration", "com_height",
                    "stance_width", "max_step_forward", "max_step_backward", "max_step_lateral", "max_step_turn",
                    "linear_acceleration", "angular_acceleration", "period", "preview_horizon",
                    "preview_error_weight", "preview_jerk_weight", "tilt_feedback_cutoff",
                    "cmd_vel_timeout", "goal_position_tolerance", "max_goal_distance", "max_goal_lateral",
                    "goal_turn_tolerance", "feedback_rate", "diagnostics_rate", "send_period", "final_tolerance")
        for name in positive:
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        for name in ("max_goal_distance", "max_goal_lateral"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"parameter {name} must be finite, got {getattr(self, name)}")
        for name in ("foot_height", "min_foot_gap", "zmp_feedback_gain", "zmp_feedback_limit", "tilt_feedback_gain",
                     "tilt_feedback_limit", "foot_load_threshold", "command_lead", "sensor_timeout",
                     "final_settle_time"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"parameter {name} must be >= 0, got {getattr(self, name)}")
        if not 0.0 < self.double_support_ratio < 1.0:
            raise ValueError(f"double_support_ratio must be between 0 and 1, got {self.double_support_ratio}")
        if self.preview_horizon < self.period:
            raise ValueError("preview_horizon must be at least one period")
        if self.start_duration < self.step_period * self.double_support_ratio:
            raise ValueError("start_duration must be at least the double support of a step")
        if not abs(self.trunk_pitch) < math.pi / 2:
            raise ValueError(f"trunk_pitch must be within +-90 deg, got {self.trunk_pitch}")
        _ = self.swing_profile  # it checks the swing shares' ranges

    @property
    def timing(self) -> Timing:
        return Timing(self.step_period, self.double_support_ratio, self.start_duration, self.stop_duration)

    @property
    def swing_profile(self) -> SwingProfile:
        return SwingProfile(self.foot_height, self.swing_lift_share, self.swing_ramp_share)

    def step_limits(self, foot: Foot) -> StepLimits:
        return StepLimits(self.max_step_forward, self.max_step_backward, self.max_step_lateral, self.max_step_turn,
                          self.stance_width, foot.length, foot.width, self.min_foot_gap)

    @property
    def max_velocity(self) -> tuple[float, float, float]:
        """The fastest walk (vx, vy, wz): one step limit per step period (sideways and turning,
        every other step opens by twice the average)."""
        return (self.max_step_forward / self.step_period, self.max_step_lateral / (2.0 * self.step_period),
                self.max_step_turn / (2.0 * self.step_period))

    @property
    def acceleration(self) -> tuple[float, float, float]:
        return (self.linear_acceleration, self.linear_acceleration, self.angular_acceleration)

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> WalkParameters:
        """The robot's values from its parameter file (for in-process use: tests, tools)."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in control_node_defaults(robot, NODE_NAME).items() if k in names}
        return cls(**{**values, **overrides})


def walking_robot(robot: Robot | str) -> bool:
    """Whether the walk controller walks this robot: its parameter file has a
    ``walk_controller`` section (the bipeds; the quadruped has none)."""
    return resolve_robot(robot).configures(NODE_NAME)
