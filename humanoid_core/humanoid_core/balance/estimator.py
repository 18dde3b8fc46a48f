"""The balance estimator: whole-body CoM, support polygon, margins and ZMPs at one instant.

One :meth:`BalanceEstimator.update` per ``joint_states`` message. It works with
whatever the robot has, and says what it used:

**The base and the ground frame** (``BalanceEstimate.frame``; its x-y plane is the ground):

1. *ground truth* (simulation: ``ground_truth/base_pose``): the root link's placement in
   ``world``; the ground is world z = 0.
2. *IMU* (``imu/data``): the root link's orientation from the IMU's (the IMU may sit on a
   moving link: its placement in the root frame comes from the joints); the ground is
   the plane through the lowest corner of the supporting sole(s). The frame is the
   support sole's frame, levelled: origin under that sole's origin, its yaw, z up
   along gravity (it is exactly the sole frame while the sole lies flat).
3. *flat feet on flat ground* (no ground truth, no IMU: the Bioloid): the soles that
   support the robot are on the ground, as Tyropoulos' static-balance method assumes;
   both when they are level with each other, else the lower one. The frame is the
   support sole's frame (the right one in double support, the thesis' root). Ball feet
   (the quadruped): the plane through the centres of the balls the body rests on
   (:func:`humanoid_description.support.resting_points`) is parallel to the ground; the
   frame is levelled as with an IMU, under the first supporting foot.

The support sole frames are URDF frames, so on a robot without localisation the state
is in a frame robot_state_publisher's TF knows.

**Contacts** (which soles make the support polygon): the feet's contact topics, else
their wrenches (loaded above ``foot_load_threshold``), else the model (a sole whose
lowest corner is within ``contact_height`` of the ground; with flat feet, the support
soles). The polygon is the hull of the corners of those soles that lie within
``contact_height`` of the ground, as in the thesis' analysis
(:mod:`humanoid_robot_bioloid.thesis.pose_analysis`): a sole on its edge supports along that edge.

**Results**: the CoM (Pinocchio, the model's masses and the known joint positions) in
the ground frame; the support polygon (convex hull of the contacting soles' corners);
the signed margin of the CoM projection and of the measured ZMP (positive inside);
``stable`` when the CoM margin is at least ``min_margin``; the *reach margin*, the CoM
projection's margin in the hull of every foot within ``fall_step_height`` of the ground
(a swing foot counts: what the robot can put its weight on within a step; the fall
estimate's support, :mod:`humanoid_core.balance.fall`); the cart-table ZMP from
the filtered CoM acceleration (:mod:`~humanoid_core.balance.com_filter`; invalid
until the filter settles after a start or a change of frame) and the measured ZMP
(:mod:`~humanoid_core.balance.foot_pressure`; invalid without loaded feet).

**Cost**: the hardware's usual case (two flat feet, no sensors) runs at every
``joint_states`` message, 1 kHz on the HOAP-2: its support, frame and polygon depend only
on where the left sole is relative to the right one, so they are worked out when that
changes and held otherwise (:meth:`BalanceEstimator._flat_feet`); an update is then one
Pinocchio CoM, two sole placements and a few float operations
(docs/balance_monitor_performance.md: the figures).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pinocchio as pin

from humanoid_core.balance.com_filter import CoMFilter, cart_table_zmp
from humanoid_core.balance.foot_pressure import FootWrench, centre_of_pressure
from humanoid_core.balance.parameters import BalanceParameters
from humanoid_core.balance.readings import RecentReadings
from humanoid_description import (
    ConvexPolygon,
    RobotModel,
    convex_hull,
    levelling_rotation,
    resting_points,
    supporting_side,
)

T = TypeVar("T")

_IDENTITY = pin.SE3.Identity()
_IDENTITY_XYZQUAT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
_EMPTY = ConvexPolygon(np.zeros((0, 2)))


class BaseSource(enum.Enum):
    """Where the placement of the robot relative to the ground came from."""

    GROUND_TRUTH = "ground truth base pose"
    IMU = "IMU orientation, support soles on the ground"
    FLAT_FEET = "flat feet on flat ground assumed (no IMU, no ground truth)"


class ContactSource(enum.Enum):
    """What decided which soles touch the ground."""

    CONTACT_SENSORS = "foot contact sensors"
    FORCE_SENSORS = "foot force sensors"
    MODEL = "model (soles on the ground plane)"


@dataclass(frozen=True)
class BasePose:
    """The root link's placement in a ground frame (simulation ground truth)."""

    frame: str
    placement: pin.SE3

    @property
    def xyzquat(self) -> np.ndarray:
        return pin.SE3ToXYZQUAT(self.placement)


