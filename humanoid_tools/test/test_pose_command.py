"""`humanoid pose` as a user runs it: a script of commands piped into the command, which
drives the simulated robot through the shared interface and saves the poses to files
that the motion package reads back.

The command runs through its entry point in the test's process (``cli_entry``), the script
its standard input (descriptor and ``sys.stdin``, as a pipe would carry it): what is checked
is what it writes, its exit status, the files it saves and how the robot (a graph of its own
processes) moved, the same either way; an interpreter start and the command's imports are
saved per run."""

from __future__ import annotations

import math
import re
import subprocess
from collections import deque

import numpy as np
import pytest
from cli_entry import entry_point

from humanoid_control.ros import RobotClient, seconds
from humanoid_core.motion import load_motion, plan_playback, read_keyframes
from humanoid_robot_bioloid import read_thesis_poses
from humanoid_robot_hoap2 import read_hoap2_csv
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: The graphs are the default ones in lockstep with their control container (docs/lockstep.md):
#: as fast as the machine allows, every node users run on.
#: The command under test (`humanoid pose`), its words after ``humanoid``.
COMMAND = ["pose"]
#: How close (deg) a held joint's measurement is to its target: the simulated servos hold
#: unloaded arm joints to a few hundredths of a degree; 0.5 deg is a tenth of any move here.
REACHED_DEG = 0.5
#: Robot seconds a lagging command's readings are behind the robot: three times its 0.5 s moves.
LAG = 1.5


def pose(robot: str, script: str, *options: str) -> subprocess.CompletedProcess:
    return entry_point(*COMMAND, "--robot", robot, *options, input=script)


def after_the_session(client: RobotClient) -> dict[str, float]:
    """Positions the robot measured after the session (rad), once ``client`` has taken every
    reading up to then (its recording complete). A client's latest reading is not where the
    robot is: it takes the readings in order and can be behind (a loaded machine, the command
    running in this process, a simulation as fast as the machine allows); CI's run once measured
    the elbow 0.41 s into its 0.5 s move, at 17.85 deg. A client made now hears only readings
    published from now on."""
    with RobotClient("pose_test_after") as fresh:
        state = fresh.wait_for_joint_states(60.0)
    stamp = seconds(state.header.stamp)
    while (taken := client.joint_state) is None or seconds(taken.header.stamp) < stamp:
        client.wait_for_joint_states(60.0)
    return dict(zip(state.name, state.position, strict=True))


def lagging(client_type: type, lag: float):
    """``client_type``'s joint_states callback for clients made from now on: each reading taken
    once one ``lag`` robot seconds newer has come, as by a client that far behind the robot."""
    take = client_type._on_joint_state

    def on_joint_state(self, msg) -> None:
        held = self.__dict__.setdefault("_lagging", deque())
        held.append(msg)
        newest = seconds(msg.header.stamp)
        while held and seconds(held[0].header.stamp) <= newest - lag:
            take(self, held.popleft())

    return on_joint_state


def degrees_of(recorded: list, joint: str) -> np.ndarray:
    """A joint's measured positions (deg) over recorded joint_states, in time order."""
    ordered = sorted(recorded, key=lambda m: seconds(m.header.stamp))
    return np.degrees([m.position[list(m.name).index(joint)] for m in ordered])


