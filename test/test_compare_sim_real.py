"""``humanoid compare``: the same ``play_motion`` recorded on the simulated Bioloid and on the
Bioloid's emulated bus (the graphs ``humanoid sim --lockstep --record`` and ``humanoid real
--emulate --record`` start; the simulation's with the test's client among its participants),
compared by the command (its entry point, run in the test's process: the property is its
output, not its process); its figures are checked against values computed here from the two
bags alone (rosbags and numpy, by the documented rule).
Then known answers, on copies of a bag changed in one known way: one joint 0.01 rad off, the
whole recording later, its start cut (``--offset``); and the refusals: bags of different
robots, without a common joint, and not a bag.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bag_copies import derived_bag, later_copy
from bag_messages import read_bag
from cli_entry import entry_point
from matplotlib.image import imread
from system_support import on_emulated_bus, recording_graph

from humanoid_bringup import RECORDER_NODE, real_nodes
from humanoid_control.nodes import CONTROL_CONTAINER
from humanoid_core.processes import NodeSpec
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.action import PlayMotion
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid"
MOTION = "wave"
#: The wave played twice as fast (3 s instead of 6; the servos follow it, or the player slows it
#: to their limits, the same on both robots): the comparison needs a motion, not its length, and
#: each robot second is a second of the emulated bus's real time and of every bag read and copy.
SPEED = 2.0
PATIENCE = 60.0
#: The test's client (a participant of the simulation's lockstep graph).
CLIENT = "compare_test"
#: goal_position_tolerance of the Bioloid's sim.yaml and hw.yaml (rad).
GOAL_TOLERANCE = 0.05
#: How many consecutive joint_states of the robot's bag are made stale for r_elbow.
STALE_COUNT = 4
#: Robot seconds recorded after the motion's result: the two results come within the goal time
#: tolerance (1 s) of each other, so 2 s leaves both robots at rest in the last pose for a second
#: of the common window (each second more only lengthens every read and copy of the bags).
SETTLE = 2.0
#: What the recorder must hear before the motion starts (topic, subscribing node): the recorder is
#: hosted in the graph's container, whose feed takes the robot's state for it.
RECORDED_FIRST = (("/robot_state", CONTROL_CONTAINER), ("/follow_joint_trajectory/_action/status", RECORDER_NODE),
                  ("/play_motion/_action/status", RECORDER_NODE))


def record_motion(nodes: list[NodeSpec], bag: Path, log_dir: Path, lockstep: bool = False) -> None:
    """Run the graph with the recorder (as --record adds it), play the motion once, stop.
    ``lockstep``: the graph's (the client one of its participants, holding the simulation at
    its first state until the motion goes)."""
    with recording_graph(nodes, bag, log_dir, CLIENT, RECORDED_FIRST, lockstep=lockstep,
                         client_lockstep=lockstep) as client:
        if lockstep:
            client.lockstep.go()
        result = client.play_motion(name=MOTION, speed=SPEED, timeout=120.0).result
        assert result.error_code == PlayMotion.Result.SUCCESSFUL, result.error_string
        # the robot at rest in the motion's last pose, past the other recording's end of the
        # motion (their difference ends within the result's goal time tolerance, 1 s)
        client.wait_until(client.now() + SETTLE)


@pytest.fixture(scope="module")
def bags(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The simulation's bag, then the emulated robot's (never both graphs at once). The simulation
    runs in lockstep, the client one of its participants: held at its first state until the
    recorder listens, then as fast as the graph allows; its recording is the same motion by the
    robot's clock, without the robot seconds a real-time simulation ran while the graph came up
    (they were half its bag). The emulated bus runs in real time, as a robot does."""
    folder = tmp_path_factory.mktemp("compare")
    sim, real = folder / "sim", folder / "real"
    record_motion(sim_nodes(ROBOT, lockstep=True, participants=(CLIENT,)), sim, folder / "sim_logs",
                  lockstep=True)
    with emulator_process(ROBOT) as port:
        record_motion(on_emulated_bus(real_nodes(ROBOT, port=port)), real, folder / "real_logs")
    return sim, real


