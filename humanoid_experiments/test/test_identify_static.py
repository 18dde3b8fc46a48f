"""``humanoid identify`` on the Bioloid quadruped's static experiments (``--postures`` results of
``humanoid postures --experiments ... --json``): the problem built from them (each experiment's
real equilibrium and the servo its run inferred; the link groups' CoM offsets as parameters with
their bounds), the held-out experiments (``--hold-out``) never in the fit's cost, a tiny fit end to
end writing a parameter file, and bad input refused in one line with exit status 2."""

from __future__ import annotations

import json
import math
from argparse import Namespace
from pathlib import Path

import pytest

from humanoid_bringup import main
from humanoid_experiments import postures
from humanoid_experiments.identify import EquilibriumTarget, Problem, cost, parse_fit
from humanoid_experiments.postures import Candidate, CandidateResult
from humanoid_sim import link_names, load

#: What the committed run found (docs/data/quadruped_static_reference.json): experiment, real raw,
#: the inferred servo and way, its simulated raw and |difference| in deg; experiment 1 cannot be set.
RUN = [(1, 571, None, None, None, None), (2, 482, "PELVIS", "-", 390, 26.9744), (3, 479, "FR2", "-", 445, 9.9688),
       (4, 535, "BL1", "+", 636, 29.6132), (5, 261, "BL2", "+", 248, 3.8116), (6, 274, "FL1", "-", 267, 2.0524),
       (7, 478, "FR1", "-", 445, 9.6756), (8, 537, "FL1", "+", 581, 12.9008), (9, 542, "FL1", "+", 581, 11.4348)]
THIGHS = "model.links.fl_thigh+fr_thigh+bl_thigh+br_thigh.com_z"


def results_file(directory: Path, numbers: list[int] | None = None) -> Path:
    entries = [{"experiment": n, "real": real, "webots": None, "simulated": simulated, "stepped": servo,
                "stepped_way": way, "inferred": True, "difference_deg": difference}
               for n, real, servo, way, simulated, difference in RUN if numbers is None or n in numbers]
    path = directory / "experiments.json"
    path.write_text(json.dumps({"experiments": entries}))
    return path


def request(directory: Path, hold_out: str | None, fit: str = "model.links.base_link.com_x=-0.048:0.048"):
    from humanoid_experiments.identify import checked_request

    return checked_request(Namespace(robot="bioloid_quadruped", bag=None, postures=str(results_file(directory)),
                                     validate=[], fit=fit, hold_out=hold_out, physics=None, params=None))


def test_the_problem_is_built_from_the_static_experiments_and_their_inferred_servos(tmp_path):
    done = request(tmp_path, "3,5,8", f"model.links.base_link.com_y=-0.05:0.05,{THIGHS}=-0.038:0.038")
    fitted, (name, held) = done["data"], done["held_out"][0]
    assert [(t.experiment, t.servo, t.way, t.real) for t in fitted] == [
        (2, "PELVIS", "-", 482), (4, "BL1", "+", 535), (6, "FL1", "-", 274), (7, "FR1", "-", 478),
        (9, "FL1", "+", 542)]  # experiment 1 cannot be set: no servo to step
    assert name == "held out 3,5,8" and [t.experiment for t in held] == [3, 5, 8]
    problem = done["problem"]
    assert problem.names == ["model.links.base_link.com_y", THIGHS]
    assert problem.bounds == [(-0.05, 0.05), (-0.038, 0.038)]
    assert problem.values([0.01, -0.02]) == {  # a link group's value for each of its links
        "model.links.base_link.com_y": 0.01, **{f"model.links.{leg}_thigh.com_z": -0.02 for leg in
                                                 ("fl", "fr", "bl", "br")}}
    assert done["sources"] == (f"{tmp_path / 'experiments.json'} less held out 3,5,8",)


