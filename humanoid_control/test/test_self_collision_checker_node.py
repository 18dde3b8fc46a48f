"""The self-collision checker node alone, fed joint_states by the test: stale (NaN) joints are
unknown and only the pairs behind them go unchecked, malformed messages and requests get a
clear error and the node goes on, the services answer, markers and diagnostics follow. A
trajectory check is bounded (duration and samples, refused at once beyond) and the longest
allowed one holds up neither the configuration check, nor the state, nor diagnostics."""

from __future__ import annotations

import math
import threading
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from humanoid_control.nodes import self_collision_checker_node_spec
from humanoid_control.ros import RobotClient, make_trajectory, poll_until, to_time
from humanoid_core.processes import Graph
from humanoid_description import CollisionModel, load_model
from humanoid_interfaces.msg import SelfCollisionState
from humanoid_interfaces.srv import CheckTrajectorySelfCollision

pytestmark = pytest.mark.system

ROBOT = "hoap2"
PATIENCE = 60.0
#: The checker's bounds here: the longest allowed path (200 s every 2 ms) is seconds of work.
MAX_SAMPLES = 250_000  # a path check of most of a second on a quiet machine (600 s would be the duration bound)
MAX_DURATION = 600.0


class Listener:
    """The node's outputs, collected."""

    def __init__(self, client: RobotClient) -> None:
        self.lock = threading.Lock()
        self.states: list[SelfCollisionState] = []
        self.markers: list[MarkerArray] = []
        self.diagnostics: list[DiagnosticStatus] = []
        node = client.node
        node.create_subscription(SelfCollisionState, "self_collision_state", self._keep(self.states), 50)
        node.create_subscription(MarkerArray, "self_collision_markers", self._keep(self.markers), 10)
        node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, 10)
        #: one publisher for every state a test sends: once matched, a state goes at once
        self.joint_states = node.create_publisher(JointState, "joint_states", 10)

    def _keep(self, into):
        def keep(msg):
            with self.lock:
                into.append(msg)
        return keep

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        with self.lock:
            self.diagnostics.extend(s for s in msg.status if "self-collision" in s.name)

    def state_at(self, stamp: float) -> SelfCollisionState | None:
        with self.lock:
            return next((s for s in self.states if s.header.stamp == to_time(stamp)), None)


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    spec = self_collision_checker_node_spec(ROBOT, {"max_trajectory_samples": MAX_SAMPLES, "diagnostics_rate": 5.0})
    with Graph([spec], log_dir=tmp_path_factory.mktemp("logs")) as graph, \
            RobotClient("checker_test") as client:
        listener = Listener(client)
        try:
            yield client, listener
        except BaseException:
            print(graph.log_text("self_collision_checker")[-4000:])
            raise
        assert graph.exited() == {}, graph.log_text("self_collision_checker")[-4000:]


def publish_until_answered(client: RobotClient, listener: Listener, positions: list[float],
                           names: list[str] | None = None, stamp: float = 1.0) -> SelfCollisionState:
    names = list(load_model(ROBOT).joints.names) if names is None else names
    msg = JointState(name=names, position=positions)
    msg.header.stamp = to_time(stamp)
    publisher = listener.joint_states
    return poll_until(lambda: publisher.publish(msg) or listener.state_at(stamp), f"the state of stamp {stamp}",
                      PATIENCE, interval=0.2)


def test_a_stale_joint_leaves_only_the_pairs_behind_it_unchecked(checker):
    client, listener = checker
    model = load_model(ROBOT)
    q = model.joints.to_array({"rleg_joint2": math.radians(21), "lleg_joint2": math.radians(-21)})  # legs crossed
    q[model.joints.index("rarm_joint1")] = math.nan
    state = publish_until_answered(client, listener, q.tolist(), stamp=2.0)
    assert list(state.unknown_joints) == ["rarm_joint1"]
    everything = len(CollisionModel(model).link_pairs)
    assert 0 < state.unchecked_pairs < everything and state.checked_pairs == everything - state.unchecked_pairs
    assert state.in_collision  # the crossed legs do not depend on the arm: still found
    assert all(not {p.link_a, p.link_b} & {"rarm_upper_arm", "rarm_forearm", "rarm_hand"}
               for p in state.colliding_pairs)
    warning = poll_until(lambda: next((d for d in listener.diagnostics if d.level == DiagnosticStatus.WARN
                                       and "rarm_joint1" in d.message), None), "a WARN naming the stale joint",
                         PATIENCE)
    assert "unchecked" in warning.message


