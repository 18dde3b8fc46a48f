"""Watching a robot's feet through its interface: has a foot left the ground, has it fallen,
which way does it tip?

Only readings the real robot has too are needed for the feet (``<side>_foot/wrench`` and
``imu/data``); the simulator's ``fallen`` is used when it is published. Every decision
uses the robot's own time stamps, so the verdicts do not depend on how fast this client
or the simulation runs. :class:`FootWatch` takes the readings from whoever has them:
:func:`watch_topics` feeds it from a robot client's subscriptions, an in-process run
(:mod:`humanoid_experiments.postures.in_process`) from the simulated robot's readings.

Any number of feet, flat or ball (``feet`` of the robot's config): a foot's load is
:meth:`Foot.load <humanoid_description.config.Foot.load>`. What tips is what the robot
stands on: each flat sole, which pivots about an edge when the robot loses its balance;
on ball feet, which have no orientation of their own on the ground (their frames turn
with the legs), the body resting on them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from humanoid_control.ros import topics
from humanoid_description import RobotModel

if TYPE_CHECKING:
    from humanoid_control.ros import RobotClient

#: The robot's clock (s).
Clock = Callable[[], float]
#: The latest joint readings by name (None before any).
Joints = Callable[[], "Mapping[str, float] | None"]


@dataclass(frozen=True)
class FootEvent:
    """What ended a test: ``kind`` is ``lift`` (a foot left the ground), ``fall`` (the simulator
    reported a fall) or ``tip`` (the feet tilted past the tip angle)."""

    kind: str
    time: float  # robot time at which it was established
    detail: str

    def __str__(self) -> str:
        return self.detail


#: The key of :func:`support_tilts` for the body of a robot on ball feet.
BODY = "body"


class FootWatch:
    """The feet, the IMU and ``fallen`` of one robot, fed by :meth:`on_wrench`, :meth:`on_imu`
    and :meth:`on_fallen`; ``now`` is the robot's clock, ``joints`` its latest joint readings.
    :meth:`arm` starts a watch."""

    def __init__(self, model: RobotModel, contact_threshold: float, lift_time: float, now: Clock,
                 joints: Joints, stop_at_lift: bool = True) -> None:
        self.model, self.now, self.joints = model, now, joints
        #: a foot off the ground ends the watch (else only tips and falls do; lifts are still logged)
        self.stop_at_lift = stop_at_lift
        self.lifted: FootEvent | None = None  # the first foot that left the ground since arm()
        self.ball_feet = model.config.ball_feet
        self._tilt_origin: dict[str, tuple[float, float]] = {}
        self.contact_threshold, self.lift_time = contact_threshold, lift_time
        self._lock = threading.Lock()
        self._since = math.inf  # nothing counts before arm()
        self._event: FootEvent | None = None
        self._low_since: dict[str, float | None] = {}
        self.forces: dict[str, float] = {}  # latest load per foot (Foot.load), N
        self.readings_at: dict[str, float] = {}  # robot time of each sensor's latest reading (a foot, "imu")
        self._imu: tuple[float, float, float, float] | None = None  # w, x, y, z
        self.fallen_seen = False  # the simulator publishes `fallen` (a real robot does not)
        self._fallen = False  # the simulator's latest `fallen`
        self._fallen_at_arm = False  # fallen when armed (a start lying on a limb): not a fall until it rose

    def arm(self, since: float) -> None:
        """Watch from robot time ``since`` on; forget any earlier event."""
        with self._lock:
            self._since = since
            self._event = None
            self.lifted = None
            # the soles' tilt as the encoders see it when standing: the gears' sag under the
            # robot's own weight (play, deflection) is not in the joint readings
            self._tilt_origin = self.support_tilts()
            self._low_since = {side: None for side in self.model.config.feet}
            self._fallen_at_arm = self._fallen

    @property
    def event(self) -> FootEvent | None:
        return self._event

    def _record(self, event: FootEvent) -> None:
        if self._event is None and event.time >= self._since:
            self._event = event

    def on_wrench(self, side: str, force_vector: tuple[float, float, float], stamp: float) -> None:
        """A foot's force reading (N, in its sole frame) at robot time ``stamp``."""
        force = self.model.config.feet[side].load(force_vector)
        with self._lock:
            self.forces[side] = force
            self.readings_at[side] = stamp
            if stamp < self._since or side not in self._low_since:
                return
            if force >= self.contact_threshold:
                self._low_since[side] = None
                return
            low_since = self._low_since[side]
            if low_since is None:
                self._low_since[side] = stamp
            elif stamp - low_since >= self.lift_time:
                lift = FootEvent("lift", stamp, f"the {side} foot left the ground (below "
                                                f"{self.contact_threshold:g} N for {stamp - low_since:.2f} s)")
                if self.lifted is None:
                    self.lifted = lift
                if self.stop_at_lift:
                    self._record(lift)

    def on_imu(self, orientation: tuple[float, float, float, float], stamp: float = math.nan) -> None:
        """The IMU's orientation in the world (w, x, y, z), read at robot time ``stamp``."""
        self._imu = orientation
        if math.isfinite(stamp):
            self.readings_at["imu"] = stamp

    def has_read(self, stamp: float) -> bool:
        """Has every sensor that reports (each foot, the IMU) sent its reading of robot time ``stamp``?"""
        with self._lock:
            return all(at >= stamp for at in self.readings_at.values())

    def on_fallen(self, fallen: bool) -> None:
        """The simulator's fall watch: a fall once armed, unless the robot already counted as
        fallen when armed (a starting posture with a limb on the ground) and has not risen since."""
        self.fallen_seen = True
        with self._lock:
            self._fallen = fallen
            if not fallen:
                self._fallen_at_arm = False
            elif not self._fallen_at_arm:
                self._record(FootEvent("fall", self.now(), "the robot fell (simulator's fallen)"))

    def check_tip(self, tip_angle: float) -> None:
        """Record a ``tip`` event when what the robot stands on leans ``tip_angle`` (rad) further
        than when the watch was armed: every flat sole (the robot pivots about an edge of its
        support; a foot in the air leans with the trunk), or the body on ball feet."""
        tilts = self.support_tilts()
        if not tilts:
            return
        origin = self._tilt_origin
        changes = [(t[0] - origin.get(side, (0.0, 0.0))[0], t[1] - origin.get(side, (0.0, 0.0))[1])
                   for side, t in tilts.items()]
        tilt = min(changes, key=lambda value: math.hypot(*value))
        if math.hypot(*tilt) > tip_angle:
            what, how = (("the body", "goes over") if self.ball_feet
                         else ("the feet", "pivots about an edge"))
            with self._lock:
                self._record(FootEvent("tip", self.now(),
                                       f"{what} tipped {math.degrees(math.hypot(*tilt)):.1f} deg "
                                       f"({tip_direction(tilt)}) or more: the robot {how}"))

    def support_tilts(self) -> dict[str, tuple[float, float]]:
        """:func:`support_tilts` of the latest IMU and joint readings (empty before both arrived)."""
        imu, joints = self._imu, self.joints()
        if imu is None or joints is None:
            return {}
        return support_tilts(self.model, imu, joints)

    def feet_tilt(self) -> tuple[float, float] | None:
        """How far the soles (or the body on ball feet) lean on average (rad, as
        :meth:`support_tilts`; None before readings)."""
        tilts = self.support_tilts()
        if not tilts:
            return None
        return (float(np.mean([t[0] for t in tilts.values()])), float(np.mean([t[1] for t in tilts.values()])))


