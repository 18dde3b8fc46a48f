"""Generate the Bioloid's link shapes (robots/bioloid/collision.yaml) from its kinematics.

The shapes are the visual and collision geometry of the URDF (the `link_shapes` macro
of xacro/common/macros.xacro). Where each link begins and ends comes from the thesis'
kinematics (:mod:`.kinematics_generator`: the joint axes); the
cross-sections from the parts the robot is built of: the AX-12 servo (32 x 50 x 40 mm),
the brackets joining them, the CM-5 controller. The thesis gives no drawing, so the
cross-sections are estimates, chosen so that the robot's known motions (the balanced
poses P1-P13 as played by the pose demo, the motion library, the arms raised forward
and sideways over their range) keep every checked pair apart by more than the
checker's safety distance, while the contacts the robot cannot make (arm into head or
torso, forearm into thigh, legs crossing) are caught:
humanoid_description/test/test_collision_geometry.py holds both lists.

Per link (REP-103 link frames, which sit on the joint axes):

- torso: a box around the CM-5 and the four servos it carries (shoulder pitch, hip
  yaw), and the head, the AX-S1 sensor module (an AX-12 case) on top of it;
- hip support (the bracket under the hip yaw servo): a short post on the yaw axis;
- hip (roll and pitch servos), ankle (pitch and roll servos): a box around the pair,
  centred on the link's CoM as in the thesis;
- thigh and shank: a bracket box from one pitch axis to the next, the knee servo
  riding at the top of the shank;
- foot: the sole plate (the simulation's ground contact);
- shoulder (the roll servo on the pitch horn): a bracket from the torso's side and a
  cylinder on the roll axis, so that the upper arm, which begins beyond its radius,
  keeps a constant gap at any roll;
- upper arm (bracket and elbow servo) and forearm (gripper): boxes along the arm.

Run ``python -m humanoid_robot_bioloid.thesis.shapes_generator OUT.yaml`` to regenerate the
file; a test checks that the committed file is what this module produces.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import yaml

from humanoid_robot_bioloid.thesis import kinematics_generator as kinematics

#: Torso: the CM-5 with its battery and the shoulder-pitch and hip-yaw servos (mm).
TORSO_BOX = (56.0, 100.0, 96.0)
#: The head: an AX-S1 (the AX-12's case, 50 x 32 x 40 mm) lying on a bracket on top of
#: the torso, its sensors facing forward. Not in the thesis: the type A humanoid's head.
HEAD_BOX = (40.0, 50.0, 32.0)
HEAD_GAP = 2.0  # mm between the torso's top and the head
#: Post under the hip yaw servo: radius, and where it ends below the torso and above
#: the hip block's reach (the thigh's top rim passes under it at any hip angle).
HIP_POST_RADIUS = 15.0
HIP_POST_BOTTOM = 26.0  # mm below the hip yaw axis point
#: Servo pairs centred on their link's CoM (x, y, z in the link frame).
HIP_BOX = (40.0, 36.0, 36.0)
ANKLE_BOX = (40.0, 36.0, 40.0)
#: Leg brackets (x, y cross-section); the thigh begins this far below the hip axes.
THIGH_SECTION = (34.0, 34.0)
THIGH_TOP = 18.0
SHANK_SECTION = (36.0, 30.0)
SHANK_BOTTOM = 20.0  # mm above the ankle axes, where the ankle block begins
#: Sole plate (x, y, thickness), its underside FOOT_COM_HEIGHT_MM below the foot CoM.
FOOT_PLATE = (100.0, 66.0, 14.0)
#: Shoulder: the roll servo as a cylinder on the roll axis (radius, length along it) and
#: the bracket from the torso's side to it (x, z section).
SHOULDER_ROLL_CYLINDER = (16.0, 40.0)
SHOULDER_BRACKET = (28.0, 36.0)
#: Upper arm bracket with the elbow servo: section (x, z) and where it begins beyond the
#: roll axis (clear of the roll cylinder by 8 mm).
UPPER_ARM_SECTION = (30.0, 30.0)
UPPER_ARM_START = 24.0
#: Forearm (gripper): section (x, z) and length from the elbow axis.
FOREARM_SECTION = (26.0, 26.0)
FOREARM_LENGTH = 60.0


def _mm(values) -> list[float]:
    """Millimetres to metres, rounded to 0.1 micrometre."""
    return [round(float(v) / 1000.0, 7) + 0.0 for v in values]


def _box(size, centre, rpy=(0.0, 0.0, 0.0)) -> dict:
    shape = {"box": _mm(size), "xyz": _mm(centre)}
    if any(rpy):
        shape["rpy"] = [round(float(a), 6) + 0.0 for a in rpy]
    return shape


def _segment_box(section, start, end) -> dict:
    """A box from ``start`` to ``end`` (mm, the segment in the link's xz plane)."""
    start, end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    d = end - start
    length = float(np.hypot(d[0], d[2]))
    return _box((section[0], section[1], length), (start + end) / 2.0, (0.0, math.atan2(d[0], d[2]), 0.0))


def shapes() -> dict[str, list[dict]]:
    """Every link's shapes, in the URDF link frames (metres)."""
    joints, coms = kinematics.build()
    com_mm = {link: np.array(c) * 1000.0 for link, c in coms.items()}
    child_origin = {j.parent: {} for j in joints}
    for j in joints:
        child_origin[j.parent][j.name] = np.array(j.origin) * 1000.0
    out: dict[str, list[dict]] = {}
    torso_top = TORSO_BOX[2] / 2.0
    out["base_link"] = [
        _box(TORSO_BOX, com_mm["base_link"]),
        _box(HEAD_BOX, com_mm["base_link"] + [0.0, 0.0, torso_top + HEAD_GAP + HEAD_BOX[2] / 2.0]),
    ]
    for side in ("r", "l"):
        sign = -1.0 if side == "r" else 1.0
        # legs
        yaw_point = child_origin["base_link"][f"{side}_hip_yaw"]
        torso_bottom = com_mm["base_link"][2] - TORSO_BOX[2] / 2.0 - yaw_point[2]  # in the support frame
        post_top, post_bottom = torso_bottom - 2.0, -HIP_POST_BOTTOM
        out[f"{side}_hip_support"] = [{"cylinder": round(HIP_POST_RADIUS / 1000.0, 7),
                                       "from": _mm([0.0, 0.0, post_top]), "to": _mm([0.0, 0.0, post_bottom])}]
        out[f"{side}_hip"] = [_box(HIP_BOX, com_mm[f"{side}_hip"])]
        knee = child_origin[f"{side}_thigh"][f"{side}_knee"]
        top = knee * THIGH_TOP / np.linalg.norm(knee)
        out[f"{side}_thigh"] = [_segment_box(THIGH_SECTION, top, knee)]
        ankle = child_origin[f"{side}_shank"][f"{side}_ankle_pitch"]
        bottom = ankle * (1.0 - SHANK_BOTTOM / np.linalg.norm(ankle))
        out[f"{side}_shank"] = [_segment_box(SHANK_SECTION, np.zeros(3), bottom)]
        out[f"{side}_ankle"] = [_box(ANKLE_BOX, com_mm[f"{side}_ankle"])]
        foot_com = com_mm[f"{side}_foot"]
        plate = [foot_com[0], foot_com[1],
                 foot_com[2] - kinematics.FOOT_COM_HEIGHT_MM + FOOT_PLATE[2] / 2.0]
        out[f"{side}_foot"] = [_box(FOOT_PLATE, plate)]
        # arms (the link frames' y runs along the arm in the zero pose, the T-pose)
        roll = child_origin[f"{side}_shoulder"][f"{side}_shoulder_roll"]
        torso_side = sign * TORSO_BOX[1] / 2.0 - child_origin["base_link"][f"{side}_shoulder_pitch"][1]
        bracket_end = roll[1] - sign * SHOULDER_ROLL_CYLINDER[0]
        bracket = (SHOULDER_BRACKET[0], abs(bracket_end - torso_side) - 2.0, SHOULDER_BRACKET[1])
        out[f"{side}_shoulder"] = [
            _box(bracket, [roll[0], (torso_side + bracket_end) / 2.0 + sign * 1.0, roll[2]]),
            {"cylinder": _mm(SHOULDER_ROLL_CYLINDER)[:2], "xyz": _mm(roll)},
        ]
        elbow = child_origin[f"{side}_upper_arm"][f"{side}_elbow"]
        start = sign * UPPER_ARM_START
        out[f"{side}_upper_arm"] = [_box((UPPER_ARM_SECTION[0], abs(elbow[1] - start), UPPER_ARM_SECTION[1]),
                                         [0.0, (start + elbow[1]) / 2.0, elbow[2]])]
        forearm = com_mm[f"{side}_forearm"]
        out[f"{side}_forearm"] = [_box((FOREARM_SECTION[0], FOREARM_LENGTH, FOREARM_SECTION[1]),
                                       [forearm[0], sign * FOREARM_LENGTH / 2.0, forearm[2]])]
    return out


def render() -> str:
    """The YAML text of the shapes, stable for comparison with the committed file."""
    header = ("# Generated by `python -m humanoid_robot_bioloid.thesis.shapes_generator` from the kinematics;\n"
              "# do not edit by hand (the module docstring says where each shape comes from).\n")
    return header + yaml.safe_dump({"links": shapes()}, sort_keys=False, default_flow_style=None, width=110)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m humanoid_robot_bioloid.thesis.shapes_generator OUT.yaml", file=sys.stderr)
        return 2
    Path(args[0]).write_text(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
