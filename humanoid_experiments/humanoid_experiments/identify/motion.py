"""A recorded motion: what the robot executed and the joint positions it measured, read from a
bag (``humanoid record``, ``--record``), replayed in the in-process simulation, and, for
simulated stand-ins of a robot, recorded into a bag as ``humanoid record`` writes it.

What the robot executed is, first, ``joint_setpoints``: the set-points its robot interface
wrote to the driver at each state, whatever sent the command (a topic, an action, a motion,
a walk, a gait). The replay writes the same set-points at the same robot times (linearly
between two recorded states, where the control loop runs faster than the states are
published), so the timing and interpolation are the robot's own, not derived again. A bag
without them (recorded before the robot published them) is replayed from the commands the
robot interface took: trajectories on ``joint_trajectory`` (started at their header stamp,
else when they arrived) and streaming set-points on ``joint_commands``.
Times are the robot's clock (the ``joint_states`` stamps); a message without a stamp is placed
on it through the log times of ``joint_states``, as :mod:`humanoid_tools.plots.series` does.

Where the bag holds them, the robot's other readings come along, on the same clock: the IMU
(``imu/data``: orientation and angular velocity) and the feet's wrenches (``<side>_foot/wrench``,
force and moment about the sole frame's origin, in that frame). The replay then records the
simulated ones (:func:`replay_sensed`), for the fit's IMU and wrench terms
(:mod:`humanoid_experiments.identify.problem`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_control.ros import absolute, topics
from humanoid_core.loop import CommandRejectedError, PointData, TrajectoryRequest
from humanoid_description import JointTable

JOINT_STATES = absolute(topics.JOINT_STATES)
JOINT_SETPOINTS = absolute(topics.JOINT_SETPOINTS)
JOINT_TRAJECTORY = absolute(topics.JOINT_TRAJECTORY)
JOINT_COMMANDS = absolute(topics.JOINT_COMMANDS)
IMU = absolute(topics.IMU)
#: The feet whose wrenches are read, and their topics.
FOOT_WRENCHES = {side: absolute(topics.foot_wrench(side)) for side in topics.FOOT_SIDES}
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
TRAJECTORY_TYPE = "trajectory_msgs/msg/JointTrajectory"
IMU_TYPE = "sensor_msgs/msg/Imu"
WRENCH_TYPE = "geometry_msgs/msg/WrenchStamped"


class MotionError(ValueError):
    """A recording that cannot be replayed (one line, naming the reason)."""


@dataclass(frozen=True)
class Command:
    """One command at robot time ``time`` (s from the motion's start): a trajectory (points:
    (time from start, positions, velocities)) or, with one point at time 0 and ``stream``, a
    streaming set-point."""

    time: float
    joints: tuple[str, ...]
    points: tuple[tuple[float, tuple[float, ...], tuple[float, ...]], ...]
    stream: bool = False


@dataclass(frozen=True)
class Setpoints:
    """What the robot interface wrote to the driver at each state (every joint, canonical order)."""

    times: np.ndarray  # s from the motion's start
    positions: np.ndarray  # (len(times), joints) rad
    velocities: np.ndarray  # (len(times), joints) rad/s; NaN where the driver's own profile ran

    def at(self, time: float) -> tuple[np.ndarray, np.ndarray]:
        """Position and velocity set-points at ``time``: linear between two recorded ones,
        the first before them and the last after."""
        if time <= self.times[0] or len(self.times) == 1:
            return self.positions[0], self.velocities[0]
        if time >= self.times[-1]:
            return self.positions[-1], self.velocities[-1]
        right = int(np.searchsorted(self.times, time))
        share = (time - self.times[right - 1]) / (self.times[right] - self.times[right - 1])
        return tuple((1.0 - share) * values[right - 1] + share * values[right]
                     for values in (self.positions, self.velocities))

    def moved(self) -> np.ndarray:
        """Whether each joint's set-point changed during the motion."""
        return np.ptp(self.positions, axis=0) > 1e-9


