"""Bioloid pose files: one pose per line, read as joint positions.

Two formats:

- **thesis poses** (``read_thesis_poses``): 18 angles J1..J18 in degrees, numbered and
  signed as in Tyropoulos (2008), optionally after a label; read by
  :func:`humanoid_robot_bioloid.thesis.pose_file.read_pose_csv` (written by its
  ``write_pose_csv``) and converted by
  :class:`~humanoid_robot_bioloid.thesis.pose_analysis.ThesisFrame` (nothing of the
  thesis convention is repeated here);
- **raw poses by motor ID** (``read_raw_poses``): a header ``pose,<id>,<id>,...`` naming
  the Dynamixel IDs of the columns, then ``<label>,<raw>,<raw>,...`` per pose, raw AX-12
  register values (0..1023, 512 = 0 deg), converted by the robot's joint map.
  Example::

      # the thesis' initial-position table
      pose,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18
      home,206,818,252,772,512,512,512,512,512,512,463,560,440,585,554,470,509,510

Played as a motion (:func:`read_pose_file_motion`, the robot's ``bioloid_thesis_poses``
format), a pose file becomes the thesis' demo program
(:func:`humanoid_core.motion.pose_demo.pose_demo_motion`); :func:`append_thesis_pose`
appends a pose in the thesis convention (``humanoid pose``'s save).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from humanoid_core.motion import JointBounds, JointPose, Motion, MotionError, pose_demo_motion
from humanoid_description import DataFileError, load_model, text_lines
from humanoid_robot_bioloid.thesis import ThesisFrame, ThesisPose, read_pose_csv, write_pose_csv

ROBOT = "bioloid"
RAW_HEADER = "pose"


@dataclass(frozen=True)
class RawPose:
    """One pose by motor ID: raw register values; ``line`` where it was read (0: not read)."""

    label: str
    positions: dict[int, int]
    line: int = field(default=0, compare=False)


# -- thesis poses ----------------------------------------------------------------------
def read_thesis_poses(path: Path, robot: str = ROBOT) -> list[JointPose]:
    """Thesis poses (J1..J18 deg) as URDF joint positions, each checked against the joint limits."""
    try:
        poses = read_pose_csv(Path(path))
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
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


# -- raw poses by motor ID -------------------------------------------------------------
def read_raw_poses(path: Path, robot: str = ROBOT) -> list[RawPose]:
    """Raw poses by motor ID; every value checked (integer, register range, joint limits)."""
    ids: list[int] | None = None
    poses: list[RawPose] = []
    try:
        for number, line in text_lines(path):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [f.strip() for f in line.split(",")]
            if ids is None:
                ids = _header_ids(fields, path, number, robot)
                continue
            poses.append(_raw_pose(fields, ids, path, number, robot))
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
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
    """True when the first meaningful line is a raw-pose header (``pose,<id>,...``); False
    for anything else, unreadable files included (the thesis pose reader then says why)."""
    try:
        for _number, line in text_lines(path):
            if line.strip() and not line.lstrip().startswith("#"):
                return line.split(",")[0].strip().lower() == RAW_HEADER
    except DataFileError:
        return False
    return False


# -- the robot's pose file format --------------------------------------------------------
def read_pose_file_motion(path: Path, robot: str = ROBOT) -> Motion:
    """A pose file played as the thesis' demo: raw poses by motor ID when the first line is
    ``pose,<id>,...``, thesis poses (J1..J18 deg) otherwise."""
    path = Path(path)
    poses = (raw_to_joint_poses(read_raw_poses(path, robot), robot) if is_raw_pose_file(path)
             else read_thesis_poses(path, robot))
    return pose_demo_motion(robot, path.stem, poses, source=str(path))


def append_thesis_pose(path: Path, robot: str, positions: Mapping[str, float], label: str = "") -> int:
    """Append the pose to a thesis pose file (LABEL,J1..J18 deg). Returns the pose count."""
    model = load_model(robot)
    try:
        frame = ThesisFrame(model)
    except ValueError as error:
        raise MotionError(path, str(error)) from None
    try:
        poses = read_pose_csv(path) if path.exists() else []
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
    angles = frame.angles_deg(model.joints.to_array(dict(positions)))
    poses.append(ThesisPose(line=0, label=label or f"pose {len(poses) + 1}", angles_deg=angles))
    try:
        write_pose_csv(poses, path)
    except ValueError as error:
        raise MotionError(path, str(error)) from None
    return len(poses)
