"""Lockstep: the simulation waits for its controllers, so the same launch and the same
commands give bit-identical states, even beside two CPU hogs; a participant that stops
answering pauses the simulation and is reported by name.

A short HOAP-2 walk on the default graph (every control node in its container, the
observers included) is run twice as ``humanoid walk`` runs it: the test's client holds the
simulation until the walk goal is accepted, then leaves the lockstep and only watches. The
second run has two processes taking both cores. Every robot_state up to a fixed simulated
time that both runs' clients received (joint states, IMU, feet, the simulator's ground truth;
a state sent again while the simulation waited must be the state first sent; a client may
lack :data:`MISSED` states) and every command the walk controller sent are compared, bit for
bit.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import numpy as np
import pytest
from loop_processes import loop_process, thread_cpus
from trajectory_msgs.msg import JointTrajectory

from humanoid_control.nodes import with_node_parameters
from humanoid_control.ros import RobotClient, poll_until, robot_state
from humanoid_core.processes import Graph
from humanoid_experiments.walk import walk
from humanoid_interfaces.msg import RobotState
from humanoid_sim import NODE_NAME as SIM_NODE
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "hoap2"
CLIENT = "lockstep_test"
DISTANCE = 0.1  # m: two steps
START, END = 0.6, 4.0  # s of simulated time compared: from the walk's start (goal at 0.5 s) on
PATIENCE = 300.0


#: States of the 340 compared that one run's client may lack. The client leaves the lockstep
#: once its goal is accepted, as ``humanoid walk`` does, and then has no repair beyond the
#: middleware's: beside two CPU hogs it lacked one state (2.976 s, 3.476 s) in 2 of 3 suite
#: runs, though the graph, in lockstep, had that state (the simulation waits for its answer).
#: A plain subscription of its own beside the client's feed lacked it too (3.476 s again, in 1
#: of 12 runs of this test beside two hogs): not the feed. Not traced further
#: (docs/ros_and_dds.md); every state both runs have is compared.
MISSED = 2


#: s (wall) a silent participant is named after on the held simulation (the default 5 s would
#: keep the test waiting 10 s for two reports; the gate's behaviour does not depend on it).
LOCKSTEP_TIMEOUT = 1.0


def graph(lockstep_timeout: float | None = None):
    # the fast physics profile (docs/physics_profiles.md): the property is the gate's determinism,
    # not the physics, and the gate holds the simulation the same way whatever its physics step
    nodes = sim_nodes(ROBOT, lockstep=True, participants=(CLIENT,), physics_profile="fast")
    if lockstep_timeout is None:
        return nodes
    return with_node_parameters(nodes, SIM_NODE, {"lockstep_timeout": lockstep_timeout})


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def state_fields(m: RobotState) -> tuple:
    """Everything a state carries, as plain values (messages compare by identity of arrays)."""
    js = m.joint_states
    imu = [(i.orientation.x, i.orientation.y, i.orientation.z, i.orientation.w, i.angular_velocity.x,
            i.angular_velocity.y, i.angular_velocity.z, i.linear_acceleration.x, i.linear_acceleration.y,
            i.linear_acceleration.z) for i in m.imu]
    feet = [(w.wrench.force.x, w.wrench.force.y, w.wrench.force.z, w.wrench.torque.x, w.wrench.torque.y,
             w.wrench.torque.z) for w in m.foot_wrenches]
    pose = [(p.pose.position.x, p.pose.position.y, p.pose.position.z, p.pose.orientation.x, p.pose.orientation.y,
             p.pose.orientation.z, p.pose.orientation.w) for p in m.base_pose]
    twist = [(t.twist.linear.x, t.twist.linear.y, t.twist.linear.z, t.twist.angular.x, t.twist.angular.y,
              t.twist.angular.z) for t in m.base_twist]
    return (tuple(js.name), tuple(js.position), tuple(js.velocity), tuple(js.effort), tuple(imu), tuple(feet),
            tuple(c.data for c in m.foot_contacts), tuple(pose), tuple(twist), tuple(f.data for f in m.fallen))


def command_fields(m: JointTrajectory) -> tuple:
    return (seconds(m.header.stamp), tuple(m.joint_names),
            tuple((tuple(p.positions), tuple(p.velocities), p.time_from_start.sec, p.time_from_start.nanosec)
                  for p in m.points))


def only_in_one(first: list[float], second: list[float]) -> str:
    """The stamps of one run that the other lacks (a few of each)."""
    return (f"only in the first run: {sorted(set(first) - set(second))[:10]}, only in the second: "
            f"{sorted(set(second) - set(first))[:10]}")


def commands_differ(first: list[tuple], second: list[tuple]) -> str | None:
    """What differs between two runs' commands (:func:`command_fields`), by stamp, or None
    (a short text: the lists themselves run to megabytes)."""
    if first == second:
        return None

    def how(a: tuple, b: tuple) -> str:
        if a[1] != b[1] or len(a[2]) != len(b[2]):
            return f"{len(a[2])} and {len(b[2])} points, joint names {'alike' if a[1] == b[1] else 'differ'}"
        parts = {name for p, q in zip(a[2], b[2], strict=True)
                 for name, x, y in zip(("positions", "velocities", "times"), (p[0], p[1], p[2:]), (q[0], q[1], q[2:]),
                                       strict=True) if x != y}
        return ", ".join(sorted(parts)) or "only in order"

    second_by_stamp = {c[0]: c for c in second}
    changed = [f"t = {c[0]:.3f} s ({how(c, second_by_stamp[c[0]])})" for c in first
               if c[0] in second_by_stamp and c != second_by_stamp[c[0]]]
    return (f"{len(first)} and {len(second)} commands; "
            f"{only_in_one([c[0] for c in first], [c[0] for c in second])}; {len(changed)} differ: {changed[:5]}")


def walked(log_dir) -> tuple[list[tuple], list[tuple]]:
    """Every state of a short walk up to END s of simulated time, and the walk's commands."""
    states, commands = [], []
    with Graph(graph(), log_dir=log_dir), RobotClient(CLIENT, lockstep=True) as client:
        # through the client's feed, as its own readings: a subscription of its own queued every state
        # in the executor, and a client slower than the simulation (beside the hogs, the
        # simulation running on once the client left) never got to the walk's result behind them
        client.take_readings(robot_state.TOPIC, RobotState, states.append)
        client.node.create_subscription(JointTrajectory, "joint_trajectory", commands.append, 10_000)
        report = walk(client, ROBOT, DISTANCE, timeout=PATIENCE, stay_in_lockstep=False)  # as `humanoid walk`
        assert report.error_code == 0 and not report.fell, report.text()
        poll_until(lambda: bool(states) and seconds(states[-1].header.stamp) > END,
                   f"a state past t = {END} s", PATIENCE)
        received, sent = list(states), list(commands)
    first_sent: dict[float, tuple] = {}
    for m in received:  # by stamp: the first sending of each state, and each sending again the same
        fields = state_fields(m)
        assert first_sent.setdefault(seconds(m.header.stamp), fields) == fields, \
            f"the state of t = {seconds(m.header.stamp):.3f} s was sent again changed"
    compared = [(stamp, fields) for stamp, fields in sorted(first_sent.items()) if START <= stamp <= END]
    return compared, [command_fields(m) for m in sent if seconds(m.header.stamp) <= END]


