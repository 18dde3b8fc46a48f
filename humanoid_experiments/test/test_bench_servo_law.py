"""``humanoid bench servo-law`` sets both servo laws side by side in one run (a short one: the
Bioloid's wave, no postures protocol; the figures themselves are for docs/identification.md),
and refuses a bad motion or test list in one line."""

from __future__ import annotations

import argparse
import json

import pytest

from humanoid_experiments.bench import servo_law


def parse(*args: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    servo_law.add_arguments(parser)
    return parser.parse_args(list(args))


def test_both_laws_track_the_motion_side_by_side(capsys):
    assert servo_law.run(parse("--robot", "bioloid", "--motions", "wave", "--json")) == 0
    result = json.loads(capsys.readouterr().out)
    laws = result["laws"]
    assert list(laws) == ["position_motor", "pd_torque"]
    assert laws["position_motor"]["settings"]["physics_rate"] == 1000.0
    assert laws["pd_torque"]["settings"] | {"physics_rate": 4000.0, "law": "pd_torque", "bus_rate": 83.0} \
        == laws["pd_torque"]["settings"]
    for law in laws.values():
        wave = law["tracking"]["wave"]
        assert wave["result"] == "succeeded" and not wave["fell"]
        assert 0.0 < wave["rms_deg"] <= wave["max_deg"] < 5.0  # the arms follow within a few degrees
    assert "no postures protocol" in result["postures_note"]


@pytest.mark.parametrize(("args", "message"), [
    (("--robot", "bioloid", "--motions", "twirl"), "--motions: twirl: the bioloid library has"),
    (("--robot", "bioloid", "--tests", "x"), "--tests: 'x' is not a test number"),
    (("--robot", "hoap2", "--tests", "1,99"), "no test 99 in"),
    (("--robot", "bioloid_quadruped",), "unknown physics profile 'pd_torque' for bioloid_quadruped"),
    (("--robot", "bioloid", "--set", "servo.law=stiff"), "unknown servo law 'stiff'"),
    (("--robot", "bioloid", "--set", "servo.k_omega_legs=-0.1"), "servo k_omega_legs must be a finite number >= 0"),
    (("--robot", "bioloid", "--set", "real_time_factor=0"), "'real_time_factor'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    assert servo_law.run(parse(*args)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("humanoid bench servo-law: error: "), err
    assert message in err
