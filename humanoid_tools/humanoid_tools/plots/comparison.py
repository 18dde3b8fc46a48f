"""Two recordings of the same experiment compared from their bags alone (``humanoid compare``).

Each bag's series come from :mod:`humanoid_tools.plots.series`. The two are aligned on the
start of each experiment (:func:`experiment_start`), or by a given offset, and their
measured joint positions resampled onto one time base: aligned time 0 is the start, the
step is the coarser of the two ``joint_states`` periods, and the window runs from the start
to the end of the shorter recording. Resampling is the linear interpolation of
:meth:`Signal.at <humanoid_tools.plots.series.Signal.at>`: a sample next to a stale (NaN)
reading stays unknown, and is counted as a gap instead of being bridged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from humanoid_tools.plots.series import ACTIONS, JOINT_COMMANDS, JOINT_TRAJECTORY, Balance, Experiment, Signal


class ComparisonError(ValueError):
    """Two bags that cannot be compared (different robots, no common joint, nothing to align on)."""


@dataclass(frozen=True)
class Start:
    """Where an experiment starts on its bag's time axis (s from its first joint_states)."""

    time: float
    source: str  # what marks it, in words


@dataclass
class JointDifference:
    """One joint of both recordings on the common time base (rad); NaN where unknown."""

    name: str
    a: np.ndarray
    b: np.ndarray
    stale_a: int  # stale readings of each side within the window
    stale_b: int
    tracking_a: tuple[float, float]  # (RMS, max) tracking error of each side, over its whole bag
    tracking_b: tuple[float, float]

    @property
    def difference(self) -> np.ndarray:
        """B − A."""
        return self.b - self.a

    @property
    def known(self) -> np.ndarray:
        return np.isfinite(self.difference)

    def stats(self, times: np.ndarray) -> dict[str, Any]:
        """The figures of this joint; ``times`` are the aligned times of the samples."""
        d = self.difference
        known = d[self.known]
        worst = int(np.nanargmax(np.abs(d))) if len(known) else None
        last = np.nonzero(self.known)[0]
        return {"rms_difference_rad": _rms(known),
                "max_difference_rad": float(np.max(np.abs(known))) if len(known) else None,
                "max_difference_at_s": float(times[worst]) if worst is not None else None,
                "end_difference_rad": float(d[last[-1]]) if len(last) else None,
                "samples": len(known), "gaps": int(len(d) - len(known)), "stale_a": self.stale_a,
                "stale_b": self.stale_b,
                "tracking_rms_rad_a": _finite(self.tracking_a[0]), "tracking_max_rad_a": _finite(self.tracking_a[1]),
                "tracking_rms_rad_b": _finite(self.tracking_b[0]), "tracking_max_rad_b": _finite(self.tracking_b[1])}


@dataclass
class BalanceDifference:
    """CoM and cart-table ZMP of both sides on the common time base (m, (n, 2) arrays)."""

    relative: bool  # the two ground frames differ: each path is taken from its position at the start
    frames: tuple[str, str]
    com_a: np.ndarray
    com_b: np.ndarray
    zmp_a: np.ndarray
    zmp_b: np.ndarray

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = {"frames": list(self.frames), "relative_to_start": self.relative}
        for name, a, b in (("com", self.com_a, self.com_b), ("zmp_model", self.zmp_a, self.zmp_b)):
            distance = np.linalg.norm(b - a, axis=1)
            known = distance[np.isfinite(distance)]
            result[f"{name}_rms_difference_m"] = _rms(known)
            result[f"{name}_max_difference_m"] = float(np.max(known)) if len(known) else None
            result[f"{name}_samples"] = len(known)
        return result