@dataclass(frozen=True)
class ImuSeries:
    """IMU readings: orientation (quaternion x, y, z, w: the IMU frame in a gravity-aligned
    one) and angular velocity (rad/s, IMU frame)."""

    times: np.ndarray  # s from the motion's start
    orientation: np.ndarray  # (len(times), 4)
    angular_velocity: np.ndarray  # (len(times), 3)


@dataclass(frozen=True)
class WrenchSeries:
    """The feet's wrenches at the times every foot was read: force (N) and moment about the sole
    frame's origin (N m), each in its sole frame."""

    times: np.ndarray  # s from the motion's start
    sides: tuple[str, ...]
    force: np.ndarray  # (len(times), len(sides), 3)
    torque: np.ndarray  # (len(times), len(sides), 3)


@dataclass(frozen=True)
class Motion:
    """What the robot executed and the positions measured meanwhile (every joint of the robot,
    canonical order): its set-points where the bag has them, else the commands it took."""

    start: np.ndarray  # the measured positions at time 0
    commands: tuple[Command, ...]
    times: np.ndarray  # s from the start, of each measurement
    positions: np.ndarray  # (len(times), joints) rad; NaN = not measured
    setpoints: Setpoints | None = None
    origin: float = 0.0  # the robot time (s) of time 0: the first measurement's stamp
    imu: ImuSeries | None = None  # the IMU's readings, where the bag has them
    wrenches: WrenchSeries | None = None  # the feet's wrenches, where the bag has them

    @property
    def duration(self) -> float:
        return float(self.times[-1]) if len(self.times) else 0.0

    def commanded_joints(self, names: Sequence[str]) -> list[int]:
        """Indices (in ``names``) of the joints the robot was made to move: those the fit compares."""
        if self.setpoints is not None:
            return [int(i) for i in np.flatnonzero(self.setpoints.moved())]
        named = {joint for command in self.commands for joint in command.joints}
        return [i for i, name in enumerate(names) if name in named]


def _seconds(stamp: Any) -> float:
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def read_bag(path: Path, joints: JointTable) -> Motion:
    """The motion recorded in the bag at ``path`` for a robot with ``joints``."""
    from humanoid_tools.recording import Bag

    if not Path(path).exists():
        raise MotionError(f"no bag at {path}")
    try:
        bag = Bag(Path(path))
    except Exception as error:  # rosbags refuses a folder that is no bag in several ways
        raise MotionError(f"cannot read bag {path}: {error}") from None
    with bag:
        bag.preload([JOINT_STATES, JOINT_SETPOINTS, JOINT_TRAJECTORY, JOINT_COMMANDS, IMU,
                     *FOOT_WRENCHES.values()])  # one pass over the bag
        states = bag.all(JOINT_STATES)
        setpoints = bag.all(JOINT_SETPOINTS)
        imu_messages = bag.all(IMU)
        wrench_messages = {side: bag.all(topic) for side, topic in FOOT_WRENCHES.items()}
        # the commands only where the robot's own set-points are missing
        kinds = {topic: [] if setpoints else bag.all(topic) for topic in (JOINT_TRAJECTORY, JOINT_COMMANDS)}
    if len(states) < 2:
        raise MotionError(f"bag {path} has {len(states)} {JOINT_STATES} message(s): nothing to compare with")
    log_ns = np.array([log for log, _ in states], dtype=np.int64)
    stamps = np.array([_seconds(msg.header.stamp) for _, msg in states])
    origin = stamps[0]
    positions = np.array([joints.from_named(msg.name, msg.position) for _log, msg in states])
    if np.isnan(positions[0]).all():
        named = ", ".join(states[0][1].name[:3]) or "no joint"
        raise MotionError(f"bag {path}: its {JOINT_STATES} name none of this robot's joints ({named}, ...): "
                          "recorded on another robot?")
    if np.isnan(positions[0]).any():
        missing = [joints.names[i] for i in np.flatnonzero(np.isnan(positions[0]))]
        raise MotionError(f"bag {path}: the first {JOINT_STATES} lacks {', '.join(missing)}")

    def robot_time(log: int, stamp: float) -> float:
        if stamp > 0.0:
            return stamp - origin
        nearest = int(np.argmin(np.abs(log_ns - log)))  # the robot's clock at the log time
        return float(stamps[nearest] + (log - log_ns[nearest]) * 1e-9 - origin)

    imu = _imu_series([(robot_time(log, _seconds(msg.header.stamp)), msg) for log, msg in imu_messages])
    wrenches = _wrench_series({side: [(robot_time(log, _seconds(msg.header.stamp)), msg) for log, msg in found]
                               for side, found in wrench_messages.items() if found})
    if setpoints:
        executed = _setpoints(setpoints, joints, origin)
        if not executed.moved().any():
            raise MotionError(f"bag {path}: the robot's {JOINT_SETPOINTS} never change: nothing was executed to "
                              "replay")
        return Motion(positions[0].copy(), (), stamps - origin, positions, executed, origin, imu, wrenches)
    found: list[Command] = []
    for log, msg in kinds[JOINT_TRAJECTORY]:
        unknown = [name for name in msg.joint_names if name not in joints]
        if unknown or not len(msg.points):
            raise MotionError(f"bag {path}: a {JOINT_TRAJECTORY} message " + (
                f"names joints the robot lacks ({', '.join(unknown)})" if unknown else "has no point (a stop)"))
        points = tuple((_seconds(p.time_from_start), tuple(float(v) for v in p.positions),
                        tuple(float(v) for v in p.velocities)) for p in msg.points)
        found.append(Command(robot_time(log, _seconds(msg.header.stamp)), tuple(msg.joint_names), points))
    for log, msg in kinds[JOINT_COMMANDS]:
        point = ((0.0, tuple(float(v) for v in msg.position), tuple(float(v) for v in msg.velocity)),)
        found.append(Command(robot_time(log, _seconds(msg.header.stamp)), tuple(msg.name), point, stream=True))
    if not found:
        raise MotionError(f"bag {path} holds no command ({JOINT_TRAJECTORY} or {JOINT_COMMANDS}) to replay")
    found.sort(key=lambda command: command.time)
    return Motion(positions[0].copy(), tuple(found), stamps - origin, positions, origin=origin, imu=imu,
                  wrenches=wrenches)


