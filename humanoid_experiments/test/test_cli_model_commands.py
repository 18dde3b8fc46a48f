"""The `humanoid` model commands as a user runs them: real processes, real files."""

import json
import subprocess

import pytest
import yaml

from humanoid_description import robot_files

LINKS = ["r_foot", "r_ankle", "r_knee", "r_thigh", "r_hip", "r_hip_support", "torso", "r_shoulder",
         "r_elbow", "r_hand", "l_shoulder", "l_elbow", "l_hand", "l_hip_support", "l_hip", "l_thigh",
         "l_knee", "l_ankle", "l_foot"]


def humanoid(*args, check=True):
    result = subprocess.run(["humanoid", *args], capture_output=True, text=True, timeout=120)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize(("robot", "joints", "mass"), [("hoap2", 25, 7.12), ("bioloid", 18, 1.70)])
def test_describe_json(robot, joints, mass):
    info = json.loads(humanoid("describe", "--robot", robot, "--json").stdout)
    assert info["joint_count"] == joints == len(info["joints"])
    assert info["total_mass_kg"] == pytest.approx(mass, abs=0.005)
    assert info["stability_margin_home_m"] > 0.01
    assert set(info["soles_home_m"]) == {"right", "left"}
    assert all(j["lower_rad"] < j["upper_rad"] for j in info["joints"])


def test_describe_text_lists_every_joint():
    out = humanoid("describe", "--robot", "hoap2").stdout
    assert "rleg_joint4" in out and "-1.00" in out and "130.00" in out
    assert "total mass 7.1200 kg" in out


def test_balance_poses_reproduce_the_thesis(tmp_path):
    poses = yaml.safe_load(robot_files("bioloid").config_file("balanced_poses.yaml").read_text())["poses"]
    csv = tmp_path / "poses.csv"
    csv.write_text("".join(",".join(str(a) for a in p["angles"]) + "\n" for p in poses.values()))
    out = tmp_path / "out.json"
    humanoid("balance-poses", "--robot", "bioloid", "--poses", str(csv), "--json", str(out))
    results = json.loads(out.read_text())
    assert len(results) == len(poses)
    for entry, (name, spec) in zip(results, poses.items(), strict=True):
        assert set(entry["links_mm"]) == set(LINKS)
        assert entry["links_mm"]["r_foot"] == pytest.approx([0, 0, 0], abs=1e-6)
        assert len(entry["com_mm"]) == 3
        if name not in ("P5", "P7"):  # see test_bioloid_model: inconsistent with the equations
            assert entry["com_mm"] == pytest.approx(spec["com_mm"], abs=8.0), name
        assert entry["margin_mm"] > 0  # every balanced pose has its CoM over the right foot


def test_balance_poses_zero_pose_matches_the_thesis_check(tmp_path):
    csv = tmp_path / "zero.csv"
    csv.write_text("J1,J2,J3,J4,J5,J6,J7,J8,J9,J10,J11,J12,J13,J14,J15,J16,J17,J18\n"
                   "T-pose," + ",".join(["0"] * 18) + "\n")
    result = humanoid("balance-poses", "--robot", "bioloid", "--poses", str(csv), "--json", "-")
    (entry,) = json.loads(result.stdout)
    assert entry["pose"] == "T-pose"
    assert entry["links_mm"]["torso"] == pytest.approx([4.35, -36.53, 270.64], abs=0.01)
    assert entry["links_mm"]["l_foot"] == pytest.approx([-0.01, -74.68, 0.02], abs=0.01)
    assert entry["left_foot_contact"] is True  # both feet flat: double support


@pytest.mark.parametrize(("content", "message"), [
    ("1,2,3\n", "poses.csv:1: expected 18 angles J1..J18, got 3 fields"),
    (",".join(["0"] * 18) + "\n" + ",".join(["0"] * 17 + ["x"]) + "\n", "poses.csv:2: J18 is not a finite number: 'x'"),
    (",".join(["0"] * 19) + "\n", "poses.csv:1: expected 18 angles J1..J18, got 19 fields"),
    (",".join(["0"] * 17 + ["nan"]) + "\n", "poses.csv:1: J18 is not a finite number: 'nan'"),
])
def test_balance_poses_rejects_malformed_files(tmp_path, content, message):
    csv = tmp_path / "poses.csv"
    csv.write_text(content)
    result = humanoid("balance-poses", "--robot", "bioloid", "--poses", str(csv), "--json", "-", check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


@pytest.mark.parametrize("args", [
    ["describe", "--robot", "nao"],
    ["balance-poses", "--robot", "hoap2", "--poses", "x.csv", "--json", "-"],
    ["balance-poses", "--robot", "bioloid", "--poses", "/nonexistent.csv", "--json", "-"],
])
def test_invalid_requests_exit_2_with_one_line(args, tmp_path):
    if args[2] == "hoap2":
        (tmp_path / "x.csv").write_text(",".join(["0"] * 18) + "\n")
        args = [a.replace("x.csv", str(tmp_path / "x.csv")) for a in args]
    result = humanoid(*args, check=False)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("humanoid: error:"), result.stderr
