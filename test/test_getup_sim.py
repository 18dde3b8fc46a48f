"""``humanoid getup`` as users run it: the default simulation graph, the robot laid down, the
fall manager seeing it lying and getting it up with the library's get-up motion (through
play_motion, the self-collision veto and the robot interface), the current drawn meanwhile
from the energy monitor, the run recorded and read back by rosbags. One trial here; the
command's ten per start are the figures of docs/energy_and_falls.md.

The robot is laid on its belly: the Bioloid's get-up from the belly lasts 16 s, the one from
the back 30.5 s, and what this test checks (the command, the manager in the graph getting the
robot up, the current, the recording) is the same whichever side it lies on; that each of the
library's get-ups stands the robot up is checked in-process, side by side
(humanoid_sim/test/test_getup_motions.py)."""

from __future__ import annotations

import json
import subprocess

import pytest
from bag_messages import topic_messages

pytestmark = pytest.mark.system


@pytest.mark.parametrize(("robot", "start"), [("bioloid", "belly")])
def test_the_fall_manager_gets_the_laid_down_robot_up(robot, start, tmp_path):
    bag = tmp_path / "getup"
    def show_logs() -> None:  # the nodes' logs say why
        for log in sorted((tmp_path / "logs").glob("*.log")):
            print(f"----- {log.name} -----\n{log.read_text()[-3000:]}")

    try:  # ends before pytest's timeout, which would leave no logs
        # --timeout: 60 s of robot time, the get-up (16.5 s) at its first attempt and a second one
        result = subprocess.run(["humanoid", "getup", "--robot", robot, "--trials", "1", "--from", start, "--json",
                                 "--timeout", "60", "--record", str(bag), "--log-dir", str(tmp_path / "logs")],
                                capture_output=True, text=True, timeout=500, check=False)
    except subprocess.TimeoutExpired as late:
        show_logs()
        pytest.fail(f"humanoid getup still running after {late.timeout:g} s: {(late.stderr or b'')[-3000:]!r}")
    report = json.loads(result.stdout) if result.returncode == 0 else None
    if report is None or report[start]["succeeded"] != 1:
        show_logs()
    assert report is not None, result.stderr[-3000:]
    figures = report[start]
    assert (report["robot"], figures["trials"], figures["succeeded"]) == (robot, 1, 1), result.stderr[-3000:]
    assert 0.0 < figures["mean_time_s"] == figures["worst_time_s"] < 60.0
    assert figures["peak_current_a"] > figures["mean_current_a"] > 0.0 and figures["energy_j"] > 0.0
    # the manager's states as recorded: down, getting up from the side laid on, then controllable
    states: list[tuple[str, str]] = []
    for message in topic_messages(bag, "/fall_manager_state"):
        if not states or states[-1] != (message.state_name, message.side):
            states.append((message.state_name, message.side))
    down = next(i for i, (state, _side) in enumerate(states) if state != "controllable")
    assert ("getting_up", start) in states[down:], states  # lying on the side laid on (seen falling or lying)
    assert states[-1] == ("controllable", ""), states
