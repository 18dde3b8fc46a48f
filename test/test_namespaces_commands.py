"""The commands that start or drive a robot, in a namespace (issue 39 item 2).

``humanoid real --robot bioloid_quadruped --emulate --namespace r``, the command a user runs,
in a process of its own: the hardware graph on the emulated bus serves ``/r/joint_states`` from
its driver's loop, and puts nothing of the robot in the root namespace (only ROS's own topics
and the global ``/tf``). Beside it, ``humanoid walk --robot bioloid --namespace a`` (through the
entry point, in this process) starts its own simulated robot in ``/a``, walks it there in
lockstep and leaves the robot in ``/r`` standing as it stood; then ``humanoid postures --real
--namespace r`` drives the robot in ``/r`` (a scripted operator). Plus every command that takes
``--namespace`` refusing an invalid one, and the commands that cannot honour it refusing it,
in one line.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import yaml
from cli_entry import entry_point
from sensor_msgs.msg import JointState
from system_support import PATIENCE

from humanoid_control.ros import RobotClient, poll_until
from humanoid_experiments.postures import protocol_path

#: The robot in /r (on the emulated bus) and the one the walk starts in /a.
ROBOT, WALKER = "bioloid_quadruped", "bioloid"
#: Topics outside the robot's namespace that its graph may have (ROS's own, and /tf).
GLOBAL_TOPICS = {"/tf", "/rosout", "/parameter_events"}
#: rad: an emulated servo holding its goal reads back this close to it (the AX-12's step is 5 mrad).
STILL = 0.006
#: m: the walk's goal, and how close to it the walk must end (its own test's 20 %).
DISTANCE, WITHIN = 0.1, 0.02
#: The postures protocol's test 1 in steps of 2 deg with short holds (each step settles 0.5 s:
#: with 0.25 s, a loaded run's joint came within HELD_DEG of step 2 only 0.156 s before the end).
STEP_DEG, SHORT = 2.0, {"step": 2.0, "step_time": 0.25, "settle_time": 0.5, "start_settle_time": 0.25}
POSTURES_JOINT = "fl_hip_pitch"
#: deg: a reading this close to a step's angle is the joint held there (an AX-12 reads in 0.29 deg);
#: s of robot time held there (a step settles 0.5 s; the move from home to the start pose at
#: 10 deg/s passes through the window in 0.08 s).
HELD_DEG, HOLD_TIME = 0.4, 0.2


@pytest.fixture(scope="module")
def robot_in_r(tmp_path_factory):
    """``humanoid real --robot bioloid_quadruped --emulate --namespace r`` and a client of it in ``/r``."""
    log = tmp_path_factory.mktemp("real_in_r") / "real.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "humanoid_bringup.cli", "real", "--robot", ROBOT,
                                    "--emulate", "--namespace", "r"], stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    client = None
    try:
        client = RobotClient("namespaces_commands_test", namespace="r")
        poll_until(lambda: client.joint_state is not None or process.poll() is not None,
                   "/r/joint_states from humanoid real --namespace r", PATIENCE)
        assert process.poll() is None, f"humanoid real ended ({process.returncode}): {log.read_text()[-3000:]}"
        yield client
    except BaseException:
        print(f"----- humanoid real --namespace r -----\n{log.read_text()[-4000:]}")
        raise
    finally:
        if client is not None:
            client.close()
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                raise


@pytest.mark.system
def test_the_hardware_graph_runs_under_its_namespace(robot_in_r):
    """``/r/joint_states`` comes from the driver's loop in ``/r``; every node of the graph is in
    ``/r``, and every topic the domain knows is under ``/r`` but ROS's global ones."""
    node = robot_in_r.node

    def publishers() -> list[tuple[str, str]] | None:  # once discovery has named their nodes
        found = [(p.node_namespace, p.node_name) for p in node.get_publishers_info_by_topic("/r/joint_states")]
        return found if found and not any("_UNKNOWN_" in name for _, name in found) else None

    assert poll_until(publishers, "/r/joint_states's publishers named", PATIENCE) == [("/r", "humanoid_hw_loop")]
    # (humanoid real's own look for a robot already in /r, a node in the root namespace, ended
    # before the graph started; discovery may still list it)
    graph_nodes = {"humanoid_hw", "control_container", "trajectory_generator", "gait_controller", "fall_manager"}
    # the first /r/joint_states come from the loop: the graph's other nodes may be discovered later
    poll_until(lambda: graph_nodes <= {name for name, _ in node.get_node_names_and_namespaces()},
               "the graph's nodes discovered", PATIENCE)
    elsewhere = {(namespace, name) for name, namespace in node.get_node_names_and_namespaces() if namespace != "/r"}
    assert elsewhere <= {("/", "humanoid_namespace_probe")}, elsewhere
    outside = {topic for topic, _types in node.get_topic_names_and_types()
               if not topic.startswith("/r/") and topic not in GLOBAL_TOPICS}
    assert not outside, f"topics outside /r: {sorted(outside)}"


