"""Kinematic odometry: the base's pose in the ``odom`` frame from the joint readings, the feet
that stand on the ground and the IMU where there is one (no ROS).

The odometry of the bit-bots' and ROBOTIS' walking stacks: a foot on the ground does not move,
so the base is where the leg's forward kinematics puts it from that foot.

- **Flat soles** (the bipeds): one *anchor*, the support sole. Its pose in ``odom`` (x, y,
  heading, on the ground z = 0) is held while it stands; the base is the anchor's pose times the
  sole-to-base kinematics. When the anchor rises ``stance_height`` above the other sole, that
  sole (which stands) becomes the anchor, placed where the kinematics put it at that instant.
  Without an IMU the anchor sole lies flat on the ground (the Bioloid); with one (the HOAP-2)
  the base's orientation is the IMU's (heading relative to the start), the anchor only gives
  the position.
- **Ball feet** (the quadruped): the stance legs, the feet within ``stance_height`` of the
  lowest once levelled (by the IMU, else the plane of the lowest balls). Each keeps the
  ground position it had when it came down; the heading is the rotation that best matches the
  stance feet now with where they stood (two or more that stood at the previous reading, a 2-D
  least-squares fit; the IMU's heading where there is one), the position their mean. A
  standing ball rolls: its place moves by its radius times its turn about the horizontal axes.

The support is taken from the kinematics, not from a controller's plan: the odometry serves
any motion (the walk, a trajectory, a gait, ``cmd_vel``), needs no topic from the walk
controller, and in lockstep answers each state from that state alone.

The ``odom`` frame: on the ground, its origin under the base at the first reading, its x axis
the base's heading then.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_core.biped_walking import wrap_angle
from humanoid_core.odometry.parameters import OdometryParameters
from humanoid_description import levelling_rotation

__all__ = ["KinematicOdometry", "OdometryEstimate", "planar_drift", "yaw_of"]


def yaw_of(rotation: np.ndarray) -> float:
    """The heading (rad) of a rotation: its x axis' direction on the ground."""
    return math.atan2(rotation[1, 0], rotation[0, 0])


def _rz(yaw: float) -> np.ndarray:
    return pin.rpy.rpyToMatrix(0.0, 0.0, yaw)


_ORIGIN = np.zeros(3)


def _planar_turn(then: list[np.ndarray], now: list[np.ndarray]) -> float:
    """The rotation about z (rad) that best maps the points ``then`` onto ``now`` in the
    plane, about their centroids (2-D least squares). In floats: a handful of points at every
    state, where numpy's per-call overhead is most of the cost."""
    a = [(float(p[0]), float(p[1])) for p in then]
    b = [(float(p[0]), float(p[1])) for p in now]
    n = len(a)
    ax, ay = sum(x for x, _ in a) / n, sum(y for _, y in a) / n
    bx, by = sum(x for x, _ in b) / n, sum(y for _, y in b) / n
    cross = dot = 0.0
    for (px, py), (qx, qy) in zip(a, b, strict=True):
        px, py, qx, qy = px - ax, py - ay, qx - bx, qy - by
        cross += qx * py - qy * px
        dot += qx * px + qy * py
    return math.atan2(cross, dot)


@dataclass(frozen=True)
class OdometryEstimate:
    """The base in ``odom`` at ``stamp``: placement, twist in the base's axes (m/s, rad/s), the
    distance walked so far (m, the base's path on the ground) and the feet it stands on."""

    stamp: float
    base: pin.SE3
    linear: tuple[float, float, float]
    angular: tuple[float, float, float]
    distance: float
    stance: tuple[str, ...]
    orientation_source: str

    @property
    def heading(self) -> float:
        return yaw_of(self.base.rotation)


def planar_drift(odom_start: pin.SE3, odom_end: pin.SE3, truth_start: pin.SE3,
                 truth_end: pin.SE3) -> tuple[float, float]:
    """The odometry's error against the ground truth over one run: the distance (m) between the
    two final positions, each taken from its own start in its start's heading frame, and the
    heading error (rad) of the turn made."""
    def moved(start: pin.SE3, end: pin.SE3) -> tuple[np.ndarray, float]:
        heading = yaw_of(start.rotation)
        step = _rz(-heading) @ (end.translation - start.translation)
        return step[:2], yaw_of(end.rotation) - heading

    odom_step, odom_turn = moved(odom_start, odom_end)
    truth_step, truth_turn = moved(truth_start, truth_end)
    return float(np.linalg.norm(odom_step - truth_step)), wrap_angle(odom_turn - truth_turn)


