"""The HOAP-2's own motion files: one csv line per sample, joint values in pulses.

Each line is ``multiplier, ignored, joint values..., ignored...``: the line is
commanded for ``multiplier`` x the base period (2 ms on the robot), so sample ``i``
is at ``t_i = sum(m_0 .. m_{i-1}) x period`` and the last sample is held for its own
multiplier. Between samples the motion is linear (the robot's player steps through
the lines). Which joint each column holds, the pulse signs and the base period are
data of the robot configuration (``robot.yaml``: ``csv_motion`` and ``pulses``), read
here and nowhere else hard-coded.

The writer emits ``multiplier,0,<joints>``: field 1 and the trailing fields some
files carry (hands, head, flags: ``60,R,R,R``) are not written, since their meaning
is unknown. :func:`append_hoap2_csv_line` appends a pose (``humanoid pose``'s save).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from humanoid_core.loop import Law
from humanoid_core.motion import JointBounds, Motion, MotionError, keyframe_step
from humanoid_description import (
    DataFileError,
    hoap2_pulses_to_radians,
    load_config,
    radians_to_hoap2_pulses,
    text_lines,
    write_text_atomically,
)

ROBOT = "hoap2"


@dataclass(frozen=True)
class CsvLayout:
    """Column map, signs and base period of a robot's csv motion files."""

    period: float
    first_joint_field: int
    columns: tuple[str, ...]
    signs: tuple[int, ...]

    @classmethod
    def for_robot(cls, robot: str = ROBOT) -> CsvLayout:
        config = load_config(robot)
        csv, pulses = config.sections["csv_motion"], config.sections["pulses"]
        columns = tuple(csv["columns"])
        return cls(period=float(csv["period"]), first_joint_field=int(csv["first_joint_field"]),
                   columns=columns, signs=tuple(int(pulses["signs"][c]) for c in columns))

    @property
    def field_count(self) -> int:
        """Fields a line needs at least."""
        return self.first_joint_field + len(self.columns)


#: Largest pulse count a line may hold: the controller's counts are 32-bit integers.
MAX_PULSES = 2**31 - 1


def read_hoap2_csv(path: Path, robot: str = ROBOT) -> Motion:
    """Read a csv motion file; any malformed line raises MotionError (file:line: problem)."""
    layout = CsvLayout.for_robot(robot)
    bounds = JointBounds.for_robot(robot, layout.columns)
    multipliers, samples = [], []
    try:
        for number, line in text_lines(path):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            multiplier, pulses = _parse_line(line, layout, path, number)
            samples.append(_to_radians(pulses, layout, bounds, path, number))
            multipliers.append(multiplier)
    except DataFileError as error:
        raise MotionError.from_data_file(error) from None
    if not samples:
        raise MotionError(path, "no samples (every line is blank or a comment)")
    steps = np.array(multipliers, dtype=float) * layout.period
    times = np.concatenate([[0.0], np.cumsum(steps[:-1])])
    holds = np.zeros(len(times))
    holds[-1] = steps[-1]
    return Motion(name=Path(path).stem, robot=robot, joint_names=layout.columns, times=times,
                  positions=np.array(samples), law=Law.LINEAR, holds=holds,
                  description=f"HOAP-2 csv motion {Path(path).name}", source=str(path))


def _parse_line(line: str, layout: CsvLayout, path: Path, number: int) -> tuple[int, list[int]]:
    fields = [f.strip() for f in line.split(",")]
    if len(fields) < layout.field_count:
        raise MotionError(path, f"expected at least {layout.field_count} fields (multiplier, ignored, "
                                f"{len(layout.columns)} joints), got {len(fields)}", number)
    try:
        multiplier = int(fields[0])
    except ValueError:
        raise MotionError(path, f"field 0 (sampling multiplier) is not an integer: {fields[0]!r}", number) from None
    if multiplier <= 0:
        raise MotionError(path, f"field 0 (sampling multiplier) must be > 0, got {multiplier}", number)
    pulses = []
    for offset, joint in enumerate(layout.columns):
        index = layout.first_joint_field + offset
        try:
            value = int(fields[index])
        except ValueError:
            raise MotionError(path, f"field {index} ({joint}) is not an integer pulse count: "
                                    f"{fields[index]!r}", number) from None
        if abs(value) > MAX_PULSES:
            raise MotionError(path, f"field {index} ({joint}) is not a pulse count of the HOAP-2: "
                                    f"{fields[index][:20]}{'...' if len(fields[index]) > 20 else ''}", number)
        pulses.append(value)
    return multiplier, pulses


