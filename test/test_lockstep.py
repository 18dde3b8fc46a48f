"""Lockstep: the simulation waits for its controllers, so the same launch and the same
commands give bit-identical joint_states, even beside two CPU hogs; a participant that
stops answering pauses the simulation and is reported by name.

A short HOAP-2 walk (the walk controller, the trajectory generator and the test's client in
lockstep) is run twice, the second time with two processes taking both cores; every
joint_states message up to a fixed simulated time is compared, bit for bit.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from humanoid_bringup.graphs import sim_nodes
from humanoid_control.processes.node_graph import Graph
from humanoid_control.ros.robot_client import RobotClient, poll_until
from humanoid_experiments.walk import walk

pytestmark = pytest.mark.system

ROBOT = "hoap2"
CLIENT = "lockstep_test"
DISTANCE = 0.1  # m: two steps
START, END = 0.6, 4.0  # s of simulated time compared: from the walk's start (goal at 0.5 s) on
PATIENCE = 300.0


def graph():
    return sim_nodes(ROBOT, balance_monitor=False, self_collision_checker=False, lockstep=True,
                     participants=(CLIENT,))


def walked_states(log_dir) -> list[tuple]:
    """Every joint_states message of a short walk, up to END s of simulated time."""
    with Graph(graph(), log_dir=log_dir), RobotClient(CLIENT, lockstep=True) as client:
        client.start_recording()
        report = walk(client, ROBOT, DISTANCE, timeout=PATIENCE)
        assert report.error_code == 0 and not report.fell, report.text()
        with client.lockstep.paused_at(END, PATIENCE):
            recorded = client.stop_recording()
    states = {}  # by stamp: a state the simulation sent again while it waited is the same state
    for m in recorded:
        states.setdefault((m.header.stamp.sec, m.header.stamp.nanosec),
                          (m.header.stamp.sec, m.header.stamp.nanosec, tuple(m.position), tuple(m.velocity),
                           tuple(m.effort)))
    return [s for stamp, s in sorted(states.items()) if START <= stamp[0] + stamp[1] * 1e-9 <= END]


def test_the_same_walk_gives_bit_identical_joint_states_beside_cpu_hogs(tmp_path, cpu_hogs):
    first = walked_states(tmp_path / "first")
    with cpu_hogs(2):
        second = walked_states(tmp_path / "second")
    assert len(first) == len(second) >= 330  # every state of 3.4 s at 100 Hz, in both runs
    assert [(s[0], s[1]) for s in first] == [(s[0], s[1]) for s in second]
    differing = [a[:2] for a, b in zip(first, second, strict=True) if a != b]
    assert not differing, (f"{len(differing)} of {len(first)} states differ, the first at "
                           f"t = {differing[0][0] + differing[0][1] * 1e-9:.3f} s")
    moved = np.ptp(np.array([s[2] for s in first]), axis=0)
    assert np.max(moved) > 0.1, "the robot did not walk"


def test_a_silent_participant_pauses_the_simulation_and_is_named(tmp_path):
    nodes = sim_nodes(ROBOT, balance_monitor=False, self_collision_checker=False, walk_controller=False,
                      lockstep=True, participants=(CLIENT, "a_controller_that_never_answers"))
    for spec in nodes:
        if spec.name == "humanoid_sim":
            spec.parameters["lockstep_timeout"] = 1.0
    with Graph(nodes, log_dir=tmp_path) as running, RobotClient(CLIENT, lockstep=True) as client:
        client.lockstep.go()  # the test's client answers every state: only the silent one holds the loop
        first = client.wait_for_joint_states(PATIENCE)

        def reports() -> int:
            return len(re.findall(r"for [a-z_, ]*a_controller_that_never_answers[a-z_, ]* to answer",
                                  running.log_text("humanoid_sim")))

        poll_until(lambda: reports() >= 2, "the silent participant named twice in the simulator's log", PATIENCE)
        latest = client.wait_for_joint_states(PATIENCE)
        assert latest.header.stamp == first.header.stamp  # robot time did not move meanwhile


def test_a_client_that_leaves_while_it_holds_the_simulation_lets_it_run_on(tmp_path):
    """A client that only watches once it has acted (``humanoid walk``, ``humanoid bench
    lockstep``) leaves: the simulation, held by it, runs on without its answers."""
    nodes = sim_nodes(ROBOT, balance_monitor=False, self_collision_checker=False, walk_controller=False,
                      lockstep=True, participants=(CLIENT,))
    with Graph(nodes, log_dir=tmp_path), RobotClient(CLIENT, lockstep=True) as client:
        held = client.lockstep.run_to(0.3, PATIENCE)
        client.leave_lockstep()
        client.wait_until(held + 1.0, timeout=PATIENCE)  # the client answers nothing any more
        with pytest.raises(RuntimeError, match="has left the lockstep"):
            client.lockstep.run_to(held + 2.0, PATIENCE)


def test_what_the_simulation_sends_again_while_it_waits_is_what_it_first_sent(tmp_path):
    """A waiting simulation sends its state again (a participant that started late gets it);
    its physics has already stepped past that state (docs/lockstep.md, "The gate"), yet the
    ground truth sent again is the one measured at the state, as first sent."""
    from geometry_msgs.msg import PoseStamped, TwistStamped

    poses, twists = [], []
    nodes = sim_nodes(ROBOT, balance_monitor=False, self_collision_checker=False, walk_controller=False,
                      lockstep=True, participants=(CLIENT,))
    with Graph(nodes, log_dir=tmp_path), RobotClient(CLIENT, lockstep=True) as client:
        client.node.create_subscription(PoseStamped, "ground_truth/base_pose", poses.append, 1000)
        client.node.create_subscription(TwistStamped, "ground_truth/base_twist", twists.append, 1000)
        client.wait_for_base_pose(PATIENCE)
        for stamp in (0.30, 0.31):  # one of two states carries the ground truth (50 Hz of 100)
            held = client.lockstep.run_to(stamp, PATIENCE)
            sent = len(poses)
            poll_until(lambda sent=sent: len(poses) >= sent + 2, f"the ground truth sent again at t = {held:.3f} s",
                       PATIENCE)  # sent again every 0.25 s while the client holds the simulation
        client.lockstep.go()

    def stamp(m) -> tuple[int, int]:
        return m.header.stamp.sec, m.header.stamp.nanosec

    def by_stamp(messages, fields) -> dict[tuple[int, int], set]:
        found: dict[tuple[int, int], set] = {}
        for m in list(messages):
            found.setdefault(stamp(m), set()).add(fields(m))
        return found

    pose = by_stamp(poses, lambda m: (m.pose.position.x, m.pose.position.y, m.pose.position.z,
                                      m.pose.orientation.x, m.pose.orientation.y, m.pose.orientation.z,
                                      m.pose.orientation.w))
    twist = by_stamp(twists, lambda m: (m.twist.linear.x, m.twist.linear.y, m.twist.linear.z,
                                        m.twist.angular.x, m.twist.angular.y, m.twist.angular.z))
    assert max(Counter(stamp(m) for m in poses).values()) > 1, "no ground truth was sent twice"
    assert all(len(values) == 1 for values in pose.values()), {s: v for s, v in pose.items() if len(v) > 1}
    assert all(len(values) == 1 for values in twist.values()), {s: v for s, v in twist.items() if len(v) > 1}
