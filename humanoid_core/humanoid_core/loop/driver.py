"""The robot driver abstraction: what the simulator and the hardware both implement.

The lesson of the virtual humanoid platform (Kanehiro et al.): one adapter API, two
back ends, and time handled inside the adapter. A driver knows nothing of ROS; the
shared control loop and ROS front (:mod:`humanoid_core.loop.control_loop`,
:mod:`humanoid_control.ros.robot_interface`) talk to whichever driver they are given
through this interface only.

All joint arrays are in the robot's canonical joint order (``RobotModel.joints``),
in URDF units (rad, rad/s, N m).

The control loop (:mod:`humanoid_core.loop.control_loop`) is::

    driver.start()
    while running:
        driver.sync(period)      # sim: advance physics by one period; hw: wait for the deadline
        state = driver.read()
        driver.write(command_for(state))
    driver.close()

Deadlines are on the driver's own clock: simulated time, or a monotonic clock on
hardware (never the wall clock, which can step). The front maps it to ROS time.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np


@dataclass
class JointState:
    """Measured state of every joint at ``stamp`` (seconds on the driver's clock)."""

    stamp: float
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    #: False for a joint whose reading is stale (e.g. a servo that stopped answering).
    valid: np.ndarray


@dataclass
class JointCommand:
    """Position set-point for every joint, with an optional velocity per joint.

    ``velocity`` is the desired joint velocity at the set-point (feed-forward, or
    the speed at which a position servo should move there); ``None`` lets the
    driver use its own profile.
    """

    position: np.ndarray
    velocity: np.ndarray | None = None


@dataclass(frozen=True)
class ImuReading:
    """Orientation (quaternion x, y, z, w), angular velocity and linear acceleration."""

    frame: str
    orientation: tuple[float, float, float, float]
    angular_velocity: tuple[float, float, float]
    linear_acceleration: tuple[float, float, float]


@dataclass(frozen=True)
class FootReading:
    """Force/torque under one foot, in the sole frame, and whether it touches the ground."""

    side: str  # "right" or "left"
    frame: str
    force: tuple[float, float, float]
    torque: tuple[float, float, float]
    contact: bool


@dataclass
class SensorReadings:
    """Optional sensors; a driver fills what its robot has."""

    stamp: float
    imu: ImuReading | None = None
    feet: list[FootReading] = field(default_factory=list)


class Level(enum.IntEnum):
    """Severity of a status entry (same values as diagnostic_msgs/DiagnosticStatus)."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


@dataclass(frozen=True)
class StatusEntry:
    """One line of driver health, published on ``diagnostics`` by the front."""

    name: str
    level: Level
    message: str
    values: dict[str, str] = field(default_factory=dict)


class DriverError(RuntimeError):
    """A driver cannot start or has lost the robot; the message says what and why."""


class TorqueUnsupportedError(DriverError):
    """The driver cannot release its joints while it runs (:meth:`RobotDriver.set_torque`)."""


class RobotDriver(ABC):
    """Back end of the shared robot interface (simulator or hardware)."""

    #: The joints this driver moves, in canonical order.
    joint_names: tuple[str, ...]
    #: True when the driver's clock is the graph's ROS time (a simulator, which publishes
    #: it on /clock); False for a monotonic clock that the front maps to ROS time.
    clock_is_ros_time: bool = False

    @abstractmethod
    def start(self) -> JointState:
        """Bring the robot up (open ports, load the world ...) and return its state."""

    @abstractmethod
    def sync(self, period: float) -> None:
        """Let one control period elapse: the simulator steps its physics, the hardware
        waits for the next deadline. Time handling lives here, not in the controller."""

    @abstractmethod
    def read(self) -> JointState:
        """The latest joint state."""

    @abstractmethod
    def write(self, command: JointCommand) -> None:
        """Send set-points (already validated and within limits) to every joint."""

    #: True when :meth:`set_torque` can release the joints while the driver runs.
    releases_torque: bool = False

    def set_torque(self, enabled: bool) -> None:
        """Release every joint (``False``: torque off, the robot goes limp under gravity) or
        take them again (``True``: the motors hold the set-point written last). Called from
        the control loop's thread only, between cycles; the loop writes no set-point while the
        joints are released and, before it takes them again, writes set-points at the measured
        positions (no jump to an old one). Raises :class:`TorqueUnsupportedError` where the
        driver has no torque-off command, :class:`DriverError` when it could not be sent."""
        raise TorqueUnsupportedError(f"{type(self).__name__} has no torque-off command: its joints cannot be "
                                     "released while it runs")

    def read_sensors(self) -> SensorReadings | None:
        """IMU and foot sensors, where the robot has them."""
        return None

    def status(self) -> list[StatusEntry]:
        """Health of the driver (joints, bus, loop timing) for diagnostics."""
        return []

    def now(self) -> float:
        """Current time on the driver's clock (seconds), the clock of ``JointState.stamp``."""
        return self.read().stamp

    @abstractmethod
    def close(self) -> None:
        """Release the robot (hold or go limp, as configured) and free resources."""