def test_the_same_walk_gives_bit_identical_states_and_commands_beside_cpu_hogs(tmp_path, cpu_hogs):
    first, first_commands = walked(tmp_path / "first")
    with cpu_hogs(2):
        second, second_commands = walked(tmp_path / "second")
    stamps = [[state[0] for state in run] for run in (first, second)]
    missed = set(stamps[0]) ^ set(stamps[1])
    assert len(missed) <= MISSED, f"{len(first)} and {len(second)} states; {only_in_one(*stamps)}"
    in_both = [dict(run) for run in (first, second)]
    common = sorted(set(in_both[0]) & set(in_both[1]))
    assert len(common) >= 330  # every state of 3.4 s at 100 Hz, in both runs
    differing = [t for t in common if in_both[0][t] != in_both[1][t]]
    assert not differing, f"{len(differing)} of {len(common)} states differ, the first at t = {differing[0]:.3f} s"
    assert sum(1 for _, fields in first if fields[7]) >= 150  # the ground truth (50 Hz) was compared too
    assert first_commands, "the walk controller sent no command"
    differ = commands_differ(first_commands, second_commands)
    assert differ is None, differ
    moved = np.ptp(np.array([fields[1] for _, fields in first]), axis=0)
    assert np.max(moved) > 0.1, "the robot did not walk"


@pytest.fixture(scope="module")
def held_simulation(tmp_path_factory):
    """One lockstep graph (the default one, the test's client its only other participant; a
    silent participant named every LOCKSTEP_TIMEOUT) for the tests that hold it: the one that
    reads what a waiting simulation sends again holds it at 0.30 and 0.31 s, the one that
    stays silent holds it later, then the one that leaves holds it later still and leaves last
    (a client that left cannot hold again). Each checks what it did before on a graph of its
    own: what is sent again at the states it holds, the pause and the naming, and the run
    without its answers once it left; a graph's start (6-8 CPU-s) is saved each."""
    with Graph(graph(LOCKSTEP_TIMEOUT), log_dir=tmp_path_factory.mktemp("held")) as running, \
            RobotClient(CLIENT, lockstep=True) as client:
        yield running, client