def _imu_series(messages: Sequence[tuple[float, Any]]) -> ImuSeries | None:
    """The IMU's readings (robot time, message) in time order; None without any."""
    if not messages:
        return None
    messages = sorted(messages, key=lambda item: item[0])
    return ImuSeries(np.array([t for t, _ in messages]),
                     np.array([[m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w]
                               for _, m in messages], dtype=float),
                     np.array([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z]
                               for _, m in messages], dtype=float))


def _wrench_series(feet: Mapping[str, Sequence[tuple[float, Any]]]) -> WrenchSeries | None:
    """The feet's wrenches at the times (to the microsecond) every foot has one; None without
    any (or no common time)."""
    if not feet:
        return None
    by_time = {side: {round(t * 1e6): m for t, m in found} for side, found in feet.items()}
    common = sorted(set.intersection(*(set(found) for found in by_time.values())))
    if not common:
        return None
    sides = tuple(by_time)

    def vectors(side: str, part: str) -> list[list[float]]:
        return [[getattr(getattr(by_time[side][key].wrench, part), axis) for axis in "xyz"] for key in common]

    force = np.stack([np.array(vectors(side, "force"), dtype=float) for side in sides], axis=1)
    torque = np.stack([np.array(vectors(side, "torque"), dtype=float) for side in sides], axis=1)
    return WrenchSeries(np.array(common, dtype=float) * 1e-6, sides, force, torque)


def _setpoints(messages: Sequence[tuple[int, Any]], joints: JointTable, origin: float) -> Setpoints:
    """The recorded ``joint_setpoints`` on the motion's time base (a joint a message lacks keeps
    its previous set-point)."""
    times = np.array([_seconds(msg.header.stamp) - origin for _, msg in messages])
    positions = np.array([joints.from_named(msg.name, msg.position) for _, msg in messages])
    velocities = np.array([joints.from_named(msg.name, msg.velocity) if len(msg.velocity) == len(msg.name)
                           else np.full(len(joints), np.nan) for _, msg in messages])
    for values in (positions, velocities):  # a joint not listed holds its previous set-point
        for row in range(1, len(values)):
            missing = np.isnan(values[row])
            values[row, missing] = values[row - 1, missing]
    return Setpoints(times, positions, velocities)


