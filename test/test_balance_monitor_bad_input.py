"""The balance monitor node fed bad joint_states, as a broken or partial publisher would:
unknown names, stale (NaN) readings, missing joints, unreadable messages.

What users rely on: the node never crashes and never publishes a NaN CoM; a message it
can read is answered with the last known value of each joint it does not give; one it
cannot read is not answered; every case is counted in its diagnostics. A joint state
that arrives ahead of the ground truth of its instant waits for it (a late sensor is not
taken for a missing one), at most ``sensor_patience``. Also: the ``humanoid bench
balance`` command runs and prints the figures it promises.

The two node tests share one node (a start costs seconds of CPU: the model, pinocchio),
the bad input first: it sends no ground truth, so its patience never comes into play (a
sensor is awaited only once it has delivered a reading); the waits test then sends its
ground truth, on later stamps.
"""

from __future__ import annotations

import json
import math
import subprocess
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import JointState

from humanoid_control.nodes import balance_monitor_node_spec
from humanoid_control.ros import RobotClient, poll_until, seconds, to_time
from humanoid_core.processes import Graph
from humanoid_description import load_model
from humanoid_interfaces.msg import BalanceState

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 60.0


class Answers:
    """balance_state messages by the stamp of the joint_states they answer."""

    def __init__(self, client: RobotClient) -> None:
        self.by_stamp: dict[float, BalanceState] = {}
        self._arrived = threading.Condition()
        client.node.create_subscription(BalanceState, "balance_state", self._on_state, 100)

    def _on_state(self, msg: BalanceState) -> None:
        with self._arrived:
            self.by_stamp[seconds(msg.header.stamp)] = msg
            self._arrived.notify_all()

    def wait(self, stamp: float) -> BalanceState:
        with self._arrived:
            assert self._arrived.wait_for(lambda: stamp in self.by_stamp, PATIENCE), f"no answer to {stamp}"
            return self.by_stamp[stamp]


def counts(client: RobotClient) -> dict[str, str]:
    diagnostics = client.diagnostics
    status = next((s for s in diagnostics.status if s.name.startswith("balance_monitor")), None) \
        if diagnostics else None
    return {kv.key: kv.value for kv in status.values} if status else {}


def com(state: BalanceState) -> np.ndarray:
    return np.array([state.com.x, state.com.y, state.com.z])


@pytest.fixture(scope="module")
def monitor(tmp_path_factory) -> Iterator[Graph]:
    """The balance monitor alone, with a patience far beyond the diagnostics' period (so that the
    waits test sees a state waiting); the other parameters its defaults."""
    spec = balance_monitor_node_spec(ROBOT, {"sensor_patience": 5.0, "diagnostics_rate": 20.0})
    with Graph([spec], log_dir=tmp_path_factory.mktemp("monitor")) as graph:
        yield graph


def test_bad_joint_states_are_counted_and_never_give_a_nan_com(monitor):
    model = load_model(ROBOT)
    names = list(model.joints.names)
    home = model.home_positions()
    graph = monitor
    with RobotClient("bad_input_test") as client:
        publisher = client.node.create_publisher(JointState, "joint_states", 10)
        answers = Answers(client)
        stamp = [100.0]

        def send(joint_names, positions) -> float:
            stamp[0] += 0.01
            msg = JointState(name=list(joint_names), position=[float(p) for p in positions])
            msg.header.stamp = to_time(stamp[0])
            publisher.publish(msg)
            return seconds(msg.header.stamp)

        def good() -> BalanceState:
            return answers.wait(send(names, home))

        # the node is up when it answers (it loads its model first)
        poll_until(lambda: send(names, home) and answers.by_stamp, "a first balance_state", PATIENCE, 0.2)
        reference = com(good())

        stale = home.copy()
        stale[names.index("r_knee")] = math.nan
        stale[names.index("l_elbow")] = math.inf
        assert np.allclose(com(answers.wait(send(names, stale))), reference, atol=1e-12)  # last known values kept
        missing = answers.wait(send(names[:-3], home[:-3]))
        assert np.allclose(com(missing), reference, atol=1e-12)
        unknown = answers.wait(send([*names, "tail_joint"], [*home, 0.3]))
        assert np.allclose(com(unknown), reference, atol=1e-12)
        all_stale = answers.wait(send(names, [math.nan] * len(names)))
        assert np.allclose(com(all_stale), reference, atol=1e-12)

        unreadable = [send(names, home[:-1]), send([*names[:2], names[0]], home[:3])]
        after = good()  # answered in order: the unreadable ones came before
        assert all(s not in answers.by_stamp for s in unreadable)
        assert np.allclose(com(after), reference, atol=1e-12)

        expected = {"stale_joint_readings": 2 + len(names), "missing_joint_readings": 3, "unknown_joint_names": 1,
                    "malformed": 2}
        values = poll_until(lambda: (v := counts(client)) and all(int(v.get(k, -1)) >= n for k, n in expected.items())
                            and v, "diagnostics counting the bad messages", PATIENCE)
        assert "r_knee" in graph.log_text("balance_monitor")  # the log names what was wrong
        assert values["last_input_problem"].startswith("joint_states not readable")
        assert not graph.exited(), "the balance monitor stopped"
        assert all(np.all(np.isfinite(com(s))) for s in answers.by_stamp.values())


