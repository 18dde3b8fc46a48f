"""``humanoid postures --compare A.json B.json``: two results files of the same protocol (the
``--json`` of two runs: the simulation and the real robot, or two simulations) test by
test: each limit and B's minus A's, in degrees and, where both have them, in register values.

Both files must be results files (a list of tests as :meth:`PostureResult.as_dict` writes
them); a test in both must be the same test (joints, direction, start pose), else the
files are of different protocols or robots and nothing is compared.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from humanoid_core import UsageError
from humanoid_description import DataFileError, read_text

#: What identifies a test in a results file, and must match between the two files.
IDENTITY = ("name", "joints", "direction", "start")


@dataclass(frozen=True)
class TestDifference:
    """One test in both files."""

    test: int
    name: str
    a_limit: float | None  # rad; None: no limit found
    b_limit: float | None
    a_raw: list[int] | None  # register values at the limit (robots with a joint map)
    b_raw: list[int] | None

    @property
    def difference_rad(self) -> float | None:
        """B's limit minus A's (None unless both found one)."""
        return None if self.a_limit is None or self.b_limit is None else self.b_limit - self.a_limit

    @property
    def difference_raw(self) -> list[int] | None:
        if self.a_raw is None or self.b_raw is None:
            return None
        return [b - a for a, b in zip(self.a_raw, self.b_raw, strict=True)]

    def as_dict(self) -> dict:
        difference = self.difference_rad
        return {"test": self.test, "name": self.name, "a_limit_rad": self.a_limit, "b_limit_rad": self.b_limit,
                "difference_rad": difference,
                "difference_deg": None if difference is None else math.degrees(difference),
                "a_limit_raw": self.a_raw, "b_limit_raw": self.b_raw, "difference_raw": self.difference_raw}


def load_results(path: Path) -> dict[int, dict]:
    """A results file's tests by number; UsageError naming the file for anything else."""
    try:
        data = json.loads(read_text(path))
    except DataFileError as error:
        raise UsageError(str(error)) from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None
    shape = (f"{path}: not a postures results file (the --json of humanoid postures: a list of tests, each with "
             f"test, {', '.join(IDENTITY)} and limit_rad)")
    if not isinstance(data, list):
        raise UsageError(shape)
    tests: dict[int, dict] = {}
    for entry in data:
        if not isinstance(entry, dict) or not all(key in entry for key in ("test", *IDENTITY, "limit_rad")):
            raise UsageError(shape)
        number, limit, raw = entry["test"], entry["limit_rad"], entry.get("limit_raw")
        if not isinstance(number, int) or isinstance(number, bool):
            raise UsageError(f"{path}: test number {number!r} is not an integer")
        joints = entry["joints"]
        if not (isinstance(entry["name"], str) and isinstance(entry["start"], str) and entry["direction"] in (1, -1)
                and isinstance(joints, list) and joints and all(isinstance(j, str) for j in joints)):
            raise UsageError(f"{path}: test {number}: name, start (text), direction (1 or -1) and joints (a list of "
                             "names) are not a test's")
        if limit is not None and (not isinstance(limit, int | float) or not math.isfinite(limit)):
            raise UsageError(f"{path}: test {number}: limit_rad {limit!r} is not a number or null")
        if raw is not None and (not isinstance(raw, list) or not all(isinstance(v, int) for v in raw)
                                or len(raw) != len(joints)):
            raise UsageError(f"{path}: test {number}: limit_raw {raw!r} is not one register value per joint")
        if number in tests:
            raise UsageError(f"{path}: test {number} twice")
        tests[number] = entry
    return tests


def compare(a_path: Path, b_path: Path) -> tuple[list[TestDifference], list[int], list[int]]:
    """The tests in both files (in A's order), and the numbers of those only in A, only in B."""
    a, b = load_results(a_path), load_results(b_path)
    common = [number for number in a if number in b]
    for number in common:
        if any(a[number][key] != b[number][key] for key in IDENTITY):
            raise UsageError(f"test {number} is not the same test in {a_path} and {b_path} "
                             f"({_identity(a[number])} against {_identity(b[number])}): not the same protocol")
    if not common:
        raise UsageError(f"{a_path} and {b_path} have no test in common (tests {_numbers(a)} against {_numbers(b)})")
    differences = [TestDifference(n, a[n]["name"], a[n]["limit_rad"], b[n]["limit_rad"], a[n].get("limit_raw"),
                                  b[n].get("limit_raw")) for n in common]
    return differences, [n for n in a if n not in b], [n for n in b if n not in a]


def mean_abs_difference_deg(differences: list[TestDifference]) -> float | None:
    """Mean |B - A| (deg) over the tests where both found a limit."""
    values = [abs(math.degrees(d.difference_rad)) for d in differences if d.difference_rad is not None]
    return sum(values) / len(values) if values else None


def table(differences: list[TestDifference], a_path: Path, b_path: Path, only_a: list[int],
          only_b: list[int]) -> str:
    raw = any(d.a_raw is not None or d.b_raw is not None for d in differences)
    lines = [f"A: {a_path}", f"B: {b_path}",
             f"{'test':>4}  {'name':18}  {'A (deg)':>9}  {'B (deg)':>9}  {'B - A (deg)':>11}"
             + (f"  {'A raw':>9}  {'B raw':>9}  {'B - A raw':>9}" if raw else "")]
    for d in differences:
        difference = d.difference_rad
        line = (f"{d.test:>4}  {d.name:18}  {_degrees(d.a_limit):>9}  {_degrees(d.b_limit):>9}  "
                f"{'-' if difference is None else f'{math.degrees(difference):+.2f}':>11}")
        if raw:
            line += f"  {_raw(d.a_raw):>9}  {_raw(d.b_raw):>9}  {_raw(d.difference_raw, signed=True):>9}"
        lines.append(line)
    mean = mean_abs_difference_deg(differences)
    found = sum(d.difference_rad is not None for d in differences)
    lines.append(f"mean |B - A| over the {found} tests with a limit in both: "
                 + ("-" if mean is None else f"{mean:.2f} deg"))
    if only_a:
        lines.append(f"only in A: tests {', '.join(map(str, only_a))}")
    if only_b:
        lines.append(f"only in B: tests {', '.join(map(str, only_b))}")
    return "\n".join(lines)


def compare_command(a_path: Path, b_path: Path, json_out: str | None) -> int:
    """Print the comparison (table, or JSON with ``--json -``; a table and a file with ``--json FILE``)."""
    differences, only_a, only_b = compare(a_path, b_path)
    summary = {"a": str(a_path), "b": str(b_path), "tests": [d.as_dict() for d in differences],
               "mean_abs_difference_deg": mean_abs_difference_deg(differences), "only_in_a": only_a,
               "only_in_b": only_b}
    if json_out == "-":
        print(json.dumps(summary, indent=2))
        return 0
    print(table(differences, a_path, b_path, only_a, only_b))
    if json_out:
        Path(json_out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def _identity(entry: dict) -> str:
    return (f"{entry['name']!r}: {', '.join(map(str, entry['joints']))} "
            f"{'+' if entry['direction'] > 0 else '-'} from {entry['start']}")


def _numbers(tests: dict[int, dict]) -> str:
    return ", ".join(map(str, tests)) or "none"


def _degrees(limit: float | None) -> str:
    return "none" if limit is None else f"{math.degrees(limit):+.2f}"


def _raw(values: list[int] | None, signed: bool = False) -> str:
    if values is None:
        return "-"
    return "/".join(f"{v:+d}" if signed else str(v) for v in values)