@pytest.mark.system
def test_a_walk_in_its_own_namespace_leaves_the_robot_in_r_standing(robot_in_r):
    """``humanoid walk --namespace a`` beside the robot in ``/r``: its robot publishes in ``/a``
    (nothing in the root namespace) and walks there; ``/r``'s joints do not move meanwhile."""
    node = robot_in_r.node
    heard = {"/a/joint_states": 0, "/joint_states": 0}
    lock = threading.Lock()

    def counter(topic):
        def count(_msg: JointState) -> None:
            with lock:
                heard[topic] += 1
        return count

    subscriptions = [node.create_subscription(JointState, topic, counter(topic), 10) for topic in heard]
    robot_in_r.start_recording()
    try:
        result = entry_point("walk", "--robot", WALKER, "--distance", str(DISTANCE), "--namespace", "a", "--json")
    finally:
        recorded = robot_in_r.stop_recording()
        with robot_in_r.between_turns():
            for subscription in subscriptions:
                node.destroy_subscription(subscription)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["distance_m"] == pytest.approx(DISTANCE, abs=WITHIN) and not report["fell"], json.dumps(report)
    with lock:
        assert heard["/a/joint_states"] > 0 and heard["/joint_states"] == 0, heard
    assert len(recorded) > 10, "the robot in /r stopped publishing while a walked"
    # (a reading the loaded emulator missed is NaN: each joint from its first and its other readings)
    positions = np.array([msg.position for msg in recorded])
    assert np.all(np.isfinite(positions).any(axis=0)), "a joint of /r never read"
    first = np.array([column[np.isfinite(column)][0] for column in positions.T])
    moved = np.nanmax(np.abs(positions - first), axis=0)
    assert np.all(moved < STILL), dict(zip(recorded[0].name, moved.round(4), strict=True))


@pytest.mark.system
def test_benchmarks_run_in_their_namespace_and_refuse_a_taken_one(robot_in_r):
    """``bench sim --namespace r`` beside the robot in ``/r``: refused in one line before
    anything starts; ``bench balance --namespace a``: its balance monitor and the joint_states
    it is fed are both in ``/a`` (it answers them), beside ``/r``."""
    taken = entry_point("bench", "sim", "--robot", WALKER, "--namespace", "r", "--seconds", "0.5", "--rounds", "1")
    assert taken.returncode == 2 and taken.stderr.strip().count("\n") == 0, taken.stderr
    assert "a robot already runs in namespace /r" in taken.stderr, taken.stderr
    # (a process of its own, as users run it: the benchmark initialises rclpy's default context)
    result = subprocess.run(["humanoid", "bench", "balance", "--robot", WALKER, "--namespace", "a", "--seconds", "0.5",
                             "--rate", "100", "--configurations", "10", "--rounds", "1", "--json"],
                            capture_output=True, text=True, timeout=PATIENCE)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["answered_ratio"] >= 0.9, result.stdout


