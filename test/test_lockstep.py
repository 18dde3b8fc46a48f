"""Lockstep: the simulation waits for its controllers, so the same launch and the same
commands give bit-identical joint_states, even beside two CPU hogs; a participant that
stops answering pauses the simulation and is reported by name.

A short HOAP-2 walk (the walk controller, the trajectory generator and the test's client in
lockstep) is run twice, the second time with two processes taking both cores; every
joint_states message up to a fixed simulated time is compared, bit for bit.
"""

from __future__ import annotations

import re

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
