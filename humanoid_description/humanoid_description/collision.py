"""Self-collision: the URDF's collision geometry, pairs filtered by the SRDF, and a checker
fast enough for every control cycle.

Distances and collisions are computed by Pinocchio with Coal. Two classes:

- :class:`CollisionModel`: the geometry and the pairs to check. The SRDF's
  ``disable_collisions`` entries (adjacent links, pairs that never come close) remove
  pairs; without the SRDF every pair of links not joined by a joint is checked (the
  brute-force reference). Its checks compute every pair's exact distance.
- :class:`CollisionTracker`: the same answers over a *sequence* of configurations
  (control cycles, a densely sampled trajectory) at a fraction of the cost. Each pair's
  distance cannot change faster than its joints move it: turning joint ``j`` by ``dq``
  moves any point of a link by at most ``reach * |dq|``, ``reach`` being the largest
  distance of that link's geometry from the joint axis (a constant of the model, bounded
  by the chain of joint offsets plus the shape's radius). So
  ``d(q) >= d(q_ref) - sum_j reach[p, j] * |q_j - q_ref_j|`` for every pair ``p``, with
  ``q_ref`` where ``p`` was last computed exactly; only pairs whose bound falls below the
  threshold are computed again. The bound is a proof, not an estimate: no collision can
  be missed (checked against the brute-force reference on random configurations by the
  tests and ``humanoid bench self-collision``).

Unknown joint positions (NaN: a stale reading) make the pairs whose relative placement
depends on them unknown: those pairs are skipped and reported (:attr:`CollisionReport.unchecked`),
every other pair is checked as usual (it does not depend on the unknown joints).
"""

from __future__ import annotations

import heapq
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin

from humanoid_description.model import JointPositions, RobotModel
from humanoid_description.robots import robot_files


@dataclass(frozen=True)
class PairDistance:
    """Distance between the collision geometries of two links (m; < 0: penetration)."""

    link_a: str
    link_b: str
    distance: float


@dataclass(frozen=True)
class CollisionReport:
    """Result of one self-collision check."""

    in_collision: bool  # some checked pair is within the threshold (safety distance)
    colliding: list[PairDistance]  # those pairs, closest first
    closest: PairDistance | None  # the closest checked pair, colliding or not
    checked_pairs: int  # link pairs checked
    unchecked: list[tuple[str, str]] = field(default_factory=list)  # skipped: a joint on their path is unknown
    unknown_joints: tuple[str, ...] = ()


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def adjacent_pairs(robot: RobotModel, geometric_links: Iterable[str]) -> set[tuple[str, str]]:
    """Link pairs joined by a joint, looking through links that have no geometry (sole,
    IMU frames, brackets inside a joint assembly): they touch by construction."""
    geometric = set(geometric_links)
    root = ET.fromstring(robot.urdf)
    parent_of = {j.find("child").get("link"): j.find("parent").get("link")  # type: ignore[union-attr]
                 for j in root.iter("joint")}

    def geometric_ancestor(link: str) -> str | None:
        link_parent = parent_of.get(link)
        while link_parent is not None and link_parent not in geometric:
            link_parent = parent_of.get(link_parent)
        return link_parent

    pairs = set()
    for link in geometric:
        ancestor = geometric_ancestor(link)
        if ancestor is not None:
            pairs.add(_key(link, ancestor))
    return pairs


def shape_radius(geometry: coal.CollisionGeometry) -> float:
    """Radius of the smallest sphere about the shape's centre that contains it."""
    if isinstance(geometry, coal.Box):
        return float(np.linalg.norm(geometry.halfSide))
    if isinstance(geometry, coal.Cylinder | coal.Capsule):
        extra = geometry.radius if isinstance(geometry, coal.Capsule) else 0.0
        return float(np.hypot(geometry.radius, geometry.halfLength + extra))
    if isinstance(geometry, coal.Sphere):
        return float(geometry.radius)
    geometry.computeLocalAABB()
    corners = np.array([geometry.aabb_local.min_, geometry.aabb_local.max_])
    return float(np.max(np.linalg.norm(corners, axis=1)))