def test_the_held_out_experiments_are_never_in_the_fits_cost(tmp_path, monkeypatch):
    """The cost steps the fitted experiments' servos alone, and a servo that never tips the robot
    counts with the end of its travel (80 deg from its start)."""
    stepped = []

    def fake(robot, experiment, servo, way, profile, params_file, overlapping, values=None):
        stepped.append(experiment)
        return CandidateResult(Candidate(servo, way), None if experiment == 7 else 513, "fake", 1)

    monkeypatch.setattr(postures, "run_candidate", fake)
    done = request(tmp_path, "3,5,8")
    value = cost(done["problem"], done["data"], {"model.links.base_link.com_x": 0.01})
    assert stepped == [2, 4, 6, 7, 9]
    degrees = 0.2932  # the AX-12's register (the protocol's scale: Table 5's 0.293 deg per unit)
    errors = [(513 - 482) * degrees, (513 - 535) * degrees, (513 - 274) * degrees, (513 - 80 / degrees - 478)
              * degrees, (513 - 542) * degrees]
    assert value == pytest.approx(math.sqrt(sum(e * e for e in errors) / 5), rel=1e-9)


def test_a_tiny_fit_writes_a_parameter_file_and_reports_the_held_out_experiment(tmp_path, capsys):
    """The polish alone from the model's CoM (1 evaluation of the fitted experiment 7), experiment
    8 held out: each experiment's error before and after, as the postures table gives it."""
    output = tmp_path / "fit.yaml"
    assert main(["identify", "--robot", "bioloid_quadruped", "--postures", str(results_file(tmp_path, [7, 8])),
                 "--hold-out", "8", "--fit", "model.links.base_link.com_x=-0.048:0.048", "--generations", "0",
                 "--polish", "1", "--no-sensitivity", "--workers", "0", "--output", str(output)]) == 0
    printed = capsys.readouterr().out
    assert "held out 8: RMS 12.9008 deg (before the fit: 12.9008" in printed, printed
    assert "   8 held out      537        +12.90       +12.90" in printed, printed
    report = json.loads((tmp_path / "fit.report.json").read_text())
    assert report["evaluations"] == 1
    assert set(report["targets"]) == {"7", "8"}
    assert not report["targets"]["7"]["held_out"] and report["targets"]["8"]["held_out"]
    # the model's CoM: the committed run's differences (simulated - real: 445 - 478, 581 - 537)
    assert report["targets"]["7"]["before"] == pytest.approx(-9.6756, abs=0.01)
    assert report["targets"]["8"]["before"] == pytest.approx(12.9008, abs=0.01)
    assert report["held_out"]["held out 8 (base)"] == pytest.approx(12.9008, abs=0.01)
    values = load(output, link_names(_urdf()))
    assert values == {"model.links.base_link.com_x": 0.0}  # the bounds' centre, the one point evaluated


def _urdf() -> str:
    from humanoid_description import urdf_xml

    return urdf_xml("bioloid_quadruped")


@pytest.mark.parametrize(("extra", "message"), [
    (["--hold-out", "3,12"], "--hold-out: "),
    (["--hold-out", "3,x"], "is not test or experiment numbers like 3,5,8"),
    (["--hold-out", "2,3,4,5,6,7,8,9"], "nothing left to fit"),
    (["--fit", "model.links.base_link.com_w"], "a link correction has no 'com_w'"),
    (["--fit", "model.links.fl_thigh+fr_thigx.com_z"], "the robot has no link 'fr_thigx'"),
    (["--fit", "servo.xyzzy"], "unknown parameter 'servo.xyzzy'"),
])
def test_bad_input_is_one_line_and_exit_2(extra, message, tmp_path, capsys):
    fit = [] if "--fit" in extra else ["--fit", "model.links.base_link.com_x"]
    assert main(["identify", "--robot", "bioloid_quadruped", "--postures", str(results_file(tmp_path)),
                 "--output", str(tmp_path / "out.yaml"), "--workers", "0", *fit, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert message in err, err
    assert not (tmp_path / "out.yaml").exists()


def test_reference_names_the_results_file_the_quadruped_needs(tmp_path, capsys):
    assert main(["identify", "--robot", "bioloid_quadruped", "--postures", "reference", "--fit",
                 "model.links.base_link.com_x", "--output", str(tmp_path / "out.yaml"), "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "do not say which servo was stepped" in err, err


def test_equilibrium_targets_are_numbered_by_their_experiment():
    target = EquilibriumTarget(5, "BL2", "+", 261)
    assert target.test == 5
    assert Problem("bioloid_quadruped", "reference", None, tuple(parse_fit("model.links.pelvis.com_x",
                                                                           ["pelvis"]))).names == \
        ["model.links.pelvis.com_x"]
