"""The simulated robot: a PyBullet world behind the RobotDriver interface.

The physics steps at a fixed period (default 1 ms) independent of the control rate;
``sync(period)`` advances the world by one control period and, when a real-time
factor is set, waits so that simulated time runs that many times faster than the
wall clock (0 = as fast as possible). Time is the simulated time, starting at 0.

Joints follow their commands through a servo profile (:mod:`humanoid_sim.servo_profiles`)
and PyBullet's torque-limited position motors, or with ``servo.law: pd_torque`` through
Lima et al.'s servo (the profile sampled at the bus period, the two-segment reference
generator and a torque-limited PD law applied by PyBullet's torque control at every
physics step); URDF joint limits are enforced by
PyBullet's limit constraints. Sensors: an IMU at the model's IMU frame, and the
ground reaction wrench under each foot from the contact points; their readings (and the
joints') corrupted as :mod:`humanoid_sim.sensor_noise` says when its noise is enabled.
Pushes (:meth:`PyBulletDriver.apply_push`): a constant force at a link's centre of mass,
in the world frame, applied at every physics step of its duration. Torque off
(:meth:`PyBulletDriver.set_torque`): the motors apply no force (position motors at zero
force, no PD torque) and the joints move under gravity and contacts, slowed only by the
URDF's joint damping; torque on, the servo models restart from the positions reached.
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import pybullet

from humanoid_core.loop import (
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
from humanoid_description import RobotModel
from humanoid_sim.params_file import LinkCorrection, corrected_urdf
from humanoid_sim.sensor_noise import SensorNoise
from humanoid_sim.servo_profiles import (
    BusReference,
    ServoBank,
    ServoParameters,
    group_gains,
    pd_torque,
    stable_gains,
)
from humanoid_sim.shared_world import GRAVITY, SharedWorld, WorldSeat, process_world
from humanoid_sim.sim_parameters import NoiseParameters, PushParameters, SimParameters
from humanoid_sim.transmission import TransmissionParameters, Transmissions

#: The turn of the standing robot's base that lays it on one side (``reset(lying=...)``):
#: on its back the trunk's front (x) faces up, on its belly down; on its left side its
#: left (y) faces down.
LYING_TURNS: dict[str, np.ndarray] = {
    "back": pin.utils.rotate("y", -math.pi / 2), "belly": pin.utils.rotate("y", math.pi / 2),
    "left": pin.utils.rotate("x", -math.pi / 2), "right": pin.utils.rotate("x", math.pi / 2)}


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


def _into_frame(rotation: tuple[float, ...], vector: tuple[float, float, float] | list[float],
                ) -> tuple[float, float, float]:
    """A world vector in the axes of a frame whose orientation is ``rotation`` (PyBullet's
    row-major 3x3 matrix, a 9-tuple): the matrix's transpose times the vector."""
    x, y, z = vector
    return (rotation[0] * x + rotation[3] * y + rotation[6] * z,
            rotation[1] * x + rotation[4] * y + rotation[7] * z,
            rotation[2] * x + rotation[5] * y + rotation[8] * z)


