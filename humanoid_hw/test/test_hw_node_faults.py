"""Bus faults at node level: the hardware node process on an emulated Bioloid bus.

The emulator runs in the test process (faults are injected while the node runs); the
node is the real ``humanoid_hw.hw_node`` in its own process, watched only through the
robot interface (joint_states, diagnostics, follow_joint_trajectory), as a user sees it.
Each fault must produce the behaviour the driver documents (humanoid_hw/driver.py) and
leave the other joints served. Every wait polls the expected condition with a deadline.

The faults injected while the node runs share one node on one emulated bus (a node start
costs seconds of imports and discovery): each such test leaves the bus whole, counts from
what it found, and touches servos no other test touches; the servo errors, whose shut-down
servos stay off until the node restarts, come last but one, and SIGINT ends that node last
(the shipped on_shutdown: limp). The refused start gets a node of its own; the degraded
start's node is also the one ended by SIGINT with on_shutdown: hold.
The diagnostics are published at 10 Hz instead of the shipped 1 Hz, so that a wait on a
reported change ends a tenth of a second after the change, not up to a second.
"""

from __future__ import annotations

import itertools
import math
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticStatus

from humanoid_control.ros import GoalOutcome, RobotClient, make_trajectory, poll_until, seconds
from humanoid_core.processes import Graph, NodeSpec
from humanoid_hw import DynamixelBus
from humanoid_hw.emulator import BusEmulator, robot_servos
from humanoid_hw.hw_node_spec import hw_node_spec
from humanoid_interfaces.action import FollowJointTrajectory

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 30.0
#: The emulator shares the machine (and this process) with the node: a packet timeout of
#: 2 x 50 + 2 ms instead of the adapter default's 34 ms keeps a busy moment from passing
#: for a fault. The shipped retries (3) and back-off (0.1 s doubling to 2 s) are kept.
LATENCY_TIMER_MS = 50
RETRIES = 3
REOPEN_BACKOFF = (0.1, 2.0)
#: Hz of the node's diagnostics (shipped: 1 Hz).
DIAGNOSTICS_RATE = 10.0
#: How often the shared node asks a stale servo again (s): a stale report lasts at least this
#: long, ten diagnostics periods, so that it cannot fall between two of them.
STALE_PROBE_PERIOD = 1.0
#: How close a moved joint must end to its goal: the interface's goal tolerance.
GOAL_TOLERANCE = 0.05

#: The ``robot_graph`` fixture of conftest.py: nodes -> (graph, connected client).
RobotGraph = Callable[..., tuple[Graph, RobotClient]]


# -- the node and the emulator -------------------------------------------------------------
@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[BusEmulator]:
    """The Bioloid's 18 AX-12s behind a link path, which follows the pseudo-terminal when it reappears."""
    emulator = BusEmulator(robot_servos(ROBOT, 1), link=tmp_path / "ttyDXL").start()
    yield emulator
    emulator.stop()


def hw_node(port: str, **parameters: object) -> NodeSpec:
    """The hardware node of the real-robot graph (alone) on ``port``, with bus parameters overridden."""
    bus = {"latency_timer_ms": LATENCY_TIMER_MS, "retries": RETRIES,
           "reopen_backoff_initial": REOPEN_BACKOFF[0], "reopen_backoff_max": REOPEN_BACKOFF[1],
           "diagnostics_rate": DIAGNOSTICS_RATE}
    return hw_node_spec(ROBOT, {"port": port} | bus | parameters)


@pytest.fixture(scope="class")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BusEmulator, Graph, RobotClient]]:
    """One emulated bus and one hardware node serving it, for the faults injected while it runs;
    stopped when the class's tests are done (before the module's other tests start their own)."""
    where = tmp_path_factory.mktemp("running")
    emulator = BusEmulator(robot_servos(ROBOT, 1), link=where / "ttyDXL").start()
    graph = Graph([hw_node(emulator.port, stale_probe_period=STALE_PROBE_PERIOD)], log_dir=where / "logs")
    try:
        graph.start()
        with RobotClient("test_client") as client:
            client.wait_for_joint_states(60.0)
            yield emulator, graph, client
    finally:
        codes = graph.stop()
        emulator.stop()
        print(f"----- log of humanoid_hw (exit {codes.get('humanoid_hw')}) -----\n"
              f"{graph.log_text('humanoid_hw')[-4000:]}")


# -- what a user sees: diagnostics, joint_states, goals ------------------------------------
def values(status: DiagnosticStatus) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def joint_status(client: RobotClient, joint: str) -> DiagnosticStatus | None:
    """The latest diagnostics entry of one joint (entries carry the joint's name and servo ID)."""
    diagnostics = client.diagnostics
    if diagnostics is None:
        return None
    return next((s for s in diagnostics.status if values(s).get("joint") == joint), None)


