"""Two robots on one DDS domain, each in its own namespace (issue 39 item 2).

Two simulated Bioloids, each the default graph with its container, in namespaces ``a`` and
``b``: a trajectory on ``a/joint_trajectory`` moves ``a`` and leaves ``b`` where it stands;
every topic the two graphs publish is under its robot's namespace, but for ``/tf`` (global
by ROS convention), whose frames carry the robot's prefix (``a/base_link``); a third robot
asked into ``a`` is refused before anything starts (and one started by other means fails to
start); ``humanoid record --namespace a`` records ``a``'s topics, and the bag reads back as
the robot's own. Plus the namespace's validation (the commands refusing an invalid one:
test_namespaces_commands.py).
"""

from __future__ import annotations

import io
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import rclpy
from cli_entry import entry_point
from rclpy.qos import QoSProfile
from system_support import LIVE_GRAPHS, PATIENCE, moves_alone

from humanoid_control.ros import RobotClient, frame_prefix, normalized_namespace, poll_until
from humanoid_core.processes import Graph, NodeSpec
from humanoid_sim import sim_nodes

ROBOT = "bioloid"
NAMESPACES = ("/a", "/b")
#: The joint the test moves, and how far (rad) from where it stands.
JOINT, MOVE = "r_shoulder_pitch", 0.5
#: s of robot time for the 1 s move to end after it was sent: whether ``a`` moves at all, not how
#: soon. Both robots are paced (not in lockstep), and their nodes, unlike the simulation loops, at no raised
#: priority: on CI's slower machine a's interface once took the command more than 5 s late.
MOVE_WITHIN = 30.0
#: Of both robots' simulations (the fixture says why not 1).
REAL_TIME_FACTOR = 0.5
#: rad: a robot standing still stays within this (no sensor noise in simulation: the servos' settling).
STILL = 0.005
#: Topics outside any robot namespace that the two graphs may publish (ROS's own, and /tf).
GLOBAL_TOPICS = {"/tf", "/rosout", "/parameter_events"}


@pytest.fixture(scope="module")
def robots(tmp_path_factory):
    """The two graphs (paced, no lockstep: the robots run side by side) and a client of each.
    At half real time (``REAL_TIME_FACTOR``): what the module checks is names, frames and
    which robot moves, not the pace, and two robots standing for the module's life cost half."""
    logs = tmp_path_factory.mktemp("namespaces")
    graphs = [Graph(sim_nodes(ROBOT, namespace=namespace, real_time_factor=REAL_TIME_FACTOR),
                    log_dir=logs / namespace.strip("/"))
              for namespace in NAMESPACES]
    clients: list[RobotClient] = []
    # the clients share a context the fixture owns (a client that owned it would shut it down
    # while the other one still closes beside it)
    own_context = not rclpy.ok()
    if own_context:
        rclpy.init()
    LIVE_GRAPHS.extend(graphs)  # a failed test's report carries the graphs' logs (conftest.py)
    try:
        for graph in graphs:
            graph.start()
        clients = [RobotClient(f"namespaces_test_{n.strip('/')}", namespace=n.strip("/")) for n in NAMESPACES]
        for client in clients:
            client.wait_for_joint_states(PATIENCE)
        yield dict(zip(NAMESPACES, clients, strict=True))
    except BaseException:
        for graph in graphs:
            for spec in graph.nodes:
                print(f"----- {spec.namespace}/{spec.name} -----\n{graph.log_text(spec.name)[-3000:]}")
        raise
    finally:
        for graph in graphs:
            LIVE_GRAPHS.remove(graph)
        # the two robots' clients, then their graphs, end side by side (each waits for its own:
        # a client's spinning thread, a graph's nodes ending on SIGINT), not one after the other
        with ThreadPoolExecutor(len(NAMESPACES)) as pool:
            list(pool.map(RobotClient.close, clients))
            list(pool.map(Graph.stop, graphs))
        if own_context:
            rclpy.try_shutdown()


# -- the namespace's validation -------------------------------------------------------------------
@pytest.mark.parametrize(("given", "expected"), [("a", "/a"), ("/a", "/a"), ("robot_1/left", "/robot_1/left"),
                                                 ("", "/"), ("/", "/")])
