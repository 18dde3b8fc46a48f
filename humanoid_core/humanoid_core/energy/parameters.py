"""Parameters of the energy monitor: the current model's constants per robot, in YAML.

The node declares one ROS parameter per field (same name); the per-robot values are the
``energy_monitor:`` section of ``humanoid_description/robots/<robot>/control.yaml``, which
also says where each number comes from (the reference gives the model, not its constants).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_parameters

NODE_NAME = "energy_monitor"


@dataclass(frozen=True)
class EnergyParameters:
    """I = K * sum(|T_i|) + N * I_servo + I_controller, and the supply it is drawn from."""

    torque_to_current: float = documented(1.0, "A per N m, K: supply current per unit of joint torque")
    servo_idle_current: float = documented(0.05, "A, I_servo: one servo's supply current at no load")
    controller_current: float = documented(0.1, "A, I_controller: the controller board's supply current")
    supply_voltage: float = documented(12.0, "V, used when the robot reports no voltage of its own")
    servo_count: int = documented(0, "N, servos drawing I_servo; 0: one per joint of the robot's model")
    use_reported_voltage: bool = documented(
        True, "use the servos' own voltage readings (diagnostics, voltage_V) when the robot reports them")
    reported_voltage_timeout: float = documented(
        5.0, "s (wall), a servo voltage reading older than this is no longer used")
    max_integration_gap: float = documented(
        0.5, "s, two readings further apart are not integrated across (counted): a gap is unknown energy")
    diagnostics_rate: float = documented(1.0, "Hz, diagnostics")

    def __post_init__(self) -> None:
        for name in ("torque_to_current", "servo_idle_current", "controller_current"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
        for name in ("supply_voltage", "reported_voltage_timeout", "max_integration_gap", "diagnostics_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a finite number > 0, got {value}")
        if self.servo_count < 0:
            raise ValueError(f"parameter servo_count must be >= 0, got {self.servo_count}")

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> EnergyParameters:
        """The robot's values from its parameter file (for in-process use: tests)."""
        return control_node_parameters(cls, robot, NODE_NAME, **overrides)
