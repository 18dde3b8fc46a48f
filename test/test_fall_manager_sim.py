"""The fall manager on the simulated HOAP-2, in the default graph, in lockstep: a push topples
the walking robot; the manager sees the fall coming before the simulator's ground truth says
fallen, the walk ends ``FELL`` with the manager's cause, the protective action (hold) is in
force within its bound, the robot is found lying on its side, and while the manager plays the
get-up motion (a test file here: the robot has none; it waves the arms, so the attempt fails
and, one attempt allowed, the manager gives up) other clients' walk and motion goals are
refused ``GETTING_UP``.

In lockstep, the test's client taking part: the walk starts and the push comes at the same
states in every run (as in test_falls_hoap2_sim.py)."""

from __future__ import annotations

import math
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import MODULE_CLIENT
from humanoid_control.nodes import FALL_MANAGER, with_node_parameters
from humanoid_control.ros import FALL_STATE_QOS, poll_until, seconds
from humanoid_interfaces.action import PlayMotion, Walk
from humanoid_interfaces.msg import FallManagerState, RobotState
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: The get-up motions of the test (every side): the arms raised 30 deg and lowered, 2 s.
GETUP_DIR = Path(tempfile.mkdtemp(prefix="humanoid_getup_"))
LOCKSTEP = True
GRAPH = with_node_parameters(sim_nodes("hoap2", lockstep=True, participants=(MODULE_CLIENT,)), FALL_MANAGER,
                             {"getup_directory": str(GETUP_DIR), "max_attempts": 1, "up_check_time": 0.5})
#: Robot times (s) of the walk goal and of the push (20 N s forward at the trunk: far beyond
#: what the robot stands, test_push_sim.py).
WALK_AT, PUSH_AT = 1.0, 2.5
PUSH = ((200.0, 0.0, 0.0), 0.1)
#: Robot seconds from the reading that said FALLING to the set-points held still: the manager's
#: state reaches the robot interface (which stops the trajectory) and its second sending of the
#: hold (protect_repeat, 50 ms) overrides a controller's command sent before it saw the state.
PROTECT_BOUND = 0.1


def write_getup_motions() -> None:
    for side in ("back", "belly", "left", "right"):
        (GETUP_DIR / f"getup_{side}.yaml").write_text(
            "format: keyframes\nrobot: hoap2\nname: getup_test\nunits: deg\nlaw: cubic\n"
            "joints: [rarm_joint1, larm_joint1]\n"
            "keyframes:\n"
            "  - {time: 0.0, positions: [0.0, 0.0]}\n"
            "  - {time: 1.0, positions: [30.0, 30.0]}\n"
            "  - {time: 2.0, positions: [0.0, 0.0]}\n")


class Watch:
    """The manager's states, the ground truth's first fall and the set-points, by robot time."""

    def __init__(self, client) -> None:
        self.lock = threading.Lock()
        self.states: list[FallManagerState] = []
        self.truth_fell: float | None = None  # stamp of the first state the simulator says fallen
        self.setpoints: list[tuple[float, tuple[float, ...]]] = []
        self.changed = threading.Condition(self.lock)
        client.node.create_subscription(FallManagerState, "fall_manager_state", self._on_state, FALL_STATE_QOS)
        client.node.create_subscription(RobotState, "robot_state", self._on_robot_state, 1000)

    def _on_state(self, msg: FallManagerState) -> None:
        with self.changed:
            self.states.append(msg)
            self.changed.notify_all()

    def _on_robot_state(self, msg: RobotState) -> None:
        stamp = seconds(msg.header.stamp)
        with self.lock:
            if msg.fallen and msg.fallen[0].data and self.truth_fell is None:
                self.truth_fell = stamp
            if msg.setpoints:
                self.setpoints.append((stamp, tuple(msg.setpoints[0].position)))

    def down(self, timeout: float) -> FallManagerState:
        """The first state message saying the robot lies still (fallen, or getting up at once)."""
        return self.first((FallManagerState.FALLEN, FallManagerState.GETTING_UP), timeout)

    def first(self, state: int | tuple[int, ...], timeout: float, after: int = 0) -> FallManagerState:
        """The first state message ``state`` (or of the states) from the ``after``-th on, waiting
        up to ``timeout`` s (wall)."""
        states = state if isinstance(state, tuple) else (state,)
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                found = [m for m in self.states[after:] if m.state in states]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, f"no fall_manager_state {state} within {timeout} s: {[m.cause for m in self.states]}"
                self.changed.wait(left)


@pytest.fixture(scope="module")
def hoap2(module_graph):
    write_getup_motions()
    return module_graph


@pytest.fixture(scope="module")
def watch(hoap2):
    return Watch(hoap2)