def bus_status(client: RobotClient) -> DiagnosticStatus | None:
    diagnostics = client.diagnostics
    if diagnostics is None:
        return None
    return next((s for s in diagnostics.status if s.name == "dynamixel bus"), None)


def joint_status_where(client: RobotClient, joint: str,
                       predicate: Callable[[DiagnosticStatus], bool], what: str) -> DiagnosticStatus:
    return poll_until(lambda: (s := joint_status(client, joint)) is not None and predicate(s) and s,
                      f"diagnostics of {joint}: {what}", PATIENCE)


def bus_status_where(client: RobotClient, predicate: Callable[[DiagnosticStatus], bool],
                     what: str) -> DiagnosticStatus:
    return poll_until(lambda: (s := bus_status(client)) is not None and predicate(s) and s,
                      f"bus diagnostics: {what}", PATIENCE)


def assert_joint_states_keep_coming(client: RobotClient, count: int = 20) -> None:
    """``count`` fresh joint_states messages, each newer than the one before."""
    stamps = []
    for _ in range(count):
        msg = client.wait_for_joint_states(PATIENCE)
        stamps.append(seconds(msg.header.stamp))
    assert all(b > a for a, b in itertools.pairwise(stamps)), stamps


def move(client: RobotClient, joint: str, delta: float, duration: float = 1.0,
         start: float | None = None) -> GoalOutcome:
    """Move one joint by ``delta`` rad (from ``start``, default: where it is measured) through
    the action; returns the outcome."""
    start = client.positions()[joint] if start is None else start
    return client.follow(make_trajectory([joint], [duration], [[start + delta]]), timeout=PATIENCE)


def assert_moves(client: RobotClient, joint: str, delta: float) -> None:
    """A goal for ``joint`` succeeds and joint_states show the joint where it was sent."""
    target = client.positions()[joint] + delta
    outcome = move(client, joint, delta)
    assert outcome.succeeded, f"{joint}: {outcome.error_string}"
    # the result can overtake the joint_states that show the goal reached: watch them arrive
    poll_until(lambda: abs(client.positions()[joint] - target) <= GOAL_TOLERANCE,
               f"joint_states showing {joint} at {target:.3f} rad", PATIENCE)


def torques(emulator: BusEmulator) -> list[int]:
    """Torque Enable of every servo."""
    return [emulator.register(i, "torque_enable") for i in emulator.servo_ids]


def torques_after_exit(emulator: BusEmulator) -> list[int]:
    """Torque Enable of every servo once everything the exited node sent has been handled."""
    probe = DynamixelBus(emulator.port, emulator.baud, 1, latency_timer_ms=LATENCY_TIMER_MS)
    probe.open()
    try:  # the emulator handles packets in order: an answered PING comes after all of them
        assert probe.ping(emulator.servo_ids[0]).ok
    finally:
        probe.close()
    return torques(emulator)


def assert_stops_on_sigint(graph: Graph) -> None:
    """SIGINT (Ctrl-C, a launch file stopping) ends the hardware node with exit status 0."""
    process = graph.processes["humanoid_hw"]
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=PATIENCE) == 0


def last_goal_write(emulator: BusEmulator) -> list[int]:
    """The servo IDs of the latest SYNC_WRITE of goals received (protocol 1.0, address 30)."""
    for raw in reversed(list(emulator.received)):
        if raw[2] == 0xFE and raw[4] == 0x83 and raw[5] == 30:
            return list(raw[7:-1:raw[6] + 1])
    return []


def backoff_attempts(window: float, initial: float, maximum: float) -> int:
    """Reopen attempts that fit in ``window`` seconds when the delay doubles from ``initial`` to ``maximum``."""
    attempts, elapsed, delay = 0, initial, initial
    while elapsed <= window:
        attempts += 1
        delay = min(2.0 * delay, maximum)
        elapsed += delay
    return attempts


# -- faults while running --------------------------------------------------------------------
Running = tuple[BusEmulator, Graph, RobotClient]


