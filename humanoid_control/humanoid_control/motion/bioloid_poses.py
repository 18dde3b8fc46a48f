"""Bioloid pose files, and poses played as motions the way the thesis' demo did.

Two pose formats, one pose per line:

- **thesis poses** (``read_thesis_poses``): 18 angles J1..J18 in degrees, numbered and
  signed as in Tyropoulos (2008), optionally after a label; read by
  :func:`humanoid_description.thesis_poses.read_pose_csv` and converted by its
  :class:`~humanoid_description.thesis_poses.ThesisFrame` (nothing of the thesis
  convention is repeated here);
- **raw poses by motor ID** (``read_raw_poses``): a header ``pose,<id>,<id>,...`` naming
  the Dynamixel IDs of the columns, then ``<label>,<raw>,<raw>,...`` per pose, raw AX-12
  register values (0..1023, 512 = 0 deg), converted by the robot's joint map.
  Example::

      # the thesis' initial-position table
      pose,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18
      home,206,818,252,772,512,512,512,512,512,512,463,560,440,585,554,470,509,510

Played as a motion (:func:`pose_demo_motion`), a pose file becomes the thesis' demo
program: from home to each pose in turn, hold it, back to home (timing from
``config/motion.yaml``). Thesis poses are single-support poses on the right foot: on
the way in and out the robot first shifts its weight over the support foot with both
feet planted (:func:`humanoid_description.inverse_kinematics.shift_weight`), so that
lifting the other foot does not tip it over.

``python -m humanoid_control.motion.bioloid_poses`` regenerates the library motions
P1..P13 from ``humanoid_description/config/bioloid/balanced_poses.yaml``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from humanoid_control.interpolation import Law
from humanoid_control.motion.data import load_settings
from humanoid_control.motion.keyframes import write_keyframes
from humanoid_control.motion.limits import JointBounds
from humanoid_control.motion.model import Motion, MotionError
from humanoid_description.inverse_kinematics import InverseKinematicsError, shift_weight
from humanoid_description.model import RobotModel, load_model
from humanoid_description.robots import robot_files
from humanoid_description.thesis_poses import PoseFileError, ThesisFrame, ThesisPose, is_number, read_pose_csv

ROBOT = "bioloid"
RAW_HEADER = "pose"


@dataclass(frozen=True)
class RawPose:
    """One pose by motor ID: raw register values; ``line`` where it was read (0: not read)."""

    label: str
    positions: dict[int, int]
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class JointPose:
    """A pose as joint name -> position (rad), with where it came from."""

    label: str
    positions: dict[str, float]
    line: int
    support: str = "both"


# -- thesis poses ----------------------------------------------------------------------
def read_thesis_poses(path: Path, robot: str = ROBOT) -> list[JointPose]:
    """Thesis poses (J1..J18 deg) as URDF joint positions, each checked against the joint limits."""
    try:
        poses = read_pose_csv(Path(path))
    except PoseFileError as error:
        raise _motion_error(path, error) from None
    frame = ThesisFrame(load_model(robot))
    bounds = JointBounds.for_robot(robot)
    thesis_number = {s.joint: s.thesis for s in frame.model.config.joint_map.values()}
    result = []
    for pose in poses:
        positions = frame.joint_positions(pose.angles_deg)
        for column, value in enumerate(positions):
            problem = bounds.position_violation(column, float(value))
            if problem:
                joint = bounds.joint_names[column]
                raise MotionError(path, f"{pose.label}: J{thesis_number[joint]}: {problem}", pose.line)
        result.append(JointPose(pose.label, dict(zip(bounds.joint_names, map(float, positions), strict=True)),
                                pose.line, support="right"))
    return result


def _motion_error(path: Path, error: PoseFileError) -> MotionError:
    """The reader's 'file:line: problem' message as a MotionError with its parts."""
    prefix = f"{path}:"
    message = str(error)
    rest = message[len(prefix):] if message.startswith(prefix) else message
    line, _, problem = rest.partition(": ")
    return MotionError(path, problem, int(line)) if line.isdigit() else MotionError(path, rest.lstrip(": "))


def write_thesis_poses(poses: Sequence[ThesisPose], path: Path) -> None:
    """Write thesis poses: a header comment, then ``label,J1,...,J18`` per pose."""
    lines = ["# Bioloid poses in the thesis convention: label, J1..J18 in degrees (Tyropoulos 2008)"]
    for pose in poses:
        if "," in pose.label or not pose.label or is_number(pose.label):
            raise ValueError(f"pose label {pose.label!r} must be a non-numeric text without commas")
        lines.append(",".join([pose.label, *(repr(float(a)) for a in pose.angles_deg)]))
    Path(path).write_text("\n".join(lines) + "\n")


