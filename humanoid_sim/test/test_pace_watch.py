"""A simulation that cannot keep its real-time factor gives its loop's raised priority up
(humanoid_sim.pace_watch): the rule in process, and the simulation node doing it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from loop_processes import loop_process

from humanoid_control.ros import poll_until
from humanoid_sim import PaceWatch
from humanoid_sim.sim_node_spec import sim_node_spec


def watch() -> PaceWatch:
    return PaceWatch(real_time_factor=1.0, window=5.0, share=0.8)


def test_a_simulation_keeping_its_pace_is_never_reported():
    pace = watch()
    assert [pace.update(wall, 0.95 * wall) for wall in range(0, 31)] == [None] * 31


def test_a_window_short_of_the_share_is_reported_with_the_share_it_reached():
    pace = watch()
    reports = [pace.update(wall, 0.5 * wall) for wall in range(0, 11)]
    assert reports[:5] == [None] * 5  # the first window is still running
    assert reports[5] == pytest.approx(0.5) and reports[10] == pytest.approx(0.5)


def test_the_share_is_of_the_real_time_factor():
    pace = PaceWatch(real_time_factor=4.0, window=5.0, share=0.8)
    assert pace.update(0.0, 0.0) is None
    assert pace.update(5.0, 5.0 * 3.5) is None  # 0.875 of 4
    assert pace.update(10.0, 5.0 * 3.5 + 5.0 * 2.0) == pytest.approx(0.5)


def test_a_pause_or_a_reset_starts_a_new_window():
    pace = watch()
    pace.update(0.0, 0.0)
    assert pace.update(4.0, 4.0) is None
    assert pace.update(9.0, 4.0, paused=True) is None  # 5 s paused: not the machine's pace
    assert pace.update(14.0, 9.0) is None
    assert pace.update(15.0, 0.0) is None  # reset to t = 0
    assert pace.update(20.0, 5.0) is None


@pytest.mark.system
def test_a_simulation_that_cannot_keep_its_factor_puts_its_loop_back_at_the_default_priority(robot_graph):
    """A Bioloid asked for 500 times real time (no machine keeps that): after its first window
    the loop is back at nice 0, its session's group too, and the log says why."""
    graph, _client = robot_graph([sim_node_spec("bioloid", {"real_time_factor": 500.0, "pace_window": 1.0})])
    (front,) = graph.processes.values()
    loop = loop_process(front.pid)
    poll_until(lambda: "cannot keep real time" in graph.log_text("humanoid_sim"), "the loop giving its priority up",
               60.0)
    assert "of its real-time factor over the last 1 s" in graph.log_text("humanoid_sim")
    assert os.getpriority(os.PRIO_PROCESS, loop) == 0
    for task in Path(f"/proc/{loop}/task").iterdir():
        assert os.getpriority(os.PRIO_PROCESS, int(task.name)) == 0, f"thread {task.name}"
    autogroup = Path(f"/proc/{loop}/autogroup")
    if autogroup.exists():
        assert autogroup.read_text().split()[-1] == "0", autogroup.read_text()
