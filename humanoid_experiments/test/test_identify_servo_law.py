"""``humanoid identify --fit`` takes the pd_torque law's gains by name, with default bounds,
and refuses bounds a gain cannot take before any run."""

from __future__ import annotations

import pytest

from humanoid_experiments.identify import DEFAULT_BOUNDS, FitError, FitParameter, parse_fit
from humanoid_sim import PD_GAINS


def test_every_gain_of_the_law_has_default_bounds():
    assert parse_fit(",".join(f"servo.{gain}" for gain in PD_GAINS), []) == [
        FitParameter(f"servo.{gain}", *DEFAULT_BOUNDS[f"servo.{gain}"]) for gain in PD_GAINS]
    assert parse_fit("servo.k_omega_legs=0.01:0.5", []) == [FitParameter("servo.k_omega_legs", 0.01, 0.5)]


@pytest.mark.parametrize(("fit", "message"), [
    ("servo.k_theta_legs=-5:10", "--fit: servo.k_theta_legs=-5:10: servo k_theta_legs must be a finite number >= 0, "
                                 "got -5.0"),
    ("servo.k_thetta_legs", "did you mean servo.k_theta_legs"),
    ("servo.bus_rate", "--fit: servo.bus_rate has no default bounds"),
])
def test_a_bad_fit_is_one_line(fit, message):
    with pytest.raises(FitError) as error:
        parse_fit(fit, [])
    assert message in str(error.value) and "\n" not in str(error.value)