@dataclass
class Comparison:
    a: Experiment
    b: Experiment
    start_a: Start
    start_b: Start
    robot: str | None
    times: np.ndarray  # aligned time (s from the start) of the common samples
    step: float
    joints: list[JointDifference] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    balance: BalanceDifference | None = None

    def total(self) -> dict[str, Any]:
        """Over every compared joint and sample."""
        differences = np.concatenate([j.difference[j.known] for j in self.joints]) if self.joints else np.zeros(0)
        ends = [s["end_difference_rad"] for s in (j.stats(self.times) for j in self.joints)
                if s["end_difference_rad"] is not None]
        worst = max(self.joints, key=lambda j: np.nanmax(np.abs(j.difference)) if j.known.any() else -1.0,
                    default=None)
        return {"rms_difference_rad": _rms(differences),
                "max_difference_rad": float(np.max(np.abs(differences))) if len(differences) else None,
                "max_difference_joint": worst.name if worst is not None and worst.known.any() else None,
                "end_rms_difference_rad": _rms(np.array(ends)),
                "end_max_difference_rad": float(np.max(np.abs(ends))) if ends else None,
                "samples": len(differences),
                "gaps": int(sum(len(j.difference) - j.known.sum() for j in self.joints)),
                "joints_compared": len(self.joints), "only_in_a": self.only_a, "only_in_b": self.only_b}


def robot_of(description_name: str | None, joints: list[str], known: dict[str, tuple[str, ...]]) -> str | None:
    """The robot a bag is of: its robot_description's name, else the known robot (name ->
    joint names) whose joints the bag's joint_states list, else None."""
    if description_name:
        return description_name
    names = set(joints)
    matches = [robot for robot, robot_joints in known.items() if names and names == set(robot_joints)]
    return matches[0] if len(matches) == 1 else None


def robot_of_both(a: Path, identity_a: tuple[str | None, list[str]], b: Path,
                  identity_b: tuple[str | None, list[str]], known: dict[str, tuple[str, ...]]) -> str | None:
    """The robot both bags are of (None: unknown), from each one's identity (its
    robot_description's name, its first joint_states' joints)."""
    (name_a, joints_a), (name_b, joints_b) = identity_a, identity_b
    robot_a, robot_b = robot_of(name_a, joints_a, known), robot_of(name_b, joints_b, known)
    if robot_a is not None and robot_b is not None and robot_a != robot_b:
        raise ComparisonError(f"{a} is a recording of {robot_a} and {b} of {robot_b}: "
                              "only recordings of one robot compare")
    if not set(joints_a) & set(joints_b):
        raise ComparisonError(f"{a} and {b} have no joint in common ({_names(joints_a)} vs {_names(joints_b)})")
    return robot_a or robot_b


def experiment_start(experiment: Experiment) -> Start | None:
    """What first moves the robot: the first follow_joint_trajectory goal (the start of its
    trajectory, from its feedback; its acceptance without feedback), or the first
    joint_trajectory or joint_commands message, whichever comes first; else the first
    play_motion goal's acceptance (its follow_joint_trajectory goal comes once the motion is
    planned, a delay that differs between machines); else None."""
    candidates: list[Start] = []
    goals = {action: [g for g in experiment.goals if g.action == action] for action in ACTIONS}
    if goals["follow_joint_trajectory"]:
        goal = goals["follow_joint_trajectory"][0]
        candidates.append(Start(goal.started_at, "first follow_joint_trajectory goal's trajectory start (feedback)")
                          if goal.started_at is not None
                          else Start(goal.accepted_at, "first follow_joint_trajectory goal accepted"))
    for topic in (JOINT_TRAJECTORY, JOINT_COMMANDS):
        if topic in experiment.first_command:
            candidates.append(Start(experiment.first_command[topic], f"first {topic.lstrip('/')} message"))
    if candidates:
        return min(candidates, key=lambda s: s.time)
    if goals["play_motion"]:
        return Start(goals["play_motion"][0].accepted_at, "first play_motion goal accepted")
    return None