def humanoid_compare(*args: str | Path) -> subprocess.CompletedProcess:
    return entry_point("compare", *args)


# -- the independent computation: the bags read with rosbags, the rule applied with numpy -----
@dataclasses.dataclass
class Recording:
    stamps: np.ndarray  # joint_states stamps (s)
    positions: dict[str, np.ndarray]  # joint -> positions at the stamps (NaN: stale)
    goals: int  # follow_joint_trajectory goals
    start: float  # the trajectory's start: first feedback's stamp minus its desired time from start (s)
    commands: int  # joint_commands and joint_trajectory messages


@functools.cache
def read(bag: Path) -> Recording:
    """The bag's figures for the independent computation (read once per bag: a module's tests
    read the two recorded bags several times, and a bag does not change once written)."""
    action = "/follow_joint_trajectory/_action"
    _connections, messages = read_bag(bag, ["/joint_states", f"{action}/status", f"{action}/feedback",
                                             "/joint_commands", "/joint_trajectory"])
    stamps = [msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec for msg in messages["/joint_states"]]
    rows = [dict(zip(msg.name, msg.position, strict=True)) for msg in messages["/joint_states"]]
    goals = {bytes(status.goal_info.goal_id.uuid) for msg in messages[f"{action}/status"] for status in msg.status_list}
    starts = [msg.feedback.header.stamp.sec + 1e-9 * msg.feedback.header.stamp.nanosec
              - msg.feedback.desired.time_from_start.sec - 1e-9 * msg.feedback.desired.time_from_start.nanosec
              for msg in messages[f"{action}/feedback"]]
    commands = len(messages["/joint_commands"]) + len(messages["/joint_trajectory"])
    positions = {name: np.array([row.get(name, math.nan) for row in rows]) for name in rows[0]}
    return Recording(np.array(stamps), positions, len(goals), starts[0] if starts else math.nan, commands)