def _to_radians(pulses: list[int], layout: CsvLayout, bounds: JointBounds, path: Path, number: int) -> list[float]:
    radians = []
    for column, (value, sign) in enumerate(zip(pulses, layout.signs, strict=True)):
        angle = hoap2_pulses_to_radians(value, sign)
        problem = bounds.position_violation(column, angle)
        if problem:
            raise MotionError(path, f"field {layout.first_joint_field + column}: {value} pulses: {problem}", number)
        radians.append(angle)
    return radians


def write_hoap2_csv(motion: Motion, path: Path, multiplier: int | None = None) -> None:
    """Write ``motion`` as a csv motion file.

    With ``multiplier`` None, the motion's keyframes (and ends of holds) become the
    lines; their times must lie on the base period's grid and the law must be linear,
    as the robot plays it. With a ``multiplier``, the motion is sampled with its own
    law every ``multiplier`` base periods (any motion can be written this way).
    """
    Path(path).write_text(hoap2_csv_text(motion, multiplier))


def hoap2_csv_text(motion: Motion, multiplier: int | None = None) -> str:
    """The csv text of ``motion`` (see :func:`write_hoap2_csv`)."""
    layout = CsvLayout.for_robot(motion.robot)
    missing = [c for c in layout.columns if c not in motion.joint_names]
    extra = [j for j in motion.joint_names if j not in layout.columns]
    if missing or extra:
        raise MotionError(motion.source, f"the csv format holds exactly the joints {', '.join(layout.columns)}: "
                                         f"missing {missing}, not representable {extra}")
    ordered = motion.select(layout.columns)
    times, positions, final_hold = _line_samples(ordered, layout.period, multiplier)
    ends = np.append(times[1:], times[-1] + final_hold)
    counts = np.rint((ends - times) / layout.period).astype(int)
    lines = []
    for count, row in zip(counts, positions, strict=True):
        values = [radians_to_hoap2_pulses(float(q), sign) for q, sign in zip(row, layout.signs, strict=True)]
        lines.append(",".join(str(v) for v in [count, 0, *values]))
    return "\n".join(lines) + "\n"


def _line_samples(motion: Motion, period: float, multiplier: int | None) -> tuple[np.ndarray, np.ndarray, float]:
    """Times and positions of the lines to write, and how long the last line lasts."""
    if multiplier is not None:
        if multiplier <= 0:
            raise ValueError(f"multiplier must be > 0, got {multiplier}")
        step = multiplier * period
        times = np.arange(math.ceil(motion.duration / step - 1e-9) + 1) * step
        return times, motion.spline().sample_many(times)[0], step
    if motion.law is not Law.LINEAR and motion.keyframe_count > 1:
        raise MotionError(motion.source, f"the csv format is linear between lines; this motion uses "
                                         f"{motion.law.value}: write it with a sampling multiplier")
    times, positions, _ = motion.knots()
    if motion.holds is not None and motion.holds[-1] > 0.0:  # the last line's own multiplier holds it
        times, positions = times[:-1], positions[:-1]
    if times[0] != 0.0:
        times, positions = np.concatenate([[0.0], times]), np.vstack([positions[:1], positions])
    final_hold = motion.duration - times[-1] if motion.duration > times[-1] else period
    ticks = np.append(times, times[-1] + final_hold) / period
    off_grid = np.flatnonzero(np.abs(ticks - np.rint(ticks)) > 1e-6)
    if len(off_grid):
        raise MotionError(motion.source, f"time {ticks[off_grid[0]] * period:g} s is not a multiple of the "
                                         f"{period * 1000:g} ms period: write it with a sampling multiplier")
    return times, positions, final_hold


def append_hoap2_csv_line(path: Path, robot: str, positions: Mapping[str, float]) -> int:
    """Append the pose as one line of the HOAP-2 csv motion format (the line lasts the keyframe
    step). Returns the line count."""
    count = read_hoap2_csv(path, robot).keyframe_count if path.exists() else 0
    columns = CsvLayout.for_robot(robot).columns
    line = Motion(name=path.stem, robot=robot, joint_names=columns, times=[0.0],
                  positions=[[positions[c] for c in columns]], law=Law.LINEAR, holds=[keyframe_step()])
    text = path.read_text() if path.exists() else ""
    write_text_atomically(path, text + ("" if not text or text.endswith("\n") else "\n") + hoap2_csv_text(line))
    return count + 1