def watch_topics(client: RobotClient, model: RobotModel, contact_threshold: float, lift_time: float,
                 stop_at_lift: bool = True) -> FootWatch:
    """A watch fed by ``client``'s subscriptions to the feet's wrenches, the IMU and ``fallen``,
    on the robot's clock of its ``joint_states``."""
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import Imu
    from std_msgs.msg import Bool

    from humanoid_control.ros import seconds

    def joints() -> dict[str, float] | None:
        state = client.joint_state
        return None if state is None else dict(zip(state.name, state.position, strict=True))

    watch = FootWatch(model, contact_threshold, lift_time, client.now, joints, stop_at_lift)

    def on_wrench(side: str, msg: WrenchStamped) -> None:
        f = msg.wrench.force
        watch.on_wrench(side, (f.x, f.y, f.z), seconds(msg.header.stamp))

    def on_imu(msg: Imu) -> None:
        q = msg.orientation
        watch.on_imu((q.w, q.x, q.y, q.z), seconds(msg.header.stamp))

    # each state's readings with its joint_states (RobotClient.take_readings): from topics of their
    # own, a reading could come after the look at its state (a fall a look later in some runs)
    for side in model.config.feet:
        client.take_readings(topics.foot_wrench(side), WrenchStamped, lambda msg, side=side: on_wrench(side, msg))
    client.take_readings(topics.IMU, Imu, on_imu)
    client.take_readings(topics.FALLEN, Bool, lambda msg: watch.on_fallen(msg.data))
    return watch


def support_tilts(model: RobotModel, imu_orientation: Sequence[float],
                  positions: dict[str, float]) -> dict[str, tuple[float, float]]:
    """How far what the robot stands on leans (rad), from the IMU's orientation (w, x, y, z, in
    the world) and the joint readings: the (forward, left) components of each flat sole's
    normal, by foot; on ball feet, of the body's vertical axis (key ``body``): a ball touches
    the ground at one point whatever way its frame, which turns with the leg, is turned."""
    w, x, y, z = imu_orientation
    world_imu = pin.Quaternion(w, x, y, z).toRotationMatrix()
    ball_feet = model.config.ball_feet
    soles = {} if ball_feet else {side: foot.sole for side, foot in model.config.feet.items()}
    frames = model.frame_placements([model.config.imu_frame, *soles.values()], positions)
    world_base = world_imu @ frames[model.config.imu_frame].rotation.T
    if ball_feet:
        return {BODY: _lean(world_base[:, 2])}
    return {side: _lean(world_base @ frames[sole].rotation[:, 2]) for side, sole in soles.items()}


def _lean(axis: np.ndarray) -> tuple[float, float]:
    """(forward, left) lean (rad) of a unit vector that is vertical when level."""
    return math.atan2(axis[0], axis[2]), math.atan2(axis[1], axis[2])


def tip_direction(tilt: Sequence[float] | None, least: float = math.radians(2.0)) -> str:
    """``forward``/``backward``/``left``/``right`` for the larger tilt component, or ``level``
    when the feet lean less than ``least`` (rad). A sole whose normal leans forward stands on its
    toes, a body whose vertical axis leans forward pitches nose down: the robot tips forward."""
    if tilt is None:
        return "unknown"
    forward, left = tilt
    if math.hypot(forward, left) < least:
        return "level"
    if abs(forward) >= abs(left):
        return "forward" if forward > 0.0 else "backward"
    return "left" if left > 0.0 else "right"
