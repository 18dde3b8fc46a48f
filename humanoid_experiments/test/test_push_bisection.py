"""The bisection of `humanoid push` (no simulation: a robot that falls above a known impulse)."""

from __future__ import annotations

import pytest

from humanoid_experiments import Trial, bisect


def threshold_robot(threshold: float, tried: list[float]):
    """A trial that falls above ``threshold`` N s, the warning 0.4 s before the fall."""
    def trial(impulse: float) -> Trial:
        tried.append(impulse)
        fell = impulse > threshold
        return Trial(impulse=impulse, fell=fell, pushed_at=1.0, fell_at=2.0 if fell else None,
                     warned_at=1.6 if fell else None, unstable_before=False)
    return trial


def test_the_bracket_doubles_then_halves_around_the_threshold():
    tried: list[float] = []
    result, trials = bisect(threshold_robot(3.3, tried), first=0.7, bound=100.0, iterations=3)
    assert tried[:4] == [0.7, 1.4, 2.8, 5.6]  # doubling up to the first fall
    assert len(trials) == result.trials == 7
    assert result.survived <= 3.3 < result.toppled
    assert result.toppled - result.survived == pytest.approx((5.6 - 2.8) / 8)
    assert result.warned and result.warning_lead_s == pytest.approx(0.4)


def test_no_fall_up_to_the_bound_leaves_no_toppling_push():
    tried: list[float] = []
    result, _ = bisect(threshold_robot(1e9, tried), first=0.7, bound=10.0, iterations=3)
    assert tried[-1] == 10.0 and result.survived == 10.0
    assert result.toppled is None and result.warned is None
