"""Bioloid motion pages in a text form: poses with a speed and a pause, played in sequence.

The maker's Motion Editor stores per pose up to 30 joint positions, a speed and a
pause; a page holds up to 7 poses and a file up to 127 pages. This text form (YAML)
keeps exactly that content, so that pages can be written by hand, diffed, and
converted; the maker's binary byte layout is not implemented (the reference does not
define it). Example::

    format: bioloid_pages
    robot: bioloid
    name: wave                     # optional; the file name by default
    description: Wave the right hand.
    pages:
      - name: wave                 # page name
        steps:                     # 1..7 poses
          - {positions: {1: 206, 3: 252, 5: 512}}
          - {speed: 120, pause: 0.5, positions: {1: 512, 3: 512, 5: 300}}

- ``positions``: motor ID -> raw AX-12 position (0..1023, 512 = 0 deg); every step
  of a file lists the same motors;
- ``speed``: AX-12 Moving Speed units (about 0.111 rpm each; 0 = the servo's maximum,
  which is the robot's actuator speed limit): the motor that moves farthest runs at
  this speed and the others are synchronised to arrive with it, so the step lasts
  ``largest move / speed``. The first step of a file is where the motion starts: the
  player's transition brings the robot there, its speed is optional and not used;
- ``pause``: seconds the pose is held after it is reached (default 0).

Played, the poses are joined linearly (the servos run at a constant speed).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from humanoid_core.loop import Law
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import Motion, MotionError
from humanoid_core.motion.yaml_nodes import YamlNode, compose_file, format_number, require_keys
from humanoid_description import AX12_SPEED, ROBOTS, load_config

FORMAT = "bioloid_pages"
MAX_STEPS_PER_PAGE = 7
MAX_PAGES = 127
MAX_JOINTS = 30
MAX_SPEED = 1023


@dataclass(frozen=True)
class PageStep:
    """One pose of a page: raw positions by motor ID, Moving Speed (None: unused), pause (s)."""

    positions: dict[int, int]
    speed: int | None
    pause: float = 0.0
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Page:
    name: str
    steps: tuple[PageStep, ...]


@dataclass(frozen=True)
class BioloidPages:
    """A pages file: pages played one after the other."""

    robot: str
    name: str
    pages: tuple[Page, ...]
    description: str = ""
    source: str = field(default="<memory>", compare=False)

    @property
    def steps(self) -> list[PageStep]:
        return [step for page in self.pages for step in page.steps]


# -- reading ------------------------------------------------------------------------------
def read_pages(path: Path, robot: str | None = None) -> BioloidPages:
    """Read and check a pages file (structure, motor IDs, register range, joint limits, speeds)."""
    root = compose_file(path)
    top = root.mapping("pages file")
    if "format" in top and top["format"].text("format") != FORMAT:
        raise top["format"].error(f"format must be {FORMAT!r} for a pages file")
    require_keys(top, root, "pages file", {"robot", "pages"}, {"format", "name", "description"})
    file_robot = top["robot"].text("robot")
    if file_robot not in ROBOTS or load_config(file_robot).joint_map is None:
        raise top["robot"].error(f"robot {file_robot!r} has no Dynamixel joint map (pages need motor IDs)")
    if robot is not None and file_robot != robot:
        raise top["robot"].error(f"this motion is for robot {file_robot!r}, not {robot!r}")
    page_nodes = top["pages"].sequence("pages")
    if not 1 <= len(page_nodes) <= MAX_PAGES:
        raise top["pages"].error(f"pages: expected 1..{MAX_PAGES} pages, got {len(page_nodes)}")
    checker = _StepChecker(file_robot)
    pages = tuple(_page(node, i, checker) for i, node in enumerate(page_nodes))
    return BioloidPages(robot=file_robot, name=top["name"].text("name") if "name" in top else Path(path).stem,
                        pages=pages, source=str(path),
                        description=top["description"].text("description") if "description" in top else "")


def _page(node: YamlNode, index: int, checker: _StepChecker) -> Page:
    what = f"page {index}"
    fields = node.mapping(what)
    require_keys(fields, node, what, {"steps"}, {"name"})
    steps = fields["steps"].sequence(f"{what} steps")
    if not 1 <= len(steps) <= MAX_STEPS_PER_PAGE:
        raise fields["steps"].error(f"{what}: expected 1..{MAX_STEPS_PER_PAGE} steps, got {len(steps)}")
    name = fields["name"].text(f"{what} name") if "name" in fields else f"page{index + 1}"
    return Page(name=name, steps=tuple(checker.step(step, f"{what} step {i}") for i, step in enumerate(steps)))


class _StepChecker:
    """Checks steps in file order: same motors everywhere, values in range, each step moves."""

    def __init__(self, robot: str) -> None:
        self.joint_map = load_config(robot).joint_map
        self.bounds = JointBounds.for_robot(robot)
        self.ids: list[int] | None = None
        self.previous: dict[int, int] | None = None

    def step(self, node: YamlNode, what: str) -> PageStep:
        fields = node.mapping(what)
        require_keys(fields, node, what, {"positions"}, {"speed", "pause"})
        positions = self._positions(fields["positions"], what)
        speed = None
        if "speed" in fields:
            speed = fields["speed"].integer(f"{what} speed")
            if not 0 <= speed <= MAX_SPEED:
                raise fields["speed"].error(f"{what}: speed must be 0..{MAX_SPEED} (Moving Speed units), got {speed}")
        elif self.previous is not None:
            raise node.error(f"{what}: missing speed (only the first step may omit it)")
        pause = fields["pause"].number(f"{what} pause") if "pause" in fields else 0.0
        if pause < 0.0:
            raise fields["pause"].error(f"{what}: pause must be >= 0, got {pause}")
        if self.previous is not None and positions == self.previous:
            raise node.error(f"{what}: same pose as the previous step (add its pause to the previous step)")
        self.previous = positions
        return PageStep(positions=positions, speed=speed, pause=pause, line=node.line)

    def _positions(self, node: YamlNode, what: str) -> dict[int, int]:
        entries = node.mapping(f"{what} positions")
        if not 1 <= len(entries) <= MAX_JOINTS:
            raise node.error(f"{what}: expected 1..{MAX_JOINTS} motor positions, got {len(entries)}")
        positions: dict[int, int] = {}
        for key, value in entries.items():
            if not key.isdigit() or int(key) not in self.joint_map.ids:
                raise value.error(f"{what}: {key!r} is not a motor ID (known: "
                                  f"{', '.join(map(str, sorted(self.joint_map.ids)))})")
            servo = self.joint_map.by_id(int(key))
            raw = value.integer(f"{what} motor {key}")
            if not servo.scale.raw_min <= raw <= servo.scale.raw_max:
                raise value.error(f"{what}: motor {key} ({servo.joint}) = {raw} is outside the register range "
                                  f"{servo.scale.raw_min}..{servo.scale.raw_max}")
            problem = self.bounds.position_violation(self.bounds.joint_names.index(servo.joint),
                                                     servo.raw_to_radians(raw))
            if problem:
                raise value.error(f"{what}: motor {key} = {raw}: {problem}")
            positions[int(key)] = raw
        if self.ids is None:
            self.ids = sorted(positions)
        elif sorted(positions) != self.ids:
            raise node.error(f"{what}: motors {sorted(positions)} differ from the first step's {self.ids}")
        return positions


# -- writing ------------------------------------------------------------------------------
def write_pages(pages: BioloidPages, path: Path) -> None:
    Path(path).write_text(pages_text(pages))


def pages_text(pages: BioloidPages) -> str:
    """The YAML text of a pages file, one step per line."""
    lines = [f"format: {FORMAT}", f"robot: {pages.robot}", f"name: {_quote(pages.name)}"]
    if pages.description:
        lines.append(f"description: {_quote(pages.description)}")
    lines.append("pages:")
    for page in pages.pages:
        lines += [f"  - name: {_quote(page.name)}", "    steps:"]
        for step in page.steps:
            items = [] if step.speed is None else [f"speed: {step.speed}"]
            if step.pause:
                items.append(f"pause: {format_number(step.pause, None)}")
            positions = ", ".join(f"{i}: {raw}" for i, raw in step.positions.items())
            items.append(f"positions: {{{positions}}}")
            lines.append(f"      - {{{', '.join(items)}}}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- pages <-> motion ---------------------------------------------------------------------
def pages_to_motion(pages: BioloidPages) -> Motion:
    """The pages as one linear motion: each step lasts its largest move over its speed."""
    joint_map = load_config(pages.robot).joint_map
    max_speed = load_config(pages.robot).actuators.max_velocity
    steps = pages.steps
    ids = list(steps[0].positions)
    servos = [joint_map.by_id(i) for i in ids]
    times, holds = [0.0], [steps[0].pause]
    for previous, step in itertools.pairwise(steps):
        largest = max(abs(step.positions[i] - previous.positions[i]) * s.scale.radians_per_unit
                      for i, s in zip(ids, servos, strict=True))
        speed = max_speed if step.speed == 0 else AX12_SPEED.raw_to_rad_s(step.speed)
        times.append(times[-1] + holds[-1] + largest / speed)
        holds.append(step.pause)
    labels = tuple(f"{page.name}/{i + 1}" for page in pages.pages for i in range(len(page.steps)))
    return Motion(name=pages.name, robot=pages.robot, joint_names=tuple(s.joint for s in servos),
                  times=np.array(times),
                  positions=np.array([[s.raw_to_radians(step.positions[i]) for i, s in zip(ids, servos, strict=True)]
                                      for step in steps]),
                  law=Law.LINEAR, holds=np.array(holds), labels=labels, description=pages.description,
                  source=pages.source)


def motion_to_pages(motion: Motion) -> BioloidPages:
    """A linear motion as pages (7 steps each): raw positions, speeds rounded to whole Moving Speed units."""
    if motion.law is not Law.LINEAR:
        raise MotionError(motion.source, f"pages play linearly; motion {motion.name!r} uses {motion.law.value} "
                                         "(convert it explicitly with dataclasses.replace(motion, law=Law.LINEAR))")
    joint_map = load_config(motion.robot).joint_map
    servos = [joint_map[j] for j in motion.joint_names]
    try:
        raws = [[s.radians_to_raw(float(q)) for s, q in zip(servos, row, strict=True)] for row in motion.positions]
    except ValueError as error:
        raise MotionError(motion.source, f"motion {motion.name!r}: {error}") from None
    holds = np.zeros(motion.keyframe_count) if motion.holds is None else motion.holds
    steps: list[PageStep] = []
    for k, raw in enumerate(raws):
        positions = {s.servo_id: r for s, r in zip(servos, raw, strict=True)}
        if k == 0:
            steps.append(PageStep(positions=positions, speed=None, pause=float(holds[0])))
            continue
        largest = max(abs(a - b) * s.scale.radians_per_unit for a, b, s in zip(raw, raws[k - 1], servos, strict=True))
        travel = float(motion.times[k] - motion.times[k - 1] - holds[k - 1])
        if largest == 0.0:  # no move: the maker's pages express this as a longer pause
            steps[-1] = replace(steps[-1], pause=steps[-1].pause + travel + float(holds[k]))
            continue
        steps.append(PageStep(positions=positions, speed=_moving_speed(largest / travel, motion, k),
                              pause=float(holds[k])))
    chunks = [tuple(steps[i:i + MAX_STEPS_PER_PAGE]) for i in range(0, len(steps), MAX_STEPS_PER_PAGE)]
    if len(chunks) > MAX_PAGES:
        raise MotionError(motion.source, f"motion {motion.name!r} needs {len(chunks)} pages (at most {MAX_PAGES})")
    return BioloidPages(robot=motion.robot, name=motion.name, description=motion.description,
                        pages=tuple(Page(f"{motion.name}{i + 1}" if len(chunks) > 1 else motion.name, chunk)
                                    for i, chunk in enumerate(chunks)))


def _moving_speed(rad_s: float, motion: Motion, keyframe: int) -> int:
    """Moving Speed units for a speed: at least 1 (0 would mean the servo's maximum)."""
    if rad_s > AX12_SPEED.raw_to_rad_s(MAX_SPEED) * (1.0 + 1e-9):
        raise MotionError(motion.source, f"motion {motion.name!r}: reaching {motion.label(keyframe)} needs "
                                         f"{rad_s:.2f} rad/s, more than the Moving Speed register holds")
    return max(1, AX12_SPEED.rad_s_to_raw(rad_s))
