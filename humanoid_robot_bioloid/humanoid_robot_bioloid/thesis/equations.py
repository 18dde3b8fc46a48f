"""The Bioloid humanoid model of Tyropoulos (2008), as published.

The thesis models the robot as one serial chain rooted at the right foot, with one
frame at each link's centre of mass, every frame parallel to the foot frame in the
zero pose. Each joint J1..J18 is printed as a translation p(theta) (mm, theta in
degrees) of the child CoM in the parent CoM frame plus a rotation about X, Y or Z,
either right-handed ("RHR") or "opposed" (transposed).

This module keeps those equations exactly as printed (with the three documented
misprint fixes), and the thesis' numbering, names and frame. It is the reference the
URDF is generated from (see :mod:`.kinematics_generator`) and the
reference the URDF is tested against: the tests evaluate these equations directly.

Thesis frame: +X backward, +Y robot's right, +Z up, millimetres, origin at the
right-foot CoM. REP-103 (x forward, y left, z up) is a half turn about Z from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Vec3 = tuple[float, float, float]


def _sin(deg: float) -> float:
    return float(np.sin(np.radians(deg)))


def _cos(deg: float) -> float:
    return float(np.cos(np.radians(deg)))


@dataclass(frozen=True)
class ThesisJoint:
    """One joint of the thesis chain: ``p(theta)`` and ``R(theta)`` from parent to child."""

    number: int
    motor_id: int
    parent: str
    child: str
    axis: str  # "X", "Y" or "Z" of the thesis frame
    right_handed: bool  # False = "opposed": the rotation matrix is transposed
    translation: Callable[[float], Vec3]

    def rotation(self, theta_deg: float) -> np.ndarray:
        """Rotation of the child frame in the parent frame for servo angle ``theta_deg``."""
        angle = theta_deg if self.right_handed else -theta_deg
        return axis_rotation(self.axis, angle)


def axis_rotation(axis: str, angle_deg: float) -> np.ndarray:
    """The thesis' elementary rotations Rx, Ry, Rz (right-hand rule)."""
    c, s = _cos(angle_deg), _sin(angle_deg)
    if axis == "X":
        return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    if axis == "Y":
        return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    if axis == "Z":
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    raise ValueError(f"unknown thesis axis {axis!r}")


