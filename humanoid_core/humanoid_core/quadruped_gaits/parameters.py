"""Parameters of the gait controller node: one frozen dataclass, per-robot values in YAML.

The node declares one ROS parameter per field (same name); the per-robot values are the
``gait_controller:`` section of ``humanoid_description/robots/<robot>/control.yaml``, and
values given on the command line or by a launch file win over both. Only robots with gaits
in their ``robot.yaml`` (``gaits.phases``) get the node.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_defaults
from humanoid_description import Robot, resolve_robot

if TYPE_CHECKING:  # the player imports the gaits and the kinematics: a process that only names the node
    from humanoid_core.quadruped_gaits.player import RunTiming  # (the graph's command) does without
    from humanoid_core.quadruped_gaits.stepping import Stepper

NODE_NAME = "gait_controller"
#: How a run's lead-in and return move the legs (parameter ``transition``).
TRANSITIONS = ("glide", "step")


@dataclass(frozen=True)
class GaitControllerParameters:
    """What a user may tune (SI units: s, rad/s, Hz); each field is a ROS parameter."""

    period: float = documented(
        0.01, "s between two set-points: the robot's control period, and the headless evaluation's (humanoid "
        "gaits, the gait search), so that a gait played here sends the set-points they measured")
    command_lead: float = documented(
        0.4, "s, set-points are computed this far ahead of the robot's clock and sent as a short trajectory "
        "(joint_trajectory), so that the gait goes on through a late or CPU-starved controller; also the delay "
        "before a cancel takes effect")
    send_period: float = documented(
        0.1, "s of robot time between two trajectories sent (each holds the set-points computed ahead; each "
             "is planned, checked against self-collision and recorded: docs/graph_cost.md)")
    start_duration: float = documented(
        1.0, "s, the lead-in from where the robot stands to the gait's first set-point (longer when a joint has "
        "far to go: see transition_speed)")
    stop_duration: float = documented(
        1.0, "s, the return from the gait's last set-point to the stance, at the end or on a cancel (longer when "
        "a joint has far to go)")
    transition_speed: float = documented(
        1.0, "rad/s, the fastest a joint moves in the lead-in and the return to the stance")
    stance: str = documented("home", "named pose (robot.yaml) the robot stands in after a gait")
    transition: str = documented(
        "glide", "how the lead-in and the return move the legs, unless the gait file says (transition): glide "
        "(every joint at once, feet on the ground: the standing feet slip, and the body turns a few degrees unseen "
        "by the odometry) or step (a leg at a time, the body first shifted over the three standing feet: "
        "humanoid_core/quadruped_gaits/stepping.py; only between poses on four feet at one height, else it "
        "glides; its shift is fitted on the flat trot, and it takes 4.4 s each way)")
    step_shift: float = documented(0.035, "m, with transition step: the feet move this far along the body before "
                                          "the front legs swing (forward) and before the back legs do (backward)")
    step_lift: float = documented(0.02, "m, with transition step: a swinging foot's rise")
    step_swing_duration: float = documented(0.5, "s, with transition step: one leg's swing")
    step_shift_duration: float = documented(0.6, "s, with transition step: a shift by step_shift (twice that from "
                                                 "one side to the other)")
    final_tolerance: float = documented(
        0.1, "rad: a gait goal ends SUCCESSFUL only once every joint is measured within this of the last set-point "
        "sent (allowed final_settle_time after it is due); else STOPPED, naming the joint (its set-points refused "
        "or late: the robot interface's log says why)")
    final_settle_time: float = documented(0.5, "s of robot time the joints have to reach the last set-point sent")
    feedback_rate: float = documented(5.0, "Hz, play_gait action feedback")
    diagnostics_rate: float = documented(1.0, "Hz, diagnostics")

    def __post_init__(self) -> None:
        for name in ("period", "send_period", "start_duration", "stop_duration", "transition_speed",
                     "feedback_rate", "diagnostics_rate", "final_tolerance"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        if self.transition not in TRANSITIONS:
            raise ValueError(f"parameter transition must be one of {', '.join(TRANSITIONS)}, got {self.transition!r}")
        for name in ("command_lead", "final_settle_time"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"parameter {name} must be >= 0, got {getattr(self, name)}")

    @property
    def timing(self) -> RunTiming:
        from humanoid_core.quadruped_gaits.player import RunTiming

        return RunTiming(self.start_duration, self.stop_duration, self.transition_speed)

    def stepper(self, model: Any, transition: str | None = None) -> Stepper | None:
        """The lead-in's and the return's stepper for ``model`` when ``transition`` (a gait file's;
        None: the parameter) is step, else None."""
        if (transition or self.transition) != "step":
            return None
        from humanoid_core.quadruped_gaits.stepping import SteppingSettings, robot_stepper

        settings = SteppingSettings(self.step_shift, self.step_lift, self.step_swing_duration, self.step_shift_duration)
        return robot_stepper(model, settings, self.period)

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> GaitControllerParameters:
        """The robot's values from its parameter file (for in-process use: tests, tools)."""
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in control_node_defaults(robot, NODE_NAME).items() if k in names}
        return cls(**{**values, **overrides})


def gaited_robot(robot: Robot | str) -> bool:
    """Whether the robot has gaits (robot.yaml ``gaits.phases``: the quadruped), and so a gait
    controller."""
    return resolve_robot(robot).has_gaits