def compare(a: Experiment, b: Experiment, robot: str | None, offset: float | None = None) -> Comparison:
    """Align, resample and difference; ``offset`` (s) aligns by hand: B's time ``offset`` after
    its first joint_states is A's first joint_states."""
    common = [j.name for j in a.joints if j.name in {k.name for k in b.joints}]
    if not common:
        raise ComparisonError(f"{a.path} and {b.path} have no joint in common "
                              f"({_names([j.name for j in a.joints])} vs {_names([j.name for j in b.joints])})")
    if offset is not None:
        start_a, start_b = Start(0.0, "first joint_states (--offset)"), Start(offset, f"--offset {offset:g} s")
    else:
        start_a, start_b = _start(a), _start(b)
    times, step = _common_times(a, b, start_a.time, start_b.time)
    comparison = Comparison(a, b, start_a, start_b, robot, times, step,
                            only_a=[j.name for j in a.joints if j.name not in common],
                            only_b=[j.name for j in b.joints if j.name not in set(common)])
    joints_b = {j.name: j for j in b.joints}
    for joint in a.joints:
        if joint.name not in joints_b:
            continue
        other = joints_b[joint.name]
        comparison.joints.append(JointDifference(
            joint.name, joint.measured.at(times + start_a.time), other.measured.at(times + start_b.time),
            _stale_within(joint.measured, times, start_a.time), _stale_within(other.measured, times, start_b.time),
            joint.error_stats(), other.error_stats()))
    if a.balance is not None and b.balance is not None and len(a.balance.t) and len(b.balance.t):
        comparison.balance = _balance(a.balance, b.balance, times, start_a.time, start_b.time)
    return comparison


def _start(experiment: Experiment) -> Start:
    start = experiment_start(experiment)
    if start is None:
        raise ComparisonError(f"{experiment.path} has no goal or command to align on "
                              "(no action status, joint_trajectory or joint_commands): give --offset")
    return start


def median_interval(experiment: Experiment) -> float:
    """The bag's joint_states period (s), from its stamps."""
    interval = experiment.joint_state_interval
    positive = interval.v[interval.v > 0] if interval is not None else np.zeros(0)
    return float(np.median(positive)) / 1000.0 if len(positive) else math.nan


def _common_times(a: Experiment, b: Experiment, start_a: float, start_b: float) -> tuple[np.ndarray, float]:
    """Aligned times from the start to the end of the shorter recording, every coarser period."""
    step = max(median_interval(a), median_interval(b))
    if not math.isfinite(step):
        raise ComparisonError(f"{a.path if not math.isfinite(median_interval(a)) else b.path} has fewer than two "
                              "joint_states")
    spans = [(-start, experiment.duration - start) for experiment, start in ((a, start_a), (b, start_b))]
    first = max(0.0, *(s[0] for s in spans))
    last = min(s[1] for s in spans)
    if last <= first:
        raise ComparisonError(f"the aligned recordings do not overlap (A from {spans[0][0]:.2f} s to "
                              f"{spans[0][1]:.2f} s, B from {spans[1][0]:.2f} s to {spans[1][1]:.2f} s "
                              "of aligned time)")
    count = math.floor((last - first) / step + 1e-9) + 1
    return first + step * np.arange(count), step


def _stale_within(signal: Signal, times: np.ndarray, start: float) -> int:
    inside = (signal.t >= times[0] + start) & (signal.t <= times[-1] + start)
    return int(np.count_nonzero(np.isnan(signal.v[inside])))