class TestFaultsWhileRunning:
    """Faults injected into the bus of one running node (the class's ``running`` fixture)."""

    def test_a_silent_servo_is_stale_while_the_others_keep_following_and_it_recovers(self, running: Running) -> None:
        """A servo unplugged mid-run must cost its joint only: named in diagnostics, the rest still served."""
        emulator, _graph, client = running
        last_known = client.positions()["r_shoulder_roll"]
        emulator.silence(3)  # r_shoulder_roll
        stale = joint_status_where(client, "r_shoulder_roll", lambda s: s.level == DiagnosticStatus.STALE, "stale")
        assert "r_shoulder_roll" in stale.message and "ID 3" in stale.message and values(stale)["id"] == "3"
        assert_joint_states_keep_coming(client)
        # joint_states say it too: the silent joint's reading is unknown (NaN), the others are fresh values
        msg = client.wait_for_joint_states(PATIENCE)
        index = list(msg.name).index("r_shoulder_roll")
        assert all(math.isnan(values[index]) for values in (msg.position, msg.velocity, msg.effort))
        assert all(math.isfinite(v) for i, v in enumerate(msg.position) if i != index)
        assert_moves(client, "r_elbow", 0.4)
        # a goal that needs the silent servo cannot succeed
        refused = move(client, "r_shoulder_roll", 0.3, start=last_known)
        assert refused.error_code == FollowJointTrajectory.Result.DRIVER_FAILURE
        assert "r_shoulder_roll" in refused.error_string
        emulator.silence(3, False)
        joint_status_where(client, "r_shoulder_roll",
                           lambda s: s.level == DiagnosticStatus.OK and values(s)["recoveries"] == "1", "recovered")
        # the reading after the recovery: diagnostics and joint_states are two topics, and a loaded
        # machine once brought the recovery first (the move then began at the unknown position)
        poll_until(lambda: math.isfinite(client.positions()["r_shoulder_roll"]),
                   "a reading of r_shoulder_roll after its recovery", PATIENCE)
        assert_moves(client, "r_shoulder_roll", 0.3)

    def test_corrupted_answers_are_retried_within_the_bound_and_reported(self, running: Running) -> None:
        """Noise on the bus costs retries, not joints, up to ``retries``; one more bad answer and the
        joint goes stale."""
        emulator, _graph, client = running
        counted = values(bus_status_where(client, lambda s: True, "published"))
        before, retries_before = int(counted["corrupt_packets"]), int(counted["retries"])

        emulator.corrupt_replies(RETRIES, servo_id=4)  # l_shoulder_roll: the last retry gets through
        report = bus_status_where(client, lambda s: int(values(s)["corrupt_packets"]) > before, "corruption counted")
        assert report.level == DiagnosticStatus.WARN and "corrupt" in report.message
        bus_status_where(client, lambda s: int(values(s)["corrupt_packets"]) == before + RETRIES, "all counted")
        assert int(values(bus_status(client))["retries"]) >= retries_before + RETRIES
        assert values(joint_status(client, "l_shoulder_roll"))["recoveries"] == "0"  # never lost

        emulator.corrupt_replies(RETRIES + 1, servo_id=4)  # every attempt of one read fails
        stale = joint_status_where(client, "l_shoulder_roll", lambda s: s.level == DiagnosticStatus.STALE, "stale")
        assert "l_shoulder_roll" in stale.message and "ID 4" in stale.message and "corrupt" in stale.message
        assert_joint_states_keep_coming(client)
        joint_status_where(client, "l_shoulder_roll",
                           lambda s: s.level == DiagnosticStatus.OK and values(s)["recoveries"] == "1", "recovered")
        # the count as a later bus report gives it (a loaded run read 6 of 7 in the report beside the recovery)
        bus_status_where(client, lambda s: int(values(s)["corrupt_packets"]) >= before + 2 * RETRIES + 1,
                         "all counted")
        assert int(values(bus_status(client))["corrupt_packets"]) == before + 2 * RETRIES + 1  # no attempt beyond
        assert_moves(client, "l_shoulder_roll", 0.3)

    def test_a_vanished_port_is_reported_and_reopened_with_back_off(self, running: Running) -> None:
        """An unplugged adapter must not end the node: it reports the loss and reopens the port when it is back."""
        emulator, graph, client = running
        emulator.vanish()
        lost_at = time.monotonic()
        lost = bus_status_where(client, lambda s: s.level == DiagnosticStatus.ERROR, "port lost")
        assert "lost" in lost.message and emulator.port in lost.message
        # no joint read: nothing fresh is published while the port is gone (diagnostics go on)
        client.start_recording()
        bus_status_where(client, lambda s: int(values(s)["reopen_attempts"]) >= 4, "reopen attempts")
        assert client.stop_recording() == []
        assert graph.exited() == {}
        emulator.reappear()
        back = bus_status_where(client, lambda s: s.level == DiagnosticStatus.OK and values(s)["port_reopens"] == "1",
                                "reopened")
        window = time.monotonic() - lost_at
        assert values(back)["port_losses"] == "1"
        assert int(values(back)["reopen_attempts"]) <= backoff_attempts(window, *REOPEN_BACKOFF) + 1
        for joint in ("r_elbow", "l_hip_roll"):
            joint_status_where(client, joint, lambda s: s.level == DiagnosticStatus.OK, "read again")
        assert_moves(client, "r_elbow", -0.4)  # back where the silent-servo test found it
        assert graph.exited() == {}

    def test_servo_error_bits_are_decoded_with_the_joint_name(self, running: Running) -> None:
        """Overload and overheating are what a user must see by joint, not as a raw error byte.
        Last of the class: the two servos stay shut down until the node restarts."""
        emulator, _graph, client = running
        emulator.inject_errors(9, "overload")  # r_hip_roll
        emulator.inject_errors(10, "overheating")  # l_hip_roll
        for joint, servo_id, fault in (("r_hip_roll", 9, "overload"), ("l_hip_roll", 10, "overheating")):
            status = joint_status_where(client, joint, lambda s: s.level == DiagnosticStatus.ERROR, "error")
            assert joint in status.message and f"ID {servo_id}" in status.message and fault in status.message
        assert_joint_states_keep_coming(client)
        assert_moves(client, "r_elbow", 0.4)
        emulator.clear_errors(9)
        emulator.clear_errors(10)
        # both faults make an AX-12 switch its own torque off: that stays reported once the bit clears
        for joint in ("r_hip_roll", "l_hip_roll"):
            joint_status_where(client, joint, lambda s: s.level == DiagnosticStatus.ERROR
                               and "shut itself down" in s.message and "re-armed" in s.message,
                               "reported as shut down")

    def test_sigint_leaves_the_servos_limp(self, running: Running) -> None:
        """SIGINT (Ctrl-C, a launch file stopping) must leave the servos as on_shutdown says: the
        shipped limp, every torque off. Last of the class (it ends the node): every servo but the
        two the error test shut down (torque off already) still holds its torque until then."""
        emulator, graph, _client = running
        shut_down = {9, 10}
        assert [t for i, t in zip(emulator.servo_ids, torques(emulator), strict=True) if i not in shut_down] \
            == [1] * (18 - len(shut_down))
        assert_stops_on_sigint(graph)
        assert torques_after_exit(emulator) == [0] * 18