@dataclass(frozen=True)
class Sensed:
    """What the simulated robot measured during a replay: joint positions at the motion's
    times, and its IMU and feet at its own reading times (the recording's stamps, as the
    readings come at the same publishing rate from the same start)."""

    positions: np.ndarray
    imu: ImuSeries | None
    wrenches: WrenchSeries | None


def replay(robot: Any, motion: Motion) -> np.ndarray:
    """The positions the simulated ``robot`` (a :class:`~humanoid_sim.in_process.SimulatedRobot`)
    measures at the motion's times when given its commands, from its start positions."""
    return replay_sensed(robot, motion, sensors=False).positions


def replay_sensed(robot: Any, motion: Motion, sensors: bool = True) -> Sensed:
    """:func:`replay`, with the simulated IMU and foot wrenches at each reading when ``sensors``
    (none where the robot has no such sensor)."""
    robot.reset(motion.start)
    origin = robot.now()
    times: list[float] = []
    readings: list[np.ndarray] = []
    imu: list[tuple[float, Any]] = []
    feet: dict[str, list[tuple[float, Any]]] = {}

    def on_reading(reading: Any) -> None:
        times.append(reading.state.stamp - origin)
        readings.append(reading.state.position)
        if reading.sensors is not None:
            stamp = reading.sensors.stamp - origin
            if reading.sensors.imu is not None:
                imu.append((stamp, reading.sensors.imu))
            for foot in reading.sensors.feet:
                feet.setdefault(foot.side, []).append((stamp, foot))

    robot.listen(on_reading, sensors=sensors)
    try:
        if motion.setpoints is not None:
            _write_setpoints(robot, motion.setpoints, origin, motion.duration + robot.period)
        else:
            for command in motion.commands:
                robot.run_until(origin + command.time)
                send(robot, command)
            robot.run_until(origin + motion.duration + robot.period)
    finally:
        robot.unlisten(on_reading)
    simulated = np.array(readings)
    positions = np.column_stack([np.interp(motion.times, times, simulated[:, j])
                                 for j in range(simulated.shape[1])])
    return Sensed(positions, _simulated_imu(imu), _simulated_wrenches(feet))


def _simulated_imu(readings: Sequence[tuple[float, Any]]) -> ImuSeries | None:
    if not readings:
        return None
    return ImuSeries(np.array([t for t, _ in readings]), np.array([r.orientation for _, r in readings], dtype=float),
                     np.array([r.angular_velocity for _, r in readings], dtype=float))


def _simulated_wrenches(feet: Mapping[str, Sequence[tuple[float, Any]]]) -> WrenchSeries | None:
    if not feet:
        return None
    sides = tuple(feet)
    times = np.array([t for t, _ in feet[sides[0]]])
    force = np.stack([np.array([r.force for _, r in feet[side]], dtype=float) for side in sides], axis=1)
    torque = np.stack([np.array([r.torque for _, r in feet[side]], dtype=float) for side in sides], axis=1)
    return WrenchSeries(times, sides, force, torque)


def _write_setpoints(robot: Any, setpoints: Setpoints, origin: float, duration: float) -> None:
    """Each control cycle writes the set-points recorded for its state: they are given as the
    streaming set-point just before the cycle that reads that state (the robot interface
    wrote the set-point of a state in the cycle that read it)."""
    names = list(robot.model.joints.names)
    while robot.now() < origin + duration - 1e-9:
        positions, velocities = setpoints.at(robot.now() + robot.period - origin)
        known = np.isfinite(positions)
        velocity = np.where(np.isfinite(velocities), velocities, 0.0)
        robot.loop.stream([n for n, k in zip(names, known, strict=True) if k], positions[known], velocity[known])
        robot.cycle()