def test_a_push_seen_falling_stops_the_walk_and_the_robot_holds(hoap2, watch):
    action = hoap2.action_client(Walk, "walk")
    assert action.wait_for_server(timeout_sec=60.0)
    controllable = watch.first(FallManagerState.CONTROLLABLE, 60.0)
    assert "upright" in controllable.cause and controllable.source == "imu"
    # the simulator's IMU reaches the container in the states alone: once they carry it, the
    # container no longer also takes imu/data (an outside IMU's topic, test_fall_manager_hw.py)
    def container_takes(topic: str) -> bool:
        return any(info.node_name == "control_container" for info in hoap2.node.get_subscriptions_info_by_topic(topic))

    poll_until(lambda: container_takes("/robot_state") and not container_takes("/imu/data"),
               "the container seen taking robot_state, not imu/data", 60.0)
    hoap2.lockstep.run_to(WALK_AT, 60.0)
    try:
        handle = hoap2.wait_future(action.send_goal_async(Walk.Goal(distance=1.0)), 60.0, "walk goal response")
        assert handle.accepted
        hoap2.lockstep.run_to(PUSH_AT, 60.0)
        hoap2.apply_push(*PUSH)
    finally:
        hoap2.lockstep.release()  # from here on the client answers every state as it comes
    falling = watch.first(FallManagerState.FALLING, 120.0)
    result = hoap2.wait_result(handle, 60.0, "walk result after the push").result
    poll_until(lambda: watch.truth_fell, "the simulator's fall", 120.0)
    lying = watch.down(120.0)  # lying still: fallen, or getting up at once
    seen, truth = seconds(falling.header.stamp), watch.truth_fell
    print(f"fall seen coming at t = {seen:.3f} s ({math.degrees(falling.tilt):.1f} deg, "
          f"{math.degrees(falling.tilt_rate):.0f} deg/s), {(truth - seen) * 1000:.0f} ms before the simulator's "
          f"fallen (t = {truth:.3f} s); cause: {falling.cause}")
    assert seen < truth, (seen, truth)
    assert falling.source == "imu" and "a fall is seen coming" in falling.cause
    assert result.error_code == Walk.Result.FELL, result.error_string
    assert "fall manager" in result.error_string and "falling" in result.error_string

    # the protective action: the set-points stand still from within PROTECT_BOUND of the
    # reading until the robot lies still (then the get-up motion moves it)
    end = seconds(lying.header.stamp)
    hoap2.wait_until(end, timeout=60.0)
    with watch.lock:
        after = [(t, p) for t, p in watch.setpoints if seen <= t <= end]
        before = [p for t, p in watch.setpoints if seen - 0.1 <= t < seen]
    assert len(set(before)) > 1, "the set-points did not move before the fall (no walk to stop)"
    final = after[-1][1]
    moving = [t for t, p in after if max(abs(a - b) for a, b in zip(p, final, strict=True)) > 1e-9]
    held = (moving[-1] if moving else after[0][0]) - seen  # the last set-point that still moved
    print(f"protective action (hold) in force {held * 1000:.0f} ms after the reading that said falling "
          f"(bound {PROTECT_BOUND * 1000:.0f} ms)")
    assert held <= PROTECT_BOUND

    # lying: on its belly, as the push (forward) made it fall, as the ground truth says
    assert lying.side == FallManagerState.BELLY, lying.cause
    assert "lying still" in lying.cause and "on the belly" in lying.cause


def test_goals_of_other_clients_are_refused_while_getting_up(hoap2, watch):
    getting_up = watch.first(FallManagerState.GETTING_UP, 120.0)
    assert getting_up.attempt == 1 and getting_up.getup_motion.endswith(f"getup_{getting_up.side}.yaml")
    assert any(getting_up.getup_goal_id)
    walk = hoap2.action_client(Walk, "walk")
    walked = hoap2.wait_result(hoap2.wait_future(walk.send_goal_async(Walk.Goal(distance=0.1)), 60.0, "walk goal"),
                               60.0, "walk result while getting up").result
    played = hoap2.wait_result(hoap2.send_motion(PlayMotion.Goal(motion_name="wave")), 60.0,
                               "play_motion result while getting up").result
    assert walked.error_code == Walk.Result.GETTING_UP, walked.error_string
    assert played.error_code == PlayMotion.Result.GETTING_UP, played.error_string
    for text in (walked.error_string, played.error_string):
        assert "getting the robot up (attempt 1 of 1" in text
    # the manager's own motion was played; the robot still lies: the attempt fails, it gives up
    count = len(watch.states)
    gave_up = watch.first(FallManagerState.FALLEN, 120.0, after=count)
    causes = [m.cause for m in watch.states[count - 1:]]
    assert any("ended (attempt 1 of 1)" in c for c in causes), causes
    assert "attempt 1 failed" in gave_up.cause or "gave up" in gave_up.cause, gave_up.cause
