"""Helpers the system tests share: a graph with its client, a node's parameters changed, the
hardware graph on the emulated bus, a graph recording as --record does, joint_states publish times,
messages collected under a lock, a simulated robot's state publisher on a node in this process."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rclpy
from node_teardown import SpinningThread, ros_context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from humanoid_bringup import with_recorder
from humanoid_control.nodes import CONTROL_CONTAINER, with_node_parameters
from humanoid_control.ros import DriverClock, RobotClient, StatePublisher, make_trajectory, poll_until
from humanoid_core.processes import Graph, NodeSpec
from humanoid_hw import NODE_NAME as HW_NODE
from humanoid_sim import SimulatedRobot

#: Wall seconds the helpers wait for a robot node (generous: the machine may be loaded).
PATIENCE = 300.0
#: The emulator is a Python process sharing two cores with the nodes and the test, not a
#: servo answering in microseconds: a packet timeout of 2 x 50 + 2 ms (latency_timer_ms,
#: robots/bioloid/bus.yaml: 16) keeps a busy machine from passing for a missing servo (a
#: joint read as unknown, which stops a gait or a motion).
BUS_LATENCY_TIMER_MS = 50




def on_emulated_bus(nodes: Sequence[NodeSpec]) -> list[NodeSpec]:
    """A real-robot graph whose hardware node has the bus timeout the emulator needs."""
    return with_node_parameters(nodes, HW_NODE, {"latency_timer_ms": BUS_LATENCY_TIMER_MS})


#: The graphs :func:`running` holds now: a test that fails while one runs gets its nodes' logs in
#: its report (conftest.py), also when the graph is a fixture shared by several tests.
LIVE_GRAPHS: list[Graph] = []


def graph_report(graph: Graph, tail: int) -> list[tuple[str, str]]:
    """What a failed test reports of its graph, as (title, text): each node's log tail (``tail``
    characters), then where each node's threads were (a graph that stopped answering says
    where it waits; the stacks are asked for after the logs are read, and go into them)."""
    logs = [(f"log of {graph.key(spec)}", graph.log_text(graph.key(spec))[-tail:]) for spec in graph.nodes]
    return logs + [(f"threads of {name}", text) for name, text in graph.thread_stacks().items()]


def print_logs(graph: Graph, tail: int) -> None:
    """:func:`graph_report`, printed."""
    for title, text in graph_report(graph, tail):
        print(f"----- {title} -----\n{text}")


@contextlib.contextmanager
def running(nodes: Sequence[NodeSpec], log_dir: Path, client_name: str = "test_client") -> Iterator[RobotClient]:
    """The nodes and a client, stopped on exit; the node logs are printed if something failed."""
    graph = Graph(nodes, log_dir=log_dir).start()
    client = RobotClient(client_name)
    LIVE_GRAPHS.append(graph)
    try:
        poll_until(lambda: client.joint_state is not None or graph.exited(), "joint_states from the robot node",
                   PATIENCE)
        assert not graph.exited(), f"node(s) exited: {graph.exited()}"
        yield client
    except BaseException:
        print_logs(graph, 4000)
        raise
    finally:
        LIVE_GRAPHS.remove(graph)
        client.close()
        graph.stop()


@contextlib.contextmanager
def recording_graph(nodes: Sequence[NodeSpec], bag: Path, log_dir: Path, client_name: str,
              heard: Sequence[tuple[str, str]], lockstep: bool = False,
              client_lockstep: bool = False) -> Iterator[RobotClient]:
    """The nodes with the recorder (as ``--record`` adds it) and a client, once the robot
    publishes and each (topic, node) of ``heard`` is subscribed; on exit the graph stops, and
    the container (the recorder's host) must have ended cleanly: the bag is closed. The node
    logs are printed if something failed. ``client_lockstep``: the client is a participant of
    the lockstep graph (named in its participants), holding it at its first state until
    ``client.lockstep.go()``."""
    graph = Graph(with_recorder(list(nodes), bag, lockstep=lockstep), log_dir=log_dir).start()
    try:
        with RobotClient(client_name, lockstep=client_lockstep) as client:
            client.wait_for_joint_states(PATIENCE)
            for topic, node in heard:
                client.wait_for_subscriber(topic, node, PATIENCE)
            yield client
    except BaseException:
        print_logs(graph, 3000)
        raise
    finally:
        codes = graph.stop()
    assert codes.get(CONTROL_CONTAINER) == 0, graph.log_text(CONTROL_CONTAINER)[-3000:]


#: The test process may stall while it builds and sends a big message (rclpy converts it
#: holding the interpreter lock) or while a loaded machine leaves its threads waiting: DDS keeps
#: every message meanwhile, without Python, and resends what a starved process missed at the
#: transport (reliable: the node's publisher holds 5 s of them), so none published in the window
#: is lost and the test's own stall never passes for the robot's. Each weaker choice lost a
#: whole window's messages once on a loaded CI machine (a gap as long as the window, none of it
#: the robot's): sensor data's history of 5, then best effort (a process stopped 2 s loses them).
KEEP_EVERY_MESSAGE = QoSProfile(depth=100_000, history=HistoryPolicy.KEEP_LAST,
                                reliability=ReliabilityPolicy.RELIABLE)


class SourceStamps:
    """Publish times (DDS source timestamps, ns) of every joint_states message, taken by a
    node of its own: they come with the message info, which only rclpy's Python executors
    hand to a callback (RobotClient's EventsExecutor does not). Its subscription keeps every
    message (:data:`KEEP_EVERY_MESSAGE`). A context manager."""

    def __init__(self) -> None:
        self.stamps: list[int] = []
        self.lock = threading.Lock()
        self._node = rclpy.create_node(f"source_stamps_{os.getpid()}_{id(self):x}")
        self._node.create_subscription(JointState, "joint_states", self._on_message, KEEP_EVERY_MESSAGE)
        executor = SingleThreadedExecutor()
        executor.add_node(self._node)
        self._spinner = SpinningThread(executor, "source-stamps").start()

    def __enter__(self) -> SourceStamps:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._spinner.stop()
        self._node.destroy_node()

    def _on_message(self, _msg, info) -> None:
        with self.lock:
            self.stamps.append(info["source_timestamp"])

    def largest_gap(self, since_ns: int, until_ns: int) -> float:
        """Largest gap (s) between messages published in [since, until] (:func:`largest_gap`)."""
        with self.lock:
            stamps = np.array(self.stamps, dtype=np.int64)
        return largest_gap(stamps, since_ns, until_ns)


def largest_gap(stamps: np.ndarray, since_ns: int, until_ns: int) -> float:
    """Largest gap (s) between the ``stamps`` (ns) in [since, until], the window's edges counted
    as stamps (a stall at either end counts)."""
    inside = stamps[(stamps >= since_ns) & (stamps <= until_ns)]
    return float(np.max(np.diff(np.concatenate([[since_ns], inside, [until_ns]])))) * 1e-9


def collector(lock: threading.Lock, into: list) -> Callable[[object], None]:
    """A subscription callback appending each message to ``into`` under ``lock`` (the test's
    thread reads the lists while the client's executor fills them)."""

    def on_message(msg: object) -> None:
        with lock:
            into.append(msg)

    return on_message


def moves_alone(mover: RobotClient, other: RobotClient, joint: str, move: float, duration: float,
                robot_seconds: float, still: float, tail: float = 0.0) -> None:
    """A trajectory on ``mover``'s ``joint_trajectory`` moves its ``joint`` by ``move`` rad over
    ``duration`` s, reached within ``robot_seconds`` of its robot time (then ``tail`` s more),
    while ``other`` (another robot beside it) holds the same joint within ``still`` rad."""
    start, start_other = mover.current_positions()[joint], other.current_positions()[joint]
    other.start_recording()
    try:
        target = start + move
        mover.send_trajectory(make_trajectory([joint], [duration], [[target]]))
        mover.wait_for_state(lambda msg: abs(msg.position[list(msg.name).index(joint)] - target) < 0.02,
                             f"the moved robot's {joint} at {target:.3f} rad", robot_seconds=robot_seconds)
        if tail:
            mover.wait_until(mover.now() + tail)
    finally:
        recorded = other.stop_recording()
    assert recorded, "no joint_states from the other robot while the first moved"
    held = np.array([msg.position[list(msg.name).index(joint)] for msg in recorded])
    assert np.max(np.abs(held - start_other)) < still, \
        f"the other robot's {joint} moved: {held.min():.4f}..{held.max():.4f} from {start_other:.4f}"


@dataclass
class PublishingRobot:
    """A simulated robot whose loop feeds the node's state publisher (real PyBullet, a real
    rclpy node), and what a listener node's subscriptions took, topic by topic."""

    robot: SimulatedRobot
    publisher: StatePublisher
    executor: SingleThreadedExecutor
    taken: dict[str, list]

    def cycle(self, count: int = 1) -> None:
        """Run the loop ``count`` cycles, the executor's ready work after each."""
        for _ in range(count):
            self.robot.cycle()
            self.executor.spin_once(timeout_sec=0.0)


@contextlib.contextmanager
def publishing_robot(robot: str, subscriptions: Mapping[str, type]) -> Iterator[PublishingRobot]:
    """The simulated ``robot`` with its state publisher on a node of this process and a
    listener subscribed to ``subscriptions`` (topic: type), once every subscription took a
    message (matched)."""
    with ros_context():
        simulated = SimulatedRobot(robot)
        node = rclpy.create_node("publishing_robot")
        listener = rclpy.create_node("publishing_robot_listener")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.add_node(listener)
        taken: dict[str, list] = {topic: [] for topic in subscriptions}
        for topic, kind in subscriptions.items():
            listener.create_subscription(kind, topic, taken[topic].append, 100)
        try:
            publisher = StatePublisher(node, simulated.loop, DriverClock(simulated.driver.now), "sim", robot)
            publisher.on_started(simulated.loop.state)
            simulated.loop.add_cycle_hook(publisher.on_cycle)
            running = PublishingRobot(simulated, publisher, executor, taken)
            poll_until(lambda: running.cycle() or all(taken.values()), "every subscription's first message", 30.0)
            yield running
        finally:
            executor.shutdown()
            simulated.close()