def send(robot: Any, command: Command) -> bool:
    """One command into the simulated robot's control loop, as the robot interface hands it on;
    False when the loop rejects it (out of the limits, say): the robot rejected it too, said
    so and did not move, so the replay goes on without it."""
    try:
        if command.stream:
            _, positions, velocities = command.points[0]
            robot.loop.stream(command.joints, positions, velocities)
        else:
            points = [PointData(t, list(p), list(v)) for t, p, v in command.points]
            robot.loop.accept_trajectory(TrajectoryRequest(command.joints, points))
    except CommandRejectedError:
        return False
    return True


def rms(simulated: np.ndarray, motion: Motion, joints: Sequence[int]) -> float:
    """RMS difference (rad) of simulated and measured positions of ``joints`` over the motion."""
    difference = simulated[:, joints] - motion.positions[:, joints]
    return float(np.sqrt(np.nanmean(difference**2)))


# -- recording a simulated robot ------------------------------------------------------------
def record(robot: Any, commands: Sequence[Command], duration: float, path: Path, sensors: bool = True) -> None:
    """Stand the simulated ``robot`` at home, give it ``commands`` (times from now) for ``duration`` s and write what
    ``humanoid record`` would have recorded: ``joint_states`` at the publish rate, with ``sensors``
    the IMU (``imu/data``) and the feet's wrenches (``<side>_foot/wrench``) at the same stamps, and
    the commands (trajectories stamped with their start), as CDR messages of the installed types'
    definitions in an MCAP bag (:class:`~humanoid_tools.recording.bag_writer.BagWriter`); log
    times are the robot's clock."""
    from humanoid_tools.recording import BagWriter

    writer = BagWriter(path)
    messages = _Messages()
    topics = {topic: writer.add_topic(topic, kind, *messages.register(kind))
              for topic, kind in ((JOINT_STATES, JOINT_STATE_TYPE), (JOINT_TRAJECTORY, TRAJECTORY_TYPE),
                                  (JOINT_COMMANDS, JOINT_STATE_TYPE))}
    names = list(robot.model.joints.names)
    robot.reset()  # standing at home, as a replay starts

    def on_reading(reading: Any) -> None:
        state = reading.state
        data = messages.joint_state(state.stamp, names, state.position, state.velocity)
        writer.write(topics[JOINT_STATES], round(state.stamp * 1e9), data)
        found = reading.sensors
        if found is None:
            return
        log = round(found.stamp * 1e9)
        if found.imu is not None:
            if IMU not in topics:
                topics[IMU] = writer.add_topic(IMU, IMU_TYPE, *messages.register(IMU_TYPE))
            writer.write(topics[IMU], log, messages.imu(found.stamp, found.imu))
        for foot in found.feet:
            topic = FOOT_WRENCHES.get(foot.side)
            if topic is None:
                continue
            if topic not in topics:
                topics[topic] = writer.add_topic(topic, WRENCH_TYPE, *messages.register(WRENCH_TYPE))
            writer.write(topics[topic], log, messages.wrench(found.stamp, foot))

    origin = robot.now()
    robot.listen(on_reading, sensors=sensors)
    try:
        _record_commands(robot, commands, duration, writer, topics, messages, origin)
    finally:
        robot.unlisten(on_reading)
        writer.close()


def _record_commands(robot: Any, commands: Sequence[Command], duration: float, writer: Any,
                     topics: Mapping[str, Any], messages: _Messages, origin: float) -> None:
    for command in sorted(commands, key=lambda c: c.time):
        robot.run_until(origin + command.time)
        now = robot.now()
        if command.stream:
            _, positions, velocities = command.points[0]
            topic, data = JOINT_COMMANDS, messages.joint_state(0.0, command.joints, positions, velocities)
        else:
            topic, data = JOINT_TRAJECTORY, messages.trajectory(now, command)
        writer.write(topics[topic], round(now * 1e9), data)  # recorded, whether the robot takes it or not
        send(robot, command)
    robot.run_until(origin + duration)


