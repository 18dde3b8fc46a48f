"""Generate the Bioloid URDF kinematics (robots/bioloid/kinematics.yaml) from the thesis.

The thesis chain is rooted at the right foot; a URDF for a floating-base humanoid is
rooted at the torso. This module re-roots the chain: arms and left leg keep the
thesis direction, the right leg is traversed backwards (each of its joints inverted).
It also converts the thesis frame to REP-103 and millimetres to metres.

Each URDF link frame sits on the axis of the joint that carries it, parallel to the
thesis CoM frame; the link's CoM is the inertial origin. The point chosen on each
joint axis is halfway between the two CoMs along the axis (any point of the axis
gives the same kinematics; this one keeps joint frames inside the robot).

Sign convention: every URDF axis is +x, +y or +z of REP-103, so a URDF joint
position q relates to the thesis servo angle theta by q = direction * theta with
direction = +-1, recorded per joint. Run ``python -m
humanoid_robot_bioloid.thesis.kinematics_generator OUT.yaml`` to regenerate the file; a test
checks that the committed file is what this module produces.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from humanoid_description import AX12
from humanoid_robot_bioloid.thesis import equations as thesis

#: Box of each URDF link's body, centred on the link's CoM: size (x, y, z) in mm in the
#: link frame at the zero pose (T-pose, arms sideways), sized from the AX-12 (32 x 50 x
#: 40 mm) and the brackets that make up each link. Its use: the link's inertia (a solid
#: box of the link's mass) and, for the foot, the sole frame. The visual and collision
#: shapes are :mod:`.shapes_generator`'s.
COLLISION_BOX_MM: dict[str, tuple[float, float, float]] = {
    "torso": (56.0, 100.0, 96.0),
    "foot": (100.0, 66.0, 14.0),
    "ankle": (40.0, 36.0, 40.0),
    "shank": (36.0, 30.0, 48.0),
    "thigh": (36.0, 34.0, 40.0),
    "hip": (40.0, 36.0, 36.0),
    "hip_support": (30.0, 36.0, 24.0),
    "shoulder": (32.0, 28.0, 40.0),
    "upper_arm": (30.0, 44.0, 30.0),
    "forearm": (26.0, 56.0, 26.0),
}

#: Height of the foot CoM above the sole (mm). Not in the thesis: the foot is a plate
#: with the ankle-roll bracket on it; with the roll axis 24.6 mm above the foot CoM,
#: 8 mm puts that axis 32.6 mm above the ground, as on the robot.
FOOT_COM_HEIGHT_MM = 8.0

#: AX-12 datasheet figures used for every Bioloid joint.
EFFORT_LIMIT_NM = 1.5
VELOCITY_LIMIT_RAD_S = 5.34  # 0.196 s / 60 deg at 10 V, no load


@dataclass(frozen=True)
class UrdfJoint:
    """One revolute joint of the re-rooted chain, in URDF terms (metres, REP-103)."""

    name: str
    thesis_number: int
    motor_id: int
    parent: str
    child: str
    origin: tuple[float, float, float]
    axis: tuple[float, float, float]
    direction: int
    lower: float
    upper: float


def _rep(vector_mm: np.ndarray) -> tuple[float, float, float]:
    """Thesis-frame millimetres to REP-103 metres, rounded to 0.1 micrometre."""
    v = thesis.THESIS_TO_REP @ np.asarray(vector_mm, dtype=float) / 1000.0
    return (round(float(v[0]), 7) + 0.0, round(float(v[1]), 7) + 0.0, round(float(v[2]), 7) + 0.0)


def _split_at_midpoint(jt: thesis.ThesisJoint) -> tuple[np.ndarray, np.ndarray]:
    """``p = a + R b`` with the axis point halfway between the two CoMs along the axis."""
    a, b = thesis.split_translation(jt)
    unit = np.eye(3)["XYZ".index(jt.axis)]
    along = float(np.dot(a + b, unit))
    a = a - unit * (np.dot(a, unit) - along / 2.0)
    b = b - unit * (np.dot(b, unit) - along / 2.0)
    return a, b


def _reversed_joints() -> set[int]:
    """Thesis joints on the path from the right foot (thesis root) to the torso (URDF root)."""
    by_child = {jt.child: jt for jt in thesis.JOINTS}
    numbers: set[int] = set()
    link = thesis.URDF_ROOT_THESIS_LINK
    while link != thesis.ROOT_LINK:
        jt = by_child[link]
        numbers.add(jt.number)
        link = jt.parent
    return numbers


def _limits(direction: int) -> tuple[float, float]:
    """The mechanism's limits: the servo's whole register range. The thesis' limit table is
    not (the real robot stood beyond it); it is kept as data in ``joint_map.yaml``
    (``thesis_limits``), and self-collision is the veto's to guard."""
    bounds = sorted(direction * np.radians(AX12.raw_to_degrees(r)) for r in (AX12.raw_min, AX12.raw_max))
    return round(float(bounds[0]), 6), round(float(bounds[1]), 6)