@dataclass
class BalanceInputs:
    """Recent readings of each optional sensor (the node adds what arrives)."""

    base_pose: RecentReadings[BasePose] = field(default_factory=RecentReadings)
    #: orientation of the IMU frame in a gravity-aligned frame (rotation matrix)
    imu_orientation: RecentReadings[np.ndarray] = field(default_factory=RecentReadings)
    wrenches: dict[str, RecentReadings[FootWrench]] = field(default_factory=dict)
    contacts: dict[str, RecentReadings[bool]] = field(default_factory=dict)

    @classmethod
    def at(cls, stamp: float, base_pose: BasePose | None = None, imu_orientation: np.ndarray | None = None,
           wrenches: dict[str, FootWrench] | None = None, contacts: dict[str, bool] | None = None) -> BalanceInputs:
        """Inputs holding one reading of each given sensor, stamped ``stamp``."""
        inputs = cls()
        if base_pose is not None:
            inputs.base_pose.add(stamp, base_pose)
        if imu_orientation is not None:
            inputs.imu_orientation.add(stamp, imu_orientation)
        for side, wrench in (wrenches or {}).items():
            inputs.wrenches.setdefault(side, RecentReadings()).add(stamp, wrench)
        for side, contact in (contacts or {}).items():
            inputs.contacts.setdefault(side, RecentReadings()).add(stamp, contact)
        return inputs

    def any_readings(self) -> bool:
        return bool(self.base_pose or self.imu_orientation or self.contacts or self.wrenches)


@dataclass(slots=True)
class BalanceEstimate:
    """Balance at one instant; points in ``frame`` (x-y plane = the ground), metres."""

    stamp: float
    frame: str
    com: tuple[float, float, float]
    com_velocity: tuple[float, float, float]  # of the low-passed CoM (see com_filter)
    zmp_model: tuple[float, float] | None  # None while the CoM filter settles
    zmp_measured: tuple[float, float] | None  # None without loaded feet
    polygon: ConvexPolygon
    contacts: dict[str, bool]
    margin: float  # of the CoM projection, m; NaN without support
    zmp_margin: float  # of the measured ZMP, m; NaN when invalid
    stable: bool
    base: pin.SE3  # placement of the root link in ``frame``
    base_source: BaseSource
    contact_source: ContactSource
    #: of the CoM projection in the hull of every foot within fall_step_height of the ground, m
    reach_margin: float = math.nan


@dataclass(frozen=True, slots=True)
class _FlatSupport:
    """The flat-feet path's support for one placement of the left sole in the right sole's
    frame, held while the soles keep that placement."""

    relative: pin.SE3
    on_right: bool  # the support sole, whose frame is the ground frame: the right one, else the left
    frame: str
    contacts: dict[str, bool]
    polygon: ConvexPolygon
    reach: ConvexPolygon  # the hull of both soles when the swing sole is within fall_step_height


