"""The commands refuse a wrong simulation parameter file, or a misspelt ``--set`` name, in one
line with exit status 2, before anything starts (:mod:`humanoid_sim.params_file`)."""

from __future__ import annotations

import pytest

from humanoid_bringup import main

ROBOT = "hoap2"


@pytest.mark.parametrize("command", [
    ["sim", "--robot", ROBOT], ["walk", "--robot", ROBOT, "--distance", "1"], ["postures", "--robot", ROBOT],
    ["demo"], ["gaits", "--robot", "bioloid_quadruped", "--sweep"]])
def test_the_commands_refuse_a_wrong_file_in_one_line_with_exit_2(command, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("transmission: {stifness: 50}\n")
    assert main([*command, "--params", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "--params:" in err and "unknown parameter 'transmission.stifness'" in err


def test_postures_set_refuses_a_misspelt_name(capsys):
    assert main(["postures", "--robot", ROBOT, "--set", "transmission.stifness=50"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no parameter 'transmission.stifness' (did you mean transmission.stiffness" in err