class CollisionModel:
    """Collision geometry of a robot with the pairs to check.

    ``srdf`` selects the pair filter: the robot's SRDF by default; ``use_srdf=False``
    checks every pair of links not joined by a joint (the brute-force reference, also
    what the SRDF generator samples).
    """

    def __init__(self, robot_model: RobotModel, srdf: Path | None = None,
                 use_srdf: bool = True) -> None:
        self.robot = robot_model
        self.geometry = pin.buildGeomFromUrdfString(
            robot_model.model, robot_model.urdf, pin.GeometryType.COLLISION)
        self._link_of = [robot_model.model.frames[g.parentFrame].name
                         for g in self.geometry.geometryObjects]
        self.geometry.addAllCollisionPairs()
        if use_srdf:
            path = srdf if srdf is not None else robot_files(robot_model.name).srdf
            pin.removeCollisionPairsFromXML(robot_model.model, self.geometry, path.read_text())
        else:
            adjacent = adjacent_pairs(robot_model, self._link_of)
            # indices copied first: the pairs the binding hands out are views into the vector
            # that removal shifts (a link with two shapes then kept a pair with its parent)
            for first, second in [(p.first, p.second) for p in self.geometry.collisionPairs]:
                if _key(self._link_of[first], self._link_of[second]) in adjacent:
                    self.geometry.removeCollisionPair(pin.CollisionPair(first, second))
        #: Link names of each checked geometry pair (a link with several shapes appears in several).
        self.pairs: list[tuple[str, str]] = [
            (self._link_of[p.first], self._link_of[p.second]) for p in self.geometry.collisionPairs]
        #: The distinct link pairs, and the link pair of each geometry pair.
        self.link_pairs: list[tuple[str, str]] = list(dict.fromkeys(_key(a, b) for a, b in self.pairs))
        index = {pair: k for k, pair in enumerate(self.link_pairs)}
        self.link_pair_of = np.array([index[_key(a, b)] for a, b in self.pairs], dtype=int)
        self.data = pin.GeometryData(self.geometry)
        self.path_joints, self.reach = self._pair_bounds()
        self._configuration = robot_model.configuration(robot_model.home_positions())  # base at the origin

    @property
    def links(self) -> list[str]:
        """Links that carry collision geometry."""
        return list(dict.fromkeys(self._link_of))

    # -- the kinematic tree behind each pair -------------------------------------------
    def _canonical_index(self) -> dict[int, int]:
        """Pinocchio joint id -> canonical joint index (actuated joints only)."""
        model = self.robot.model
        return {model.getJointId(name): k for k, name in enumerate(self.robot.joints.names)}

    def _pair_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per geometry pair: which joints lie on the kinematic path between its two links
        (boolean, pairs x joints), and ``reach[p, j]`` (m/rad): how far a turn of joint ``j``
        can move the pair's geometry on its side of the path, per radian."""
        model = self.robot.model
        canonical = self._canonical_index()
        objects = self.geometry.geometryObjects
        joints = len(self.robot.joints)
        axes = {joint.name: np.array(joint.axis) / np.linalg.norm(joint.axis) for joint in self.robot.joints}

        def chain(joint_id: int) -> list[int]:
            ids = []
            while joint_id > 0:
                ids.append(joint_id)
                joint_id = model.parents[joint_id]
            return ids  # from the joint up to the root

        def reach_from(joint_id: int, below: list[int], obj) -> float:
            """Bound on the distance from ``joint_id``'s axis to any point of ``obj``, ``below``
            being the joints from ``obj``'s joint up to ``joint_id``: the offsets of the chain
            (the first one, fixed in the joint's frame, by its distance from the axis; the
            others, which the joints between may turn any way, by their length) plus the
            shape's centre and radius."""
            axis = np.array(axes[model.names[joint_id]])
            chain = list(reversed(below[:below.index(joint_id)]))  # from just below the joint down to obj's joint
            offsets = [np.array(model.jointPlacements[k].translation) for k in chain] + [
                np.array(obj.placement.translation)]
            first = offsets[0] - np.dot(offsets[0], axis) * axis
            return (float(np.linalg.norm(first)) + sum(float(np.linalg.norm(t)) for t in offsets[1:])
                    + shape_radius(obj.geometry))

        path = np.zeros((len(self.geometry.collisionPairs), joints), dtype=bool)
        reach = np.zeros((len(self.geometry.collisionPairs), joints))
        for p, pair in enumerate(self.geometry.collisionPairs):
            sides = [objects[pair.first], objects[pair.second]]
            chains = [chain(obj.parentJoint) for obj in sides]
            common = set(chains[0]) & set(chains[1])
            for obj, ids in zip(sides, chains, strict=True):
                for joint_id in ids:
                    if joint_id in common:
                        break
                    if joint_id in canonical:
                        k = canonical[joint_id]
                        path[p, k] = True
                        reach[p, k] = reach_from(joint_id, ids, obj)
        return path, reach

    # -- exact checks (every pair) -------------------------------------------------------
    def place(self, positions: JointPositions) -> None:
        """Update the geometry placements for ``positions`` (finite values; the base at the origin)."""
        if isinstance(positions, np.ndarray) and positions.shape == self._configuration[self.robot.q_index].shape:
            q = self._configuration.copy()
            q[self.robot.q_index] = positions
        else:
            q = self.robot.configuration(positions)
        pin.updateGeometryPlacements(self.robot.model, self.robot.data, self.geometry, self.data, q)

    def pair_distances(self, positions: JointPositions) -> np.ndarray:
        """Exact distance of every checked geometry pair (order of :attr:`pairs`)."""
        self.place(positions)
        pin.computeDistances(self.geometry, self.data)
        return np.array([r.min_distance for r in self.data.distanceResults])

    def pair_distance(self, index: int) -> float:
        """Exact distance of one geometry pair at the last placement (:meth:`place`)."""
        return float(pin.computeDistance(self.geometry, self.data, int(index)).min_distance)

    def link_distances(self, geometry_distances: np.ndarray) -> np.ndarray:
        """Per link pair (:attr:`link_pairs`), the smallest of its geometry pairs' distances."""
        out = np.full(len(self.link_pairs), np.inf)
        np.minimum.at(out, self.link_pair_of, geometry_distances)
        return out

    def colliding_pairs(self, positions: JointPositions) -> np.ndarray:
        """Boolean per checked geometry pair: do the geometries intersect?"""
        self.place(positions)
        pin.computeCollisions(self.geometry, self.data, False)
        return np.array([r.isCollision() for r in self.data.collisionResults], dtype=bool)

    def distances(self, positions: JointPositions) -> list[PairDistance]:
        """Distance of every checked link pair, closest first."""
        per_link = self.link_distances(self.pair_distances(positions))
        result = [PairDistance(a, b, float(d)) for (a, b), d in zip(self.link_pairs, per_link, strict=True)]
        return sorted(result, key=lambda p: p.distance)

    def check(self, positions: JointPositions, safety_distance: float = 0.0) -> CollisionReport:
        """Pairs closer than ``safety_distance`` (0 = touching or penetrating)."""
        ranked = self.distances(positions)
        colliding = [p for p in ranked if p.distance <= safety_distance]
        return CollisionReport(in_collision=bool(colliding), colliding=colliding,
                               closest=ranked[0] if ranked else None,
                               checked_pairs=len(ranked))


