"""The project's own motion format: keyframes in YAML, for people and for tools.

Example (every key is described in ``humanoid_description/robots/MOTIONS.md``)::

    format: keyframes          # optional; identifies the format
    robot: hoap2
    name: squat                # optional; the file name without extension by default
    description: Symmetric squat with the feet flat.
    units: deg                 # deg (positions deg, velocities deg/s) or rad (rad, rad/s)
    law: cubic                 # linear | cubic | quintic | two_segment (default cubic)
    joints: [rleg_joint3, rleg_joint4, rleg_joint5]
    keyframes:
      - time: 0.0              # s, arrival time, strictly increasing
        positions: [0, 0, 0]
        label: stand           # optional
      - time: 1.5
        positions: [-25, 50, -25]
        velocities: [0, 0, 0]  # optional (zero when omitted)
        hold: 1.0              # optional: stay this long after arrival (s)
        support: both          # optional: both | right | left (feet carrying the robot)

Everything is checked against the robot's URDF (known joints, limits) and reported
with the file and line of the offending value; nothing of a malformed file is played.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from humanoid_core.loop import Law
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import SUPPORTS, Motion
from humanoid_core.motion.yaml_nodes import YamlNode, compose_file, format_number, require_keys
from humanoid_description import ROBOTS, write_text_atomically

FORMAT = "keyframes"
UNITS = {"deg": math.pi / 180.0, "rad": 1.0}
_TOP_REQUIRED = {"robot", "units", "joints", "keyframes"}
_TOP_OPTIONAL = {"format", "name", "description", "law"}
_KEYFRAME_REQUIRED = {"time", "positions"}
_KEYFRAME_OPTIONAL = {"velocities", "hold", "label", "support"}


def read_keyframes(path: Path, robot: str | None = None) -> Motion:
    """Read a keyframe file; ``robot`` (when given) must match the file's robot."""
    root = compose_file(path)
    top = root.mapping("motion file")
    if "format" in top and top["format"].text("format") != FORMAT:
        raise top["format"].error(f"format must be {FORMAT!r} for a keyframe file")
    require_keys(top, root, "motion file", _TOP_REQUIRED, _TOP_OPTIONAL)
    file_robot = _robot(top["robot"], robot)
    scale = _units(top["units"])
    law = _law(top["law"]) if "law" in top else Law.CUBIC
    joints = _joints(top["joints"], file_robot)
    bounds = JointBounds.for_robot(file_robot, joints)
    frames = top["keyframes"].sequence("keyframes")
    if not frames:
        raise top["keyframes"].error("keyframes: at least one keyframe is needed")
    parsed = [_keyframe(node, i, len(joints), scale, bounds) for i, node in enumerate(frames)]
    _check_timing(frames, parsed)
    _check_rest(frames, parsed)
    velocities = [p["velocities"] for p in parsed]
    return Motion(
        name=top["name"].text("name") if "name" in top else Path(path).stem,
        robot=file_robot, joint_names=joints,
        times=np.array([p["time"] for p in parsed]),
        positions=np.array([p["positions"] for p in parsed]),
        law=law,
        velocities=None if all(v is None for v in velocities) else np.array(
            [np.zeros(len(joints)) if v is None else v for v in velocities]),
        holds=np.array([p["hold"] for p in parsed]) if any(p["hold"] for p in parsed) else None,
        labels=tuple(p["label"] for p in parsed) if any(p["label"] for p in parsed) else (),
        supports=tuple(p["support"] for p in parsed),
        description=top["description"].text("description") if "description" in top else "",
        source=str(path))


def _robot(node: YamlNode, expected: str | None) -> str:
    name = node.text("robot")
    if name not in ROBOTS:
        raise node.error(f"unknown robot {name!r} (known: {', '.join(ROBOTS)})")
    if expected is not None and name != expected:
        raise node.error(f"this motion is for robot {name!r}, not {expected!r}")
    return name


def _units(node: YamlNode) -> float:
    units = node.text("units")
    if units not in UNITS:
        raise node.error(f"units must be one of {', '.join(UNITS)}, got {units!r}")
    return UNITS[units]


def _law(node: YamlNode) -> Law:
    try:
        return Law.parse(node.text("law"))
    except ValueError as error:
        raise node.error(str(error)) from None


def _joints(node: YamlNode, robot: str) -> tuple[str, ...]:
    known = JointBounds.for_robot(robot).joint_names
    names: list[str] = []
    items = node.sequence("joints")
    if not items:
        raise node.error("joints: at least one joint is needed")
    for item in items:
        name = item.text("joint name")
        if name not in known:
            raise item.error(f"unknown joint {name!r} for robot {robot} (known: {', '.join(known)})")
        if name in names:
            raise item.error(f"joint {name!r} is listed twice")
        names.append(name)
    return tuple(names)