def test_a_clear_configuration_is_reported_with_its_closest_pair_and_markers(checker):
    client, listener = checker
    state = publish_until_answered(client, listener, load_model(ROBOT).home_positions().tolist(), stamp=3.0)
    assert not state.in_collision and not state.unknown_joints and state.unchecked_pairs == 0
    assert state.closest_pair.distance >= state.safety_distance == pytest.approx(0.005)
    # this state's markers (stamped with it): the previous test's, of the crossed legs, may still be the latest
    markers = poll_until(lambda: next((m for m in reversed(listener.markers)
                                       if len(m.markers) > 1 and m.markers[1].header.stamp == to_time(3.0)), None),
                         "markers of the closest pair", PATIENCE)
    assert any(state.closest_pair.link_a in m.text for m in markers.markers)


def test_a_malformed_message_is_skipped_and_the_node_goes_on(checker):
    client, listener = checker
    bad = JointState(name=["rarm_joint1", "rarm_joint2"], position=[0.1])
    bad.header.stamp = to_time(4.0)
    publisher = client.node.create_publisher(JointState, "joint_states", 10)
    publisher.publish(bad)
    state = publish_until_answered(client, listener, load_model(ROBOT).home_positions().tolist(), stamp=5.0)
    assert state is not None and listener.state_at(4.0) is None


def test_the_services_answer_and_refuse_bad_requests_with_a_reason(checker):
    client, _ = checker
    answer = client.check_self_collision({"rarm_joint1": -math.pi / 2, "rarm_joint3": math.pi / 2,
                                          "rarm_joint4": -math.pi / 3})
    assert answer.valid and answer.in_collision
    assert any({p.link_a, p.link_b} == {"head", "rarm_forearm"} for p in answer.colliding_pairs), answer.message
    refused = client.check_self_collision({"rarm_joint9": 0.0})
    assert not refused.valid and "rarm_joint9" in refused.message
    beyond = client.check_self_collision({"rarm_joint2": 1.0})
    assert not beyond.valid and "limits" in beyond.message
    path = make_trajectory(["rarm_joint1", "rarm_joint3", "rarm_joint4"], [1.5, 2.5],
                           [[-math.pi / 2, math.pi / 2, 0.0], [-math.pi / 2, math.pi / 2, -math.pi / 3]])
    start = {name: 0.0 for name in load_model(ROBOT).joints.names}
    hit = client.check_trajectory_self_collision(path, start)
    assert hit.valid and hit.in_collision and 1.5 < hit.time_from_start < 2.5
    assert {hit.pair.link_a, hit.pair.link_b} & {"head", "head_neck_link"}
    assert hit.samples >= 2.5 / hit.sample_period and "t = " in hit.message
    clear = client.check_trajectory_self_collision(make_trajectory(["rarm_joint2"], [1.0], [[-1.2]]), start)
    assert clear.valid and not clear.in_collision, clear.message
    malformed = client.check_trajectory_self_collision(make_trajectory(["rarm_joint2"], [1.0, 1.0], [[-1.2], [0.0]]),
                                                       start)
    assert not malformed.valid and "increase" in malformed.message


