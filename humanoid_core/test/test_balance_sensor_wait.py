"""Joint states held until the sensor readings of their instant arrive (balance/sensor_wait),
in-process on a hand-driven clock."""

from __future__ import annotations

import pytest

from humanoid_core.balance import RecentReadings, SensorWait

TIMEOUT = 0.1  # s, sensor_timeout
PATIENCE = 0.5  # s, sensor_patience
PERIOD = 0.02  # s, the sensor's (ground truth at 50 Hz)


class Rig:
    """One sensor feed, a wait in front of a list of answered stamps, a clock set by hand."""

    def __init__(self, depth: int = 100) -> None:
        self.feed: RecentReadings[str] = RecentReadings()
        self.now = 0.0
        self.answered: list[float] = []
        self.wait: SensorWait[float] = SensorWait(
            lambda: [self.feed], self.answered.append, TIMEOUT, PATIENCE, depth, lambda: self.now)

    def state(self, stamp: float) -> None:
        self.wait.offer(stamp, stamp)

    def readings(self, *stamps: float) -> None:
        for stamp in stamps:
            self.feed.add(stamp, "pose")
        self.wait.drain()


def test_without_sensor_readings_every_state_is_answered_at_once():
    rig = Rig()
    for stamp in (1.0, 1.01, 2.0):
        rig.state(stamp)
    assert rig.answered == [1.0, 1.01, 2.0] and rig.wait.waited == 0


def test_a_state_within_one_sensor_period_of_its_newest_reading_is_answered_at_once():
    rig = Rig()
    rig.readings(0.98, 1.0)
    for stamp in (1.0, 1.01, 1.02):
        rig.state(stamp)
    assert rig.answered == [1.0, 1.01, 1.02] and rig.wait.waited == 0


def test_a_period_the_physics_step_does_not_divide_is_its_longest_recent_gap():
    """100 Hz on 4 ms physics steps (the fast profile): readings 8 and 12 ms apart in turn. A
    state 12 ms after the newest reading, which came 8 ms after the one before, is within
    the sensor's period (in lockstep, waiting for the reading of its own instant held the
    simulation until the wait gave up: the benchmark walk ran 14 times slower)."""
    rig = Rig()
    rig.readings(1.000, 1.012, 1.020, 1.032, 1.040)
    rig.state(1.052)
    assert rig.answered == [1.052] and rig.wait.waited == 0
    rig.state(1.061)  # beyond the longest recent gap: the reading of its instant is still to come
    assert rig.answered == [1.052] and len(rig.wait) == 1


def test_readings_sent_again_do_not_shorten_the_sensor_period():
    """In lockstep the simulation sends a state again (its ground truth with it) while it
    waits for an answer; the copies are one reading. A state between two 50 Hz readings is
    then still answered at once (with the copies as readings, the period came out as zero and
    every such state waited the patience out)."""
    rig = Rig()
    rig.readings(0.98, 1.0, 1.0, 1.0, 1.0)
    rig.state(1.01)
    assert rig.answered == [1.01] and rig.wait.waited == 0
    assert rig.feed.interval == pytest.approx(PERIOD)


def test_a_state_ahead_of_its_sensor_waits_for_it_and_those_after_it_keep_their_order():
    rig = Rig()
    rig.readings(0.98, 1.0)
    rig.state(1.0)
    rig.state(1.05)  # the reading nearest 1.05 is still to come
    rig.state(1.07)
    assert rig.answered == [1.0] and len(rig.wait) == 2
    rig.readings(1.02)
    assert rig.answered == [1.0]
    rig.readings(1.04)
    assert rig.answered == [1.0, 1.05]  # 1.07 awaits the reading of 1.06
    rig.readings(1.06)
    assert rig.answered == [1.0, 1.05, 1.07] and (rig.wait.waited, rig.wait.gave_up) == (2, 0)


def test_a_sensor_that_stopped_delays_the_answers_once_by_the_patience():
    rig = Rig()
    rig.readings(0.98, 1.0)
    rig.state(1.0)
    rig.state(1.03)
    rig.now = PATIENCE * 0.9
    rig.wait.drain()
    assert rig.answered == [1.0]
    rig.now = PATIENCE * 1.1
    rig.wait.drain()
    assert rig.answered == [1.0, 1.03] and rig.wait.gave_up == 1
    rig.state(1.04)  # given up on: not awaited until it sends again
    assert rig.answered == [1.0, 1.03, 1.04] and len(rig.wait) == 0
    rig.readings(1.02)  # it is back, still behind: awaited again
    rig.state(1.05)
    assert rig.answered == [1.0, 1.03, 1.04] and len(rig.wait) == 1
    rig.readings(1.04)
    assert rig.answered == [1.0, 1.03, 1.04, 1.05]


def test_a_full_queue_releases_its_oldest_state():
    rig = Rig(depth=2)
    rig.readings(0.98, 1.0)
    rig.state(1.0)
    rig.state(1.5)
    rig.state(1.51)
    assert rig.answered == [1.0]
    rig.state(1.52)
    assert rig.answered == [1.0, 1.5, 1.51, 1.52] and rig.wait.gave_up == 1


@pytest.mark.parametrize(("readings", "late"), [
    ((1.0, 1.02), False),  # within a period of 1.03
    ((0.98, 1.0), True),  # more than a period before 1.03
    ((0.5, 0.9), True),  # slower than the timeout: a reading within the timeout is awaited
    ((0.5, 0.95), False),
])
def test_late_means_more_than_the_sensor_period_at_most_the_timeout_behind(readings, late):
    rig = Rig()
    for stamp in readings:
        rig.feed.add(stamp, "pose")
    assert bool(rig.wait.late(1.03)) is late
