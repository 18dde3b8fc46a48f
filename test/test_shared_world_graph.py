"""Two quadrupeds in one physics world, as ``humanoid sim --count 2 --lockstep`` starts them
(issue 39 item 3): each robot's graph in its own namespace, the world stepping when both
have; a trajectory to one moves it and not the other, each stands at its seat of the world,
and a robot held in lockstep holds the other (one world, one clock). What the world does
with its bodies (seats, contacts, pause and step) is tested in process:
humanoid_sim/test/test_shared_world.py.
"""

from __future__ import annotations

import time

import pytest
import rclpy
from loop_processes import loop_process, thread_cpus
from system_support import LIVE_GRAPHS, PATIENCE, moves_alone

from humanoid_control.ros import RobotClient, poll_until
from humanoid_core.processes import Graph
from humanoid_description import resolve_robot
from humanoid_sim import control_period, sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid_quadruped"
NAMESPACES = ("/bioloid_quadruped_1", "/bioloid_quadruped_2")
#: m between the robots (the default).
SPACING = 0.5
#: The joint the test moves on the first robot, and how far (rad).
JOINT, MOVE = "fl_hip_pitch", 0.3
#: rad: a robot standing still stays within this (no sensor noise in simulation).
STILL = 0.005
#: s of wall time over which the first robot is watched while the second is held: long enough
#: for its loop to have run many cycles (100 Hz) had the world not held it.
HOLD_WINDOW = 1.0


@pytest.fixture(scope="module")
def world_graph(tmp_path_factory):
    """The two robots' graph in lockstep."""
    graph = Graph(sim_nodes(ROBOT, count=2, lockstep=True), log_dir=tmp_path_factory.mktemp("world"))
    LIVE_GRAPHS.append(graph)  # a failed test's report carries the graph's logs (conftest.py)
    try:
        graph.start()
        yield graph
    finally:
        LIVE_GRAPHS.remove(graph)
        graph.stop()


@pytest.fixture(scope="module")
def world(world_graph):
    """A client of the first robot and a lockstep client of the second (its first answer
    joins it: it can hold the world)."""
    own_context = not rclpy.ok()
    if own_context:
        rclpy.init()
    clients: list[RobotClient] = []
    try:
        clients = [RobotClient("world_test_1", namespace=NAMESPACES[0].strip("/")),
                   RobotClient("world_test_2", namespace=NAMESPACES[1].strip("/"), lockstep=True)]
        for client in clients:
            client.wait_for_joint_states(PATIENCE)
        clients[1].lockstep.go()
        yield clients
    finally:
        for client in clients:
            client.close()
        if own_context:
            rclpy.try_shutdown()


def test_the_graph_is_one_world_process_and_a_graph_per_robot():
    nodes = sim_nodes(ROBOT, count=2)
    assert [(spec.name, spec.namespace) for spec in nodes if "sim" in spec.name] == [("humanoid_sim_world", "/")]
    assert nodes[0].parameters["namespaces"] == ",".join(NAMESPACES)
    assert {spec.namespace for spec in nodes[1:]} == set(NAMESPACES)


def test_the_worlds_loops_run_on_one_cpu(world, world_graph):
    """world_on_one_cpu (on by default): every thread of the world's loop process, those DDS
    started before the loops and those the loops started, on one CPU (on two cores the robots'
    control threads, taking turns at the interpreter lock, each waited for the other core)."""
    front = world_graph.processes["humanoid_sim_world"].pid
    cpus = thread_cpus(loop_process(front))
    assert len(cpus) == 1 and len(next(iter(cpus))) == 1, (
        f"the loop process's threads may run on {sorted(sorted(c) for c in cpus)}")


def test_each_robot_stands_at_its_seat(world):
    """The second robot SPACING m beside the first along y (the world's frame: the ground truth)."""
    first, second = (client.wait_for_base_pose(PATIENCE).pose.position for client in world)
    assert second.y - first.y == pytest.approx(SPACING, abs=0.01)
    assert second.x == pytest.approx(first.x, abs=0.01)


def test_a_trajectory_to_one_robot_moves_it_and_not_the_other(world):
    moves_alone(*world, JOINT, MOVE, 0.5, 10.0, STILL)


def test_a_robot_held_in_lockstep_holds_the_world(world):
    """While the second robot's client holds it at a state, the first robot stays at that state
    or the one after (in lockstep a robot steps on while its participants answer the last one:
    humanoid_core.loop.control_loop), instead of running on."""
    first, second = world
    period = control_period(resolve_robot(ROBOT))
    with second.lockstep.paused_at(second.now() + 0.5, PATIENCE) as held:
        poll_until(lambda: first.now() >= held - 1e-6, f"the first robot at t = {held:.2f} s", PATIENCE)
        first.start_recording()
        time.sleep(HOLD_WINDOW)  # a window of observation, not a wait for an event
        watched, reached = first.stop_recording(), first.now()
    assert reached <= held + period + 1e-6, f"the first robot ran on to {reached:.3f} s while the world was held"
    assert all(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9 <= held + period + 1e-6 for msg in watched)
    poll_until(lambda: first.now() > held + 0.1, "the first robot going on once the second is let go", PATIENCE)