def test_no_joint_named_checks_the_robots_current_configuration(checker):
    """An empty request asks about the robot as it is: the latest joint_states."""
    client, listener = checker
    model = load_model(ROBOT)
    crossed = model.joints.to_array({"rleg_joint2": math.radians(21), "lleg_joint2": math.radians(-21)})
    publish_until_answered(client, listener, crossed.tolist(), stamp=6.0)
    answer = client.check_self_collision({})
    assert answer.valid and answer.in_collision, answer.message
    assert any({"rleg", "lleg"} <= {p.link_a[:4], p.link_b[:4]} for p in answer.colliding_pairs), answer.message
    publish_until_answered(client, listener, model.home_positions().tolist(), stamp=7.0)
    answer = client.check_self_collision({})
    assert answer.valid and not answer.in_collision, answer.message


def still_arm(duration: float):
    """The right arm held at zero for ``duration`` s (two points)."""
    return make_trajectory(["rarm_joint1"], [duration / 2, duration], [[0.0], [0.0]])


def swinging_arm(duration: float):
    """The right arm raised 0.5 rad and lowered again over ``duration`` s: every sample is a
    new configuration (a still arm's samples are checked all but once over)."""
    return make_trajectory(["rarm_joint1"], [duration / 2, duration], [[-0.5], [0.0]])


def test_a_trajectory_beyond_the_bounds_is_refused_at_once_naming_both_numbers(checker):
    client, _ = checker
    start = {name: 0.0 for name in load_model(ROBOT).joints.names}
    typo = client.check_trajectory_self_collision(still_arm(1e6), start, timeout=PATIENCE)
    assert not typo.valid and "lasts 1e+06 s" in typo.message, typo.message
    assert f"max_trajectory_duration = {MAX_DURATION:g} s" in typo.message, typo.message
    dense = client.check_trajectory_self_collision(still_arm(MAX_DURATION), start, timeout=PATIENCE)
    assert not dense.valid and "takes 300000 samples" in dense.message, dense.message
    assert f"max_trajectory_samples = {MAX_SAMPLES}" in dense.message, dense.message


def test_the_longest_allowed_check_holds_up_neither_the_other_service_nor_the_state_nor_diagnostics(checker):
    client, listener = checker
    names = list(load_model(ROBOT).joints.names)
    longest = MAX_SAMPLES * 0.002  # s, at the checker's sample period
    request = CheckTrajectorySelfCollision.Request(trajectory=swinging_arm(longest))
    request.start = JointState(name=names, position=[0.0] * len(names))
    service = client.node.create_client(CheckTrajectorySelfCollision, "check_trajectory_self_collision")
    assert service.wait_for_service(timeout_sec=PATIENCE)
    with listener.lock:
        diagnostics = len(listener.diagnostics)
    # a state answered first: the checker has matched the publisher of the one sent during the check
    # (a publisher still being discovered lost states for 0.8 s once, as long as the check itself)
    publish_until_answered(client, listener, [0.0] * len(names), stamp=9.0)
    answered: list[tuple[float, int]] = []  # when the check's answer came, and the diagnostics until then

    def on_answer(_future) -> None:
        with listener.lock:
            answered.append((time.monotonic(), len(listener.diagnostics)))

    sent = time.monotonic()
    answer = service.call_async(request)
    answer.add_done_callback(on_answer)
    # while the path is being checked: a configuration check, a state, diagnostics
    assert client.check_self_collision({"rarm_joint1": 0.1}, timeout=PATIENCE).valid
    configuration = time.monotonic()
    publish_until_answered(client, listener, [0.0] * len(names), stamp=10.0)
    state = time.monotonic()
    result = client.wait_future(answer, PATIENCE, "the trajectory check")
    assert result.valid and not result.in_collision and result.samples == MAX_SAMPLES + 1, result.message
    poll_until(lambda: answered, "the check's answer handled", PATIENCE)
    (done, diagnostics_by_then), took = answered[0], answered[0][0] - sent
    print(f"check of {MAX_SAMPLES} samples: {took:.3f} s; configuration check after {configuration - sent:.3f} s, "
          f"state after {state - sent:.3f} s")
    assert configuration < done and state < done, "a configuration check or a state came only after the path check"
    assert diagnostics_by_then > diagnostics, "no diagnostics while the path was checked"