def test_a_joint_state_ahead_of_its_ground_truth_waits_for_it_at_most_the_patience(monitor):
    model = load_model(ROBOT)
    names, home = list(model.joints.names), model.home_positions()
    graph = monitor
    with RobotClient("sensor_wait_test") as client:
        joints = client.node.create_publisher(JointState, "joint_states", 100)
        truth = client.node.create_publisher(PoseStamped, "ground_truth/base_pose", 100)
        answers = Answers(client)

        def joint_state(stamp: float) -> float:
            msg = JointState(name=names, position=[float(p) for p in home])
            msg.header.stamp = to_time(stamp)
            joints.publish(msg)
            return stamp

        def ground_truth(stamp: float) -> None:
            msg = PoseStamped()
            msg.header.stamp, msg.header.frame_id = to_time(stamp), "world"
            msg.pose.position.z, msg.pose.orientation.w = 0.2, 1.0
            truth.publish(msg)

        def answered_with_ground_truth(stamp: float) -> bool:
            ground_truth(stamp)
            joint_state(stamp)
            answer = answers.by_stamp.get(stamp)
            return answer is not None and answer.header.frame_id == "world"

        # the node is up, and both subscriptions matched, when it answers in the world frame
        start = 200.0  # after the bad input test's stamps
        poll_until(lambda: answered_with_ground_truth(start), "a balance_state in the world frame", PATIENCE, 0.2)

        late = joint_state(start + 0.5)  # its ground truth is not there yet: it must wait
        poll_until(lambda: int(counts(client).get("held_for_late_sensors", 0)) >= 1,
                   "diagnostics saying a joint state waits", PATIENCE)
        assert late not in answers.by_stamp
        ground_truth(late)
        assert answers.wait(late).header.frame_id == "world"  # answered with it, not without

        stopped = joint_state(start + 1.0)  # no ground truth ever comes: answered after the patience
        assert answers.wait(stopped).header.frame_id != "world"
        values = poll_until(lambda: (v := counts(client)) and int(v["answered_without_late_sensor"]) >= 1 and v,
                            "diagnostics counting the answer without its ground truth", PATIENCE)
        assert int(values["held_for_late_sensors"]) == 2
        assert not graph.exited(), "the balance monitor stopped"


def test_bench_balance_prints_its_figures():
    """A short run of the benchmark (the real figures take ~30 s: see README)."""
    result = subprocess.run(["humanoid", "bench", "balance", "--robot", ROBOT, "--configurations", "200",
                             "--rounds", "1", "--rate", "200", "--seconds", "1", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    for key in ("answered_ratio", "latency_p99_ms", "node_cpu_us_per_message", "estimator_updates_per_s",
                "estimator_updates_per_s_stepping"):
        assert math.isfinite(figures[key]) and figures[key] > 0.0, (key, figures)
    assert figures["sent"] == 200 and figures["answered_ratio"] <= 1.0