class CollisionTracker:
    """Self-collision checks of successive configurations, computing a pair's exact
    distance only when its lower bound (see the module docstring) falls below the
    threshold. One instance per thread (it owns the model's placement data).

    The bound is kept per pair as a *slack*: a lower bound of its distance at the *anchor*,
    a configuration checked before. The Lipschitz bound needs only the straight line in
    joint space from there, not the path the robot took: at ``q`` each pair is at least
    its slack minus ``reach @ |q - anchor|`` away. A floor under every slack (minus the
    largest reach of each joint) answers most checks with one dot product of joint
    vectors; when it reaches the threshold the anchor moves to ``q`` (one matrix-vector
    product lowers every slack) and only the pairs that came close are computed. (Moving
    back and forth, as a waving arm or a walk does, lowers nothing more than the net
    motion since the anchor.)
    """

    #: When more than this fraction of the pairs is due, they are computed in one call.
    BULK_FRACTION = 0.5
    #: A jump of the configuration (a step that may have moved a pair by more than
    #: ``JUMP_STEP`` m: an incoherent sequence, not a control stream) that leaves more than
    #: ``JUMP_FRACTION`` of the pairs due is put to Coal as one yes/no question over every
    #: pair instead: is any pair within the safety distance? Distances would not carry over.
    JUMP_FRACTION = 0.5
    JUMP_STEP = 0.02
    #: Pairs within this (m) of being due are computed along with the due ones (one placement
    #: serves them all), so that they do not each need one of their own a cycle later.
    REFRESH_BAND = 0.003

    def __init__(self, model: CollisionModel, safety_distance: float = 0.0) -> None:
        self.model = model
        self.safety_distance = float(safety_distance)
        self._slack = np.full(len(model.pairs), -np.inf)  # lower bound of each pair's distance (none yet)
        #: Each pair's exact distance when last computed (inf: not known); with the slack it
        #: bounds the distance from above too: 2 * exact - slack (the same motion, added).
        self._exact = np.full(len(model.pairs), np.inf)
        self._anchor: np.ndarray | None = None  # the configuration the slacks are for (None: none yet)
        self._reach = model.reach
        self._placed: np.ndarray | None = None
        self._last_hit: int | None = None  # the geometry pair first_violation last found
        objects = len(model.geometry.geometryObjects)
        model.data.setSecurityMargins(model.geometry, np.full((objects, objects), self.safety_distance), True, True)
        self._lost: np.ndarray | None = None  # how far the motion to the anchor may have moved each pair (m)
        #: The smallest slack: with ``max_p reach[p] . |q - anchor|`` off it, a lower bound of
        #: every pair's distance at ``q``. While that clears the threshold, a check costs one
        #: dot product of joint vectors instead of one per pair.
        self._reach_max = model.reach.max(axis=0) if len(model.pairs) else np.zeros(model.reach.shape[1])
        self._floor = -np.inf
        self.exact_evaluations = 0  # pair distances computed exactly (for benchmarks)

    def reset(self) -> None:
        """Forget every carried-over distance."""
        self._slack[:] = -np.inf
        self._exact[:] = np.inf
        self._anchor = self._placed = None
        self._floor = -np.inf

    def _away(self, q: np.ndarray) -> np.ndarray | None:
        """How far each joint is from the anchor (None: no anchor yet)."""
        if self._anchor is None:
            return None
        away = np.subtract(q, self._anchor)
        return np.absolute(away, out=away)

    def _fold(self, q: np.ndarray, away: np.ndarray | None) -> None:
        """Move the anchor to ``q`` (``away`` from the old one): every pair's slack lowered by
        how far that motion can have moved it, the floor the smallest slack."""
        if away is None:
            self._lost = None  # no motion known: counts as a jump
        else:
            self._lost = np.dot(self._reach, away)
            np.subtract(self._slack, self._lost, out=self._slack)
        self._anchor = q.copy()
        self._floor = float(np.minimum.reduce(self._slack)) if len(self._slack) else np.inf

    def _place(self, q: np.ndarray) -> None:
        # by identity, within one check (each check starts with nothing placed: the caller's
        # array may have changed since)
        if self._placed is not q:
            self.model.place(q)
            self._placed = q

    def _refresh(self, q: np.ndarray, indices: np.ndarray) -> None:
        if len(indices) == 0:
            return
        self._place(q)
        if len(indices) > self.BULK_FRACTION * len(self._slack):
            pin.computeDistances(self.model.geometry, self.model.data)
            self._slack[:] = [r.min_distance for r in self.model.data.distanceResults]
            self._exact[:] = self._slack
            self.exact_evaluations += len(self._slack)
            return
        for k in indices:
            self._exact[k] = self._slack[k] = self.model.pair_distance(k)
        self.exact_evaluations += len(indices)

    def _jump(self, q: np.ndarray) -> int | None:
        """After an incoherent jump: None when Coal finds no pair within the safety distance
        (every pair's slack is then at least that), else the first such pair."""
        self._place(q)
        data = self.model.data
        if not pin.computeCollisions(self.model.geometry, data, True):
            np.maximum(self._slack, self.safety_distance, out=self._slack)
            self._exact[:] = np.inf  # no upper bound known
            return None
        # Coal stopped at the first pair within the margin: the pairs before it were computed
        # (and are clear), so it is the first result that says collision
        return next(k for k, result in enumerate(data.collisionResults) if result.isCollision())

    def _known(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Finite positions (the caller's array when it is one; else a copy, an unknown joint
        counting as 0: no checkable pair depends on it), the unknown joints (None: none) and
        which geometry pairs can be checked (None: all). Starts a check: nothing placed."""
        self._placed = None
        q = np.asarray(positions, dtype=float)
        if math.isfinite(np.add.reduce(q)):  # (the ufunc itself: ndarray.sum's wrapper costs as much)
            return q, None, None
        q = q.copy()
        unknown = ~np.isfinite(q)
        q[unknown] = 0.0
        return q, unknown, ~self.model.path_joints[:, unknown].any(axis=1)

    def first_violation(self, positions: np.ndarray, threshold: float | None = None) -> PairDistance | None:
        """A link pair within ``threshold`` (default: the safety distance) of each other, or
        None when every checkable pair is farther. (Not necessarily the closest pair: the
        first one found, the pairs most likely within it being computed first.)"""
        threshold = self.safety_distance if threshold is None else threshold
        away: np.ndarray | None = None
        if self._anchor is not None:
            # the common case: every pair still clear by the floor (an unknown joint, NaN, makes
            # the bound NaN: never clear here, it goes the long way)
            away = np.subtract(positions, self._anchor)
            np.absolute(away, out=away)
            if self._floor - float(np.dot(self._reach_max, away)) > threshold:
                return None
        q, _, checkable = self._known(positions)
        if checkable is not None:
            away = self._away(q)  # with the unknown joints at 0, as in q
        if checkable is None and away is not None:
            # while a set-point is held in contact, the pair found last time usually still is
            # the answer: one placement and one distance, the anchor and the other pairs'
            # bounds left as they are (its own is carried back to the anchor)
            k = self._last_hit
            if k is not None:
                back = float(np.dot(self._reach[k], away))
                if self._slack[k] - back <= threshold:
                    self._place(q)
                    distance = self.model.pair_distance(k)
                    self._exact[k], self._slack[k] = distance, distance - back
                    self.exact_evaluations += 1
                    if distance <= threshold:
                        a, b = self.model.pairs[k]
                        return PairDistance(a, b, distance)
        self._fold(q, away)
        if checkable is None and self._floor > threshold:
            return None  # every pair still clear by its own bound
        # the pairs that may be within the threshold, and those about to be: computed at one placement
        near = self._slack <= threshold + self.REFRESH_BAND
        if checkable is not None:
            near &= checkable
        due = np.flatnonzero(near)
        if len(due) == 0:
            return None
        if (checkable is None and threshold == self.safety_distance
                and len(due) > self.JUMP_FRACTION * len(self._slack)
                and (self._lost is None or float(self._lost.max()) > self.JUMP_STEP)):
            first = self._jump(q)
            if first is None:
                return None
            self._last_hit = first
            distance = self.model.pair_distance(first)  # within the safety distance (Coal's margin)
            self._slack[first] = self._exact[first] = distance
            self.exact_evaluations += 1
            a, b = self.model.pairs[first]
            return PairDistance(a, b, float(distance))
        if len(due) > self.BULK_FRACTION * len(self._slack):
            self._refresh(q, due)
            exact = self._slack[due]
            over = exact <= threshold
            if not over.any():
                return None
            k = due[over][int(np.argmin(exact[over]))]
        else:
            # the pair most surely within the threshold first (lowest upper bound), and the first
            # pair found within it is the answer: the pairs left are not computed (their bounds
            # stay valid), so that a configuration in contact costs about one pair
            self._place(q)
            for k in due[np.argsort(2.0 * self._exact[due] - self._slack[due])]:
                self._exact[k] = self._slack[k] = self.model.pair_distance(k)
                self.exact_evaluations += 1
                if self._slack[k] <= threshold:
                    break
            else:
                return None
        self._last_hit = int(k)
        a, b = self.model.pairs[k]
        return PairDistance(a, b, float(self._slack[k]))

    #: Samples a path is followed in at a time (bounds the memory a long trajectory needs).
    PATH_WINDOW = 2048

    def first_violation_along(self, configurations: np.ndarray, threshold: float | None = None,
                              unproven: list[tuple[int, PairDistance]] | None = None,
                              ) -> tuple[int, PairDistance] | None:
        """The first of a densely sampled path's configurations (rows, finite) where a pair
        comes within ``threshold`` (default: the safety distance), and that pair; None when
        the whole path stays clear.

        Each sample must clear the threshold by half of what the steps to its neighbours
        can move each pair (the bound of the module docstring), so that the path stays
        clear *between* the samples too, not only at them. Pairs are followed one by one
        along the path: a pair's exact distance is computed at the first sample where its
        bound, carried from its last exact distance along the path, may fall below the
        threshold; so a path of thousands of samples costs a few exact distances per pair.

        With ``unproven`` (a list), a sample where a pair clears the threshold but not by
        that margin does not end the check: it is appended (sample, pair) and the check goes
        on, ending at the first sample with a pair within the threshold itself. Every sample
        before the one returned (all, when None) and not listed then clears the path on
        both sides up to half-way to its neighbours: the listed ones are left to sample
        more densely (:func:`humanoid_core.guards.trajectory_collision.check_path`).
        """
        threshold = self.safety_distance if threshold is None else threshold
        path = np.asarray(configurations, dtype=float)
        model = self.model
        self.reset()  # the placements will be the path's
        still = np.zeros((1, path.shape[1]))
        steps = np.abs(np.vstack([still, np.diff(path, axis=0), still]))  # steps[k]: from sample k-1 to k
        model.place(path[0])
        pin.computeDistances(model.geometry, model.data)
        bound = np.array([r.min_distance for r in model.data.distanceResults])  # at the window's first sample
        self.exact_evaluations += len(bound)
        first = 0
        while True:
            last = min(len(path), first + self.PATH_WINDOW)
            hit = self._follow_window(path, steps, first, last, bound, threshold, unproven)
            if isinstance(hit, tuple):
                return hit
            if last == len(path):
                return None
            first, bound = last - 1, hit  # the windows share a sample

    def _follow_window(self, path: np.ndarray, steps: np.ndarray, first: int, last: int, bound: np.ndarray,
                       threshold: float, unproven: list[tuple[int, PairDistance]] | None,
                       ) -> tuple[int, PairDistance] | np.ndarray:
        """Follow every pair over samples ``first .. last - 1`` from its lower ``bound`` at
        ``first``: the first violation, or each pair's bound at ``last - 1`` (the unproven
        samples appended to ``unproven``, see :meth:`first_violation_along`)."""
        model, reach = self.model, self._reach
        # pairs x samples of the window (rows contiguous: each pair is followed on its own)
        lost = np.cumsum(steps[first:last], axis=0)
        lost -= lost[0]
        lost = np.ascontiguousarray((lost @ reach.T).T)  # bound lost since the window's first sample
        allowance = np.maximum(steps[first:last], steps[first + 1:last + 1])
        limits = np.ascontiguousarray((threshold + 0.5 * (allowance @ reach.T) + 1e-6).T)
        placed = -1

        def reaching(pairs: int | slice, sample: int, distance: float | np.ndarray) -> np.ndarray:
            """Where, after ``sample``, the bound of ``pairs`` (``distance`` there) reaches its limit."""
            return distance + lost[pairs, sample:sample + 1] - lost[pairs, sample + 1:] <= limits[pairs, sample + 1:]

        def next_due(pair: int, sample: int, distance: float) -> int:
            """The first sample after ``sample`` where the pair's bound reaches its limit."""
            due = np.flatnonzero(reaching(pair, sample, distance))
            return sample + 1 + int(due[0]) if len(due) else last - first

        def violation(pair: int, sample: int, distance: float) -> tuple[int, PairDistance] | None:
            """The pair within its limit at the sample: the answer, or (unproven only) listed."""
            found = first + sample, PairDistance(*model.pairs[pair], float(distance))
            if unproven is None or distance <= threshold:
                return found
            unproven.append(found)
            return None

        if first == 0:
            for pair in np.flatnonzero(bound <= limits[:, 0]):
                if (found := violation(int(pair), 0, float(bound[pair]))) is not None:
                    return found
        # every pair's first due sample at once (one array operation instead of next_due per
        # pair, which cost a short path most of its check)
        reached = reaching(slice(None), 0, bound[:, None])
        due = (np.where(reached.any(axis=1), 1 + reached.argmax(axis=1), last - first) if reached.shape[1]
               else np.full(len(bound), last - first))
        events = list(zip(due.tolist(), range(len(bound)), strict=True))
        heapq.heapify(events)
        samples = np.zeros(len(bound), dtype=int)  # per pair: the sample of its latest bound
        distances = np.array(bound, dtype=float)  # and that bound
        while events and events[0][0] < last - first:
            sample, pair = heapq.heappop(events)
            if sample != placed:
                model.place(path[first + sample])
                placed = sample
            distance = model.pair_distance(pair)
            self.exact_evaluations += 1
            if distance <= limits[pair, sample] and (found := violation(pair, sample, distance)) is not None:
                return found
            samples[pair], distances[pair] = sample, distance
            heapq.heappush(events, (next_due(pair, sample, distance), pair))
        pairs, end = np.arange(len(bound)), last - first - 1
        return distances - (lost[pairs, end] - lost[pairs, samples])

    def report(self, positions: np.ndarray, threshold: float | None = None) -> CollisionReport:
        """Every checkable link pair within ``threshold`` (default: the safety distance) and
        the exact closest pair, computing as few pairs as the bounds allow."""
        threshold = self.safety_distance if threshold is None else threshold
        q, unknown, checkable = self._known(positions)
        if checkable is None:
            checkable = np.ones(len(self._slack), dtype=bool)
        self._fold(q, self._away(q))
        exact = np.zeros(len(self._slack), dtype=bool)
        # the pair with the lowest bound is computed in any case: the closest pair needs one exact distance
        limit = max(threshold, float(np.min(self._slack[checkable]))) if checkable.any() else threshold
        while True:
            due = np.flatnonzero(~exact & checkable & (self._slack <= limit))
            if len(due) == 0:
                break
            before = self.exact_evaluations
            self._refresh(q, due)
            exact[due if self.exact_evaluations - before == len(due) else slice(None)] = True
            # the closest pair is exact once no other pair's bound is below the best exact distance
            limit = max(threshold, float(np.min(self._slack[exact & checkable])))
        model = self.model
        # each link pair's distance: the least of its geometry pairs computed exactly (a few; the
        # others' bounds are above the closest, so they are neither colliding nor the closest)
        found = np.flatnonzero(exact & checkable)
        per_link: dict[int, float] = {}
        for k, distance in zip(model.link_pair_of[found].tolist(), self._slack[found].tolist(), strict=True):
            if distance < per_link.get(k, math.inf):
                per_link[k] = distance
        ordered = sorted(per_link.items(), key=lambda item: (item[1], item[0]))  # ties: the first link pair
        colliding = [PairDistance(*model.link_pairs[k], d) for k, d in ordered if d <= threshold]
        closest = PairDistance(*model.link_pairs[ordered[0][0]], ordered[0][1]) if ordered else None
        if unknown is None:
            return CollisionReport(in_collision=bool(colliding), colliding=colliding, closest=closest,
                                   checked_pairs=len(model.link_pairs))
        unchecked_links = np.zeros(len(model.link_pairs), dtype=bool)
        unchecked_links[model.link_pair_of[~checkable]] = True
        return CollisionReport(
            in_collision=bool(colliding), colliding=colliding, closest=closest,
            checked_pairs=int(np.count_nonzero(~unchecked_links)),
            unchecked=[model.link_pairs[k] for k in np.flatnonzero(unchecked_links)],
            unknown_joints=tuple(n for n, u in zip(model.robot.joints.names, unknown, strict=True) if u))
