"""The postures results as a table (with the average error over the tests the real robot
was measured in) and as JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from humanoid_bringup.postures.runner import PostureResult

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


def table(results: Sequence[PostureResult]) -> str:
    lines = [f"{'test':>4}  {'name':18}  {'limit (rad)':>11}  {'limit (deg)':>11}  {'real (rad)':>10}  "
             f"{'error (deg)':>11}  {'tipped':9}  stopped by"]
    for r in results:
        limit = "none" if r.limit is None else f"{r.limit:+.4f}"
        limit_deg = f">{abs(math.degrees(r.range_end)):.1f}" if r.limit is None else f"{math.degrees(r.limit):+.1f}"
        real = "" if r.test.real_limit is None else f"{r.test.real_limit:+.4f}"
        error = "" if r.error_deg is None else f"{r.error_deg:+.1f}"
        tipped = r.tipped if r.tipped == r.test.falls or r.tipped in ("unknown", "level", "none") else f"{r.tipped}!"
        lines.append(f"{r.test.number:>4}  {r.test.name:18}  {limit:>11}  {limit_deg:>11}  {real:>10}  "
                     f"{error:>11}  {tipped:9}  {r.stopped_by}")
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
    return "\n".join(lines)


def to_json(results: Sequence[PostureResult]) -> str:
    return json.dumps([r.as_dict() for r in results], indent=2)
