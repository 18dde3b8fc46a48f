"""The robot model every package shares: joint table, kinematics, CoM, Jacobians.

Rigid-body computations are Pinocchio's; this module adds the project's conventions:

- joint positions are numpy arrays in the robot's canonical joint order
  (``robots/<robot>/robot.yaml``) or name -> value mappings;
- the robot has a floating base (``base_link``); its placement in the world is a
  :class:`pinocchio.SE3` (identity when omitted);
- Jacobians have 6 base columns then one column per joint in canonical order.

A :class:`RobotModel` owns one Pinocchio ``Data``: use one instance per thread.
"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from humanoid_description.config import RobotConfig, load_config
from humanoid_description.joints import JointPositions, JointTable, joint_table
from humanoid_description.robots import urdf_xml
from humanoid_description.support import levelling_rotation, resting_points, supporting_side


class _PinocchioOnFirstUse:
    """Stands for the ``pinocchio`` module until a rigid-body computation needs it, then puts
    the module in its place. Not a lazy module in ``sys.modules`` (lazy_loader.load): rclpy's
    logging looks up every module's file at each log call, which loads lazy modules."""

    def __getattr__(self, name: str) -> object:
        global pin
        import pinocchio

        pin = pinocchio
        return getattr(pinocchio, name)


if TYPE_CHECKING:
    import pinocchio as pin
else:
    pin = _PinocchioOnFirstUse()


def _root_link(urdf: str) -> str:
    """The URDF link that is no joint's child (the floating base)."""
    root = ET.fromstring(urdf)
    children = {j.find("child").get("link") for j in root.iter("joint")}  # type: ignore[union-attr]
    roots = [link.get("name", "") for link in root.iter("link") if link.get("name") not in children]
    if len(roots) != 1:
        raise ValueError(f"the URDF must have exactly one root link, found {roots}")
    return roots[0]


