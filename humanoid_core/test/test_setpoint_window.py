"""The set-points a walk trajectory carries (loop.setpoint_window): those not yet due, and
the walk's final set-point always, at a time a late trajectory still reaches."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_core.loop import CommandRejectedError, Setpoint, SetpointBatcher, points_still_ahead, still_ahead

PERIOD = 0.005
LEAD = 0.8  # s, the HOAP-2's command_lead
DELAY = 0.1  # s, the node's trajectory delay


def setpoints(first: float, count: int) -> list[Setpoint]:
    return [Setpoint(first + k * PERIOD, np.full(3, float(k)), np.zeros(3)) for k in range(count)]


def test_only_the_set_points_due_after_the_start_are_sent():
    window = still_ahead(setpoints(1.0, 40), begins=1.1, final=False, retime_at=1.0 + LEAD)
    assert [round(s.stamp, 3) for s in window.setpoints] == [round(1.0 + k * PERIOD, 3) for k in range(21, 40)]
    assert window.final_late_by is None


def test_a_final_set_point_come_late_is_sent_for_a_time_a_late_trajectory_still_reaches():
    """The node lagged: the final (at-rest) set-point is due before the trajectory's start.
    Sent alone, at the given time, it survives a transport 0.37 s late (as seen on the
    HOAP-2 at real time), which the old retiming (one period after the start) did not."""
    now = 5.0
    computed = setpoints(4.9, 10)  # the last due at 4.945, before the start at 5.1
    window = still_ahead(computed, begins=now + DELAY, final=True, retime_at=now + LEAD)
    (final,) = window.setpoints
    assert final.stamp == pytest.approx(now + LEAD)
    np.testing.assert_array_equal(final.positions, computed[-1].positions)
    assert window.final_late_by == pytest.approx(now + DELAY - computed[-1].stamp)
    # the validator's rule: the trajectory, stamped at its start, arriving 0.37 s after that
    stamp, arrival = now + DELAY, now + DELAY + 0.37
    times = np.array([final.stamp - stamp])
    assert points_still_ahead(times, stamp, arrival, "start").all()
    with pytest.raises(CommandRejectedError, match="before it could start"):  # one period after the start
        points_still_ahead(np.array([PERIOD]), stamp, arrival, "start")


def test_set_points_not_final_and_all_due_are_dropped():
    window = still_ahead(setpoints(1.0, 10), begins=2.0, final=False, retime_at=2.0)
    assert window.setpoints == [] and window.final_late_by is None


def batcher() -> SetpointBatcher:
    return SetpointBatcher(np.full(3, 5.0), LEAD, send_period=0.05)


def test_a_node_behind_its_readings_sends_only_set_points_ahead_of_the_robots_clock():
    """A queue of readings (a loaded machine): the reading handled is stamped 5.0 while the
    robot's clock reads 5.5. What a trajectory sent now carries is what is still ahead of the
    clock (the front would refuse the rest as past), and the motion's final set-point, due
    already, goes out for the node's command lead after the clock, not after the reading."""
    batch = batcher_with(setpoints(5.0, 160)).flush(5.0, clock=5.5)  # set-points for 5.0 .. 5.795
    assert batch is not None and batch.start == pytest.approx(5.5 + DELAY)
    assert min(s.stamp for s in batch.setpoints) > 5.5 + DELAY
    assert len(batch.setpoints) == len([s for s in setpoints(5.0, 160) if s.stamp > 5.6 + 1e-6])
    # the same reading handled in time: everything after the reading's own start goes
    assert len(batcher_with(setpoints(5.0, 160)).flush(5.0, clock=5.0).setpoints) == 160 - 21

    late = batcher()
    last = setpoints(5.0, 10)
    for setpoint in last[:-1]:
        late.add(setpoint, final=False)
    late.add(last[-1], final=True)
    (final,) = late.flush(5.0, final=True, clock=5.5).setpoints
    assert final.stamp == pytest.approx(5.5 + LEAD)
    np.testing.assert_array_equal(final.positions, last[-1].positions)


def test_a_clock_that_is_not_the_robots_is_not_used():
    """A simulation's time against the node's system clock: the readings' own time rules."""
    batch = batcher_with(setpoints(5.0, 160)).flush(5.0, clock=1.8e9)
    assert batch is not None and batch.start == pytest.approx(5.0 + DELAY)


def batcher_with(computed: list[Setpoint]) -> SetpointBatcher:
    filled = batcher()
    for setpoint in computed:
        filled.add(setpoint, final=False)
    return filled