def test_a_simulation_as_fast_as_possible_leaves_its_loop_at_the_default_priority(held_simulation):
    """Lockstep runs at real_time_factor 0: its loop has no wall-clock deadline, so it keeps nice
    0 (a real-time loop runs at ``loop_nice``: test_sim_node_system). At -5 it took the CPU from
    the participants it waits for and from other graphs' real-time loops' nodes."""
    running, client = held_simulation
    client.wait_for_joint_states(PATIENCE)  # the loop's process sends the states
    loop = loop_process(running.processes["humanoid_sim"].pid)
    assert os.getpriority(os.PRIO_PROCESS, loop) == 0


def test_a_simulation_as_fast_as_possible_runs_its_loop_on_a_cpu_of_its_own(held_simulation):
    """unpaced_loop_on_one_cpu (on by default): every thread of the loop's process on the one CPU
    it claimed and said it runs on, or, every CPU claimed by other loops of the machine (the
    suite's other graphs), on any CPU, saying so."""
    running, client = held_simulation
    client.wait_for_joint_states(PATIENCE)
    loop = loop_process(running.processes["humanoid_sim"].pid)
    said = re.compile(r"the loop runs on (CPU (\d+)|any CPU)")
    poll_until(lambda: said.search(running.log_text("humanoid_sim")), "the loop saying where it runs", PATIENCE)
    where = said.search(running.log_text("humanoid_sim"))
    cpus = thread_cpus(loop)
    expected = {int(where.group(2))} if where.group(2) is not None else os.sched_getaffinity(0)
    assert cpus == {frozenset(expected)}, f"said {where.group(0)!r}; its threads may run on {cpus}"


def test_what_the_simulation_sends_again_while_it_waits_is_what_it_first_sent(held_simulation):
    """A waiting simulation sends its state again (a participant that started late gets it);
    its physics has already stepped past that state (docs/lockstep.md, "The gate"), yet the
    ground truth sent again is the one measured at the state, as first sent. On the module's
    held simulation, which this test holds first (its states 0.30 and 0.31 s, as on a graph of
    its own)."""
    from geometry_msgs.msg import PoseStamped, TwistStamped

    poses, twists = [], []
    _, client = held_simulation
    client.node.create_subscription(PoseStamped, "ground_truth/base_pose", poses.append, 1000)
    client.node.create_subscription(TwistStamped, "ground_truth/base_twist", twists.append, 1000)
    client.wait_for_base_pose(PATIENCE)
    for stamp in (0.30, 0.31):  # one of two states carries the ground truth (50 Hz of 100)
        held = client.lockstep.run_to(stamp, PATIENCE)
        sent = len(poses)
        poll_until(lambda sent=sent: len(poses) >= sent + 2, f"the ground truth sent again at t = {held:.3f} s",
                   PATIENCE)  # sent again every 0.25 s while the client holds the simulation

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


def test_a_silent_participant_pauses_the_simulation_and_is_named(held_simulation):
    """A participant that answers nothing holds the loop: robot time stops, and the simulator
    names it in its log every lockstep_timeout. On the module's held simulation, the silent
    participant being the test's client, holding it 0.1 s after the state the test before held
    (the container, the other participant, answers every state)."""
    running, client = held_simulation

    def reports() -> int:
        return len(re.findall(rf"for [a-z_, ]*{CLIENT}[a-z_, ]* to answer", running.log_text("humanoid_sim")))

    held = client.lockstep.run_to((client.lockstep.held_at or 0.0) + 0.1, PATIENCE)
    named = reports()
    poll_until(lambda: reports() >= named + 2, "the silent participant named twice more in the simulator's log",
               PATIENCE)
    assert seconds(client.wait_for_joint_states(PATIENCE).header.stamp) == pytest.approx(held, abs=1e-6)


def test_a_client_that_leaves_while_it_holds_the_simulation_lets_it_run_on(held_simulation):
    """A client that only watches once it has acted (``humanoid walk``, ``humanoid bench
    lockstep``) leaves: the simulation, held by it, runs on without its answers. On the
    module's held simulation, after the test that holds it at 0.31 s (this one holds it 0.3 s
    later, at 0.3 s when run alone): the hold, the leaving and the run on are the same."""
    _, client = held_simulation
    held = client.lockstep.run_to((client.lockstep.held_at or 0.0) + 0.3, PATIENCE)
    client.leave_lockstep()
    client.wait_until(held + 1.0, timeout=PATIENCE)  # the client answers nothing any more
    with pytest.raises(RuntimeError, match="has left the lockstep"):
        client.lockstep.run_to(held + 2.0, PATIENCE)
