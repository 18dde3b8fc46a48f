"""The simulation node's own ROS parameters: the dataclasses they are declared from
(``declare_dataclass``), importable without PyBullet, so that a command can check
parameter names before it starts a simulation (``humanoid postures --set``).
"""

from __future__ import annotations

from dataclasses import dataclass

from humanoid_control.parameter_fields import documented
from humanoid_control.ros import driver_node
from humanoid_sim.servo_profiles import ServoParameters
from humanoid_sim.transmission import TransmissionParameters


@dataclass(frozen=True)
class SimParameters:
    """World parameters: ROS parameters of the simulation node, declared from these fields
    (defaults here, per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``)."""

    physics_rate: float = documented(1000.0, "Hz, fixed physics step rate (independent of control_rate)")
    real_time_factor: float = documented(1.0, "simulated seconds per wall second; 0 = as fast as possible")
    gui: bool = documented(False, "open the PyBullet window (needs a display)")
    ground_friction: float = documented(0.995, "Coulomb friction coefficient of the foot-ground contact")
    contact_force_threshold: float = documented(1.0, "N, a foot carrying more is in contact")
    fall_tilt: float = documented(45.0, "deg, trunk tilt that counts as a fall")
    solver_iterations: int = documented(50, "PyBullet constraint solver iterations per step")
    drop_height: float = documented(0.0005, "m, the robot is placed this far above the ground on reset")

    def __post_init__(self) -> None:
        if not self.physics_rate > 0.0:
            raise ValueError(f"parameter physics_rate must be > 0, got {self.physics_rate}")
        if self.real_time_factor < 0.0:
            raise ValueError(f"parameter real_time_factor must be >= 0, got {self.real_time_factor}")
        if self.solver_iterations < 1:
            raise ValueError(f"parameter solver_iterations must be >= 1, got {self.solver_iterations}")

    @property
    def physics_period(self) -> float:
        return 1.0 / self.physics_rate


@dataclass(frozen=True)
class SimulationPublishingParameters:
    """Rates of what only the simulation node publishes (ROS parameters of the node)."""

    clock_rate: float = documented(200.0, "Hz, simulated time on /clock")
    ground_truth_rate: float = documented(50.0, "Hz, ground_truth/base_pose, ground_truth/base_twist and fallen")

    def __post_init__(self) -> None:
        for name in ("clock_rate", "ground_truth_rate"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class LockstepParameters:
    """Lockstep (humanoid_control.loop.lockstep): the simulation waits for its participants."""

    lockstep: bool = documented(False, "run each control cycle only when every lockstep participant has answered "
                                       "the state published last (lockstep/ready)")
    lockstep_participants: str = documented(
        "", "participants waited for from the start, comma-separated node names (others join with their first "
            "answer)")
    lockstep_timeout: float = documented(5.0, "s (wall), a silent participant is reported by name this often while "
                                              "the simulation waits for it")

    def __post_init__(self) -> None:
        if not self.lockstep_timeout > 0.0:
            raise ValueError(f"parameter lockstep_timeout must be > 0, got {self.lockstep_timeout}")

    @property
    def participants(self) -> tuple[str, ...]:
        return tuple(name.strip() for name in self.lockstep_participants.split(",") if name.strip())


#: (prefix, dataclass) of every parameter group the simulation node adds to a driver node's.
PARAMETER_GROUPS: tuple[tuple[str, type], ...] = (
    ("", SimParameters), ("servo.", ServoParameters), ("transmission.", TransmissionParameters),
    ("", SimulationPublishingParameters), ("", LockstepParameters))


def parameter_names() -> list[str]:
    """Every ROS parameter the simulation node declares (ros2 param list, less rclpy's own)."""
    return driver_node.parameter_names(PARAMETER_GROUPS)