def joint_inertias(model: RobotModel) -> np.ndarray:
    """Each joint's smallest inertia (kg m^2): the robot floating free in its home pose, every
    other joint free too (1 / the diagonal of the inverse joint-space mass matrix): what a
    torque on that joint alone accelerates."""
    q = model.configuration(model.home_positions())
    mass = pin.crba(model.model, model.model.createData(), q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    return 1.0 / np.diag(np.linalg.inv(mass))[model.v_index]


@dataclass
class _Push:
    """A push in progress: the force applied at ``link``'s centre of mass for ``steps`` more physics steps."""

    link: int
    force: tuple[float, float, float]
    steps: int


class PyBulletDriver(RobotDriver):
    """A robot in a PyBullet world: a world of its own, or its ``seat`` in the world it
    shares with other robots of this process (:mod:`humanoid_sim.shared_world`)."""

    clock_is_ros_time = True  # simulated time, published on /clock by the node

    def __init__(self, model: RobotModel, servo: ServoParameters, params: SimParameters | None = None,
                 transmission: TransmissionParameters | None = None,
                 corrections: Mapping[str, LinkCorrection] | None = None, noise: NoiseParameters | None = None,
                 push: PushParameters | None = None, seat: WorldSeat | None = None) -> None:
        self.model = model
        self.seat = seat
        self._world = process_world(seat.count) if seat is not None else SharedWorld(1)
        #: the URDF the world loads: the model's, with the links' corrections (humanoid_sim.params_file)
        self.urdf = corrected_urdf(model.urdf, corrections or {})
        self.params = params or SimParameters()
        self.noise = SensorNoise(noise or NoiseParameters())
        self._noisy = self.noise.enabled  # fixed parameters, asked every cycle
        self.push_limits = push or PushParameters()
        self._pushes: list[_Push] = []
        self.joint_names = model.joints.names
        self.servos = ServoBank(servo, len(self.joint_names))
        self.transmissions = Transmissions(transmission or TransmissionParameters(), self.joint_names)
        self._transmissions_active = self.transmissions.params.active  # fixed parameters, asked every cycle
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
        #: time, velocity and acceleration of the previous IMU reading (world axes)
        self._imu_previous: tuple[float, tuple[float, ...], tuple[float, ...]] | None = None
        self._targets_sent = False
        self._control_period = 0.0  # s, the latest sync's period: how long a set-point's velocity carries it
        self._written: JointCommand | None = None
        self._contacts: list = []
        self._contacts_time = -1.0
        self._all_valid = np.ones(len(self.joint_names), dtype=bool)
        self._all_valid.setflags(write=False)  # shared by every reading: a simulated joint is always read
        # the motors' torque limit and PD gains, the same at every step (the servo parameters are fixed)
        count = len(self.joint_names)
        self._motor_forces = [servo.max_torque] * count
        self._motor_kp = [servo.position_gain] * count
        self._motor_kd = [servo.velocity_gain] * count
        #: servo.law pd_torque: the reference generator at the bus period, the gains per joint and
        #: the torques of the latest physics step (the joints' effort)
        self._pd = servo.law == "pd_torque"
        self._bus = BusReference(count, self.params.physics_rate, servo.bus_rate)
        legs = {joint for foot in model.config.feet.values() for joint in model.chain_joints(foot.sole)}
        #: the gains of the law (servo parameters, per joint group) and those in force: each
        #: joint's within the stability bound of its lightest inertia at the physics step
        self.pd_gains = group_gains(servo, self.joint_names, legs)
        self._k_theta, self._k_omega = (stable_gains(*self.pd_gains, joint_inertias(model), self.params.physics_period)
                                        if self._pd else self.pd_gains)
        self.pd_gains_in_force = (self._k_theta, self._k_omega)
        self._torques = np.zeros(count)
        self._limp = False  # torque off: no motor force (set_torque)
        self._tmpdir = tempfile.TemporaryDirectory(prefix="humanoid_sim_")
        #: wall and CPU (this thread's) seconds spent stepping: servo references and physics
        self.stepping_wall = 0.0
        self.stepping_cpu = 0.0

    # -- life cycle ---------------------------------------------------------------
    def start(self) -> JointState:
        with self._lock, self._world.lock:
            try:
                self._client, self._ground = self._world.connect(self.params)
            except RuntimeError as error:
                raise DriverError(str(error)) from error
            c = self._client
            self._urdf_file.write_text(self.urdf)
            self._load_body()
            info = pybullet.getDynamicsInfo(self._body, -1, physicsClientId=c)
            self._base_inertial = pin.XYZQUATToSE3(np.concatenate([info[3], info[4]]))
            self._inertial_to_base = self._base_inertial.inverse()
            #: the base link's z axis in PyBullet's inertial frame of the base (for the trunk tilt)
            self._base_z_in_inertial = tuple(float(v) for v in self._inertial_to_base.rotation[:, 2])
            self._reset_locked(self.model.home_positions(), reload=False)
            return self._state  # type: ignore[return-value]

    @property
    def _urdf_file(self) -> Path:
        return Path(self._tmpdir.name) / f"{self.model.name}.urdf"

    def _load_body(self) -> None:
        """Load the robot (a body already loaded is removed first): its links indexed, its
        feet's friction set, PyBullet's default velocity motors off."""
        c = self._client
        if self._body >= 0:
            pybullet.removeBody(self._body, physicsClientId=c)
        self._body = pybullet.loadURDF(str(self._urdf_file), flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                                       physicsClientId=c)
        self._index_links()
        for foot in self.model.config.feet.values():
            pybullet.changeDynamics(self._body, self._link[foot.link],
                                    lateralFriction=self.params.ground_friction, physicsClientId=c)

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
        self._foot_link_set = frozenset(self._foot_links.values())
        self._sole_links = {side: self._link[foot.sole] for side, foot in self.model.config.feet.items()}
        self._imu_link = self._link[self.model.config.imu_frame]
        self._link_name = {index: name for name, index in self._link.items()}
        # The position motors are set every step; switch off PyBullet's default velocity motors.
        pybullet.setJointMotorControlArray(self._body, self._joint_ids, pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * len(self._joint_ids), physicsClientId=c)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                if self._body >= 0:
                    with self._world.lock:
                        pybullet.removeBody(self._body, physicsClientId=self._client)
                self._world.leave()
                self._client = None
        self._paused.clear()
        self._tmpdir.cleanup()

    # -- world control (services) -------------------------------------------------------
    def reset(self, positions: np.ndarray | None = None, lying: str | None = None) -> JointState:
        """Put the robot on the ground in ``positions`` (default: home pose), at rest:
        standing, or ``lying`` on one side of :data:`LYING_TURNS` (its lowest point on the
        ground, as a fallen robot lies before it gets up)."""
        if lying is not None and lying not in LYING_TURNS:
            raise DriverError(f"cannot lay the robot on {lying!r}: one of {', '.join(LYING_TURNS)}")
        with self._lock, self._world.lock:
            self._reset_locked(self.model.home_positions() if positions is None else positions, lying)
            return self._state  # type: ignore[return-value]

    def _reset_locked(self, positions: np.ndarray, lying: str | None = None, reload: bool = True) -> None:
        """``reload``: the robot's body is loaded afresh, so that nothing of what it went through
        carries over: PyBullet keeps state in a body that no reset of its joints and base clears
        (the joint motors' warm start, suspected); with the same body, the path after a reset
        differed by 0.2 mm in a second between resets at different times. About 20 ms for the
        HOAP-2, 6 for the Bioloids."""
        if reload:
            self._load_body()
        c = self._client
        positions = np.clip(np.asarray(positions, dtype=float), self.model.joints.lower, self.model.joints.upper)
        base = self.model.standing_base(positions)
        if lying is not None:
            base = pin.SE3(LYING_TURNS[lying], np.zeros(3)) * base
        base.translation[2] += self.params.drop_height
        if self.seat is not None:
            base.translation[:2] += self.seat.offset
        inertial = pin.SE3ToXYZQUAT(base * self._base_inertial)
        pybullet.resetBasePositionAndOrientation(self._body, inertial[:3], inertial[3:], physicsClientId=c)
        pybullet.resetBaseVelocity(self._body, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=c)
        for joint_id, value in zip(self._joint_ids, positions, strict=True):
            pybullet.resetJointState(self._body, joint_id, float(value), 0.0, physicsClientId=c)
        if lying is not None:  # lowered until its lowest link is drop_height above the ground
            inertial[2] -= self.lowest_point() - self.params.drop_height
            pybullet.resetBasePositionAndOrientation(self._body, inertial[:3], inertial[3:], physicsClientId=c)
        self.servos.reset(positions)
        self._bus.reset(positions)
        self._torques = np.zeros(len(self.joint_names))
        self.transmissions.reset()
        self.noise.restart()
        self._pushes.clear()
        self._targets_sent = False
        self._written = None
        self._imu_previous = None
        # contacts are only recomputed by a step: refresh them now, or the old ones are reported
        pybullet.performCollisionDetection(physicsClientId=c)
        self._contacts_time = -1.0
        self._state = self._measure()

    def lowest_point(self) -> float:
        """The height of the robot's lowest point: its distance to the ground plane (negative
        where it reaches into it)."""
        closest = pybullet.getClosestPoints(self._body, self._ground, 10.0, physicsClientId=self._client)
        return min(point[8] for point in closest)

    def pause(self) -> None:
        """Pause; a cycle under way finishes first, so the time read after this is final."""
        with self._lock:  # a cycle holds the lock from its decision to run to its end
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
        # only a cycle a step request let through counts against the request: a pause that
        # arrives during a running cycle must not make that cycle count (the budget went
        # negative, and the next request waited for ever)
        requested = self.paused and self._wait_for_step(period)
        with self._lock:  # decided under the lock pause() takes: no unrequested cycle follows a pause
            if self.paused and not requested:
                return
            self._control_period = period
            steps = max(1, round(period / self.params.physics_period))
            if self._client is None:
                raise DriverError("the simulation is not running")
            dt = self.params.physics_period
            wall, cpu = time.perf_counter(), time.thread_time()
            stepped = self._world.cycle(self.seat.index if self.seat else 0, steps, self._physics_step_motors, dt,
                                        period)
            self.stepping_wall += time.perf_counter() - wall
            self.stepping_cpu += time.thread_time() - cpu
            if not stepped:  # the world's other robots did not come: as a paused cycle
                return
            self._steps += steps
            self._time = self._steps * dt
            self._state = self._measure()
            if self._transmissions_active and self.transmissions.update(self._state.effort, steps * dt):
                self._targets_sent = False
            if requested:
                self._step_budget = max(0, self._step_budget - 1)
                self._step_done.notify_all()
        self._pace()

    def _physics_step_motors(self, dt: float) -> None:
        """The motors before one physics step (the world steps; in a shared world the robot
        whose cycle completes it applies every robot's)."""
        if self._limp:
            pass  # the motors were given zero force by set_torque
        elif self._pd:
            self._pd_step(dt)
        elif not (self._targets_sent and self.servos.settled):
            # PyBullet keeps motor targets between steps: send them only when they change
            targets, speeds = self.servos.step(dt)
            # each link is held behind its motor's reference by the sag of its gears; lists
            # of the same floats, which PyBullet reads faster than numpy arrays
            pybullet.setJointMotorControlArray(
                self._body, self._joint_ids, pybullet.POSITION_CONTROL,
                targetPositions=(targets + self.transmissions.sag).tolist(), targetVelocities=speeds.tolist(),
                forces=self._motor_forces, positionGains=self._motor_kp, velocityGains=self._motor_kd,
                physicsClientId=self._client)
            self._targets_sent = True
        if self._pushes:
            self._push_step()

    def _pd_step(self, dt: float) -> None:
        """servo.law pd_torque: the profile on the bus, the two-segment reference, and each
        joint's torque for the next physics step (PyBullet's position motors stay off: their
        velocity motors were given zero force when the robot was loaded)."""
        c = self._client
        targets, speeds = self.servos.step(dt)
        reference, reference_velocity = self._bus.step(targets, speeds)
        states = pybullet.getJointStates(self._body, self._joint_ids, physicsClientId=c)
        position = np.fromiter((s[0] for s in states), float, len(states))
        velocity = np.fromiter((s[1] for s in states), float, len(states))
        # each link is held behind its motor's reference by the sag of its gears
        self._torques = pd_torque((reference + self.transmissions.sag, reference_velocity), position, velocity,
                                  self._k_theta, self._k_omega, self.servos.params.max_torque)
        pybullet.setJointMotorControlArray(self._body, self._joint_ids, pybullet.TORQUE_CONTROL,
                                           forces=self._torques.tolist(), physicsClientId=c)

    # -- pushes -------------------------------------------------------------------
    def apply_push(self, link: str, force: tuple[float, float, float], duration: float) -> str:
        """Push ``link`` (empty: the root link) at its centre of mass with ``force`` (N, world
        frame) for ``duration`` s of simulated time, from the next physics step; what was
        done, or ValueError saying why it is refused (the world is then untouched)."""
        name = link or self.model.root_link
        limits, dt = self.push_limits, self.params.physics_period
        if name not in self._link:
            raise ValueError(f"unknown link {name!r} (links: {', '.join(sorted(self._link))})")
        if len(force) != 3 or not all(math.isfinite(f) for f in force):
            raise ValueError(f"the force must be three finite numbers (N), got {list(force)}")
        if not math.isfinite(duration) or duration <= 0.0:
            raise ValueError(f"the duration must be a finite number of seconds > 0, got {duration}")
        magnitude = math.sqrt(sum(f * f for f in force))
        if magnitude > limits.max_force:
            raise ValueError(f"a force of {magnitude:g} N is beyond push.max_force ({limits.max_force:g} N)")
        if duration > limits.max_duration:
            raise ValueError(f"a duration of {duration:g} s is beyond push.max_duration ({limits.max_duration:g} s)")
        steps = round(duration / dt)
        if steps < 1:
            raise ValueError(f"a duration of {duration:g} s is shorter than one physics step ({dt:g} s)")
        with self._lock:
            self._pushes.append(_Push(self._link[name], (float(force[0]), float(force[1]), float(force[2])), steps))
        return (f"pushing {name} with {magnitude:g} N for {steps * dt:g} s from t = {self._time:.3f} s: "
                f"an impulse of {magnitude * steps * dt:g} N s")

    def _push_step(self) -> None:
        """Apply the pushes in progress for one physics step (PyBullet forgets external forces
        after each step)."""
        c = self._client
        for push in self._pushes:
            if push.link == -1:
                centre = pybullet.getBasePositionAndOrientation(self._body, physicsClientId=c)[0]
            else:
                centre = pybullet.getLinkState(self._body, push.link, computeForwardKinematics=1,
                                               physicsClientId=c)[0]
            pybullet.applyExternalForce(self._body, push.link, push.force, centre, pybullet.WORLD_FRAME,
                                        physicsClientId=c)
            push.steps -= 1
        self._pushes = [push for push in self._pushes if push.steps > 0]

    def _wait_for_step(self, period: float) -> bool:
        """Paused: block until a step is requested (True), the simulation resumed or a little
        time passed (False)."""
        with self._step_done:
            self._step_done.wait_for(lambda: self._step_budget > 0 or not self.paused, timeout=period * 10)
            return self._step_budget > 0 and self.paused

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
        """Every joint in one call; columns unzipped (faster than a 2-D array for a few dozen joints)."""
        states = pybullet.getJointStates(self._body, self._joint_ids, physicsClientId=self._client)
        positions, velocities, _, efforts = zip(*states, strict=True)
        position, velocity = np.array(positions), np.array(velocities)
        if self._transmissions_active:  # the encoders are on the motor side of the gears: no sag
            position -= self.transmissions.sag
        if self._noisy:
            position, velocity = self.noise.joints(position, velocity)
        # pd_torque: the torque the law applied over the latest step (PyBullet reports none for torque control)
        effort = self._torques.copy() if self._pd else np.array(efforts)
        return JointState(stamp=self._time, position=position, velocity=velocity, effort=effort,
                          valid=self._all_valid)

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
            self.servos.command(command.position, command.velocity, self._control_period)
            if not self.servos.settled:
                self._targets_sent = False

    releases_torque = True

    def set_torque(self, enabled: bool) -> None:
        """Off: every motor at zero force (the robot collapses under gravity, the joints'
        damping and limits only); on: the servo models and the bus reference restart from the
        positions the joints reached (the next set-point written moves them from there)."""
        with self._lock:
            if self._client is None:
                raise DriverError("the simulation is not running")
            c = self._client
            if not enabled:
                pybullet.setJointMotorControlArray(self._body, self._joint_ids, pybullet.VELOCITY_CONTROL,
                                                   forces=[0.0] * len(self._joint_ids), physicsClientId=c)
                self._torques = np.zeros(len(self.joint_names))
                self._limp = True
                return
            if not self._limp:
                return
            states = pybullet.getJointStates(self._body, self._joint_ids, physicsClientId=c)
            positions = np.fromiter((s[0] for s in states), float, len(states))
            self.servos.reset(positions)
            self._bus.reset(positions)
            self.transmissions.reset()
            written = self._written  # the set-point the control loop wrote before taking the joints
            if written is not None:
                self.servos.command(written.position, written.velocity, self._control_period)
            self._targets_sent = False
            self._limp = False

    def now(self) -> float:
        return self._time

    # -- sensors ------------------------------------------------------------------
    # A handful of 3-vectors per reading, in plain floats: numpy's per-call overhead would
    # cost more than the arithmetic, the more so right after the physics has flushed the caches.
    def read_sensors(self) -> SensorReadings:
        with self._lock:
            c = self._client
            # one call, one forward kinematics pass, for the IMU link and both soles
            sides = tuple(self._sole_links)
            links = pybullet.getLinkStates(self._body, [self._imu_link, *(self._sole_links[s] for s in sides)],
                                           computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=c)
            imu_state = links[0]
            rotation = pybullet.getMatrixFromQuaternion(imu_state[5])
            orientation = tuple(imu_state[5])
            angular_velocity = _into_frame(rotation, imu_state[7])
            linear_acceleration = _into_frame(rotation, self._specific_force(imu_state[6]))
            if self._noisy:
                orientation, angular_velocity, linear_acceleration = self.noise.imu(
                    orientation, angular_velocity, linear_acceleration)  # type: ignore[arg-type]
            imu = ImuReading(frame=self.model.config.imu_frame, orientation=orientation,  # type: ignore[arg-type]
                             angular_velocity=angular_velocity, linear_acceleration=linear_acceleration)
            contacts = self._ground_contacts()
            feet = [self._foot_reading(side, sole, contacts) for side, sole in zip(sides, links[1:], strict=True)]
            return SensorReadings(stamp=self._time, imu=imu, feet=feet)

    def _specific_force(self, velocity: tuple[float, float, float]) -> tuple[float, float, float]:
        """What an accelerometer measures, in world axes: the IMU's acceleration (finite
        difference since the previous reading) minus gravity, i.e. +g upwards at rest."""
        previous = self._imu_previous
        acceleration = (0.0, 0.0, 0.0) if previous is None else previous[2]
        if previous is not None and self._time > previous[0]:
            dt = self._time - previous[0]
            acceleration = tuple((v - v0) / dt for v, v0 in zip(velocity, previous[1], strict=True))
        if previous is None or self._time > previous[0]:
            self._imu_previous = (self._time, velocity, acceleration)
        return acceleration[0], acceleration[1], acceleration[2] + GRAVITY

    def _ground_contacts(self) -> list:
        """Contact points between the robot and the ground, queried once per physics state."""
        if self._contacts_time != self._time:
            self._contacts = pybullet.getContactPoints(self._body, self._ground, physicsClientId=self._client)
            self._contacts_time = self._time
        return self._contacts

    def _foot_reading(self, side: str, sole: tuple, contacts: list) -> FootReading:
        """The ground's force and torque on one foot, about its sole frame (``sole``: the
        sole link's state), summed over the foot's contact points."""
        foot = self._foot_links[side]
        ox, oy, oz = sole[4]
        fx = fy = fz = tx = ty = tz = 0.0
        for contact in contacts:
            if contact[3] != foot:
                continue
            # normal force along the ground normal plus two friction forces
            normal, lateral1, dir1, lateral2, dir2 = contact[9], contact[10], contact[11], contact[12], contact[13]
            n = contact[7]
            cx = normal * n[0] + lateral1 * dir1[0] + lateral2 * dir2[0]
            cy = normal * n[1] + lateral1 * dir1[1] + lateral2 * dir2[1]
            cz = normal * n[2] + lateral1 * dir1[2] + lateral2 * dir2[2]
            px, py, pz = contact[5][0] - ox, contact[5][1] - oy, contact[5][2] - oz
            fx, fy, fz = fx + cx, fy + cy, fz + cz
            tx, ty, tz = tx + py * cz - pz * cy, ty + pz * cx - px * cz, tz + px * cy - py * cx
        rotation = pybullet.getMatrixFromQuaternion(sole[5])
        force, torque = _into_frame(rotation, (fx, fy, fz)), _into_frame(rotation, (tx, ty, tz))
        if self._noisy:
            force, torque = self.noise.foot(force, torque)
            # the sensor decides contact from what it reads, in the sole's axes
            return FootReading(side=side, frame=self.model.config.feet[side].sole, force=force, torque=torque,
                               contact=bool(force[2] > self.params.contact_force_threshold))
        return FootReading(side=side, frame=self.model.config.feet[side].sole, force=force, torque=torque,
                           contact=bool(fz > self.params.contact_force_threshold))

    # -- ground truth -------------------------------------------------------------
    def base_placement(self) -> pin.SE3:
        """World placement of the robot's base link (URDF frame, not PyBullet's inertial frame)."""
        with self._lock:
            position, orientation = pybullet.getBasePositionAndOrientation(self._body, physicsClientId=self._client)
            inertial = pin.XYZQUATToSE3(np.concatenate([position, orientation]))
            return inertial * self._inertial_to_base

    def base_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            linear, angular = pybullet.getBaseVelocity(self._body, physicsClientId=self._client)
            return np.array(linear), np.array(angular)

    def fall_state(self) -> FallState:
        """Trunk tilt, and the links other than the feet that touch the ground."""
        with self._lock:
            _, (x, y, z, w) = pybullet.getBasePositionAndOrientation(self._body, physicsClientId=self._client)
            contacts = self._ground_contacts()
        # the world z component of the base link's z axis: the last row of the inertial
        # frame's rotation matrix (from its quaternion) times that axis in the inertial frame
        bx, by, bz = self._base_z_in_inertial
        up = 2.0 * (x * z - w * y) * bx + 2.0 * (y * z + w * x) * by + (1.0 - 2.0 * (x * x + y * y)) * bz
        tilt = math.degrees(math.acos(min(1.0, max(-1.0, up))))
        feet = self._foot_link_set
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