class _Messages:
    """CDR messages of the installed ROS types (their definitions, as the recorder stores them)."""

    def __init__(self) -> None:
        from rosbags.typesys import Stores, get_typestore

        self.store = get_typestore(Stores.EMPTY)

    def register(self, kind: str) -> tuple[str, str]:
        """(definition, type hash) of ``kind``, now known to the serializer."""
        from rosbags.typesys import get_types_from_msg

        from humanoid_tools.recording import definition_text, type_hash

        definition = definition_text(kind)
        self.store.register(get_types_from_msg(definition, kind))
        return definition, type_hash(kind)

    def _header(self, stamp: float, frame: str = "") -> Any:
        types = self.store.types
        whole = int(np.floor(stamp))
        return types["std_msgs/msg/Header"](
            stamp=types["builtin_interfaces/msg/Time"](sec=whole, nanosec=round((stamp - whole) * 1e9)),
            frame_id=frame)

    def joint_state(self, stamp: float, names: Sequence[str], positions: Sequence[float],
                    velocities: Sequence[float]) -> bytes:
        msg = self.store.types[JOINT_STATE_TYPE](
            header=self._header(stamp), name=list(names), position=np.asarray(positions, dtype=float),
            velocity=np.asarray(velocities, dtype=float), effort=np.zeros(0))
        return bytes(self.store.serialize_cdr(msg, JOINT_STATE_TYPE))

    def imu(self, stamp: float, reading: Any) -> bytes:
        types = self.store.types
        x, y, z, w = reading.orientation
        msg = types[IMU_TYPE](
            header=self._header(stamp, reading.frame),
            orientation=types["geometry_msgs/msg/Quaternion"](x=x, y=y, z=z, w=w),
            orientation_covariance=np.zeros(9), angular_velocity=self._vector(reading.angular_velocity),
            angular_velocity_covariance=np.zeros(9), linear_acceleration=self._vector(reading.linear_acceleration),
            linear_acceleration_covariance=np.zeros(9))
        return bytes(self.store.serialize_cdr(msg, IMU_TYPE))

    def wrench(self, stamp: float, foot: Any) -> bytes:
        types = self.store.types
        msg = types[WRENCH_TYPE](header=self._header(stamp, foot.frame), wrench=types["geometry_msgs/msg/Wrench"](
            force=self._vector(foot.force), torque=self._vector(foot.torque)))
        return bytes(self.store.serialize_cdr(msg, WRENCH_TYPE))

    def _vector(self, values: Sequence[float]) -> Any:
        x, y, z = (float(v) for v in values)
        return self.store.types["geometry_msgs/msg/Vector3"](x=x, y=y, z=z)

    def trajectory(self, stamp: float, command: Command) -> bytes:
        types = self.store.types

        def duration(seconds: float) -> Any:
            whole = int(seconds)
            return types["builtin_interfaces/msg/Duration"](sec=whole, nanosec=round((seconds - whole) * 1e9))

        points = [types["trajectory_msgs/msg/JointTrajectoryPoint"](
            positions=np.asarray(p, dtype=float), velocities=np.asarray(v, dtype=float), accelerations=np.zeros(0),
            effort=np.zeros(0), time_from_start=duration(t)) for t, p, v in command.points]
        msg = types[TRAJECTORY_TYPE](header=self._header(stamp), joint_names=list(command.joints), points=points)
        return bytes(self.store.serialize_cdr(msg, TRAJECTORY_TYPE))


def plan_commands(plan: Sequence[tuple[float, Mapping[str, float], float]]) -> list[Command]:
    """Commands of a plan of moves ``(time, {joint: position}, seconds)``: a trajectory of the named
    joints reaching the positions in ``seconds`` (0: a streaming set-point, approached at the
    servos' own speed)."""
    commands = []
    for time, targets, seconds in plan:
        joints = tuple(targets)
        positions = tuple(float(targets[j]) for j in joints)
        if seconds > 0.0:
            commands.append(Command(time, joints, ((seconds, positions, (0.0,) * len(joints)),)))
        else:
            commands.append(Command(time, joints, ((0.0, positions, ()),), stream=True))
    return commands