class BalanceEstimator:
    """CoM, support polygon, margins and ZMPs of one robot, one update per joint reading.

    Owns its Pinocchio data (use one estimator per thread) and the state of the CoM
    filter, of the held flat-feet support and of the support polygon cache.
    """

    def __init__(self, model: RobotModel, params: BalanceParameters) -> None:
        self.model = model
        self.params = params
        self._pin = model.model
        self._data = model.model.createData()
        self._q = pin.neutral(model.model)
        self._q_index = model.q_index
        feet = model.config.feet
        self.sides: tuple[str, ...] = tuple(feet)
        self._sole_name = {side: foot.sole for side, foot in feet.items()}
        self._sole_id = {side: model.frame_id(foot.sole) for side, foot in feet.items()}
        self._feet = dict(feet)
        self._ball_feet = model.config.ball_feet
        imu = model.config.imu_frame
        self._imu_id = model.frame_id(imu) if model.model.existFrame(imu) else None
        self._filter = CoMFilter(params.com_filter_cutoff)
        self._zmp_filter = CoMFilter(params.zmp_measured_cutoff) if params.zmp_measured_cutoff > 0.0 else None
        self._frame: tuple[str, BaseSource] | None = None
        self._polygon_key: tuple[tuple[str, ...], list[pin.SE3]] | None = None
        self._two_feet = set(self.sides) == {"right", "left"}
        self._polygon = _EMPTY
        self._reach_key: list[pin.SE3] | None = None
        self._reach = _EMPTY
        self._flat: _FlatSupport | None = None

    @property
    def filter_delay(self) -> float:
        """Delay (s) of the CoM filter for slow motions (see com_filter)."""
        return self._filter.delay

    def _reading(self, readings: RecentReadings[T] | None, stamp: float) -> T | None:
        """The reading nearest ``stamp`` within sensor_timeout, if any."""
        return None if not readings else readings.nearest(stamp, self.params.sensor_timeout)

    # -- the update -------------------------------------------------------------------
    def update(self, stamp: float, positions: np.ndarray, inputs: BalanceInputs | None = None) -> BalanceEstimate:
        """Balance at ``stamp`` (s) for finite joint ``positions`` (rad, canonical order)."""
        params = self.params
        sensors = inputs is not None and inputs.any_readings()
        if not sensors and self._two_feet:
            return self._flat_feet(stamp, positions)
        if inputs is None:  # ball feet or one foot, no sensors: the model path, with no readings
            inputs = BalanceInputs()
        truth = self._reading(inputs.base_pose, stamp) if sensors and params.use_ground_truth else None
        com = self._com(positions, truth.xyzquat if truth is not None else _IDENTITY_XYZQUAT)
        self._flat = None  # the flat-feet path works its support out again when it comes back
        frame, source, base, com, soles, contacts, contact_source = self._locate(stamp, com, truth, inputs)
        polygon = self._support_polygon(soles, contacts)
        x, y, z = com.tolist()
        self._enter_frame(frame, source)
        _, velocity, acceleration = self._filter.update(stamp, (x, y, z))
        zmp_model = (cart_table_zmp((x, y, z), acceleration, params.gravity)
                     if self._filter.settled(stamp) else None)
        margin = polygon.margin(x, y)
        reach_margin = self._reach_polygon(soles).margin(x, y)
        zmp_measured = (self._measured_zmp(stamp, inputs, soles)  # type: ignore[arg-type]
                        if sensors and params.use_foot_sensors else None)
        zmp_margin = polygon.margin(*zmp_measured) if zmp_measured is not None else math.nan
        return BalanceEstimate(
            stamp=stamp, frame=frame, com=(x, y, z), com_velocity=velocity, zmp_model=zmp_model,
            zmp_measured=zmp_measured, polygon=polygon, contacts=contacts, margin=margin, zmp_margin=zmp_margin,
            stable=margin >= params.min_margin, base=base, base_source=source, contact_source=contact_source,
            reach_margin=reach_margin)

    def _com(self, positions: np.ndarray, base_xyzquat: np.ndarray) -> np.ndarray:
        """Whole-body CoM with the base at ``base_xyzquat``; the joint placements stay in the
        data for updateFramePlacement."""
        q = self._q
        q[self._q_index] = positions
        q[:7] = base_xyzquat
        return pin.centerOfMass(self._pin, self._data, q, False)

    def _flat_feet(self, stamp: float, positions: np.ndarray) -> BalanceEstimate:
        """Two flat feet on flat ground, no sensors: the estimate in the support sole's frame,
        the support held while the left sole stays where it was in the right sole's frame
        (within the relative polygon_precision, Pinocchio's SE3.isApprox)."""
        params = self.params
        com = self._com(positions, _IDENTITY_XYZQUAT)
        right = pin.updateFramePlacement(self._pin, self._data, self._sole_id["right"])  # faster than data.oMf[i]
        left = pin.updateFramePlacement(self._pin, self._data, self._sole_id["left"])
        relative = right.actInv(left)
        support = self._flat
        if support is None or not relative.isApprox(support.relative, params.polygon_precision):
            support = self._flat = self._flat_support(relative)
        ground = right if support.on_right else left
        x, y, z = ground.actInv(com).tolist()
        _, velocity, acceleration = self._filter.update(stamp, (x, y, z))
        zmp_model = cart_table_zmp((x, y, z), acceleration, params.gravity) if self._filter.settled(stamp) else None
        margin = support.polygon.margin(x, y)
        # positional: with keywords for its 14 fields this call takes 4-5 times as long
        return BalanceEstimate(stamp, support.frame, (x, y, z), velocity, zmp_model, None, support.polygon,
                               support.contacts, margin, math.nan, margin >= params.min_margin, ground.inverse(),
                               BaseSource.FLAT_FEET, ContactSource.MODEL, support.reach.margin(x, y))

    def _flat_support(self, relative: pin.SE3) -> _FlatSupport:
        """The support, its frame and polygon when the left sole is at ``relative`` in the
        right sole's frame (the filters restart if the frame changes)."""
        contacts = self._level_contacts(relative)
        support = self._support_sole(contacts)
        in_ground = ({"right": _IDENTITY, "left": relative} if support == "right"
                     else {"right": relative.inverse(), "left": _IDENTITY})
        frame = self._sole_name[support]
        polygon = self._support_polygon(in_ground, contacts)
        self._enter_frame(frame, BaseSource.FLAT_FEET)
        return _FlatSupport(relative, support == "right", frame, contacts, polygon, self._reach_polygon(in_ground))

    def _enter_frame(self, frame: str, source: BaseSource) -> None:
        """Restart the filters when the points' frame changes (the points jump)."""
        if (frame, source) != self._frame:
            self._filter.reset()
            if self._zmp_filter is not None:
                self._zmp_filter.reset()
            self._frame = (frame, source)

    def _locate(self, stamp: float, com: np.ndarray, truth: BasePose | None, inputs: BalanceInputs):
        """With sensors: the ground frame, where the base, CoM and soles are in it, and the
        contacts (see the module documentation for the order of preference)."""
        params = self.params
        soles = {side: pin.updateFramePlacement(self._pin, self._data, fid) for side, fid in self._sole_id.items()}
        sensed, contact_source = self._sensed_contacts(stamp, inputs)
        if truth is not None:
            contacts = sensed if sensed is not None else self._touching(soles, 0.0)
            return truth.frame, BaseSource.GROUND_TRUTH, truth.placement, com, soles, contacts, contact_source
        imu = self._reading(inputs.imu_orientation, stamp) if params.use_imu else None
        if imu is not None and self._imu_id is not None:
            source = BaseSource.IMU
            imu_in_base = pin.updateFramePlacement(self._pin, self._data, self._imu_id)
            level = pin.SE3(imu @ imu_in_base.rotation.T, np.zeros(3))
            support, base, soles, contacts = self._on_level_ground(level, soles, sensed)
        elif self._ball_feet:
            # balls on flat ground: the plane through the centres of those the body rests on is
            # parallel to the ground (support.resting_points, as the model stands the robot)
            source = BaseSource.FLAT_FEET
            centres = np.array([soles[side].translation for side in self.sides])
            resting = [centres[i] for i in resting_points(centres, com)]
            level = pin.SE3(levelling_rotation(np.array(resting)), np.zeros(3))
            support, base, soles, contacts = self._on_level_ground(level, soles, sensed)
        else:
            source = BaseSource.FLAT_FEET
            contacts = sensed if sensed is not None else self._flat_feet_contacts(soles)
            support = self._support_sole(contacts)
            ground = soles[support]
            base = ground.inverse()
            # the support sole is the ground frame itself: its placement there is the identity
            soles = {side: _IDENTITY if side == support else ground.actInv(placement)
                     for side, placement in soles.items()}
        return self._sole_name[support], source, base, base.act(com), soles, contacts, contact_source

    def _on_level_ground(self, level: pin.SE3, soles: dict[str, pin.SE3], sensed: dict[str, bool] | None):
        """The ground frame when ``level`` levels the base: the support sole, the base's
        placement in that frame, the soles there and the contacts (sensed, else the soles
        whose lowest point is within contact_height of the lowest)."""
        levelled = {side: level * placement for side, placement in soles.items()}
        lowest = min(self._lowest_corner(side, p) for side, p in levelled.items())
        contacts = sensed if sensed is not None else self._touching(levelled, lowest)
        support = self._support_sole(contacts)
        base = _levelled_frame(levelled[support], lowest).actInv(level)
        return support, base, {side: base * placement for side, placement in soles.items()}, contacts

    # -- contacts ---------------------------------------------------------------------
    def _sensed_contacts(self, stamp: float, inputs: BalanceInputs) -> tuple[dict[str, bool] | None, ContactSource]:
        """Contacts from the feet's sensors when every foot has a fresh reading."""
        if self.params.use_foot_sensors and (inputs.contacts or inputs.wrenches):
            contacts = {side: self._reading(inputs.contacts.get(side), stamp) for side in self.sides}
            if all(c is not None for c in contacts.values()):
                return {side: bool(c) for side, c in contacts.items()}, ContactSource.CONTACT_SENSORS
            wrenches = {side: self._reading(inputs.wrenches.get(side), stamp) for side in self.sides}
            if all(w is not None for w in wrenches.values()):
                threshold = self.params.foot_load_threshold
                return ({side: w.load > threshold for side, w in wrenches.items()},  # type: ignore[union-attr]
                        ContactSource.FORCE_SENSORS)
        return None, ContactSource.MODEL

    def _lowest_corner(self, side: str, placement: pin.SE3) -> float:
        """Height of a sole's lowest corner in the frame of its ``placement``."""
        return float(np.min(self._feet[side].contact_points(placement.rotation, placement.translation)[:, 2]))

    def _touching(self, soles: dict[str, pin.SE3], ground: float) -> dict[str, bool]:
        """Soles whose lowest corner is within contact_height of the ground height."""
        limit = ground + self.params.contact_height
        return {side: self._lowest_corner(side, placement) <= limit for side, placement in soles.items()}

    def _flat_feet_contacts(self, soles: dict[str, pin.SE3]) -> dict[str, bool]:
        """With flat feet on flat ground: both soles when level with each other, else the lower."""
        if not self._two_feet:
            return dict.fromkeys(self.sides, True)
        return self._level_contacts(soles["right"].actInv(soles["left"]))

    def _level_contacts(self, relative: pin.SE3) -> dict[str, bool]:
        """Two flat feet, the left sole at ``relative`` in the right sole's frame: both soles
        when level with each other, else the lower."""
        side = supporting_side(relative.rotation, relative.translation, self.params.level_angle,
                               self.params.contact_height)
        return {"right": side != "left", "left": side != "right"}

    def _support_sole(self, contacts: dict[str, bool]) -> str:
        """The sole whose frame is the ground frame: the first in contact (right first)."""
        for side in self.sides:
            if contacts[side]:
                return side
        return self.sides[0]

    # -- polygon and ZMP ------------------------------------------------------------
    def _support_polygon(self, soles: dict[str, pin.SE3], contacts: dict[str, bool]) -> ConvexPolygon:
        """Convex hull of the corners of the contacting soles that lie on the ground (within
        contact_height of z = 0; a sole tilted on its edge touches only there), rebuilt only
        when the contacts changed or a contacting sole moved in the ground frame by more than
        the relative polygon_precision (Pinocchio's SE3.isApprox)."""
        touching = tuple(side for side in self.sides if contacts[side])
        if not touching:
            self._polygon_key = None
            return _EMPTY
        placements = [soles[side] for side in touching]
        key = self._polygon_key
        precision = self.params.polygon_precision
        if key is not None and key[0] == touching and _same_placements(placements, key[1], precision):
            return self._polygon
        height = self.params.contact_height
        on_ground = []
        for side, placement in zip(touching, placements, strict=True):
            corners = self._feet[side].contact_points(placement.rotation, placement.translation).T
            near = np.abs(corners[2]) <= height
            if not near.any():  # the sensors say it touches: at its lowest corners, then
                near = corners[2] <= corners[2].min() + height
            on_ground.append(corners[:2, near])
        self._polygon = ConvexPolygon(convex_hull(np.hstack(on_ground).T))
        self._polygon_key = (touching, [pin.SE3(p) for p in placements])
        return self._polygon

    def _reach_polygon(self, soles: dict[str, pin.SE3]) -> ConvexPolygon:
        """Convex hull of the corners (balls: lowest points) of every sole that lie within
        fall_step_height of the lowest one: where the robot can put its weight within a step,
        a gait's swing feet included. Rebuilt only when a sole
        moved by more than the relative polygon_precision."""
        placements = [soles[side] for side in self.sides]
        key = self._reach_key
        precision = self.params.polygon_precision
        if key is not None and _same_placements(placements, key, precision):
            return self._reach
        corners = np.vstack([self._feet[side].contact_points(p.rotation, p.translation)
                             for side, p in zip(self.sides, placements, strict=True)])
        near = corners[corners[:, 2] <= corners[:, 2].min() + self.params.fall_step_height]
        self._reach = ConvexPolygon(convex_hull(near[:, :2]))
        self._reach_key = [pin.SE3(p) for p in placements]
        return self._reach

    def _measured_zmp(self, stamp: float, inputs: BalanceInputs,
                      soles: dict[str, pin.SE3]) -> tuple[float, float] | None:
        """Centre of pressure of the loaded feet, low-passed when zmp_measured_cutoff > 0
        (None while unloaded, and while the low-pass settles after that)."""
        pressure = self._centre_of_pressure(stamp, inputs, soles)
        if pressure is None or self._zmp_filter is None:
            if self._zmp_filter is not None:
                self._zmp_filter.reset()
            return pressure
        smoothed, _, _ = self._zmp_filter.update(stamp, (pressure[0], pressure[1], 0.0))
        return (smoothed[0], smoothed[1]) if self._zmp_filter.settled(stamp) else None

    def _centre_of_pressure(self, stamp: float, inputs: BalanceInputs,
                            soles: dict[str, pin.SE3]) -> tuple[float, float] | None:
        feet = [(wrench, soles[side].rotation, soles[side].translation)
                for side, readings in inputs.wrenches.items()
                if side in soles and (wrench := self._reading(readings, stamp)) is not None]
        return centre_of_pressure(feet, self.params.foot_load_threshold) if feet else None


def _levelled_frame(sole: pin.SE3, ground: float) -> pin.SE3:
    """A gravity-aligned frame on the ground plane (height ``ground``) under a sole's origin,
    with the sole's heading: the sole frame itself when the sole lies flat on the ground."""
    heading = math.atan2(float(sole.rotation[1, 0]), float(sole.rotation[0, 0]))
    c, s = math.cos(heading), math.sin(heading)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return pin.SE3(rotation, np.array([float(sole.translation[0]), float(sole.translation[1]), ground]))


def _same_placements(now: list[pin.SE3], then: list[pin.SE3], precision: float) -> bool:
    """Whether each sole is where it was, within the relative ``precision`` (a polygon's cache key)."""
    return all(a.isApprox(b, precision) for a, b in zip(now, then, strict=True))