# The per-joint translations, transcribed from the thesis (mm, theta in degrees).
# J12, J15 and J16 carry the documented fixes of evident misprints:
#   J12: Y and Z swapped in print (a Z rotation cannot change Z);
#   J15: X/Z labels and signs lost in print, restored as the mirror of J4;
#   J16: radius 14.96 misprinted for 20.33.
JOINTS: tuple[ThesisJoint, ...] = (
    ThesisJoint(1, 17, "r_foot", "r_ankle", "X", False, lambda t: (
        -0.96, -4.37 + 12.9728 * _sin(t - 1.1925), 24.63 + 12.9728 * _cos(t - 1.19258))),
    ThesisJoint(2, 15, "r_ankle", "r_knee", "Y", False, lambda t: (
        -15.82 - 60.5479 * _sin(t - 0.9274), -0.06, -12.97 + 60.5479 * _cos(t - 0.9274))),
    ThesisJoint(3, 13, "r_knee", "r_thigh", "Y", False, lambda t: (
        13.77 - 34.25 * _sin(t + 22.686), 0.69, 14.96 + 34.25 * _cos(t + 22.686))),
    ThesisJoint(4, 11, "r_thigh", "r_hip", "Y", True, lambda t: (
        -1.79 + 20.457 * _cos(t + 39.346), -0.63, 43.9 - 20.457 * _sin(t + 39.346))),
    ThesisJoint(5, 9, "r_hip", "r_hip_support", "X", True, lambda t: (
        0.11, 0.26 - 17.72 * _sin(t), 12.97 + 17.72 * _cos(t))),
    ThesisJoint(6, 7, "r_hip_support", "torso", "Z", True, lambda t: (
        1.07 + 32.447 * _sin(t + 7.758), -32.447 * _cos(t + 7.758), 77.29)),
    ThesisJoint(7, 1, "torso", "r_shoulder", "Y", True, lambda t: (
        -20.38 - 5.1089 * _cos(t - 4.94), 64.67, 20.49 + 5.1089 * _sin(t - 4.94))),
    ThesisJoint(8, 3, "r_shoulder", "r_elbow", "Z", False, lambda t: (
        -9.91 + 23.86 * _sin(t), 11.49 + 23.86 * _cos(t), -0.79)),
    ThesisJoint(9, 5, "r_elbow", "r_hand", "Z", False, lambda t: (
        24.5 * _sin(t + 2.9476), 44.14 + 24.5 * _cos(t + 2.9476), -0.1)),
    ThesisJoint(10, 2, "torso", "l_shoulder", "Y", False, lambda t: (
        -20.63 - 5.11 * _cos(t + 5.02), -65.36, 20.99 - 5.11 * _sin(t + 5.02))),
    ThesisJoint(11, 4, "l_shoulder", "l_elbow", "Z", False, lambda t: (
        -9.91 - 23.86 * _sin(t), -11.49 - 23.86 * _cos(t), 0.79)),
    ThesisJoint(12, 6, "l_elbow", "l_hand", "Z", False, lambda t: (
        -24.5 * _sin(t - 2.94), -44.14 - 24.5 * _cos(t - 2.94), -0.1)),
    ThesisJoint(13, 8, "torso", "l_hip_support", "Z", False, lambda t: (
        -4.38 - 1.07 * _cos(t), -33.85 + 1.07 * _sin(t), -77.29)),
    ThesisJoint(14, 10, "l_hip_support", "l_hip", "X", False, lambda t: (
        -0.11, -12.97 * _sin(t - 1.19), -17.72 - 12.97 * _cos(t - 1.19))),
    ThesisJoint(15, 12, "l_hip", "l_thigh", "Y", True, lambda t: (
        -15.82 - 43.93 * _sin(t - 2.32), -0.63, 12.97 - 43.93 * _cos(t - 2.32))),
    ThesisJoint(16, 14, "l_thigh", "l_knee", "Y", False, lambda t: (
        13.22 + 20.33 * _sin(t - 42.63), 0.7, -31.6 - 20.33 * _cos(t - 42.63))),
    ThesisJoint(17, 16, "l_knee", "l_ankle", "Y", False, lambda t: (
        -0.98 + 20.46 * _cos(t + 39.35), -0.06, -60.54 + 20.46 * _sin(t + 39.35))),
    ThesisJoint(18, 18, "l_ankle", "l_foot", "X", False, lambda t: (
        0.95, -0.26 - 25.0 * _sin(t + 9.94), -12.97 - 25.0 * _cos(t + 9.94))),
)

ROOT_LINK = "r_foot"
#: The thesis link that is the root of the URDF tree (a floating-base humanoid is
#: rooted at its trunk); it becomes the URDF ``base_link``.
URDF_ROOT_THESIS_LINK = "torso"

#: The thesis' link names in its own order (root first).
LINKS: tuple[str, ...] = (ROOT_LINK, *(joint.child for joint in JOINTS))

#: Thesis link name -> URDF link name. The thesis names a link after the joint
#: that carries it ("R knee" is the shank), the URDF after what it is.
URDF_LINK: Mapping[str, str] = {
    "r_foot": "r_foot", "r_ankle": "r_ankle", "r_knee": "r_shank", "r_thigh": "r_thigh",
    "r_hip": "r_hip", "r_hip_support": "r_hip_support", "torso": "base_link",
    "r_shoulder": "r_shoulder", "r_elbow": "r_upper_arm", "r_hand": "r_forearm",
    "l_shoulder": "l_shoulder", "l_elbow": "l_upper_arm", "l_hand": "l_forearm",
    "l_hip_support": "l_hip_support", "l_hip": "l_hip", "l_thigh": "l_thigh",
    "l_knee": "l_shank", "l_ankle": "l_ankle", "l_foot": "l_foot",
}