def build() -> tuple[list[UrdfJoint], dict[str, tuple[float, float, float]]]:
    """The URDF joints (root to leaves) and each URDF link's CoM in its own frame."""
    reversed_numbers = _reversed_joints()
    com_mm: dict[str, np.ndarray] = {thesis.URDF_ROOT_THESIS_LINK: np.zeros(3)}
    joints: list[UrdfJoint] = []

    def add(jt: thesis.ThesisJoint, backwards: bool) -> None:
        a, b = _split_at_midpoint(jt)
        parent, child = (jt.child, jt.parent) if backwards else (jt.parent, jt.child)
        origin = com_mm[parent] + (-b if backwards else a)
        com_mm[child] = -a if backwards else b
        axis_sign = -1 if jt.axis in "XY" else 1  # thesis X, Y point opposite to REP x, y
        sense = 1 if jt.right_handed else -1
        direction = axis_sign * sense * (-1 if backwards else 1)
        unit = tuple(float(v) for v in np.eye(3)["XYZ".index(jt.axis)])
        lower, upper = _limits(direction)
        joints.append(UrdfJoint(
            name=thesis.URDF_JOINT[jt.number], thesis_number=jt.number, motor_id=jt.motor_id,
            parent=thesis.URDF_LINK[parent], child=thesis.URDF_LINK[child],
            origin=_rep(origin), axis=unit, direction=direction, lower=lower, upper=upper))

    for number in sorted(reversed_numbers, reverse=True):
        add(thesis.joint(number), backwards=True)
    for jt in thesis.JOINTS:
        if jt.number not in reversed_numbers:
            add(jt, backwards=False)
    coms = {thesis.URDF_LINK[name]: _rep(value) for name, value in com_mm.items()}
    return joints, coms


def _box_kind(link: str) -> str:
    return "torso" if link == "base_link" else link.split("_", 1)[1]


def document() -> dict:
    """The YAML document consumed by robots/bioloid/bioloid.urdf.xacro."""
    joints, coms = build()
    links = {}
    for name, com in coms.items():
        size = COLLISION_BOX_MM[_box_kind(name)]
        box_centre = list(com)
        if _box_kind(name) == "foot":
            # The foot box rests on the sole: its bottom face is the contact surface.
            box_centre[2] = round(com[2] - FOOT_COM_HEIGHT_MM / 1000.0 + size[2] / 2000.0, 7)
        links[name] = {
            "com": list(com),
            "box_size": [s / 1000.0 for s in size],
            "box_origin": box_centre,
        }
    return {
        "generated_by": "python -m humanoid_robot_bioloid.thesis.kinematics_generator",
        "source": "Tyropoulos 2008 forward-kinematics equations J1..J18 (three misprint fixes)",
        "effort_limit": EFFORT_LIMIT_NM,
        "velocity_limit": VELOCITY_LIMIT_RAD_S,
        "foot_com_height": FOOT_COM_HEIGHT_MM / 1000.0,
        "links": links,
        "joints": {
            j.name: {
                "thesis_joint": j.thesis_number, "motor_id": j.motor_id,
                "parent": j.parent, "child": j.child, "origin": list(j.origin),
                "axis": list(j.axis), "direction": j.direction,
                "lower": j.lower, "upper": j.upper,
            }
            for j in joints
        },
    }


def render() -> str:
    """The YAML text of :func:`document`, stable for comparison with the committed file."""
    header = "# Generated from the thesis equations; do not edit by hand (see module docstring).\n"
    return header + yaml.safe_dump(document(), sort_keys=False, default_flow_style=None, width=100)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m humanoid_robot_bioloid.thesis.kinematics_generator OUT.yaml", file=sys.stderr)
        return 2
    Path(args[0]).write_text(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