def _balance(a: Balance, b: Balance, times: np.ndarray, start_a: float, start_b: float) -> BalanceDifference:
    """Both sides' paths in each one's main ground frame in the window (samples in another frame
    are unknown); from their positions at the start when the two frames differ."""
    def resample(data: Balance, start: float) -> tuple[str, np.ndarray, np.ndarray]:
        inside = (data.t >= times[0] + start) & (data.t <= times[-1] + start)
        names, counts = np.unique(data.frames[inside] if inside.any() else data.frames, return_counts=True)
        frame = str(names[np.argmax(counts)])
        other = data.frames != frame
        paths = []
        for points in (data.com, data.zmp_model):
            points = np.where(other[:, None], np.nan, points)
            paths.append(np.column_stack([Signal(data.t, points[:, k]).at(times + start) for k in range(2)]))
        return frame, *paths

    frame_a, com_a, zmp_a = resample(a, start_a)
    frame_b, com_b, zmp_b = resample(b, start_b)
    paths = [com_a, com_b, zmp_a, zmp_b]
    relative = frame_a != frame_b
    if relative:
        paths = [p - _first_known(p) for p in paths]
    return BalanceDifference(relative, (frame_a, frame_b), *paths)


def _first_known(points: np.ndarray) -> np.ndarray:
    known = np.nonzero(np.all(np.isfinite(points), axis=1))[0]
    return points[known[0]] if len(known) else np.full(2, np.nan)


def _rms(values: np.ndarray) -> float | None:
    return float(np.sqrt(np.mean(np.square(values)))) if len(values) else None


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _names(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "") if names else "no joint_states"


def report(comparison: Comparison) -> dict[str, Any]:
    """Everything ``--json`` prints: both sides, the alignment, per joint and in total (rad, m, s)."""
    times = comparison.times
    return {"robot": comparison.robot,
            "a": side(comparison.a, comparison.start_a), "b": side(comparison.b, comparison.start_b),
            "alignment": {"b_minus_a_s": comparison.start_b.time - comparison.start_a.time,
                          "window_s": [float(times[0]), float(times[-1])], "step_s": comparison.step,
                          "samples": len(times)},
            "joints": {j.name: j.stats(times) for j in comparison.joints},
            "total": comparison.total(),
            "balance": comparison.balance.stats() if comparison.balance is not None else None}


def side(experiment: Experiment, start: Start) -> dict[str, Any]:
    """One recording: where it starts, its joint_states timing, stale readings, fall, loop rates
    and latencies (diagnostics); times in aligned seconds."""
    interval = experiment.joint_state_interval.v if experiment.joint_state_interval is not None else np.zeros(0)
    delay = experiment.joint_state_delay
    return {"bag": str(experiment.path), "robot_description": experiment.robot_name,
            "start": {"source": start.source, "bag_time_s": start.time},
            "duration_s": experiment.duration,
            "joint_states": {"messages": experiment.topics.get("/joint_states", 0),
                             "rate_hz": 1.0 / median_interval(experiment) if len(interval) else None,
                             "interval_ms_median": _median(interval),
                             "interval_ms_max": float(np.max(interval)) if len(interval) else None,
                             "delay_ms_median": _median(delay.v) if delay is not None else None,
                             "delay_ms_max": float(np.max(delay.v)) if delay is not None else None},
            "stale_readings": sum(j.stale_samples for j in experiment.joints),
            "fell": None if "/fallen" not in experiment.topics else experiment.fell_at is not None,
            "fell_at_s": experiment.fell_at - start.time if experiment.fell_at is not None else None,
            "fall_estimate": None if "/fall_state" not in experiment.topics else {
                "fell": experiment.fall_estimated_at is not None, "posture": experiment.fall_posture,
                "at_s": (experiment.fall_estimated_at - start.time
                         if experiment.fall_estimated_at is not None else None)},
            "energy": _energy(experiment),
            "loop_rates_hz": {label: _median(s.v) for label, s in experiment.rates.items()},
            "latencies_ms": {label: {"median": _median(s.v), "max": _max(s.v)}
                             for label, s in experiment.latencies.items()}}


def _energy(experiment: Experiment) -> dict[str, float] | None:
    """The energy monitor's figures over the recording (None where it did not run)."""
    data = experiment.energy
    if data is None or not len(data.t):
        return None
    return {"consumed_J": data.consumed, "current_A_mean": float(np.mean(data.current)),
            "current_A_max": float(np.max(data.current)), "power_W_mean": float(np.mean(data.power))}