#: Thesis joint number -> URDF joint name.
URDF_JOINT: Mapping[int, str] = {
    1: "r_ankle_roll", 2: "r_ankle_pitch", 3: "r_knee", 4: "r_hip_pitch", 5: "r_hip_roll",
    6: "r_hip_yaw", 7: "r_shoulder_pitch", 8: "r_shoulder_roll", 9: "r_elbow",
    10: "l_shoulder_pitch", 11: "l_shoulder_roll", 12: "l_elbow", 13: "l_hip_yaw",
    14: "l_hip_roll", 15: "l_hip_pitch", 16: "l_knee", 17: "l_ankle_pitch",
    18: "l_ankle_roll",
}

#: Thesis frame -> REP-103: x = -X, y = -Y, z = Z (a half turn about Z, its own inverse).
THESIS_TO_REP = np.diag([-1.0, -1.0, 1.0])


def joint(number: int) -> ThesisJoint:
    """The thesis joint ``J<number>``."""
    return JOINTS[number - 1]


def link_frames(angles_deg: Sequence[float]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Forward kinematics by the thesis' equations.

    Returns, for every thesis link, its CoM frame as (rotation, position in mm) in the
    thesis frame rooted at the right-foot CoM. ``angles_deg`` are J1..J18 in degrees.
    """
    if len(angles_deg) != len(JOINTS):
        raise ValueError(f"expected {len(JOINTS)} joint angles, got {len(angles_deg)}")
    frames = {ROOT_LINK: (np.eye(3), np.zeros(3))}
    for jt, theta in zip(JOINTS, angles_deg, strict=True):
        rotation, position = frames[jt.parent]
        offset = np.asarray(jt.translation(float(theta)))
        frames[jt.child] = (rotation @ jt.rotation(float(theta)), position + rotation @ offset)
    return frames


def link_positions(angles_deg: Sequence[float]) -> dict[str, np.ndarray]:
    """Thesis-frame CoM position (mm) of every link for J1..J18 in degrees."""
    return {name: frame[1] for name, frame in link_frames(angles_deg).items()}


def split_translation(jt: ThesisJoint) -> tuple[np.ndarray, np.ndarray]:
    """Write ``p(theta)`` as ``a + R(theta) b`` (the URDF joint origin and child CoM).

    ``a`` is a point of the joint axis in the parent CoM frame, ``b`` the child CoM
    relative to that point at theta = 0. The component of ``b`` along the axis is set
    to zero (the axis point nearest the child CoM). Solved by least squares over a full
    turn; the residual is returned by :func:`split_residual` for checking.
    """
    a, b, _ = _fit_split(jt)
    return a, b


def split_residual(jt: ThesisJoint) -> float:
    """Largest error (mm) of ``a + R(theta) b`` against the printed ``p(theta)``."""
    return _fit_split(jt)[2]


def _fit_split(jt: ThesisJoint) -> tuple[np.ndarray, np.ndarray, float]:
    thetas = np.linspace(-180.0, 180.0, 73)
    rows, targets = [], []
    for theta in thetas:
        rows.append(np.hstack([np.eye(3), jt.rotation(theta)]))
        targets.append(jt.translation(theta))
    design, target = np.vstack(rows), np.concatenate(targets)
    axis_column = 3 + "XYZ".index(jt.axis)
    columns = [c for c in range(6) if c != axis_column]
    solution, *_ = np.linalg.lstsq(design[:, columns], target, rcond=None)
    full = np.zeros(6)
    full[columns] = solution
    residual = float(np.max(np.abs(design @ full - target)))
    return full[:3], full[3:], residual
