"""What a consumer of ``joint_states`` knows about each joint, from messages that may be
partial, stale or wrong.

The staleness contract of the robot interface: a joint whose reading is stale is
published with NaN position (its name still listed). Consumers treat it as unknown,
never as a value. :class:`JointReadings` keeps the last known position of every joint
of the model, so that a computation over the whole body (CoM, collision distances)
always has a finite value for each joint, and says which joints were not measured
in the latest message and why, with running counts for diagnostics:

- a NaN or infinite reading: *stale* (the last known value is kept);
- a model joint the message does not list: *missing* (last known value kept);
- a name the model does not know: *unknown* (ignored);
- a joint never measured since start: its ``initial`` value (e.g. the home pose) is
  used and it is listed in :attr:`never_measured`;
- names and positions of different lengths, or a name listed twice: the message is
  *malformed* and :class:`MalformedJointStateError` says why; nothing is updated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from humanoid_description import JointTable


class MalformedJointStateError(ValueError):
    """A joint_states message that cannot be read; the message says why."""


@dataclass
class ReadingCounts:
    """Running counts since start (each message counts once per joint concerned)."""

    messages: int = 0
    malformed: int = 0
    stale: int = 0  # NaN/inf joint readings
    missing: int = 0  # model joints absent from a message
    unknown: int = 0  # names the model does not know


@dataclass(frozen=True)
class ReadingIssues:
    """What the latest message did not tell (empty tuples for a complete message)."""

    stale: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.stale or self.missing or self.unknown)

    def describe(self) -> str:
        parts = [f"{what}: {', '.join(names)}" for what, names in
                 (("stale (NaN)", self.stale), ("missing", self.missing), ("unknown names", self.unknown)) if names]
        return "; ".join(parts) or "complete"


_COMPLETE = ReadingIssues()


class JointReadings:
    """Last known positions (rad, canonical order) of every joint of a model."""

    def __init__(self, joints: JointTable, initial: np.ndarray) -> None:
        self.joints = joints
        self.positions = np.array(initial, dtype=float)
        if self.positions.shape != (len(joints),) or not np.all(np.isfinite(self.positions)):
            raise ValueError(f"initial positions must be {len(joints)} finite values")
        self.counts = ReadingCounts()
        self._measured = np.zeros(len(joints), dtype=bool)
        self._layout: tuple[list[str], np.ndarray | None, ReadingIssues] | None = None

    @property
    def never_measured(self) -> tuple[str, ...]:
        """Joints no message has given a finite value for yet."""
        return tuple(n for n, m in zip(self.joints.names, self._measured, strict=True) if not m)

    def update(self, names: Sequence[str], positions: Sequence[float]) -> ReadingIssues:
        """Take one message's readings; returns what it did not tell.

        :attr:`positions` then holds the latest known value of every joint. Raises
        :class:`MalformedJointStateError` (and changes nothing) for a message that
        cannot be read.
        """
        self.counts.messages += 1
        if len(names) != len(positions):
            self.counts.malformed += 1
            raise MalformedJointStateError(f"{len(names)} names but {len(positions)} positions")
        indices, issues = self._index(names)
        values = np.asarray(positions, dtype=float)
        if indices is None:  # the model's joints, in its order: the usual message
            if math.isfinite(float(np.sum(values))):
                self.positions[:] = values
                self._measured[:] = True
                return _COMPLETE
            target = np.arange(len(values))
        else:
            target = indices
            known = target >= 0
            values, target = values[known], target[known]
        finite = np.isfinite(values)
        self.positions[target[finite]] = values[finite]
        self._measured[target[finite]] = True
        stale = tuple(self.joints.names[i] for i in target[~finite])
        if stale:
            issues = ReadingIssues(stale=stale, missing=issues.missing, unknown=issues.unknown)
        self.counts.stale += len(issues.stale)
        self.counts.missing += len(issues.missing)
        self.counts.unknown += len(issues.unknown)
        return issues

    def _index(self, names: Sequence[str]) -> tuple[np.ndarray | None, ReadingIssues]:
        """Canonical index of each name (-1 unknown; None when names are exactly the model's
        joints in order), cached for the last layout seen (publishers repeat theirs)."""
        layout = self._layout
        if layout is not None and layout[0] == names:
            return layout[1], layout[2]
        names = list(names)
        if len(set(names)) != len(names):
            self.counts.malformed += 1
            duplicated = sorted({n for n in names if names.count(n) > 1})
            raise MalformedJointStateError(f"joint names listed more than once: {', '.join(duplicated)}")
        if tuple(names) == self.joints.names:
            indices = None
            issues = _COMPLETE
        else:
            indices = np.array([self.joints.index(n) if n in self.joints else -1 for n in names], dtype=int)
            listed = set(names)
            issues = ReadingIssues(missing=tuple(n for n in self.joints.names if n not in listed),
                                   unknown=tuple(n for n in names if n not in self.joints))
        self._layout = (names, indices, issues)
        return indices, issues