@pytest.mark.system
def test_postures_real_drives_the_robot_in_its_namespace(robot_in_r, tmp_path):
    """``humanoid postures --real --namespace r``: the scripted operator's ``fell`` at step 2
    is the limit, and it was /r's joint that the command stepped there."""
    data = yaml.safe_load(protocol_path(ROBOT).read_text())
    data["parameters"].update(SHORT)
    protocol, answers, out = tmp_path / "protocol.yaml", tmp_path / "answers.txt", tmp_path / "results.json"
    protocol.write_text(yaml.safe_dump(data))
    answers.write_text("ready\nstood\nfell\n")
    robot_in_r.start_recording()
    try:
        result = entry_point("postures", "--robot", ROBOT, "--real", "--namespace", "r", "--tests", "1",
                             "--protocol", protocol, "--answers", answers, "--json", out)
    finally:
        recorded = robot_in_r.stop_recording()
    assert result.returncode == 0, result.stderr[-3000:]
    (entry,) = json.loads(out.read_text())
    assert entry["joints"] == [POSTURES_JOINT]
    assert entry["stopped_by"] == "the operator saw it fall at step 2: +4.00 deg", entry
    assert held_at(recorded, POSTURES_JOINT, 2 * STEP_DEG) >= HOLD_TIME, "/r's joint was not held at step 2"


def held_at(states, joint: str, degrees: float) -> float:
    """Robot seconds ``joint`` stayed within HELD_DEG of ``degrees`` at a stretch, the longest."""
    from humanoid_control.ros import seconds

    longest, since = 0.0, None
    for state in states:
        value = math.degrees(dict(zip(state.name, state.position, strict=True))[joint])
        if not math.isfinite(value):
            continue  # a reading the bus missed
        stamp = seconds(state.header.stamp)
        if abs(value - degrees) <= HELD_DEG:
            since = stamp if since is None else since
            longest = max(longest, stamp - since)
        else:
            since = None
    return longest


# -- bad input ----------------------------------------------------------------------------------------
#: Every command that starts or drives a robot, or talks to one, and takes --namespace.
COMMANDS = [["sim", "--robot", ROBOT], ["real", "--robot", ROBOT, "--emulate"], ["demo"], ["push", "--robot", WALKER],
            ["getup", "--robot", WALKER], ["walk", "--robot", WALKER, "--distance", "0.1"],
            ["postures", "--robot", "hoap2"], ["postures", "--robot", "hoap2", "--real"], ["pose", "--robot", ROBOT],
            ["play-gait", "trot"], ["view"], ["record", "--output", "/nonexistent/bag"], ["bench", "lockstep"],
            ["bench", "graph", "--robot", ROBOT], ["bench", "fall-protection"], ["bench", "sim"], ["bench", "balance"],
            ["bench", "replay", "--robot", WALKER],
            ["balance-poses", "--robot", WALKER, "--poses", "poses.csv", "--json", "-", "--simulate"]]


#: Invalid namespaces and the words of rcl's reason for each. Every command validates through one
#: function (``normalized_namespace``, whose reasons test_namespaces.py checks one by one): each
#: command is tried with one of them in turn, so that each command and each reason is met once
#: (every command with every reason was 90 runs of the entry point, 100 s of the suite).
INVALID = [("2robots", "must not have a token that starts with a number"), ("a-b", "characters other than"),
           ("a/", "must not end with"), ("a//b", "repeated"), ("x" * 300, "exceed")]


@pytest.mark.parametrize(("verb", "given", "reason"),
                         [(verb, *INVALID[k % len(INVALID)]) for k, verb in enumerate(COMMANDS)],
                         ids=[" ".join(verb) for verb in COMMANDS])
def test_an_invalid_namespace_is_refused_in_one_line(verb, given, reason):
    result = entry_point(*verb, "--namespace", given)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert f"invalid namespace {given!r}" in result.stderr and reason in result.stderr, result.stderr


@pytest.mark.parametrize(("verb", "words"), [
    (["gaits"], "gaits runs its simulations in this process, without ROS"),
    (["postures", "--robot", "hoap2", "--experiments", "reference"], "--namespace cannot go with it"),
    (["postures", "--compare", "a.json", "b.json"], "--namespace cannot go with it"),
    (["balance-poses", "--robot", WALKER, "--poses", "poses.csv", "--json", "-"], "only with --simulate")])
def test_a_command_that_cannot_honour_a_namespace_refuses_it_in_one_line(verb, words):
    result = entry_point(*verb, "--namespace", "a")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert words in result.stderr, result.stderr
