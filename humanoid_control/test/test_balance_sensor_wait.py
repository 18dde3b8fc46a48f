"""Joint states held until the sensor readings of their instant arrive (balance/sensor_wait),
in-process on a hand-driven clock."""

from __future__ import annotations

import pytest

from humanoid_control.balance.readings import RecentReadings
from humanoid_control.balance.sensor_wait import SensorWait, late_sensors

TIMEOUT = 0.1  # s, sensor_timeout
PATIENCE = 0.5  # s, sensor_patience


class Rig:
    """One sensor feed, a wait in front of a list of answered stamps, a clock set by hand."""

    def __init__(self, depth: int = 100) -> None:
        self.feed: RecentReadings[str] = RecentReadings()
        self.now = 0.0
        self.answered: list[float] = []
        self.wait: SensorWait[float] = SensorWait(
            lambda stamp, previous: late_sensors(iter([self.feed]), previous, stamp, TIMEOUT),
            self.answered.append, PATIENCE, depth, lambda: self.now)

    def state(self, stamp: float) -> None:
        self.wait.offer(stamp, stamp)

    def reading(self, stamp: float) -> None:
        self.feed.add(stamp, "pose")
        self.wait.drain()


def test_without_sensors_every_state_is_answered_at_once():
    rig = Rig()
    for stamp in (1.0, 1.01, 2.0):
        rig.state(stamp)
    assert rig.answered == [1.0, 1.01, 2.0] and rig.wait.waited == 0


def test_a_state_ahead_of_its_sensor_waits_for_it_and_those_after_it_keep_their_order():
    rig = Rig()
    rig.reading(1.0)
    rig.state(1.0)
    rig.state(1.05)  # the reading of 1.0 still serves it (within the timeout)
    rig.state(1.2)  # the sensor served 1.05 but has nothing near 1.2 yet: late
    rig.state(1.21)
    assert rig.answered == [1.0, 1.05] and len(rig.wait) == 2
    rig.reading(1.09)  # still more than the timeout before 1.2
    assert rig.answered == [1.0, 1.05]
    rig.reading(1.2)
    assert rig.answered == [1.0, 1.05, 1.2, 1.21]
    assert (rig.wait.waited, rig.wait.gave_up) == (2, 0)


def test_a_sensor_that_stopped_delays_the_answers_once_by_the_patience():
    rig = Rig()
    rig.reading(1.0)
    rig.state(1.0)
    rig.state(1.5)
    rig.now = PATIENCE * 0.9
    rig.wait.drain()
    assert rig.answered == [1.0]
    rig.now = PATIENCE * 1.1
    rig.wait.drain()
    assert rig.answered == [1.0, 1.5] and rig.wait.gave_up == 1
    rig.state(1.6)  # the sensor did not serve 1.5: no longer awaited
    assert rig.answered == [1.0, 1.5, 1.6] and len(rig.wait) == 0


def test_a_full_queue_releases_its_oldest_state_and_stops_waiting_for_that_sensor():
    rig = Rig(depth=2)
    rig.reading(1.0)
    rig.state(1.0)
    rig.state(1.5)
    rig.state(1.51)
    assert rig.answered == [1.0]
    rig.state(1.52)
    assert rig.answered == [1.0, 1.5, 1.51, 1.52] and rig.wait.gave_up == 1


@pytest.mark.parametrize(("newest", "late"), [
    (0.95, True),  # served the previous state (1.0), nothing near 1.2
    (1.12, False),  # within the timeout of 1.2
    (0.85, False),  # did not serve the previous state either: not awaited
])
def test_late_means_it_served_the_previous_state_and_cannot_serve_this_one(newest, late):
    feed: RecentReadings[str] = RecentReadings()
    feed.add(newest, "pose")
    assert late_sensors(iter([feed]), 1.0, 1.2, TIMEOUT) is late