def test_a_valid_namespace_is_made_absolute(given, expected):
    assert normalized_namespace(given) == expected


@pytest.mark.parametrize(("given", "reason"), [
    ("1a", "starts with a number"), ("a-b", "characters other than"), ("a/", "must not end with"),
    ("a//b", "repeated"), ("~a", "characters other than"), ("x" * 300, "exceed")])
def test_an_invalid_namespace_is_refused_with_rcl_s_reason(given, reason):
    with pytest.raises(ValueError, match=reason) as error:
        normalized_namespace(given)
    assert len(str(error.value).splitlines()) == 1


def test_a_namespaced_node_gets_its_namespace_and_its_robot_s_clock():
    """A graph's node in ``/a`` is started in ``/a``, and its ``/clock`` is ``/a/clock`` (its own
    simulator's); the root namespace's node is started as before."""
    assert NodeSpec("n", "m", namespace="/a").arguments() == [
        "--ros-args", "-r", "__node:=n", "-r", "__ns:=/a", "-r", "/clock:=/a/clock"]
    assert NodeSpec("n", "m").arguments() == ["--ros-args", "-r", "__node:=n"]
    assert {spec.namespace for spec in sim_nodes(ROBOT, namespace="/a")} == {"/a"}
    assert (frame_prefix("/a"), frame_prefix("/a/b"), frame_prefix("/")) == ("a/", "a/b/", "")


# -- two robots ---------------------------------------------------------------------------------------
def test_a_trajectory_to_a_moves_a_and_not_b(robots):
    # b's clock runs beside a's: b records half a second more once a is there
    moves_alone(robots["/a"], robots["/b"], JOINT, MOVE, 1.0, MOVE_WITHIN, STILL, tail=0.5)


def test_every_topic_of_the_robots_is_under_its_namespace(robots):
    """Nothing of the two graphs is in the root namespace: each node is in its robot's
    namespace, and every topic they publish too, but ROS's global ones (``/tf`` among them)."""
    node = robots["/a"].node
    expected = {"humanoid_sim", "humanoid_sim_loop", "control_container", "trajectory_generator",
                "balance_monitor", "odometry", "fall_manager"}

    def listed() -> dict[str, set[str]]:
        nodes = [(namespace, name) for name, namespace in node.get_node_names_and_namespaces()]
        return {namespace: {name for ns, name in nodes if ns == namespace} for namespace in NAMESPACES}

    # the graph names nodes as discovery reaches them: both robots answer before every node of
    # theirs is listed to this client (on a loaded machine: the second robot's container nodes not yet)
    poll_until(lambda: all(expected <= names for names in listed().values()),
               "every node of both robots listed in its namespace", PATIENCE)
    published: dict[str, set[str]] = {}

    def publishing() -> bool:
        published.clear()
        for topic, _types in node.get_topic_names_and_types():
            owners = {info.node_namespace for info in node.get_publishers_info_by_topic(topic)} & set(NAMESPACES)
            if owners:
                published[topic] = owners
        return {"/a/joint_states", "/b/joint_states", "/a/clock"} <= published.keys()

    poll_until(publishing, "both robots' joint_states and /a/clock listed", PATIENCE)
    outside = {topic: owners for topic, owners in published.items()
               if topic not in GLOBAL_TOPICS and not any(topic.startswith(f"{o}/") for o in owners)}
    assert not outside, f"topics outside their robot's namespace: {outside}"


