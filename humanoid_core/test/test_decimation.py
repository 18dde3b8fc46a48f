"""Rates below the control loop's, on the robot clock."""

import numpy as np
import pytest

from humanoid_core.loop import Decimator


def fired(rate: float, stamps) -> list[float]:
    decimator = Decimator(rate)
    return [t for t in stamps if decimator.due(t)]


def test_the_average_rate_holds_when_the_loop_period_does_not_divide_it():
    stamps = np.arange(1, 3001) * 0.003  # a 3 ms loop, rounded like summed physics steps
    times = fired(100.0, stamps)
    assert len(times) / (stamps[-1] - stamps[0]) == pytest.approx(100.0, rel=0.01)
    assert min(np.diff(times)) >= 0.009 - 1e-9  # never two in a row


def test_an_exact_multiple_fires_every_time_despite_rounding():
    stamps = [k * 0.001 * 5 for k in range(1, 401)]  # 200 Hz loop, float sums
    assert len(fired(100.0, stamps)) == 200


def test_missed_deadlines_are_skipped_not_caught_up():
    times = fired(100.0, [0.0, 0.01, 0.5, 0.505, 0.51, 0.515])
    assert times == [0.0, 0.01, 0.5, 0.51]


def test_a_rate_must_be_positive():
    with pytest.raises(ValueError, match="clock_rate must be > 0 Hz"):
        Decimator(0.0, "clock_rate")