class KinematicOdometry:
    """One robot's odometry, one :meth:`update` per joint reading (owns its Pinocchio data)."""

    def __init__(self, model, params: OdometryParameters) -> None:
        self.params = params
        self._pin = model.model
        self._data = model.model.createData()
        self._q = pin.neutral(model.model)
        self._q_index = model.q_index
        feet = model.config.feet
        self.sides: tuple[str, ...] = tuple(feet)
        self._sole_id = {side: model.frame_id(foot.sole) for side, foot in feet.items()}
        self.ball_feet = any(foot.is_ball for foot in feet.values())
        self._radius = {side: foot.radius for side, foot in feet.items()} if params.ball_rolling else {}
        imu = model.config.imu_frame
        self._imu_id = model.frame_id(imu) if imu and model.model.existFrame(imu) else None
        self.reset()

    def reset(self) -> None:
        """Start again: the next reading is the new origin."""
        self._anchor: str | None = None
        self._anchor_pose = (np.zeros(3), 0.0)  # flat soles: the anchor's position and heading
        self._stood: dict[str, np.ndarray] = {}  # ball feet: ground position of each stance foot
        self._recent: deque[tuple[float, dict[str, np.ndarray]]] = deque()  # ball feet, levelled, as read
        self._turned: dict[str, np.ndarray] = {}  # ball feet: each stance ball's orientation in odom
        self._heading = 0.0
        self._imu_heading0: float | None = None
        self._last: OdometryEstimate | None = None
        self._twist_from: tuple[float, pin.SE3] | None = None
        self._twist = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        self._distance = 0.0

    @property
    def has_imu_frame(self) -> bool:
        return self._imu_id is not None

    def update(self, stamp: float, positions: np.ndarray,
               imu_orientation: np.ndarray | None = None) -> OdometryEstimate:
        """The base's pose in ``odom`` at ``stamp`` (s) for finite joint ``positions`` (rad,
        canonical order) and the IMU's orientation in its world (3x3), if one was read."""
        q = self._q
        q[self._q_index] = positions
        pin.framesForwardKinematics(self._pin, self._data, q)
        feet = {side: self._data.oMf[fid] for side, fid in self._sole_id.items()}
        level = None
        if imu_orientation is not None and self._imu_id is not None and self.params.use_imu:
            world_base = np.asarray(imu_orientation) @ self._data.oMf[self._imu_id].rotation.T
            if self._imu_heading0 is None:
                self._imu_heading0 = yaw_of(world_base)
            level = _rz(-self._imu_heading0) @ world_base  # heading relative to the start
        if self.ball_feet:
            base, stance = self._on_balls(stamp, feet, level)
        else:
            base, stance = self._on_soles(feet, level)
        estimate = self._estimate(stamp, base, stance, "imu" if level is not None else "feet")
        self._last = estimate
        return estimate

    # -- flat soles ---------------------------------------------------------------------
    def _on_soles(self, feet: dict[str, pin.SE3], level: np.ndarray | None) -> tuple[pin.SE3, tuple[str, ...]]:
        if self._anchor is None:
            self._start_on_soles(feet, level)
        anchor = self._anchor
        rotation = self._sole_rotation(feet[anchor], level)
        # heights of the soles, levelled: in the anchor's frame when the anchor lies flat
        heights = {side: float((rotation @ f.translation)[2]) for side, f in feet.items()}
        lowest = min(heights.values())
        stance = self._stance(heights, lowest)
        landed = [side for side in stance if side not in self._stood]
        if anchor not in stance and not landed:
            landed = [min(heights, key=heights.__getitem__)]  # the anchor rose with no foot seen landing
        if landed and landed[0] != anchor:
            # the foot that came down last anchors, placed where the kinematics put it as it lands
            base = self._base_on_sole(feet[anchor], level)
            placed = base * feet[landed[0]]
            self._anchor = anchor = landed[0]
            self._anchor_pose = (np.array([placed.translation[0], placed.translation[1], 0.0]),
                                 yaw_of(placed.rotation))
        self._stood = {side: np.zeros(3) for side in stance}
        return self._base_on_sole(feet[anchor], level), stance

    def _stance(self, heights: dict[str, float], lowest: float) -> tuple[str, ...]:
        """The feet on the ground: a foot stays down within ``stance_height`` of the lowest and
        comes down within ``landing_height`` (a landing foot is seen as late as it is still
        moving: it anchors only once down)."""
        p = self.params
        return tuple(side for side in self.sides
                     if heights[side] - lowest <= (p.stance_height if side in self._stood else p.landing_height))

    def _sole_rotation(self, sole: pin.SE3, level: np.ndarray | None) -> np.ndarray:
        """The base's orientation in odom from the anchor (flat on the ground) or the IMU."""
        if level is not None:
            return level
        return _rz(self._anchor_pose[1]) @ sole.rotation.T

    def _base_on_sole(self, sole: pin.SE3, level: np.ndarray | None) -> pin.SE3:
        rotation = self._sole_rotation(sole, level)
        return pin.SE3(rotation, self._anchor_pose[0] - rotation @ sole.translation)

    def _start_on_soles(self, feet: dict[str, pin.SE3], level: np.ndarray | None) -> None:
        """The lower sole anchors; odom lies under the base, along its heading."""
        if level is not None:
            heights = {side: float((level @ f.translation)[2]) for side, f in feet.items()}
        else:
            first = feet[self.sides[0]]
            heights = {side: float(first.actInv(f).translation[2]) for side, f in feet.items()}
        lowest = min(heights.values())
        self._anchor = next(s for s in self.sides if heights[s] - lowest <= self.params.stance_height)
        self._stood = {s: np.zeros(3) for s in self.sides if heights[s] - lowest <= self.params.stance_height}
        self._anchor_pose = (np.zeros(3), 0.0)
        base = self._base_on_sole(feet[self._anchor], level)
        heading = 0.0 if level is not None else yaw_of(base.rotation)
        turn = _rz(-heading)
        offset = turn @ np.array([-base.translation[0], -base.translation[1], 0.0])
        self._anchor_pose = (offset, -heading)

    # -- ball feet ----------------------------------------------------------------------
    def _on_balls(self, stamp: float, feet: dict[str, pin.SE3], level: np.ndarray | None
                  ) -> tuple[pin.SE3, tuple[str, ...]]:
        points = {side: np.array(f.translation) for side, f in feet.items()}
        # the IMU's tilt, its heading apart; else the plane of the lowest balls
        tilt = levelling_rotation(self._lowest_plane(points)) if level is None else _rz(-yaw_of(level)) @ level
        levelled = {side: tilt @ p for side, p in points.items()}
        lowest = min(p[2] for p in levelled.values())
        low = [s for s in self.sides if levelled[s][2] - lowest <= self.params.stance_height]
        moving = self._moving(stamp, low, levelled)
        stance = tuple(s for s in low if s not in moving)
        first = not self._stood and self._last is None
        kept = [s for s in stance if s in self._stood]
        if level is not None:
            heading = yaw_of(level)
        elif len(kept) >= 2:
            heading = _planar_turn([self._stood[s] for s in kept], [levelled[s] for s in kept])
        else:
            heading = self._heading
        self._heading = heading
        rotation = _rz(heading) @ tilt
        turned = {s: rotation @ feet[s].rotation for s in stance} if self._radius else {}
        for s in kept:
            self._roll(s, turned)
        if first:
            position = np.array([0.0, 0.0, -lowest])
        else:
            anchored = kept or list(stance)
            position = sum(self._stood.get(s, _ORIGIN) - rotation @ points[s] for s in anchored) / len(anchored)
            if not kept:  # none stood before (cannot happen on the ground): hold the last position
                position = np.array(self._last.base.translation) if self._last is not None else position
            position[2] = -lowest
        # feet that came down take their place on the ground; those that left forget theirs
        self._stood = {s: (self._stood[s] if s in kept else position + rotation @ points[s]) for s in stance}
        for s in stance:
            self._stood[s][2] = position[2] + levelled[s][2]
        self._turned = turned
        return pin.SE3(rotation, position), stance

    def _roll(self, foot: str, turned: dict[str, np.ndarray]) -> None:
        """A standing ball rolls: its centre moves ``radius`` times its turn about the ground's
        horizontal axes (about the vertical it spins in place). Without this the trot's distance
        came out 9 % short: the leg turns the ball as the body passes over it."""
        then, r = self._turned.get(foot), self._radius.get(foot, 0.0)
        if then is None or r == 0.0:
            return
        m = turned[foot] @ then.T  # the turn since the last reading, in odom; small: sin(angle) * axis
        about_x, about_y = (m[2, 1] - m[1, 2]) / 2.0, (m[0, 2] - m[2, 0]) / 2.0
        self._stood[foot] = self._stood[foot] + np.array([r * about_y, -r * about_x, 0.0])

    def _moving(self, stamp: float, low: list[str], levelled: dict[str, np.ndarray]) -> set[str]:
        """The low feet that move against the others, when three are low: the levelling's plane
        passes through the third lowest ball, so with two standing (a trot's diagonal pair) the
        lower swinging foot looks as low as they are. Feet on the ground keep their distances to
        each other: the one of the three whose distances to the other two change fastest, if
        faster than ``slip_speed`` (over ``slip_window``), is not standing. Four low feet all
        touch (the plane through three, the fourth on it): a foot sliding among them still
        stands."""
        recent = self._recent
        if recent and stamp < recent[-1][0]:
            recent.clear()  # time went back (a reset, a bag replayed again)
        recent.append((stamp, levelled))
        window = self.params.slip_window - 1e-9  # stamps summed from periods: 0.1 s may read 0.0999...
        while len(recent) > 1 and stamp - recent[1][0] >= window:
            recent.popleft()
        then, before = recent[0]
        if stamp - then < window or len(low) != 3:
            return set()

        # how much each pair's distance changed (m), once per pair
        change = {pair: abs(math.dist(levelled[pair[0]][:2], levelled[pair[1]][:2])
                            - math.dist(before[pair[0]][:2], before[pair[1]][:2]))
                  for pair in itertools.combinations(low, 2)}

        def speed(foot: str) -> float:  # m/s, its distances to the other two
            return sum(moved for pair, moved in change.items() if foot in pair) / 2.0 / (stamp - then)

        fastest, fastest_speed = max(((foot, speed(foot)) for foot in low), key=lambda pair: pair[1])
        return {fastest} if fastest_speed > self.params.slip_speed else set()

    @staticmethod
    def _lowest_plane(points: dict[str, np.ndarray]) -> np.ndarray:
        """The three lowest balls' centres (the plane a body rests on, near enough for levelling)."""
        ordered = sorted(points.values(), key=lambda p: p[2])
        return np.array(ordered[:3])

    # -- twist and distance ---------------------------------------------------------------
    def _estimate(self, stamp: float, base: pin.SE3, stance: tuple[str, ...], source: str) -> OdometryEstimate:
        last = self._last
        if last is not None:
            step = base.translation[:2] - last.base.translation[:2]
            self._distance += float(math.hypot(step[0], step[1]))
        if self._twist_from is None:
            self._twist_from = (stamp, base)
        else:
            then, placement = self._twist_from
            dt = stamp - then
            if dt >= self.params.twist_window:
                motion = pin.log6(placement.actInv(base))  # in the base's axes (then)
                self._twist = (tuple(float(v) / dt for v in motion.linear),  # type: ignore[assignment]
                               tuple(float(v) / dt for v in motion.angular))
                self._twist_from = (stamp, base)
            elif dt < 0.0:
                self._twist_from = (stamp, base)
        return OdometryEstimate(stamp, base, self._twist[0], self._twist[1], self._distance, stance, source)

    def covariances(self, estimate: OdometryEstimate) -> tuple[list[float], list[float]]:
        """Pose and twist covariances (6x6, row-major, x y z roll pitch yaw): the position's
        standard deviation grows with the distance walked (``position_drift``), the heading's too
        without an IMU (``heading_drift``); z, roll and pitch are the kinematics' and the IMU's."""
        p = self.params
        xy = (p.position_drift * estimate.distance) ** 2 + 1e-6
        if estimate.orientation_source == "imu":
            yaw = p.imu_heading_stddev ** 2
        else:
            yaw = (p.heading_drift * estimate.distance) ** 2 + 1e-4
        pose = np.diag([xy, xy, 1e-4, 1e-3, 1e-3, yaw]).ravel().tolist()
        twist = np.diag([p.twist_stddev ** 2] * 6).ravel().tolist()
        return pose, twist