def test_tf_frames_carry_the_robot_s_prefix(robots):
    """On the global ``/tf``, each robot's odometry and ground truth publish its frames with its
    prefix: ``a/odom -> a/base_link`` and ``a/world -> a/odom``, the same for ``b``."""
    from tf2_msgs.msg import TFMessage

    node = robots["/a"].node
    pairs: set[tuple[str, str]] = set()
    lock = threading.Lock()

    def on_tf(msg: TFMessage) -> None:
        with lock:
            pairs.update((t.header.frame_id, t.child_frame_id) for t in msg.transforms)

    expected = {(f"{r}/odom", f"{r}/base_link") for r in "ab"} | {(f"{r}/world", f"{r}/odom") for r in "ab"}
    subscription = node.create_subscription(TFMessage, "/tf", on_tf, QoSProfile(depth=100))
    try:
        poll_until(lambda: expected <= pairs, f"/tf pairs {sorted(expected)}", PATIENCE)
    finally:
        with robots["/a"].between_turns():
            node.destroy_subscription(subscription)
    with lock:
        unprefixed = {pair for pair in pairs if not all(frame.startswith(("a/", "b/")) for frame in pair)}
    assert not unprefixed, f"frames without a robot's prefix on /tf: {unprefixed}"


def test_a_second_robot_asked_into_a_taken_namespace_is_refused(robots):
    """``humanoid sim --namespace a`` beside the running ``a``: one line, exit status 2, and
    nothing started (``a`` keeps its one simulator)."""
    # (--duration: a robot started all the same ends by itself, and the test fails instead of hanging)
    result = entry_point("sim", "--robot", ROBOT, "--namespace", "a", "--duration", "2")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "already runs in namespace /a" in result.stderr and "/a/humanoid_sim_loop" in result.stderr
    node = robots["/a"].node
    assert [info.node_name for info in node.get_publishers_info_by_topic("/a/joint_states")] == \
        ["humanoid_sim_loop"]


def test_a_robot_started_into_a_taken_namespace_by_other_means_than_a_command_does_not_start(robots, tmp_path):
    """The simulation node started in ``/a`` as a launch file starts it (no command's look
    first): its loop finds the namespace claimed and the node ends with status 1, saying which
    robot holds it; ``a`` keeps its one simulator."""
    second = [spec for spec in sim_nodes(ROBOT, namespace="/a") if spec.name == "humanoid_sim"]
    with Graph(second, log_dir=tmp_path) as graph:
        assert graph.wait(PATIENCE) == {"humanoid_sim": 1}
        log = graph.log_text("humanoid_sim")
    assert "cannot start" in log and "a robot already runs in namespace /a (/a/humanoid_sim_loop" in log, log
    node = robots["/a"].node
    assert [info.node_name for info in node.get_publishers_info_by_topic("/a/joint_states")] == \
        ["humanoid_sim_loop"]


def test_a_recorder_in_a_namespace_records_its_robot_and_reads_back_as_the_robot_s(robots, tmp_path):
    """A recorder in ``/a`` (``humanoid record --namespace a``, ``--record`` of a namespaced graph)
    records ``/a/joint_states``, not b's, and ``/tf``; the bag says its namespace and reads back
    with the robot's own names (``/joint_states``), as plot, compare and view read it."""
    from rclpy.executors import SingleThreadedExecutor

    from humanoid_tools.recording import Bag, Recorder, RecorderParameters

    bag = tmp_path / "bag"
    node = rclpy.create_node("namespaces_test_recorder", namespace="a")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    recorder = Recorder(node, RecorderParameters(output=str(bag), topics=("joint_states", "/tf")),
                        out=io.StringIO(), err=io.StringIO())
    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [executor.spin_once(timeout_sec=0.05) for _ in iter(stop.is_set, True)])
    spinner.start()
    try:
        poll_until(lambda: min(recorder.summary.received[t] for t in ("/a/joint_states", "/tf")) >= 10,
                   "10 messages of /a/joint_states and /tf recorded", PATIENCE)
    finally:
        stop.set()
        spinner.join()
        recorder.drain(lambda timeout: executor.spin_once(timeout_sec=timeout))
        summary = recorder.finish()
        executor.shutdown()
        node.destroy_node()
    assert set(summary.types) == {"/a/joint_states", "/tf"}
    with Bag(bag) as reading:
        assert reading.namespace == "/a"
        assert set(reading.types) == {"/joint_states", "/tf"}
        assert reading.counts["/joint_states"] == summary.written["/a/joint_states"] >= 10
        frames = {t.child_frame_id for _stamp, msg in reading.all("/tf") for t in msg.transforms}
    assert frames and all(frame.startswith(("a/", "b/")) for frame in frames)
