"""The simulation node's own ROS parameters: the dataclasses they are declared from
(``declare_dataclass``), importable without PyBullet, so that a command can check
parameter names before it starts a simulation (``humanoid postures --set``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from humanoid_core import documented
from humanoid_sim.servo_profiles import ServoParameters
from humanoid_sim.transmission import TransmissionParameters


@dataclass(frozen=True)
class SimParameters:
    """World parameters: ROS parameters of the simulation node, declared from these fields
    (defaults here, per-robot values in ``humanoid_description/robots/<robot>/sim.yaml``)."""

    physics_rate: float = documented(1000.0, "Hz, fixed physics step rate (independent of control_rate)")
    real_time_factor: float = documented(1.0, "simulated seconds per wall second; 0 = as fast as possible")
    pace_window: float = documented(5.0, "s of wall time over which a simulation at a real-time factor measures "
                                          "its pace (humanoid_sim.pace_watch)")
    pace_share: float = documented(
        0.8, "a simulation at a real-time factor that reaches less than this share of it over pace_window puts "
             "its control loop back at the default priority (from loop_nice): the machine cannot keep real "
             "time, and the raised loop only took the CPU from its own graph's nodes; 0: never")
    gui: bool = documented(False, "open the PyBullet window (needs a display)")
    ground_friction: float = documented(0.995, "Coulomb friction coefficient of the foot-ground contact")
    contact_force_threshold: float = documented(1.0, "N, a foot carrying more is in contact")
    fall_tilt: float = documented(45.0, "deg, trunk tilt that counts as a fall")
    solver_iterations: int = documented(50, "PyBullet constraint solver iterations per step")
    drop_height: float = documented(0.0005, "m, the robot is placed this far above the ground on reset")
    # PyBullet engine settings that trade accuracy for speed (humanoid_sim.physics_profiles);
    # a negative value keeps PyBullet's own default
    solver_residual_threshold: float = documented(
        -1.0, "the solver stops iterating below this residual (PyBullet: 1e-7); < 0: PyBullet's default")
    contact_erp: float = documented(-1.0, "error reduction of contacts per step, 0..1; < 0: PyBullet's default")
    friction_erp: float = documented(-1.0, "error reduction of friction per step, 0..1; < 0: PyBullet's default")
    global_cfm: float = documented(-1.0, "constraint force mixing (softness) of every constraint; < 0: PyBullet's "
                                         "default (0)")
    contact_breaking_threshold: float = documented(
        -1.0, "m, contact points farther apart than this are dropped (PyBullet: 0.02); < 0: PyBullet's default")
    enable_cone_friction: int = documented(-1, "1: implicit friction cone, 0: pyramid approximation; < 0: "
                                               "PyBullet's default (cone)")
    deterministic_overlapping_pairs: bool = documented(
        True, "sort the broad phase's pairs, so that a run gives the same result twice")

    def __post_init__(self) -> None:
        if not self.physics_rate > 0.0:
            raise ValueError(f"parameter physics_rate must be > 0, got {self.physics_rate}")
        if self.real_time_factor < 0.0:
            raise ValueError(f"parameter real_time_factor must be >= 0, got {self.real_time_factor}")
        if not self.pace_window > 0.0:
            raise ValueError(f"parameter pace_window must be > 0, got {self.pace_window}")
        if not 0.0 <= self.pace_share <= 1.0:
            raise ValueError(f"parameter pace_share must be within 0..1, got {self.pace_share}")
        if self.solver_iterations < 1:
            raise ValueError(f"parameter solver_iterations must be >= 1, got {self.solver_iterations}")
        for name in ("contact_erp", "friction_erp"):
            if getattr(self, name) > 1.0:
                raise ValueError(f"parameter {name} must be <= 1 (or < 0 for PyBullet's default), "
                                 f"got {getattr(self, name)}")
        if self.enable_cone_friction > 1:
            raise ValueError(f"parameter enable_cone_friction must be 0, 1 (or < 0 for PyBullet's default), "
                             f"got {self.enable_cone_friction}")

    def engine_settings(self) -> dict[str, float | int]:
        """Keyword arguments of ``pybullet.setPhysicsEngineParameter``: the solver, plus each
        engine setting given a value (those left negative keep PyBullet's default)."""
        settings: dict[str, float | int] = {"numSolverIterations": self.solver_iterations,
                                            "deterministicOverlappingPairs": int(self.deterministic_overlapping_pairs)}
        optional = {"solverResidualThreshold": self.solver_residual_threshold, "contactERP": self.contact_erp,
                    "frictionERP": self.friction_erp, "globalCFM": self.global_cfm,
                    "contactBreakingThreshold": self.contact_breaking_threshold,
                    "enableConeFriction": self.enable_cone_friction}
        settings.update({key: value for key, value in optional.items() if value >= 0})
        return settings

    @property
    def physics_period(self) -> float:
        return 1.0 / self.physics_rate


@dataclass(frozen=True)
class SimulationPublishingParameters:
    """Rates of what only the simulation node publishes (ROS parameters of the node)."""

    clock_rate: float = documented(100.0, "Hz, simulated time on /clock")
    ground_truth_rate: float = documented(50.0, "Hz, ground_truth/base_pose, ground_truth/base_twist and fallen")

    def __post_init__(self) -> None:
        for name in ("clock_rate", "ground_truth_rate"):
            if not getattr(self, name) > 0.0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class LockstepParameters:
    """Lockstep (humanoid_core.loop.lockstep): the simulation waits for its participants."""

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


@dataclass(frozen=True)
class ParamsFileParameters:
    """The simulation parameter file (humanoid_sim.params_file) the node loads at start-up."""

    params_file: str = documented("", "YAML file of simulation parameters (servo, transmission, contact, model "
                                      "corrections) over the robot's parameter file and physics profile; empty: none")


@dataclass(frozen=True)
class NoiseParameters:
    """Sensor noise of the simulated robot (ROS parameters ``noise.*``, model in
    :mod:`humanoid_sim.sensor_noise`): applied to the readings the driver produces, never to
    the physics nor to the ground truth. Off unless ``enabled``; seeded, so that two runs with
    the same seed and the same cycles read the same values."""

    enabled: bool = documented(False, "corrupt the joint, IMU and foot readings as the values below say")
    seed: int = documented(0, "seed of the noise generators (restarted at every reset of the simulation)")
    encoder_resolution: float = documented(0.0, "deg per encoder count: joint angles are read as whole counts "
                                                "from the joint's zero; 0 = not quantised")
    encoder_noise: float = documented(0.0, "deg, standard deviation of the Gaussian noise on each joint angle "
                                           "(added before quantisation)")
    velocity_noise: float = documented(0.0, "deg/s, standard deviation of the Gaussian noise on each joint velocity")
    gyro_noise: float = documented(0.0, "rad/s, standard deviation of the IMU's angular velocity noise, per axis")
    gyro_bias: tuple[float, ...] = documented((0.0, 0.0, 0.0), "rad/s, constant bias of the IMU's angular velocity "
                                                               "(x, y, z of the IMU frame)")
    accelerometer_noise: float = documented(0.0, "m/s^2, standard deviation of the IMU's linear acceleration noise, "
                                                 "per axis")
    accelerometer_bias: tuple[float, ...] = documented(
        (0.0, 0.0, 0.0), "m/s^2, constant bias of the IMU's linear acceleration (x, y, z of the IMU frame)")
    orientation_noise: float = documented(0.0, "deg, standard deviation of a random rotation of the IMU's "
                                               "orientation, per axis")
    foot_force_noise: float = documented(0.0, "N, standard deviation of the foot sensors' force noise, per axis")
    foot_torque_noise: float = documented(0.0, "N m, standard deviation of the foot sensors' torque noise, per axis")

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise ValueError(f"parameter noise.seed must be >= 0, got {self.seed}")
        for name in ("encoder_resolution", "encoder_noise", "velocity_noise", "gyro_noise", "accelerometer_noise",
                     "orientation_noise", "foot_force_noise", "foot_torque_noise"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter noise.{name} must be a finite number >= 0, got {value}")
        for name in ("gyro_bias", "accelerometer_bias"):
            value = getattr(self, name)
            if len(value) != 3 or not all(math.isfinite(v) for v in value):
                raise ValueError(f"parameter noise.{name} must be three finite numbers (x, y, z), got {list(value)}")


@dataclass(frozen=True)
class PushParameters:
    """Bounds of the ``apply_push`` service (ROS parameters ``push.*``): a request beyond them is
    refused, as a mistake (a force in the wrong unit, a duration in ms)."""

    max_force: float = documented(1000.0, "N, the largest push force accepted (the HOAP-2 weighs 68 N)")
    max_duration: float = documented(10.0, "s, the longest push accepted")

    def __post_init__(self) -> None:
        for name in ("max_force", "max_duration"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter push.{name} must be a finite number > 0, got {value}")


#: (prefix, dataclass) of every parameter group the simulation node adds to a driver node's.
PARAMETER_GROUPS: tuple[tuple[str, type], ...] = (
    ("", SimParameters), ("servo.", ServoParameters), ("transmission.", TransmissionParameters),
    ("", SimulationPublishingParameters), ("", LockstepParameters), ("", ParamsFileParameters),
    ("noise.", NoiseParameters), ("push.", PushParameters))


#: The node's parameter naming its physics profile (humanoid_sim.physics_profiles).
PHYSICS_PROFILE = "physics_profile"


def parameter_names() -> list[str]:
    """Every ROS parameter the simulation node declares (ros2 param list, less rclpy's own and
    the listing of the profiles, ``physics_profiles.<name>.<parameter>``). The driver node's
    module is imported here, not with this one: it brings rclpy, which the commands that only
    check a parameter file before starting a graph need not load."""
    from humanoid_control.ros import driver_node

    return [*driver_node.parameter_names(PARAMETER_GROUPS), PHYSICS_PROFILE]
