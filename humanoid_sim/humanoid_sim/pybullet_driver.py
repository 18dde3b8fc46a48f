"""The simulated robot: a PyBullet world behind the RobotDriver interface.

The physics steps at a fixed period (default 1 ms) independent of the control rate;
``sync(period)`` advances the world by one control period and, when a real-time
factor is set, waits so that simulated time runs that many times faster than the
wall clock (0 = as fast as possible). Time is the simulated time, starting at 0.

Joints follow their commands through a servo model (:mod:`humanoid_sim.servo_models`)
and PyBullet's torque-limited position motors; URDF joint limits are enforced by
PyBullet's limit constraints. Sensors: an IMU at the model's IMU frame, and the
ground reaction wrench under each foot from the contact points.
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import pybullet

from humanoid_control.driver import (
    DriverError,
    FootReading,
    ImuReading,
    JointCommand,
    JointState,
    Level,
    RobotDriver,
    SensorReadings,
    StatusEntry,
)
from humanoid_description.model import RobotModel
from humanoid_sim.servo_models import ServoBank, ServoParameters

GRAVITY = 9.81


@dataclass(frozen=True)
class SimParameters:
    """World parameters (the node reads them from the robot's sim YAML)."""

    physics_period: float = 0.001  # s
    real_time_factor: float = 1.0  # 0 = as fast as possible
    gui: bool = False
    ground_friction: float = 0.995  # Coulomb coefficient of the foot-ground contact
    contact_force_threshold: float = 1.0  # N, a foot carrying more is "in contact"
    fall_tilt: float = 45.0  # deg, trunk tilt that counts as a fall
    solver_iterations: int = 50
    drop_height: float = 0.0005  # m, placed this far above the ground on reset


@dataclass(frozen=True)
class FallState:
    """Has the robot fallen, and why."""

    fallen: bool
    tilt_deg: float
    touching: tuple[str, ...]  # links other than the feet touching the ground

    @property
    def reason(self) -> str:
        if not self.fallen:
            return ""
        parts = []
        if self.touching:
            parts.append(f"{', '.join(self.touching)} touching the ground")
        parts.append(f"trunk tilted {self.tilt_deg:.1f} deg")
        return "; ".join(parts)


class PyBulletDriver(RobotDriver):
    """A robot in a PyBullet world (one private physics client per driver)."""

    def __init__(self, model: RobotModel, servo: ServoParameters, params: SimParameters | None = None) -> None:
        self.model = model
        self.params = params or SimParameters()
        self.joint_names = model.joints.names
        self.servos = ServoBank(servo, len(self.joint_names))
        self._lock = threading.RLock()
        self._client: int | None = None
        self._body = -1
        self._ground = -1
        self._time = 0.0
        self._steps = 0
        self._paused = threading.Event()
        self._step_budget = 0
        self._step_done = threading.Condition(self._lock)
        self._wall_origin = (time.monotonic(), 0.0)
        self._state: JointState | None = None
        self._imu_previous: tuple[float, np.ndarray, np.ndarray] | None = None  # time, velocity, acceleration
        self._targets_sent = False
        self._written: JointCommand | None = None
        self._contacts: list = []
        self._contacts_time = -1.0
        self._tmpdir = tempfile.TemporaryDirectory(prefix="humanoid_sim_")

    # -- life cycle ---------------------------------------------------------------
    def start(self) -> JointState:
        with self._lock:
            mode = pybullet.GUI if self.params.gui else pybullet.DIRECT
            self._client = pybullet.connect(mode)
            if self._client < 0:
                raise DriverError("cannot connect to PyBullet (GUI needs a display)")
            c = self._client
            pybullet.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=c)
            pybullet.setTimeStep(self.params.physics_period, physicsClientId=c)
            pybullet.setPhysicsEngineParameter(numSolverIterations=self.params.solver_iterations,
                                               deterministicOverlappingPairs=1, physicsClientId=c)
            plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=c)
            self._ground = pybullet.createMultiBody(0.0, plane, physicsClientId=c)
            pybullet.changeDynamics(self._ground, -1, lateralFriction=1.0, restitution=0.0, physicsClientId=c)
            urdf = Path(self._tmpdir.name) / f"{self.model.name}.urdf"
            urdf.write_text(self.model.urdf)
            self._body = pybullet.loadURDF(str(urdf), flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                                           physicsClientId=c)
            self._index_links()
            for foot in self.model.config.feet.values():
                pybullet.changeDynamics(self._body, self._link[foot.link],
                                        lateralFriction=self.params.ground_friction, physicsClientId=c)
            info = pybullet.getDynamicsInfo(self._body, -1, physicsClientId=c)
            self._base_inertial = pin.XYZQUATToSE3(np.concatenate([info[3], info[4]]))
            self._reset_locked(self.model.home_positions())
            return self._state  # type: ignore[return-value]

    def _index_links(self) -> None:
        c = self._client
        self._link: dict[str, int] = {self.model.root_link: -1}
        joints: dict[str, int] = {}
        for i in range(pybullet.getNumJoints(self._body, physicsClientId=c)):
            info = pybullet.getJointInfo(self._body, i, physicsClientId=c)
            joints[info[1].decode()] = i
            self._link[info[12].decode()] = i
        self._joint_ids = [joints[name] for name in self.joint_names]
        self._foot_links = {side: self._link[foot.link] for side, foot in self.model.config.feet.items()}
        self._sole_links = {side: self._link[foot.sole] for side, foot in self.model.config.feet.items()}
        self._imu_link = self._link[self.model.config.imu_frame]
        self._link_name = {index: name for name, index in self._link.items()}
        # The position motors are set every step; switch off PyBullet's default velocity motors.
        pybullet.setJointMotorControlArray(self._body, self._joint_ids, pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * len(self._joint_ids), physicsClientId=c)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                pybullet.disconnect(physicsClientId=self._client)
                self._client = None
        self._paused.clear()
        self._tmpdir.cleanup()

    # -- world control (services) -------------------------------------------------------
    def reset(self, positions: np.ndarray | None = None) -> JointState:
        """Put the robot standing on the ground in ``positions`` (default: home pose), at rest."""
        with self._lock:
            self._reset_locked(self.model.home_positions() if positions is None else positions)
            return self._state  # type: ignore[return-value]

    def _reset_locked(self, positions: np.ndarray) -> None:
        c = self._client
        positions = np.clip(np.asarray(positions, dtype=float), self.model.joints.lower, self.model.joints.upper)
        base = self.model.standing_base(positions)
        base.translation[2] += self.params.drop_height
        inertial = pin.SE3ToXYZQUAT(base * self._base_inertial)
        pybullet.resetBasePositionAndOrientation(self._body, inertial[:3], inertial[3:], physicsClientId=c)
        pybullet.resetBaseVelocity(self._body, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=c)
        for joint_id, value in zip(self._joint_ids, positions, strict=True):
            pybullet.resetJointState(self._body, joint_id, float(value), 0.0, physicsClientId=c)
        self.servos.reset(positions)
        self._targets_sent = False
        self._written = None
        self._imu_previous = None
        # contacts are only recomputed by a step: refresh them now, or the old ones are reported
        pybullet.performCollisionDetection(physicsClientId=c)
        self._contacts_time = -1.0
        self._state = self._measure()

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        with self._lock:
            self._step_budget = 0
        self._paused.clear()
        with self._step_done:
            self._step_done.notify_all()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    def step_paused(self, cycles: int, timeout: float = 60.0) -> float:
        """While paused, let ``cycles`` control periods run; returns the simulated time."""
        if not self.paused:
            raise DriverError("the simulation is running: pause it before stepping")
        with self._step_done:
            self._step_budget += cycles
            self._step_done.notify_all()
            if not self._step_done.wait_for(lambda: self._step_budget == 0 or not self.paused, timeout):
                raise DriverError(f"stepping {cycles} cycles did not finish within {timeout} s")
            return self._time

    # -- control loop -----------------------------------------------------------------
    def sync(self, period: float) -> None:
        if self.paused and not self._wait_for_step(period):
            return
        steps = max(1, round(period / self.params.physics_period))
        with self._lock:
            if self._client is None:
                raise DriverError("the simulation is not running")
            c, dt = self._client, self.params.physics_period
            servo = self.servos.params
            forces = [servo.max_torque] * len(self._joint_ids)
            kp = [servo.position_gain] * len(self._joint_ids)
            kd = [servo.velocity_gain] * len(self._joint_ids)
            for _ in range(steps):
                if not (self._targets_sent and self.servos.settled):
                    # PyBullet keeps motor targets between steps: send them only when they change
                    targets, speeds = self.servos.step(dt)
                    pybullet.setJointMotorControlArray(
                        self._body, self._joint_ids, pybullet.POSITION_CONTROL, targetPositions=targets,
                        targetVelocities=speeds, forces=forces, positionGains=kp, velocityGains=kd,
                        physicsClientId=c)
                    self._targets_sent = True
                pybullet.stepSimulation(physicsClientId=c)
            self._steps += steps
            self._time = self._steps * dt
            self._state = self._measure()
            if self.paused:
                self._step_budget -= 1
                self._step_done.notify_all()
        self._pace()

    def _wait_for_step(self, period: float) -> bool:
        """Paused: block until a step is requested (True) or a little time passed (False)."""
        with self._step_done:
            self._step_done.wait_for(lambda: self._step_budget > 0 or not self.paused, timeout=period * 10)
            return self._step_budget > 0 or not self.paused

    def _pace(self) -> None:
        rtf = self.params.real_time_factor
        if rtf <= 0.0 or self.paused:
            self._wall_origin = (time.monotonic(), self._time)
            return
        wall0, sim0 = self._wall_origin
        ahead = wall0 + (self._time - sim0) / rtf - time.monotonic()
        if ahead > 0.0:
            time.sleep(ahead)
        elif ahead < -0.5:  # far behind (slow machine): do not try to catch up in a burst
            self._wall_origin = (time.monotonic(), self._time)

    def _measure(self) -> JointState:
        c = self._client
        states = pybullet.getJointStates(self._body, self._joint_ids, physicsClientId=c)
        count = len(self._joint_ids)
        return JointState(stamp=self._time,
                          position=np.fromiter((s[0] for s in states), float, count),
                          velocity=np.fromiter((s[1] for s in states), float, count),
                          effort=np.fromiter((s[3] for s in states), float, count),
                          valid=np.ones(count, dtype=bool))

    def read(self) -> JointState:
        with self._lock:
            if self._state is None:
                raise DriverError("the simulation has not started")
            return self._state

    def write(self, command: JointCommand) -> None:
        if command is self._written:  # the executor repeats an unchanged command
            return
        with self._lock:
            self._written = command
            self.servos.command(command.position, command.velocity)
            if not self.servos.settled:
                self._targets_sent = False

    def now(self) -> float:
        return self._time

    # -- sensors ------------------------------------------------------------------
    def read_sensors(self) -> SensorReadings:
        with self._lock:
            c = self._client
            imu_state = pybullet.getLinkState(self._body, self._imu_link, computeLinkVelocity=1,
                                              computeForwardKinematics=1, physicsClientId=c)
            rotation = np.array(pybullet.getMatrixFromQuaternion(imu_state[5])).reshape(3, 3)
            specific_force = self._specific_force(np.array(imu_state[6]))
            imu = ImuReading(
                frame=self.model.config.imu_frame,
                orientation=tuple(imu_state[5]),  # type: ignore[arg-type]
                angular_velocity=tuple(rotation.T @ np.array(imu_state[7])),  # type: ignore[arg-type]
                linear_acceleration=tuple(rotation.T @ specific_force))  # type: ignore[arg-type]
            contacts = self._ground_contacts()
            feet = [self._foot_reading(side, contacts) for side in self._foot_links]
            return SensorReadings(stamp=self._time, imu=imu, feet=feet)

    def _specific_force(self, velocity: np.ndarray) -> np.ndarray:
        """What an accelerometer measures, in world axes: the IMU's acceleration (finite
        difference since the previous reading) minus gravity, i.e. +g upwards at rest."""
        previous = self._imu_previous
        acceleration = np.zeros(3) if previous is None else previous[2]
        if previous is not None and self._time > previous[0]:
            acceleration = (velocity - previous[1]) / (self._time - previous[0])
        if previous is None or self._time > previous[0]:
            self._imu_previous = (self._time, velocity, acceleration)
        return acceleration + np.array([0.0, 0.0, GRAVITY])

    def _ground_contacts(self) -> list:
        """Contact points between the robot and the ground, queried once per physics state."""
        if self._contacts_time != self._time:
            self._contacts = pybullet.getContactPoints(self._body, self._ground, physicsClientId=self._client)
            self._contacts_time = self._time
        return self._contacts

    def _foot_reading(self, side: str, contacts: list) -> FootReading:
        sole = pybullet.getLinkState(self._body, self._sole_links[side], computeForwardKinematics=1,
                                     physicsClientId=self._client)
        origin = np.array(sole[4])
        rotation = np.array(pybullet.getMatrixFromQuaternion(sole[5])).reshape(3, 3)
        foot = self._foot_links[side]
        mine = [c for c in contacts if c[3] == foot]
        if mine:
            # each contact: normal force along the ground normal plus two friction forces
            forces = np.array([[c[9] * n + c[10] * d1 + c[12] * d2 for n, d1, d2 in zip(c[7], c[11], c[13],
                                                                                      strict=True)]
                               for c in mine])
            arms = np.array([c[5] for c in mine]) - origin
            force = forces.sum(axis=0)
            torque = np.cross(arms, forces).sum(axis=0)
        else:
            force, torque = np.zeros(3), np.zeros(3)
        local_force, local_torque = rotation.T @ force, rotation.T @ torque
        return FootReading(side=side, frame=self.model.config.feet[side].sole,
                           force=tuple(local_force), torque=tuple(local_torque),  # type: ignore[arg-type]
                           contact=bool(force[2] > self.params.contact_force_threshold))

    # -- ground truth -------------------------------------------------------------
    def base_placement(self) -> pin.SE3:
        """World placement of the robot's base link (URDF frame, not PyBullet's inertial frame)."""
        with self._lock:
            position, orientation = pybullet.getBasePositionAndOrientation(self._body, physicsClientId=self._client)
            inertial = pin.XYZQUATToSE3(np.concatenate([position, orientation]))
            return inertial * self._base_inertial.inverse()

    def base_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            linear, angular = pybullet.getBaseVelocity(self._body, physicsClientId=self._client)
            return np.array(linear), np.array(angular)

    def fall_state(self, base: pin.SE3 | None = None) -> FallState:
        """Trunk tilt, and the links other than the feet that touch the ground."""
        base = self.base_placement() if base is None else base
        tilt = math.degrees(math.acos(float(np.clip(base.rotation[2, 2], -1.0, 1.0))))
        with self._lock:
            contacts = self._ground_contacts()
        feet = set(self._foot_links.values())
        touching = tuple(sorted({self._link_name.get(c[3], str(c[3])) for c in contacts if c[3] not in feet}))
        return FallState(fallen=bool(touching) or tilt > self.params.fall_tilt, tilt_deg=tilt, touching=touching)

    def status(self) -> list[StatusEntry]:
        fall = self.fall_state()
        level = Level.ERROR if fall.fallen else Level.OK
        return [StatusEntry(
            name="simulation", level=level,
            message=f"fallen: {fall.reason}" if fall.fallen else ("paused" if self.paused else "running"),
            values={"sim_time": f"{self._time:.3f}", "physics_period": f"{self.params.physics_period:g}",
                    "trunk_tilt_deg": f"{fall.tilt_deg:.1f}",
                    "real_time_factor_target": f"{self.params.real_time_factor:g}"})]
