"""The postures results as a table (with the average error over the tests the real robot
was measured in, and the reference's own register values when its protocol keeps them) and
as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from humanoid_experiments.postures.protocol import EquilibriumReference
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
    """The reference's real-vs-simulated register values next to the range of ours. Only ranges
    can be set side by side: the reference does not say which posture and servo each pair is."""
    scale = reference.scale
    lines = ["", f"The reference's static validation: register values ({scale.name}) where the real robot and "
                 "the reference's simulation of it fell"]
    for pair in reference.pairs:
        lines.append(f"  real {pair[0]:>4}   simulated {pair[1]:>4}   {reference.difference_deg(pair):4.1f} deg apart")
    real, simulated = [p[0] for p in reference.pairs], [p[1] for p in reference.pairs]
    lines.append(f"  real {min(real)}-{max(real)}, simulated {min(simulated)}-{max(simulated)}; "
                 f"the reference accepts under {reference.accepted_deg:g} deg between real and simulated")
    ours = [value for r in results for value in (r.limit_raw or ())]
    with_limit = sum(r.limit_raw is not None for r in results)
    if ours:
        span = scale.raw_to_degrees(max(ours)) - scale.raw_to_degrees(min(ours))
        real_span = scale.raw_to_degrees(max(real)) - scale.raw_to_degrees(min(real))
        lines.append(f"Ours ({with_limit} of {len(results)} tests found a limit): {min(ours)}-{max(ours)} "
                     f"({span:.1f} deg wide; the real robot's {min(real)}-{max(real)}: {real_span:.1f} deg)")
    else:
        lines.append(f"Ours: none of the {len(results)} tests found a limit")
    lines.append("A per-test comparison is impossible: the reference does not say which posture and servo each "
                 "pair belongs to.")
    return lines


def to_json(results: Sequence[PostureResult]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2)
