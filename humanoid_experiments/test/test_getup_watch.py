"""``humanoid getup``'s wait for a trial's end: a get-up is measured from the fall manager's
states, and a broken graph is an error said at once, not a trial waiting out its whole wall
budget (22 minutes by default: a test of the command was stopped by pytest's timeout with no
log to say why). Robot time that stands still, a node of the graph that exits, and a fall
manager that says nothing while robot time runs on each end the wait.

In process: the watch's subscriptions are on a node never spun; the fall manager's states are
handed to it as its subscription would, and robot time and the graph are functions."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
import rclpy

from humanoid_control.ros import RobotClientError, to_time
from humanoid_experiments import GetupWatch
from humanoid_interfaces.msg import FallManagerState

S = FallManagerState
NAMES = {S.CONTROLLABLE: "controllable", S.FALLING: "falling", S.FALLEN: "fallen", S.GETTING_UP: "getting_up"}


@pytest.fixture
def watch():
    rclpy.init()
    node = rclpy.create_node("getup_watch_test")
    try:
        yield GetupWatch(SimpleNamespace(node=node))
    finally:
        node.destroy_node()
        rclpy.shutdown()


def manager_state(state: int, stamp: float, since: float | None = None, attempt: int = 0) -> FallManagerState:
    msg = FallManagerState(state=state, state_name=NAMES[state], cause=f"{NAMES[state]} for the test",
                           attempt=attempt, max_attempts=3)
    msg.header.stamp = to_time(stamp)
    msg.since = to_time(stamp if since is None else since)
    return msg


def running_clock(start: float, step: float):
    """Robot time that goes ``step`` s further at every look."""
    ticks = itertools.count()
    return lambda: start + step * next(ticks)


def no_exit() -> dict[str, int]:
    return {}


def test_a_get_up_is_timed_from_its_start_to_controllable(watch):
    for msg in (manager_state(S.FALLING, 1.0), manager_state(S.FALLEN, 1.5),
                manager_state(S.GETTING_UP, 2.0, attempt=1), manager_state(S.CONTROLLABLE, 18.5, attempt=1)):
        watch._on_state(msg)
    result = watch.outcome(0.5, 120.0, 60.0, running_clock(19.0, 0.01), no_exit)
    assert result.succeeded and result.time_s == pytest.approx(16.5) and result.attempts == 1


def test_robot_time_standing_still_is_an_error_naming_the_managers_state(watch):
    watch._on_state(manager_state(S.FALLEN, 1.5))
    with pytest.raises(RobotClientError, match=r"the simulation stopped at t = 2\.000 s: no new state for 0\.3 "
                                               r"wall seconds \(the manager: fallen, fallen for the test\)"):
        watch.outcome(0.5, 120.0, 60.0, lambda: 2.0, no_exit, stall=0.3)


def test_a_node_that_exits_during_a_trial_is_an_error_naming_it(watch):
    watch._on_state(manager_state(S.GETTING_UP, 2.0, attempt=1))
    with pytest.raises(RobotClientError,
                       match=r"control_container \(status 1\) exited at t = 3\.000 s during the trial"):
        watch.outcome(0.5, 120.0, 60.0, lambda: 3.0, lambda: {"control_container": 1})


def test_a_silent_fall_manager_ends_the_trial_on_robot_time(watch):
    """No state of the manager (its node silent) while the simulation runs on: the trial ends
    once robot time passes the timeout, long before the wall budget."""
    result = watch.outcome(0.5, 60.0, 60.0, running_clock(0.5, 5.0), no_exit)
    assert not result.succeeded
    assert result.why == "not up 60 s after the start (no state of the fall manager received)"