def _keyframe(node: YamlNode, index: int, count: int, scale: float, bounds: JointBounds) -> dict:
    what = f"keyframe {index}"
    fields = node.mapping(what)
    require_keys(fields, node, what, _KEYFRAME_REQUIRED, _KEYFRAME_OPTIONAL)
    time = fields["time"].number(f"{what} time")
    if time < 0.0:
        raise fields["time"].error(f"{what}: time must be >= 0, got {time}")
    positions = np.array(fields["positions"].numbers(f"{what} positions", count)) * scale
    for column, value in enumerate(positions):
        problem = bounds.position_violation(column, float(value))
        if problem:
            raise fields["positions"].error(f"{what}: {problem}")
    velocities = None
    if "velocities" in fields:
        velocities = np.array(fields["velocities"].numbers(f"{what} velocities", count)) * scale
    hold = fields["hold"].number(f"{what} hold") if "hold" in fields else 0.0
    if hold < 0.0:
        raise fields["hold"].error(f"{what}: hold must be >= 0, got {hold}")
    support = fields["support"].text(f"{what} support") if "support" in fields else "both"
    if support not in SUPPORTS:
        raise fields["support"].error(f"{what}: support must be one of {', '.join(SUPPORTS)}, got {support!r}")
    label = fields["label"].text(f"{what} label") if "label" in fields else ""
    return {"time": time, "positions": positions, "velocities": velocities, "hold": hold,
            "support": support, "label": label, "line": node.line}


def _check_timing(frames: list[YamlNode], parsed: list[dict]) -> None:
    for i in range(1, len(parsed)):
        previous, current = parsed[i - 1], parsed[i]
        if current["time"] <= previous["time"] + previous["hold"]:
            after = "the end of its hold" if previous["hold"] else "its time"
            raise frames[i].error(
                f"keyframe {i}: time {current['time']} s must be after keyframe {i - 1}'s {after} "
                f"({previous['time'] + previous['hold']} s)")


def _check_rest(frames: list[YamlNode], parsed: list[dict]) -> None:
    last = len(parsed) - 1
    for i, frame in enumerate(parsed):
        moving = frame["velocities"] is not None and np.any(frame["velocities"] != 0.0)
        if moving and (i in (0, last) or frame["hold"] > 0.0):
            raise frames[i].error(f"keyframe {i}: velocities must be zero here "
                                  "(motions start and end at rest; held keyframes stand still)")


# -- writing -------------------------------------------------------------------------------
def write_keyframes(motion: Motion, path: Path, units: str = "deg", decimals: int | None = None,
                    header: str = "") -> None:
    """Write ``motion`` as a keyframe file, all or nothing; ``decimals`` rounds values (None: exact)."""
    write_text_atomically(path, keyframes_text(motion, units, decimals, header))


def keyframes_text(motion: Motion, units: str = "deg", decimals: int | None = None, header: str = "") -> str:
    """The keyframe file text of ``motion`` (see :func:`write_keyframes`)."""
    if units not in UNITS:
        raise ValueError(f"units must be one of {', '.join(UNITS)}, got {units!r}")
    scale = UNITS[units]
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"format: {FORMAT}", f"robot: {motion.robot}", f"name: {json.dumps(motion.name)}"]
    if motion.description:
        lines.append(f"description: {json.dumps(motion.description)}")
    lines += [f"units: {units}", f"law: {motion.law.value}", f"joints: [{', '.join(motion.joint_names)}]",
              "keyframes:"]
    for i in range(motion.keyframe_count):
        lines.append(f"  - time: {format_number(float(motion.times[i]), None)}")
        if motion.labels and motion.labels[i]:
            lines.append(f"    label: {json.dumps(motion.labels[i])}")
        lines.append(f"    positions: {_numbers(motion.positions[i] / scale, decimals)}")
        if motion.velocities is not None and np.any(motion.velocities[i] != 0.0):
            lines.append(f"    velocities: {_numbers(motion.velocities[i] / scale, decimals)}")
        if motion.holds is not None and motion.holds[i] > 0.0:
            lines.append(f"    hold: {format_number(float(motion.holds[i]), None)}")
        if motion.support(i) != "both":
            lines.append(f"    support: {motion.support(i)}")
    return "\n".join(lines) + "\n"


def _numbers(values: np.ndarray, decimals: int | None) -> str:
    return "[" + ", ".join(format_number(float(v), decimals) for v in values) + "]"