def _parse_link_inertials(urdf: str) -> dict[str, tuple[float, np.ndarray]]:
    """Mass and CoM (in the link frame) of every URDF link that has mass."""
    inertials = {}
    for link in ET.fromstring(urdf).iter("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        mass = float(inertial.find("mass").get("value", 0.0))  # type: ignore[union-attr]
        origin = inertial.find("origin")
        xyz = origin.get("xyz", "0 0 0") if origin is not None else "0 0 0"
        if mass > 0.0:
            inertials[link.get("name", "")] = (mass, np.array([float(v) for v in xyz.split()]))
    return inertials


class RobotModel:
    """Kinematic and inertial model of one robot, built from its xacro description."""

    def __init__(self, robot: str, urdf: str | None = None) -> None:
        """The model of ``robot`` from its xacro description, or from ``urdf`` (the text a
        running robot publishes on ``robot_description``) when given."""
        self.name = robot
        self.config: RobotConfig = load_config(robot)
        self.urdf: str = urdf_xml(robot) if urdf is None else urdf
        self.joints: JointTable = joint_table(self.urdf, self.config.joints)
        self.root_link = _root_link(self.urdf)
        self._link_inertials = _parse_link_inertials(self.urdf)

    # Pinocchio's model and what derives from it are built on first use: a process that only
    # needs the joint table (a driver node's front) does without Pinocchio and Coal (about 50 MB).
    @functools.cached_property
    def model(self) -> pin.Model:
        return pin.buildModelFromXML(self.urdf, pin.JointModelFreeFlyer())

    @functools.cached_property
    def data(self) -> pin.Data:
        return self.model.createData()

    @functools.cached_property
    def q_index(self) -> np.ndarray:
        """Where each joint (canonical order) sits in Pinocchio's configuration vector."""
        return np.array([self.model.joints[self.model.getJointId(n)].idx_q for n in self.joints.names])

    @functools.cached_property
    def v_index(self) -> np.ndarray:
        """Where each joint (canonical order) sits in Pinocchio's velocity vector."""
        return np.array([self.model.joints[self.model.getJointId(n)].idx_v for n in self.joints.names])

    @functools.cached_property
    def _v_order(self) -> np.ndarray:
        return np.concatenate([np.arange(6), self.v_index])

    @functools.cached_property
    def total_mass(self) -> float:
        return float(pin.computeTotalMass(self.model))

    @functools.cached_property
    def _link_frames(self) -> dict[str, int]:
        return {link: self.model.getFrameId(link, pin.FrameType.BODY) for link in self._link_inertials}

    # -- configuration ---------------------------------------------------------------
    def home_positions(self) -> np.ndarray:
        return self.joints.to_array(self.config.home)

    def pose_positions(self, name: str) -> np.ndarray:
        return self.joints.to_array(self.config.pose(name))

    def configuration(self, positions: JointPositions, base: pin.SE3 | None = None) -> np.ndarray:
        """Pinocchio configuration vector for joint positions and a base placement."""
        q = pin.neutral(self.model)
        base = pin.SE3.Identity() if base is None else base
        q[:7] = pin.SE3ToXYZQUAT(base)
        q[self.q_index] = self.joints.to_array(positions)
        return q

    def _update(self, positions: JointPositions, base: pin.SE3 | None) -> np.ndarray:
        q = self.configuration(positions, base)
        pin.forwardKinematics(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return q

    # -- kinematics --------------------------------------------------------------------
    def frame_id(self, frame: str) -> int:
        if not self.model.existFrame(frame):
            raise KeyError(f"robot {self.name} has no frame {frame!r}")
        return self.model.getFrameId(frame)

    def chain_joints(self, frame: str) -> tuple[str, ...]:
        """The joints between the floating base and ``frame``, from the base outwards: those
        that move it (a leg's joints for a sole)."""
        parent = self.model.frames[self.frame_id(frame)].parentJoint
        return tuple(self.model.names[j] for j in self.model.supports[parent] if self.model.names[j] in self.joints)

    def frame_placement(self, frame: str, positions: JointPositions,
                        base: pin.SE3 | None = None) -> pin.SE3:
        """World placement of a frame (link, sole, IMU ...)."""
        fid = self.frame_id(frame)
        self._update(positions, base)
        return pin.SE3(self.data.oMf[fid])

    def frame_placements(self, frames: Sequence[str], positions: JointPositions,
                         base: pin.SE3 | None = None) -> dict[str, pin.SE3]:
        ids = {f: self.frame_id(f) for f in frames}
        self._update(positions, base)
        return {f: pin.SE3(self.data.oMf[i]) for f, i in ids.items()}

    def com(self, positions: JointPositions, base: pin.SE3 | None = None) -> np.ndarray:
        """Whole-body centre of mass in the world frame (m)."""
        q = self.configuration(positions, base)
        return np.array(pin.centerOfMass(self.model, self.data, q))

    def link_coms(self, positions: JointPositions, base: pin.SE3 | None = None) -> dict[str, np.ndarray]:
        """World CoM position of every link that has mass."""
        self._update(positions, base)
        return {link: np.array(self.data.oMf[self._link_frames[link]].act(com))
                for link, (_, com) in self._link_inertials.items()}

    def link_masses(self) -> dict[str, float]:
        return {link: mass for link, (mass, _) in self._link_inertials.items()}

    def frame_jacobian(self, frame: str, positions: JointPositions, base: pin.SE3 | None = None,
                       reference: pin.ReferenceFrame | None = None) -> np.ndarray:
        """6 x (6 + n) Jacobian of a frame: base columns, then joints in canonical order
        (``reference`` default: LOCAL_WORLD_ALIGNED)."""
        reference = pin.LOCAL_WORLD_ALIGNED if reference is None else reference
        fid = self.frame_id(frame)
        q = self.configuration(positions, base)
        jac = pin.computeFrameJacobian(self.model, self.data, q, fid, reference)
        return jac[:, self._v_order]

    def com_jacobian(self, positions: JointPositions, base: pin.SE3 | None = None) -> np.ndarray:
        """3 x (6 + n) Jacobian of the whole-body CoM, columns as :meth:`frame_jacobian`."""
        q = self.configuration(positions, base)
        return np.array(pin.jacobianCenterOfMass(self.model, self.data, q))[:, self._v_order]

    # -- feet and standing ----------------------------------------------------------
    def sole_corners(self, side: str, positions: JointPositions,
                     base: pin.SE3 | None = None) -> np.ndarray:
        """World points (k, 3) where one foot touches flat ground (world z up): a flat sole's
        four corners, a ball foot's lowest point (:meth:`Foot.contact_points`)."""
        foot = self.config.feet[side]
        placement = self.frame_placement(foot.sole, positions, base)
        return foot.contact_points(placement.rotation, placement.translation)

    def support_feet(self, positions: JointPositions, support: str = "auto") -> tuple[str, ...]:
        """The feet a pose stands on: ``both`` = every foot (both soles of a biped, all four
        of a quadruped), a foot's name = that foot alone, ``auto`` = :meth:`supporting_feet`."""
        if support == "both":
            return tuple(self.config.feet)
        if support == "auto":
            return self.supporting_feet(positions)
        if support not in self.config.feet:
            raise ValueError(f"robot {self.name} has no foot {support!r} (feet: {', '.join(self.config.feet)}; "
                             "or both, auto)")
        return (support,)

    def supporting_feet(self, positions: JointPositions) -> tuple[str, ...]:
        """The feet a pose rests on, on flat ground. Two flat soles: both when they are level
        with each other (:func:`~humanoid_description.support.supporting_side`), else the
        lower one. Ball feet: the ones a rigid body standing on them rests on
        (:func:`~humanoid_description.support.resting_points`: coplanar balls, or the three
        whose plane has the others above it and the CoM over its triangle)."""
        feet = self.config.feet
        sides = tuple(feet)
        if not feet[sides[0]].is_ball:
            if set(sides) != {"right", "left"}:
                return sides  # flat feet other than a biped's pair: assumed level
            soles = self.frame_placements([feet[s].sole for s in sides], positions)
            right, left = soles[feet["right"].sole], soles[feet["left"].sole]
            relative = right.actInv(left)
            side = supporting_side(relative.rotation, relative.translation)
            return ("right", "left") if side == "both" else (side,)
        centres = self.frame_placements([feet[s].sole for s in sides], positions)
        points = np.array([centres[feet[s].sole].translation for s in sides])
        return tuple(sides[i] for i in resting_points(points, self.com(positions)))

    def support_side(self, positions: JointPositions) -> str:
        """Which sole(s) a biped's pose stands on: ``both`` or the side (:meth:`supporting_feet`)."""
        feet = self.supporting_feet(positions)
        return "both" if len(feet) > 1 else feet[0]

    def standing_base(self, positions: JointPositions, support: str = "auto") -> pin.SE3:
        """Base placement that stands the robot on flat ground (z = 0) on the feet of
        ``support`` (:meth:`support_feet`).

        Flat soles: their mean orientation is levelled (exact when they are parallel, as in
        symmetric poses). Ball feet: the plane through the supporting balls' centres is
        levelled with the least rotation (three or more balls; fewer keep the base level).
        The robot is centred so that the supporting feet's mean origin is at x = y = 0,
        facing +x, their lowest contact point on the ground.
        """
        sides = self.support_feet(positions, support)
        soles = self.frame_placements([self.config.feet[s].sole for s in sides], positions)
        if self.config.feet[sides[0]].is_ball:
            base_rotation = levelling_rotation(np.array([p.translation for p in soles.values()]))
        else:
            mean_rotation = sum(p.rotation for p in soles.values()) / len(soles)
            u, _, vt = np.linalg.svd(mean_rotation)
            sole_rotation = u @ vt  # nearest rotation to the mean
            base_rotation = sole_rotation.T  # makes the supporting sole frames world-aligned
        rotated = pin.SE3(base_rotation, np.zeros(3))
        lowest = min(float(np.min(self.sole_corners(s, positions, rotated)[:, 2])) for s in sides)
        centre = np.mean([(rotated * p).translation for p in soles.values()], axis=0)
        return pin.SE3(base_rotation, np.array([-centre[0], -centre[1], -lowest]))


_shared: dict[str, RobotModel] = {}


def load_model(robot: str) -> RobotModel:
    """A shared :class:`RobotModel` per robot name (single-threaded use)."""
    if robot not in _shared:
        _shared[robot] = RobotModel(robot)
    return _shared[robot]