# -- raw poses by motor ID -------------------------------------------------------------
def read_raw_poses(path: Path, robot: str = ROBOT) -> list[RawPose]:
    """Raw poses by motor ID; every value checked (integer, register range, joint limits)."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise MotionError(path, f"cannot read: {error.strerror or error}") from None
    ids: list[int] | None = None
    poses: list[RawPose] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if ids is None:
            ids = _header_ids(fields, path, number, robot)
            continue
        poses.append(_raw_pose(fields, ids, path, number, robot))
    if not poses:
        raise MotionError(path, "no poses found" if ids is not None else
                          f"no header line '{RAW_HEADER},<motor id>,...' found")
    return poses


def _header_ids(fields: list[str], path: Path, number: int, robot: str) -> list[int]:
    if fields[0].lower() != RAW_HEADER or len(fields) < 2:
        raise MotionError(path, f"the first line must be the header '{RAW_HEADER},<motor id>,...', "
                                f"got {','.join(fields)!r}", number)
    joint_map = load_model(robot).config.joint_map
    ids = []
    for item in fields[1:]:
        if not item.isdigit() or int(item) not in joint_map.ids:
            raise MotionError(path, f"header: {item!r} is not a motor ID of robot {robot} "
                                    f"(known: {', '.join(map(str, sorted(joint_map.ids)))})", number)
        if int(item) in ids:
            raise MotionError(path, f"header: motor ID {item} is listed twice", number)
        ids.append(int(item))
    return ids


def _raw_pose(fields: list[str], ids: list[int], path: Path, number: int, robot: str) -> RawPose:
    if len(fields) != len(ids) + 1:
        raise MotionError(path, f"expected a label and {len(ids)} raw values (one per header motor ID), "
                                f"got {len(fields)} fields", number)
    label = fields[0]
    if not label:
        raise MotionError(path, "the pose label (field 0) is empty", number)
    joint_map = load_model(robot).config.joint_map
    bounds = JointBounds.for_robot(robot)
    positions = {}
    for servo_id, item in zip(ids, fields[1:], strict=True):
        servo = joint_map.by_id(servo_id)
        try:
            raw = int(item)
        except ValueError:
            raise MotionError(path, f"{label}: motor {servo_id} ({servo.joint}): {item!r} is not an integer",
                              number) from None
        scale = servo.scale
        if not scale.raw_min <= raw <= scale.raw_max:
            raise MotionError(path, f"{label}: motor {servo_id} ({servo.joint}): {raw} is outside the "
                                    f"{scale.name} register range {scale.raw_min}..{scale.raw_max}", number)
        problem = bounds.position_violation(bounds.joint_names.index(servo.joint), servo.raw_to_radians(raw))
        if problem:
            raise MotionError(path, f"{label}: motor {servo_id} = {raw}: {problem}", number)
        positions[servo_id] = raw
    return RawPose(label, positions, number)


def write_raw_poses(poses: Sequence[RawPose], path: Path) -> None:
    """Write raw poses: the header of motor IDs (those of the first pose), then one line per pose."""
    if not poses:
        raise ValueError("no poses to write")
    ids = list(poses[0].positions)
    lines = [",".join([RAW_HEADER, *map(str, ids)])]
    for pose in poses:
        if list(pose.positions) != ids:
            raise ValueError(f"pose {pose.label!r} has motor IDs {list(pose.positions)}, expected {ids}")
        if "," in pose.label or not pose.label:
            raise ValueError(f"pose label {pose.label!r} must be a non-empty text without commas")
        lines.append(",".join([pose.label, *(str(pose.positions[i]) for i in ids)]))
    Path(path).write_text("\n".join(lines) + "\n")


def raw_to_joint_poses(poses: Sequence[RawPose], robot: str = ROBOT) -> list[JointPose]:
    """Raw poses as joint positions (rad) through the robot's joint map."""
    joint_map = load_model(robot).config.joint_map
    return [JointPose(p.label, {joint_map.by_id(i).joint: joint_map.by_id(i).raw_to_radians(raw)
                                for i, raw in p.positions.items()}, p.line) for p in poses]