def resample(stamps: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Linear interpolation; NaN where a neighbouring reading is NaN (a gap is not bridged)."""
    result = np.interp(at, stamps, np.nan_to_num(values))
    right = np.clip(np.searchsorted(stamps, at), 1, len(stamps) - 1)
    result[~(np.isfinite(values[right]) & np.isfinite(values[right - 1]))] = math.nan
    return result


def period(stamps: np.ndarray) -> float:
    """The median interval between joint_states, its intervals taken to the microsecond (s)."""
    return float(np.median(np.round(np.diff(stamps), 6)))


def expected_comparison(a: Recording, b: Recording) -> dict[str, Any]:
    """Per joint and in total: RMS, max and end difference (rad) of B − A on the common time base."""
    start_a, start_b = a.start, b.start
    step = max(period(a.stamps), period(b.stamps))
    first = max(0.0, a.stamps[0] - start_a, b.stamps[0] - start_b)
    last = min(a.stamps[-1] - start_a, b.stamps[-1] - start_b)
    times = first + step * np.arange(math.floor((last - first) / step + 1e-9) + 1)
    joints, everything, ends = {}, [], []
    for name, values in a.positions.items():
        difference = (resample(b.stamps, b.positions[name], times + start_b)
                      - resample(a.stamps, values, times + start_a))
        known = difference[np.isfinite(difference)]
        joints[name] = {"rms": math.sqrt(np.mean(known ** 2)), "max": np.max(np.abs(known)),
                        "end": known[-1], "samples": len(known), "gaps": len(difference) - len(known),
                        "gap_times": times[~np.isfinite(difference)]}
        everything.append(known)
        ends.append(known[-1])
    everything = np.concatenate(everything)
    return {"joints": joints, "rms": math.sqrt(np.mean(everything ** 2)), "max": np.max(np.abs(everything)),
            "end_rms": math.sqrt(np.mean(np.square(ends))), "samples": len(times), "window": (times[0], times[-1]),
            "offset": start_b - start_a}


def gaps_context(name: str, values: dict[str, Any], a: Recording, b: Recording) -> str:
    """What a disagreement on a joint's gaps needs to be understood: the aligned times of the
    reference's gaps and of each recording's unknown readings, and the window's ends."""
    def unknown(recording: Recording) -> list[float]:
        return [round(t - recording.start, 7) for t in recording.stamps[np.isnan(recording.positions[name])]]

    return (f"{name}: gaps here at {[round(t, 7) for t in values['gap_times']]}; unknown readings of A at "
            f"{unknown(a)}, of B at {unknown(b)}; A from {a.stamps[0] - a.start:.7f} to {a.stamps[-1] - a.start:.7f}, "
            f"B from {b.stamps[0] - b.start:.7f} to {b.stamps[-1] - b.start:.7f} (aligned s)")


# -- the comparison ------------------------------------------------------------------------
def test_compare_matches_the_figures_computed_from_the_bags(bags: tuple[Path, Path], tmp_path: Path) -> None:
    sim, real = bags
    a, b = read(sim), read(real)
    # one follow_joint_trajectory goal in each bag (the motion's), and none of the rule's other
    # starts: the start of that goal's trajectory is the experiment's
    assert a.goals == b.goals == 1 and a.commands == b.commands == 0
    expected = expected_comparison(a, b)

    result = humanoid_compare(sim, real, "--json", "--out", tmp_path / "figures")
    assert result.returncode == 0, result.stderr
    assert "humanoid compare: reading A" in result.stderr  # progress on stderr, JSON alone on stdout
    report = json.loads(result.stdout)

    assert report["robot"] == ROBOT
    for side in ("a", "b"):
        assert report[side]["start"]["source"] == "first follow_joint_trajectory goal's trajectory start (feedback)"
    assert report["alignment"]["b_minus_a_s"] == pytest.approx(expected["offset"] - (b.stamps[0] - a.stamps[0]),
                                                               abs=1e-6)
    assert report["alignment"]["samples"] == expected["samples"]
    assert report["alignment"]["window_s"] == pytest.approx(expected["window"], abs=1e-6)
    assert set(report["joints"]) == set(a.positions)
    # to a microradian: a stamp of the computer's clock (1.8e9 s) held in a float is exact to 0.2 µs
    for name, values in expected["joints"].items():
        got = report["joints"][name]
        assert (got["samples"], got["gaps"]) == (values["samples"], values["gaps"]), gaps_context(name, values, a, b)
        for key in ("rms", "max", "end"):
            assert got[f"{key}_difference_rad"] == pytest.approx(values[key], abs=1e-6), (name, key)
    total = report["total"]
    assert total["rms_difference_rad"] == pytest.approx(expected["rms"], abs=1e-6)
    assert total["max_difference_rad"] == pytest.approx(expected["max"], abs=1e-6)
    assert total["end_rms_difference_rad"] == pytest.approx(expected["end_rms"], abs=1e-6)
    # the same motion: both end in its last pose, within the interfaces' goal tolerance (0.05 rad) each
    assert total["end_max_difference_rad"] < 2 * GOAL_TOLERANCE
    # each side's timing, from its own stamps
    for side, recording in (("a", a), ("b", b)):
        assert report[side]["joint_states"]["interval_ms_median"] == pytest.approx(
            1000.0 * np.median(np.diff(recording.stamps)), abs=1e-3)
        assert report[side]["stale_readings"] == sum(int(np.isnan(v).sum()) for v in recording.positions.values())
    assert report["a"]["fell"] is False and report["b"]["fell"] is None  # the emulated bus has no /fallen
    assert report["a"]["joint_states"]["delay_ms_median"] is None  # simulated clock: not measurable
    assert report["b"]["joint_states"]["delay_ms_median"] is not None
    assert report["balance"] is not None and report["balance"]["relative_to_start"]  # world vs a sole's frame

    names = {Path(p).name for p in report["figures"]}
    assert {"compare_summary.png", "compare_rates.png", "compare_balance.png"} <= names
    assert sum(name.startswith("compare_joints_") for name in names) >= 3
    for path in report["figures"]:
        image = imread(path)[:, :, :3]
        ink = np.any(image < 0.9, axis=2).mean()
        assert ink > 0.02, f"{path} is nearly blank ({ink:.3f})"


def test_compare_prints_a_table_without_json(bags: tuple[Path, Path]) -> None:
    """The table alone (the figures, written and named, are the JSON test's: drawing them
    again here cost a run of matplotlib, 5 CPU-s)."""
    sim, real = bags
    result = humanoid_compare(sim, real, "--no-figures")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["joint", "RMS", "diff"], result.stdout  # the table first, not JSON
    rows = {line.split()[0] for line in lines[1:] if line.strip()}
    assert set(read(sim).positions) <= rows, result.stdout  # a row per joint ...
    assert "all joints" in result.stdout  # ... and the total
    assert ".png" not in result.stdout and not (sim / f"compare_{real.name}").exists()


def test_stale_readings_stay_gaps(bags: tuple[Path, Path], tmp_path: Path) -> None:
    """A silent servo's NaN readings are not bridged: the samples next to them are unknown,
    counted as gaps, and left out of the figures."""
    sim, real = bags
    # in the middle of the compared window (the bag's middle reading lay at the window's end
    # once: the emulated robot's graph came up slowly beside CPU hogs, and its bag began long
    # before the motion)
    first, last = expected_comparison(read(sim), read(real))["window"]
    middle = 1 + int(np.searchsorted(read(real).stamps, read(real).start + (first + last) / 2))
    seen = [0]

    def silent_elbow(topic: str, message: Any) -> Any:
        if topic == "/joint_states":
            seen[0] += 1
            if middle <= seen[0] < middle + STALE_COUNT:
                position = [math.nan if n == "r_elbow" else v for n, v in zip(message.name, message.position,
                                                                                strict=True)]
                return dataclasses.replace(message, position=np.array(position))
        return message

    stale = derived_bag(real, tmp_path / "stale", silent_elbow)
    a, b = read(sim), read(stale)
    assert int(np.isnan(b.positions["r_elbow"]).sum()) == STALE_COUNT
    expected = expected_comparison(a, b)
    result = humanoid_compare(sim, stale, "--json", "--no-figures")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    elbow, want = report["joints"]["r_elbow"], expected["joints"]["r_elbow"]
    assert elbow["stale_b"] == report["b"]["stale_readings"] == STALE_COUNT
    assert want["gaps"] >= 1 and (elbow["gaps"], elbow["samples"]) == (want["gaps"], want["samples"])
    assert report["total"]["gaps"] == want["gaps"]
    assert elbow["rms_difference_rad"] == pytest.approx(want["rms"], abs=1e-6)
    assert elbow["max_difference_rad"] == pytest.approx(want["max"], abs=1e-6)


# -- known answers: copies of a bag changed in one known way ------------------------------------
#: What a known answer is met to (rad): float rounding of the resampling, nothing more.
EXACT = 1e-9


def differences(report: dict[str, Any]) -> dict[str, tuple[float, float, float]]:
    return {name: (j["rms_difference_rad"], j["max_difference_rad"], j["end_difference_rad"])
            for name, j in report["joints"].items()}


def test_one_joint_moved_by_a_known_angle_gives_exactly_that_difference(bags: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    sim, _real = bags

    def elbow_up(topic: str, message: Any) -> Any:
        if topic == "/joint_states":
            return dataclasses.replace(message, position=np.array(
                [v + 0.01 if n == "r_elbow" else v for n, v in zip(message.name, message.position, strict=True)]))
        return message

    moved = derived_bag(sim, tmp_path / "elbow_up", elbow_up)
    result = humanoid_compare(sim, moved, "--json", "--no-figures")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    for name, (rms, largest, end) in differences(report).items():
        want = 0.01 if name == "r_elbow" else 0.0
        assert (rms, largest, end) == pytest.approx((want, want, want), abs=EXACT), name
    assert report["total"]["max_difference_joint"] == "r_elbow"
    # the numbers alone: no figure written, not even the default folder
    assert report["figures"] == [] and not (sim / f"compare_{moved.name}").exists()


def test_a_recording_shifted_in_time_aligns_on_its_start_to_no_difference(bags: tuple[Path, Path],
                                                                           tmp_path: Path) -> None:
    """The same recording, every stamp 7 s later (the robot started later): aligned on the
    experiment's start (the first goal's trajectory start), nothing differs; aligned by hand
    (``--offset``) on a copy that lost its first 0.1 s, nothing differs either, and a wrong
    offset shows the motion's 0.1 s apart."""
    sim, _real = bags
    later = later_copy(sim, tmp_path / "later", 7)
    report = json.loads(humanoid_compare(sim, later, "--json", "--no-figures").stdout)
    assert report["b"]["start"]["source"] == report["a"]["start"]["source"]
    assert report["total"]["max_difference_rad"] == pytest.approx(0.0, abs=EXACT)

    first = read(sim).stamps[0]
    cut = round(first + 0.1, 6)
    trimmed = derived_bag(sim, tmp_path / "trimmed", lambda topic, message: None if topic == "/joint_states" and (
        message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec) < cut - 1e-7 else message)
    lost = read(trimmed).stamps[0] - first
    assert lost == pytest.approx(0.1, abs=0.011)
    by_hand = json.loads(humanoid_compare(trimmed, sim, "--offset", f"{lost:.6f}", "--json", "--no-figures").stdout)
    assert by_hand["total"]["max_difference_rad"] == pytest.approx(0.0, abs=EXACT)
    wrong = json.loads(humanoid_compare(trimmed, sim, "--offset", "0", "--json", "--no-figures").stdout)
    assert wrong["total"]["max_difference_rad"] > 0.01  # the wave, 0.1 s apart


# -- the refusals: one line on stderr, exit status 2 -----------------------------------------
#: What the refused copies keep of a bag: the robot and its joints, what a refusal is about (a
#: bag of another robot, or without a common joint, all the same); the other topics, copied,
#: cost a second of CPU per copy for nothing the refusal reads.
REFUSAL_TOPICS = ("/robot_description", "/joint_states")


def refusal(*args: str | Path) -> str:
    result = humanoid_compare(*args)
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # refused before any work (and its progress lines)
    return lines[0]


def test_bags_of_different_robots_are_refused(bags: tuple[Path, Path], tmp_path: Path) -> None:
    sim, _real = bags

    def hoap2(topic: str, message: Any) -> Any:
        if topic == "/robot_description":
            return dataclasses.replace(message, data=message.data.replace('name="bioloid"', 'name="hoap2"', 1))
        return message

    other = derived_bag(sim, tmp_path / "other_robot", hoap2, topics=REFUSAL_TOPICS)
    line = refusal(sim, other)
    assert line == (f"humanoid: error: {sim} is a recording of bioloid and {other} of hoap2: "
                    "only recordings of one robot compare")


def test_bags_without_a_common_joint_are_refused(bags: tuple[Path, Path], tmp_path: Path) -> None:
    sim, real = bags

    def renamed(topic: str, message: Any) -> Any:
        if topic == "/joint_states":
            return dataclasses.replace(message, name=[f"other_{n}" for n in message.name])
        if topic == "/robot_description":
            return dataclasses.replace(message, data="")
        return message

    other = derived_bag(sim, tmp_path / "renamed", renamed, topics=REFUSAL_TOPICS)
    line = refusal(real, other)
    assert line.startswith(f"humanoid: error: {real} and {other} have no joint in common (")


def test_what_is_not_a_bag_is_refused(bags: tuple[Path, Path], tmp_path: Path) -> None:
    sim, _real = bags
    empty = tmp_path / "empty"
    empty.mkdir()
    assert refusal(sim, empty) == f"humanoid: error: {empty} is not a bag (no metadata.yaml)"
    missing = tmp_path / "missing"
    assert refusal(missing, sim) == f"humanoid: error: {missing} is not a bag (no metadata.yaml)"
    assert refusal(sim, sim, "--offset", "nan").startswith("humanoid: error: argument --offset")
    assert "not allowed with argument --out" in refusal(sim, sim, "--out", sim / "x", "--no-figures")