def test_a_posing_session_moves_the_robot_clamps_at_limits_and_saves_poses(robot_graph, tmp_path):
    _graph, client = robot_graph(sim_nodes("hoap2", lockstep=True))
    keyframes, csv = tmp_path / "poses.yaml", tmp_path / "poses.csv"
    script = f"""help
# raise the right arm in two steps (joint names in any case), save
move rarm_joint1 30
move RARM_JOINT1 +15
save {keyframes} arms up
save {csv}
# the left shoulder: to -80, then 30 further, beyond its -91 deg limit
set larm_joint1 -80
move larm_joint1 -30
save {keyframes}
save {csv} ignored label
mvoe rarm_joint1 1
move nosuch 3
move rarm_joint1 abc
set rarm_joint1 inf
move rarm_joint1
save {tmp_path / "poses.txt"}
save /proc/nope.yaml
save /proc/nope.csv
show larm_joint1
reset rarm_joint1
"""
    client.start_recording()
    result = pose("hoap2", script)
    final = after_the_session(client)
    recorded = client.stop_recording()

    # every bad line got its one-line error, and nothing else failed
    errors = result.stderr.splitlines()
    assert errors[0] == "error: unknown command 'mvoe' (commands: help, show, move, set, reset, save, quit)"
    assert errors[1].startswith("error: unknown joint 'nosuch' (joints: rleg_joint1, rleg_joint2,")
    assert errors[2:6] == ["error: not a number of degrees: 'abc'", "error: not a finite number of degrees: 'inf'",
                           "error: usage: move JOINT DELTA",
                           "error: cannot save to 'poses.txt': give a .yaml/.yml keyframe file or a .csv file"]
    # a file that cannot be written is one error line, and the session goes on (show, reset below)
    assert [line.rsplit(": ", 1)[0] for line in errors[6:]] == ["error: not saved: cannot write /proc/nope.yaml",
                                                                "error: not saved: cannot write /proc/nope.csv"]
    assert result.returncode == 1  # some commands failed
    out = result.stdout
    assert "move JOINT DELTA" in out and "save FILE [LABEL]" in out  # help
    # a move is relative to where the joint is (-80 deg within the servo's settling): about -110
    clamped = re.search(r"larm_joint1: (\S+) deg is outside its limits \[-91\.00, 151\.00\]: clamped to -91\.00 deg",
                        out)
    assert clamped is not None, out
    assert float(clamped.group(1)) == pytest.approx(-110.0, abs=REACHED_DEG)

    # the robot moved: the right arm to 45 deg and back home, the left one to its limit and no further
    right, left = degrees_of(recorded, "rarm_joint1"), degrees_of(recorded, "larm_joint1")
    assert right.max() == pytest.approx(45.0, abs=REACHED_DEG)
    assert left.min() == pytest.approx(-91.0, abs=REACHED_DEG)
    assert math.degrees(final["rarm_joint1"]) == pytest.approx(0.0, abs=REACHED_DEG)
    assert math.degrees(final["larm_joint1"]) == pytest.approx(-91.0, abs=REACHED_DEG)
    shown = re.fullmatch(r"larm_joint1 +(\S+) deg +limits \[-91\.00, 151\.00\]", out.splitlines()[-2])
    assert shown is not None, out  # show: where the left shoulder is, with its limits
    assert float(shown.group(1)) == pytest.approx(-91.0, abs=REACHED_DEG)

    # the saved poses read back with the motion package's readers
    motion = read_keyframes(keyframes, "hoap2")
    assert motion.times.tolist() == [0.0, 1.5]
    assert motion.labels == ("arms up", "")
    saved = {j: np.degrees(motion.positions[:, i]) for i, j in enumerate(motion.joint_names)}
    assert saved["rarm_joint1"] == pytest.approx([45.0, 45.0], abs=REACHED_DEG)
    assert saved["larm_joint1"] == pytest.approx([0.0, -91.0], abs=REACHED_DEG)
    assert len(motion.joint_names) == 25
    assert plan_playback(load_motion("hoap2", keyframes)).duration >= 1.5  # a playable motion
    lines = read_hoap2_csv(csv)
    assert lines.times.tolist() == [0.0, 1.5]
    columns = {j: np.degrees(lines.positions[:, i]) for i, j in enumerate(lines.joint_names)}
    assert columns["rarm_joint1"] == pytest.approx([45.0, 45.0], abs=REACHED_DEG)
    assert columns["larm_joint1"] == pytest.approx([0.0, -91.0], abs=REACHED_DEG)


def test_bioloid_poses_are_saved_as_thesis_poses(robot_graph, tmp_path):
    """The Bioloid's csv is the thesis' pose file (label, J1..J18 deg): read back through the
    thesis convention, it gives the joint positions the robot had."""
    _graph, client = robot_graph(sim_nodes("bioloid", lockstep=True))
    path = tmp_path / "poses.csv"
    result = pose("bioloid", f"move r_elbow 20\nsave {path} elbow bent\nsave {path}\nquit\nmove r_elbow 20\n")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    measured = after_the_session(client)

    poses = read_thesis_poses(path, "bioloid")
    assert [p.label for p in poses] == ["elbow bent", "pose 2"]
    for saved in poses:
        for joint, value in saved.positions.items():
            assert math.degrees(value) == pytest.approx(math.degrees(measured[joint]), abs=0.1), joint
    assert math.degrees(measured["r_elbow"]) == pytest.approx(20.0, abs=REACHED_DEG)  # quit ended the session


def test_a_session_behind_the_robot_saves_the_pose_the_robot_rests_in(robot_graph, tmp_path, monkeypatch):
    """The command's readings 1.5 robot seconds behind the robot: when the move's result comes,
    the latest reading it has taken is from before the move, the joint at rest there; the move
    still ends, and the pose is saved, where the robot came to rest (not at the pose before the
    move, as when the move's end was the latest reading taken)."""
    _graph, client = robot_graph(sim_nodes("bioloid", lockstep=True))
    path = tmp_path / "poses.csv"
    with monkeypatch.context() as patch:
        patch.setattr(RobotClient, "_on_joint_state", lagging(RobotClient, LAG))
        result = pose("bioloid", f"move r_elbow 20\nsave {path} elbow bent\n")
    assert result.returncode == 0, result.stderr
    measured = after_the_session(client)

    assert math.degrees(measured["r_elbow"]) == pytest.approx(20.0, abs=REACHED_DEG)
    moved = re.search(r"r_elbow: (\S+) -> (\S+) deg", result.stdout)
    assert moved is not None, result.stdout
    assert float(moved.group(2)) == pytest.approx(math.degrees(measured["r_elbow"]), abs=0.1), result.stdout
    (saved,) = read_thesis_poses(path, "bioloid")
    for joint, value in saved.positions.items():
        assert math.degrees(value) == pytest.approx(math.degrees(measured[joint]), abs=0.1), joint


def test_without_a_robot_the_session_does_not_start():
    result = pose("hoap2", "show\n", "--timeout", "1")
    assert result.returncode == 1
    assert result.stderr.strip() == "error: no joint_states within 1 s: is the robot node running?"
