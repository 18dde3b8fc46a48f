"""Bioloid poses in the thesis' convention, analysed in the thesis' frame.

Input poses are the 18 angles J1..J18 in degrees, numbered and signed as in
Tyropoulos (2008) (the raw servo angle, ``(raw - 512) * 0.2932``; files of them:
:mod:`.pose_file`). The joint map
(``robots/bioloid/joint_map.yaml``) links each J number to a URDF joint and its
direction. Results are expressed in the thesis frame: origin at the right-foot CoM,
+X backward, +Y robot's right, +Z up, millimetres.

The right foot is the support foot (the thesis' root). The left foot is in contact
where its sole corners lie within ``CONTACT_TOLERANCE_MM`` of the right sole's
plane; the support polygon is the convex hull of the corners in contact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_description import RobotModel, convex_hull, signed_margin
from humanoid_robot_bioloid.thesis import equations as thesis
from humanoid_robot_bioloid.thesis.pose_file import JOINT_COUNT

CONTACT_TOLERANCE_MM = 2.0
#: A joint this close to a limit (rad) is within it: the URDF's limits are rounded to 1e-6 rad.
LIMIT_TOLERANCE = 1e-6


@dataclass(frozen=True)
class PoseAnalysis:
    """Static analysis of one pose in the thesis frame (mm)."""

    com_mm: np.ndarray
    links_mm: dict[str, np.ndarray]  # thesis link name -> link CoM
    margin_mm: float
    left_foot_contact: bool


@dataclass(frozen=True)
class LimitViolation:
    """One joint of a pose outside the thesis' joint-limit table (``thesis_limits`` of the
    joint map): documented data, not the model's limits, which are the servo's range."""

    thesis_joint: int  # J number
    joint: str  # URDF joint
    value_deg: float  # the pose's angle, thesis convention
    limits_deg: tuple[float, float]  # the thesis' table, thesis convention
    within_servo_range: bool  # the servo can turn there (the model's limits): the pose can be played

    def describe(self) -> str:
        where = "within" if self.within_servo_range else "beyond"
        return (f"J{self.thesis_joint} ({self.joint}) = {self.value_deg:.2f} deg is outside the thesis' limit table "
                f"[{self.limits_deg[0]:.2f}, {self.limits_deg[1]:.2f}] deg ({where} the servo's range)")


class ThesisFrame:
    """Converts thesis poses to joint positions and world points to the thesis frame."""

    def __init__(self, model: RobotModel) -> None:
        joint_map = model.config.joint_map
        if joint_map is None or any(s.thesis is None for s in joint_map.values()):
            raise ValueError(f"robot {model.name} has no thesis joint numbering "
                             "(balance poses are defined for the Bioloid)")
        self.model = model
        self._servo_of = {s.thesis: s for s in joint_map.values()}
        self._link_of = dict(thesis.URDF_LINK)

    def joint_positions(self, angles_deg: Sequence[float]) -> np.ndarray:
        """URDF joint positions (rad, canonical order) for thesis angles J1..J18."""
        if len(angles_deg) != JOINT_COUNT:
            raise ValueError(f"expected {JOINT_COUNT} angles, got {len(angles_deg)}")
        positions = {self._servo_of[j].joint: self._servo_of[j].direction * math.radians(a)
                     for j, a in enumerate(angles_deg, start=1)}
        return self.model.joints.to_array(positions)

    def angles_deg(self, positions: Sequence[float]) -> tuple[float, ...]:
        """Thesis angles J1..J18 (deg) of URDF joint positions (rad, canonical order): the
        inverse of :meth:`joint_positions`."""
        servos = [self._servo_of[j] for j in range(1, JOINT_COUNT + 1)]
        return tuple(s.direction * math.degrees(float(positions[self.model.joints.index(s.joint)])) for s in servos)

    def outside_limits(self, angles_deg: Sequence[float]) -> list[LimitViolation]:
        """The joints of a pose beyond the thesis' limit table, each with whether its servo can
        still reach the angle (the real robot took some such poses: the thesis notes J14 =
        84.40 deg in a balanced pose, beyond its table's 66.26 deg)."""
        positions = self.joint_positions(angles_deg)
        violations = []
        for number, angle in enumerate(angles_deg, start=1):
            servo = self._servo_of[number]
            table = servo.thesis_limits_radians()
            value = float(positions[self.model.joints.index(servo.joint)])
            if table[0] - LIMIT_TOLERANCE <= value <= table[1] + LIMIT_TOLERANCE:
                continue
            reachable = self.model.joints[servo.joint].limits.contains(value, LIMIT_TOLERANCE)
            bounds = sorted(servo.direction * math.degrees(x) for x in table)
            violations.append(LimitViolation(number, servo.joint, float(angle), (bounds[0], bounds[1]), reachable))
        return violations

    def analyse(self, angles_deg: Sequence[float]) -> PoseAnalysis:
        """CoM, link CoMs and static margin of a pose, in the thesis frame (mm)."""
        q = self.joint_positions(angles_deg)
        link_coms = self.model.link_coms(q)
        masses = self.model.link_masses()
        foot_link = self._link_of[thesis.ROOT_LINK]
        foot = self.model.frame_placement(foot_link, q)
        origin = link_coms[foot_link]

        def to_thesis(points: np.ndarray) -> np.ndarray:
            local = (np.atleast_2d(points) - origin) @ foot.rotation
            return local @ thesis.THESIS_TO_REP.T * 1000.0

        com = sum(masses[k] * link_coms[k] for k in masses) / sum(masses.values())
        right = to_thesis(self.model.sole_corners("right", q))
        left = to_thesis(self.model.sole_corners("left", q))
        ground = float(np.mean(right[:, 2]))
        touching = left[np.abs(left[:, 2] - ground) <= CONTACT_TOLERANCE_MM]
        polygon = convex_hull(np.vstack([right, touching])[:, :2])
        com_t = to_thesis(com)[0]
        return PoseAnalysis(
            com_mm=com_t,
            links_mm={name: to_thesis(link_coms[urdf])[0] for name, urdf in self._link_of.items()},
            margin_mm=signed_margin(com_t[:2], polygon),
            left_foot_contact=len(touching) > 0)