# -- start-up and shutdown -----------------------------------------------------------------
def test_a_missing_servo_with_on_missing_refuse_exits_1_naming_the_id_and_the_joint(
        emulator: BusEmulator, tmp_path: Path) -> None:
    """A robot that is not all there must not start moving: exit status 1 and a log that says what is missing."""
    emulator.silence(5)  # r_elbow
    # The adapter's shipped latency timer: the missing servo costs 4 rounds of 4 PINGs, each
    # waiting out its timeout (34 ms instead of 102); a busy moment that made a present servo
    # miss its answers too would still leave r_elbow named and the exit status 1.
    graph = Graph([hw_node(emulator.port, on_missing="refuse", latency_timer_ms=16.0)],
                  log_dir=tmp_path / "logs").start()
    try:
        codes = graph.wait(timeout=PATIENCE)
    finally:
        graph.stop()
    log = graph.log_text("humanoid_hw")
    assert codes == {"humanoid_hw": 1}, log
    fatal = [line for line in log.splitlines() if "cannot start" in line]
    assert fatal and "ID 5" in fatal[0] and "r_elbow" in fatal[0], log


def test_a_missing_servo_with_on_missing_degraded_starts_it_stale_and_sigint_holds(
        emulator: BusEmulator, robot_graph: RobotGraph) -> None:
    """Degraded start: the node serves the robot, the missing joint is stale until its servo
    answers; then it holds where it is (nothing commanded it: it must not be driven to the
    placeholder the node held for it). The node is the one with on_shutdown: hold as well
    (the class's has the shipped limp): SIGINT ends it with every servo's torque on."""
    emulator.place(5, 712)  # r_elbow, about 1 rad away from the centre
    emulator.silence(5)
    graph, client = robot_graph([hw_node(emulator.port, on_missing="degraded", on_shutdown="hold")])
    stale = joint_status_where(client, "r_elbow", lambda s: s.level == DiagnosticStatus.STALE, "stale")
    assert "r_elbow" in stale.message and "ID 5" in stale.message
    assert_moves(client, "l_elbow", 0.4)
    assert emulator.register(5, "torque_enable") == 0  # never configured while it did not answer
    emulator.silence(5, False)
    joint_status_where(client, "r_elbow", lambda s: s.level == DiagnosticStatus.OK, "configured and read")
    assert emulator.register(5, "torque_enable") == 1
    # Once the node has sent it goals for a while, they hold it where it was found, not at the
    # placeholder the node held for it meanwhile (raw 512).
    handled = emulator.packets_handled
    assert emulator.wait_for(lambda: emulator.packets_handled >= handled + 20 * 19, timeout=PATIENCE)  # 20 cycles
    assert 5 in last_goal_write(emulator)
    assert abs(emulator.register(5, "goal_position") - 712) <= 3
    assert abs(emulator.register(5, "present_position") - 712) <= 3
    assert_moves(client, "r_elbow", 0.4)
    assert torques(emulator) == [1] * 18
    assert_stops_on_sigint(graph)
    assert torques_after_exit(emulator) == [1] * 18
