"""The postures results as a table (with the average error over the tests the real robot
was measured in, and the reference's own register values when its protocol keeps them) and
as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from humanoid_experiments.postures.protocol import EquilibriumReference, ReferenceExperiment
from humanoid_experiments.postures.runner import PostureResult

#: The thesis' Webots model against the real robot, for comparison (Cominoli 2005).
WEBOTS_FIGURES = "the thesis' Webots model: about 10 deg; with 2 deg of backlash about 7 deg"


def average_error(results: Sequence[PostureResult]) -> tuple[float | None, int, int]:
    """Mean |error| (deg) over the tests with a real value, the number of those tests, and how
    many of them found no limit (each counted with its joints' range end, so the mean is then a
    lower bound)."""
    errors, open_ended = [], 0
    for result in results:
        real = result.test.real_limit
        if real is None:
            continue
        if result.limit is None:
            open_ended += 1
            errors.append(abs(math.degrees(result.range_end - real)))
        else:
            errors.append(abs(math.degrees(result.limit - real)))
    return (sum(errors) / len(errors) if errors else None), len(errors), open_ended


def table(results: Sequence[PostureResult], reference: EquilibriumReference | None = None) -> str:
    """One row per test; a ``raw`` column (each servo's register value at the limit) on a robot
    with a joint map; then the comparisons the protocol allows."""
    raw = any(r.servos is not None for r in results)
    lines = [f"{'test':>4}  {'name':18}  {'limit (rad)':>11}  {'limit (deg)':>11}  "
             + (f"{'raw':>9}  " if raw else "")
             + f"{'real (rad)':>10}  {'error (deg)':>11}  {'tipped':9}  stopped by"]
    for r in results:
        limit = "none" if r.limit is None else f"{r.limit:+.4f}"
        limit_deg = f">{abs(math.degrees(r.range_end)):.1f}" if r.limit is None else f"{math.degrees(r.limit):+.1f}"
        registers = "" if r.limit_raw is None else "/".join(str(v) for v in r.limit_raw)
        real = "" if r.test.real_limit is None else f"{r.test.real_limit:+.4f}"
        error = "" if r.error_deg is None else f"{r.error_deg:+.1f}"
        tipped = r.tipped if r.tipped == r.test.falls or r.tipped in ("unknown", "level", "none") else f"{r.tipped}!"
        lines.append(f"{r.test.number:>4}  {r.test.name:18}  {limit:>11}  {limit_deg:>11}  "
                     + (f"{registers:>9}  " if raw else "")
                     + f"{real:>10}  {error:>11}  {tipped:9}  {r.stopped_by}")
    if raw:
        lines.append("(limit: the move from the start pose; raw: each servo's register value there, in the order of "
                     "the test's joints)")
    mean, count, open_ended = average_error(results)
    if mean is not None:
        bound = "at least " if open_ended else ""
        note = (f" ({open_ended} of them found no limit: counted with their joints' range end)"
                if open_ended else "")
        lines.append(f"average |error| over the {count} tests with a real value: {bound}{mean:.1f} deg{note}")
        lines.append(f"(for comparison, {WEBOTS_FIGURES})")
    wrong = [r for r in results if r.tipped not in (r.test.falls, "unknown", "level", "none")]
    if wrong:
        lines.append("! tipped the other way than the protocol says: "
                     + ", ".join(f"test {r.test.number} ({r.tipped}, expected {r.test.falls})" for r in wrong))
    if reference is not None:
        lines += reference_comparison(results, reference)
    return "\n".join(lines)


def reference_comparison(results: Sequence[PostureResult], reference: EquilibriumReference) -> list[str]:
    """The reference's experiments one by one: its real and simulated register values and
    whether it accepted them; then, per experiment, ours where one of our tests starts in the
    same posture, or why there is nothing to set beside it."""
    scale = reference.scale
    lines = ["", f"The reference's static validation: {len(reference.experiments)} experiments, register values "
                 f"({scale.name}) where the real robot and the reference's simulation of it fell; the reference "
                 f"accepts under {reference.accepted_deg:g} deg between them",
             f"{'exp':>4}  {'real':>4}  {'simulated':>9}  {'apart':>9}  {'reference':12}  starting posture "
             f"(raw; every other servo {reference.neutral_raw})"]
    for experiment in reference.experiments:
        difference = reference.difference_deg(experiment)
        simulated = "-" if experiment.simulated is None else str(experiment.simulated)
        apart = "-" if difference is None else f"{difference:.1f} deg"
        verdict = {None: "-", True: "accepted", False: "not accepted"}[reference.accepted(experiment)]
        posture = ", ".join(f"{name} {raw}" for name, raw in experiment.start_raw.items()) or \
            f"all {reference.neutral_raw}"
        lines.append(f"{experiment.number:>4}  {experiment.real:>4}  {simulated:>9}  {apart:>9}  {verdict:12}  "
                     f"{posture}")
    lines.append("Per experiment:")
    for experiment in reference.experiments:
        lines.append(f"  {experiment.number}: " + "; ".join(_experiment_notes(experiment, results, reference)))
    placed = {e.start_pose for e in reference.experiments if e.start_pose is not None}
    elsewhere = [r for r in results if r.test.start not in placed]
    if elsewhere:
        lines.append("Ours from postures of no experiment: " + ", ".join(
            f"test {r.test.number} from {r.test.start!r} {_raw_text(r)}" for r in elsewhere))
    if reference.note:
        lines.append(f"Not known: {reference.note}.")
    return lines


def _experiment_notes(experiment: ReferenceExperiment, results: Sequence[PostureResult],
                      reference: EquilibriumReference) -> list[str]:
    notes = []
    if experiment.simulated is None:
        notes.append(f"no simulated value: {experiment.simulated_missing}")
    if experiment.beyond_limits:
        notes.append("ours: none, the starting posture is beyond our model's joint limits: "
                     + ", ".join(experiment.beyond_limits))
        return notes
    ours = [r for r in results if experiment.start_pose is not None and r.test.start == experiment.start_pose]
    if not ours:
        notes.append("ours: no test of ours starts there (our model can take the posture)")
        return notes
    scale = reference.scale
    compared = []
    for r in ours:
        raw = _raw_text(r)
        if r.limit_raw is not None and len(r.limit_raw) == 1:
            apart = abs(scale.raw_to_degrees(r.limit_raw[0]) - scale.raw_to_degrees(experiment.real))
            raw += f", {apart:.1f} deg from the real {experiment.real}"
        compared.append(f"test {r.test.number} ({', '.join(r.test.joints)}) {raw}")
    stepped = ("the servo the reference stepped is not known: a comparison of postures, not of servos"
               if experiment.stepped is None else f"the reference stepped {experiment.stepped}")
    notes.append(f"ours from the same posture ({experiment.start_pose}): " + ", ".join(compared) + f" ({stepped})")
    return notes


def _raw_text(result: PostureResult) -> str:
    if result.limit_raw is None:
        return "no limit"
    return "raw " + "/".join(str(v) for v in result.limit_raw)


def to_json(results: Sequence[PostureResult]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2)