def _median(values: np.ndarray) -> float | None:
    known = values[np.isfinite(values)]
    return float(np.median(known)) if len(known) else None


def _max(values: np.ndarray) -> float | None:
    known = values[np.isfinite(values)]
    return float(np.max(known)) if len(known) else None


def missing_notes(comparison: Comparison) -> list[str]:
    """What the comparison lacks because a bag lacks it."""
    if comparison.balance is None:
        return ["balance_state is not in both bags (the balance monitor did not run on both): no CoM/ZMP comparison"]
    return []


def summary_lines(comparison: Comparison) -> list[str]:
    """The comparison in words (also ``humanoid compare``'s text output)."""
    data = report(comparison)
    total = data["total"]
    lines = [f"robot: {comparison.robot or 'unknown (no robot_description, joints of no known robot)'}"]
    for key in "ab":
        side = data[key]
        js = side["joint_states"]
        fell = (f"yes, at {side['fell_at_s']:.2f} s" if side["fell"]
                else "no" if side["fell"] is False else "unknown (no /fallen)")
        delay = f", delay median {js['delay_ms_median']:.1f} ms" if js["delay_ms_median"] is not None else ""
        lines += [f"{key.upper()}: {side['bag']}",
                  f"  start: {side['start']['source']} at {side['start']['bag_time_s']:.3f} s of the bag",
                  f"  joint_states: {js['messages']} over {side['duration_s']:.2f} s, "
                  f"{_number(js['rate_hz'], '.1f')} Hz (interval median {_number(js['interval_ms_median'], '.1f')}"
                  f" ms, max {_number(js['interval_ms_max'], '.1f')} ms){delay}",
                  f"  stale readings: {side['stale_readings']}; fell: {fell}"]
        if side["fall_estimate"] is not None:
            estimate = side["fall_estimate"]
            said = f"fallen at {estimate['at_s']:.2f} s ({estimate['posture']})" if estimate["fell"] else "never fallen"
            lines.append(f"  fall estimate: {said}")
        if side["energy"] is not None:
            energy = side["energy"]
            lines.append(f"  energy: {energy['consumed_J']:.1f} J, current mean {energy['current_A_mean']:.2f} A, "
                         f"max {energy['current_A_max']:.2f} A, power mean {energy['power_W_mean']:.1f} W")
    alignment = data["alignment"]
    lines += [f"compared: {alignment['window_s'][0]:.2f} to {alignment['window_s'][1]:.2f} s from the start, "
              f"{alignment['samples']} samples every {1000.0 * alignment['step_s']:.1f} ms "
              f"({total['joints_compared']} joints)"]
    if total["only_in_a"] or total["only_in_b"]:
        lines.append(f"  not compared: only in A {total['only_in_a'] or '-'}, only in B {total['only_in_b'] or '-'}")
    if total["rms_difference_rad"] is not None:
        lines.append(f"difference B − A: RMS {math.degrees(total['rms_difference_rad']):.3f} deg, max "
                     f"{math.degrees(total['max_difference_rad']):.3f} deg ({total['max_difference_joint']}), "
                     f"at the end RMS {math.degrees(total['end_rms_difference_rad']):.3f} deg; "
                     f"{total['gaps']} samples unknown on one side")
    balance_stats = data["balance"]
    if balance_stats is not None and balance_stats["com_rms_difference_m"] is not None:
        relative = " (paths from the start: frames differ)" if balance_stats["relative_to_start"] else ""
        lines.append(f"CoM difference{relative}: RMS {1000.0 * balance_stats['com_rms_difference_m']:.1f} mm, max "
                     f"{1000.0 * balance_stats['com_max_difference_m']:.1f} mm")
    return lines


def _number(value: float | None, spec: str) -> str:
    return "?" if value is None else format(value, spec)