def is_raw_pose_file(path: Path) -> bool:
    """True when the first meaningful line is a raw-pose header (``pose,<id>,...``)."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            return line.split(",")[0].strip().lower() == RAW_HEADER
    return False


# -- poses as a motion ---------------------------------------------------------------------
def pose_demo_motion(robot: str, name: str, poses: Sequence[JointPose], source: str = "<memory>",
                     move_time: float | None = None, hold_time: float | None = None,
                     law: Law | None = None) -> Motion:
    """Home, then for each pose: move there, hold, back home (the thesis' demo program).

    The motion drives the joints the poses give (the same for every pose), in the
    robot's canonical order; timing and law default to ``config/motion.yaml``.
    """
    settings = load_settings()
    move = settings.pose_move_time if move_time is None else move_time
    hold = settings.pose_hold_time if hold_time is None else hold_time
    bounds = JointBounds.for_robot(robot)
    if not poses:
        raise MotionError(source, "no poses")
    joints = tuple(j for j in bounds.joint_names if j in poses[0].positions)
    for pose in poses:
        if set(pose.positions) != set(joints):
            raise MotionError(source, f"pose {pose.label!r} drives other joints than the first pose", pose.line)
    model = load_model(robot)
    home = model.config.home
    rows, times, holds, labels, supports = [[home[j] for j in joints]], [0.0], [0.0], ["home"], ["both"]

    def add(positions: list[float], label: str, support: str, hold: float = 0.0) -> None:
        rows.append(positions)
        times.append(times[-1] + holds[-1] + move)
        holds.append(hold)
        labels.append(label)
        supports.append(support)

    for pose in poses:
        target = [pose.positions[j] for j in joints]
        steps = _one_foot_steps(model, joints, pose, settings.pose_lift, source) if pose.support != "both" else []
        for positions, label in steps:
            add(positions, label, "both" if label.startswith("weight") else pose.support)
        add(target, pose.label, pose.support, hold)
        for positions, label in reversed(steps):
            add(positions, label, "both" if label.startswith("weight") else pose.support)
        add([home[j] for j in joints], "home", "both")
    return Motion(name=name, robot=robot, joint_names=joints, times=np.array(times), positions=np.array(rows),
                  law=settings.pose_law if law is None else law, holds=np.array(holds), labels=tuple(labels),
                  supports=tuple(supports), source=source,
                  description=f"home -> (weight shift, foot raised) -> pose -> hold {hold:g} s -> (foot "
                              f"raised, weight shift) -> home, for: {', '.join(p.label for p in poses)}")


def _one_foot_steps(model: RobotModel, joints: tuple[str, ...], pose: JointPose, lift: float,
                    source: str) -> list[tuple[list[float], str]]:
    """Postures between home and a one-foot pose: the weight over the support foot (both
    feet planted), then the free foot raised by ``lift``; the CoM where the pose has it.
    None are needed (empty list) when the poses drive only some joints."""
    if set(joints) != set(model.joints.names):
        return []
    target = model.joints.to_array(pose.positions)
    sole = model.frame_placement(model.config.feet[pose.support].sole, target)
    com = sole.actInv(model.com(target))[:2]
    free = "left" if pose.support == "right" else "right"
    steps = []
    try:
        for height, label in ((0.0, f"weight on the {pose.support} foot"), (lift, f"{free} foot raised")):
            if label.endswith("raised") and lift == 0.0:
                continue
            posture = shift_weight(model, model.home_positions(), pose.support, com, lift=height)
            steps.append(([float(posture[model.joints.index(j)]) for j in joints], label))
    except InverseKinematicsError as error:
        raise MotionError(source, f"pose {pose.label!r}: {error}", pose.line or None) from None
    return steps


def write_balanced_pose_library(directory: Path) -> list[Path]:
    """(Re)write the library motions P1..P13 from the thesis' balanced poses."""
    model = load_model(ROBOT)
    frame = ThesisFrame(model)
    source = robot_files(ROBOT).config_file("balanced_poses.yaml")
    poses = yaml.safe_load(source.read_text())["poses"]
    written = []
    for name, spec in poses.items():
        positions = frame.joint_positions(spec["angles"])
        pose = JointPose(name, model.joints.to_dict(positions), line=0, support="right")
        motion = pose_demo_motion(ROBOT, name, [pose], source=str(source))
        angles = ", ".join(f"{a:g}" for a in spec["angles"])
        motion = Motion(**{**motion.__dict__, "description":
                           f"Balanced pose {name} of Tyropoulos (2008), set by hand on the real robot: from home, "
                           f"shift the weight over the right foot, raise the left foot, go to the pose (single "
                           f"support), hold 2 s, back the same way to home, as the thesis' demo program did. "
                           f"J1..J18 = {angles} deg."})
        path = Path(directory) / f"{name}.yaml"
        write_keyframes(motion, path, units="deg", decimals=4, header=(
            f"Generated from humanoid_description/config/bioloid/balanced_poses.yaml ({name}) by\n"
            "python -m humanoid_control.motion.bioloid_poses; test_motion_library.py checks both agree."))
        written.append(path)
    return written


def main() -> int:
    directory = Path(__file__).resolve().parents[2] / "config" / "motions" / ROBOT  # the source tree
    for path in write_balanced_pose_library(directory):
        print(f"written {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
