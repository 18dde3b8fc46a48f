"""Parameters of the balance monitor: one frozen dataclass, per-robot values in YAML.

The node declares one ROS parameter per field (same name); the per-robot values are
the ``balance_monitor:`` section of ``humanoid_description/robots/<robot>/control.yaml`` (a ROS
parameter file, passed with ``--params-file`` by the launch files and the CLI), and
values given on the command line or by a launch file win over both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_parameters
from humanoid_description import LEVEL_ANGLE_DEG, LEVEL_HEIGHT

NODE_NAME = "balance_monitor"


@dataclass(frozen=True)
class BalanceParameters:
    """What a user may tune; defaults are generic, each robot's ``control.yaml`` has its own."""

    #: m: ``stable`` needs the CoM projection at least this far inside the support polygon.
    min_margin: float = 0.01
    #: m: after a warning, the margin must be back above min_margin + this before the
    #: recovery is logged (keeps a margin hovering at the threshold from flooding the log).
    warning_hysteresis: float = 0.002
    #: s (robot time): the margin must stay back above min_margin + warning_hysteresis this
    #: long before the recovery is logged: a gait whose support comes and goes every step (a
    #: trot on a diagonal) logs one warning while it plays and one recovery after, with how
    #: often the margin went under and its lowest (0: the recovery logged at once).
    warning_clear_time: float = 1.0
    #: Hz: natural frequency of the critically damped second-order low-pass on the CoM
    #: whose acceleration feeds the cart-table ZMP. Slow CoM motions come out delayed by
    #: 2 / (2 pi f) (80 ms at 4 Hz).
    com_filter_cutoff: float = 4.0
    #: Hz: the measured ZMP (centre of pressure of the foot wrenches) goes through the same
    #: kind of low-pass (0 = raw). The simulated feet vibrate at about 20 Hz with the
    #: stiff servos, which moves the raw centre of pressure by +-2 cm.
    zmp_measured_cutoff: float = 4.0
    #: N: a foot whose wrench carries more vertical force is loaded (contact, measured ZMP).
    foot_load_threshold: float = 5.0
    #: s: IMU, foot, contact and ground-truth readings further than this from the
    #: joint_states stamp are not used (the monitor falls back as if there were none).
    sensor_timeout: float = 0.1
    #: s of wall time: a joint state whose sensor readings of the same instant are late (a
    #: sensor that served the previous joint state has none yet within sensor_timeout of
    #: this one) waits this long at most for them before it is answered without them.
    sensor_patience: float = 1.0
    #: Use ``ground_truth/base_pose`` (simulation) for the base placement when it arrives.
    use_ground_truth: bool = True
    #: Use ``imu/data`` orientation for the base when there is no ground truth.
    use_imu: bool = True
    #: Use ``<side>_foot/wrench`` and ``<side>_foot/contact`` when they arrive.
    use_foot_sensors: bool = True
    #: Without foot sensors, a sole touches the ground when its lowest corner is within
    #: this height of it (m) ...
    contact_height: float = LEVEL_HEIGHT
    #: ... and, with flat feet on flat ground assumed, both soles support the robot when
    #: they are parallel within this angle (deg) and level within contact_height.
    level_angle: float = LEVEL_ANGLE_DEG
    #: The support polygon (and the flat-feet support) is worked out again only when a sole
    #: moved in the ground frame by more than this relative precision (Pinocchio's
    #: SE3.isApprox: 1e-4 of a 10 cm sole offset is 10 um), or the contacts changed.
    polygon_precision: float = 1e-4
    #: m/s^2
    gravity: float = 9.81
    #: Hz (robot time) of balance_markers; balance_state answers every joint_states.
    marker_rate: float = 20.0
    #: balance_markers in balance_state's ground frame instead of the URDF root link. In the
    #: root link (default) RViz shows them over the robot with robot_state_publisher's TF
    #: alone; the ground frame suits a graph that also publishes TF from the world frame.
    markers_in_ground_frame: bool = False
    #: Hz of the diagnostics entry.
    diagnostics_rate: float = 1.0
    #: joint_states messages the subscription queues while a computation runs.
    queue_depth: int = 100
    fall_tilt: float = documented(45.0, "deg, an IMU's trunk tilt beyond which the robot has fallen (fall_state)")
    fall_tilt_hysteresis: float = documented(
        10.0, "deg, a fallen robot is up again when its trunk tilt is back below fall_tilt minus this")
    fall_margin: float = documented(
        0.05, "m, without an IMU: the model's CoM this far outside the reach polygon (the hull of every foot within "
              "fall_step_height of the lowest, flat feet assumed) is a fall")
    fall_step_height: float = documented(
        0.04, "m, without an IMU: a foot this close to the lowest one counts in the reach polygon (a gait's swing "
              "foot is a foot the robot puts down within the step)")
    fall_hold: float = documented(
        0.1, "s (robot time), without an IMU: the CoM must stay beyond fall_margin this long before it is a fall "
             "(one odd reading is not)")
    fall_state_rate: float = documented(
        10.0, "Hz (robot time), fall_state while it does not change (a change is published at once)")

    def __post_init__(self) -> None:
        positive = ("com_filter_cutoff", "sensor_timeout", "sensor_patience", "gravity", "marker_rate",
                    "diagnostics_rate", "queue_depth", "level_angle", "fall_tilt", "fall_margin", "fall_state_rate",
                    "fall_step_height")
        non_negative = ("min_margin", "warning_hysteresis", "warning_clear_time", "foot_load_threshold",
                        "contact_height", "polygon_precision", "zmp_measured_cutoff", "fall_tilt_hysteresis",
                        "fall_hold")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        for name in non_negative:
            if not getattr(self, name) >= 0:
                raise ValueError(f"parameter {name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> BalanceParameters:
        """The robot's values from its parameter file (for in-process use: tests, benchmark)."""
        return control_node_parameters(cls, robot, NODE_NAME, **overrides)


