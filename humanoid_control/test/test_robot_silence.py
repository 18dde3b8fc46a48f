"""A controller's measure of its robot's silence (RobotSilence), on a hand-advanced clock: the
robot's readings every 10 ms, the watchdog's looks every WATCH_PERIOD, and this process stopped
now and then (neither looks nor readings taken: they wait in its queue)."""

from __future__ import annotations

from humanoid_control.ros import STATE_TIMEOUT, WATCH_PERIOD, RobotSilence

READING_PERIOD = 0.01


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(silence: RobotSilence, clock: Clock, seconds: float, robot_publishes: bool) -> list[float]:
    """``seconds`` of this process running: readings taken as they come (when the robot
    publishes), the watchdog looking every WATCH_PERIOD; returns what the looks found."""
    found = []
    end, next_look = clock.now + seconds, clock.now + WATCH_PERIOD
    while clock.now < end - 1e-9:
        clock.now += READING_PERIOD
        if robot_publishes:
            silence.heard()
        if clock.now >= next_look - 1e-9:
            found.append(silence.look())
            next_look += WATCH_PERIOD
    return found


def test_a_robot_that_publishes_is_never_silent_and_one_that_stops_is_gone_after_the_timeout():
    clock = Clock()
    silence = RobotSilence(STATE_TIMEOUT, clock)
    assert max(run(silence, clock, 3.0, robot_publishes=True)) <= READING_PERIOD + 1e-9
    assert not silence.gone()
    run(silence, clock, STATE_TIMEOUT - 0.1, robot_publishes=False)
    assert not silence.gone()
    run(silence, clock, 0.2, robot_publishes=False)
    assert silence.gone() and silence.silent_for() > STATE_TIMEOUT


def test_a_stall_of_this_process_is_not_the_robots_silence():
    """Stopped 3 s: the readings sent meanwhile wait in the queue. When the process runs again,
    neither a thread asking before the watchdog looked nor the watchdog's late look finds the
    robot silent, and once the queued readings are taken it is not."""
    clock = Clock()
    silence = RobotSilence(STATE_TIMEOUT, clock)
    run(silence, clock, 1.0, robot_publishes=True)
    clock.now += 3.0  # stopped: nothing runs
    assert silence.silent_for() == 0.0 and not silence.gone()  # a waiting thread, before the look
    assert silence.look() == 0.0
    assert not silence.gone()
    silence.heard()  # the queued readings
    assert max(run(silence, clock, 2.0, robot_publishes=True)) <= READING_PERIOD + 1e-9


def test_a_robot_that_stopped_during_a_stall_is_gone_a_timeout_after_the_process_runs_again():
    clock = Clock()
    silence = RobotSilence(STATE_TIMEOUT, clock)
    run(silence, clock, 1.0, robot_publishes=True)
    clock.now += 3.0  # stopped, and the robot with it: nothing waits in the queue
    assert silence.look() == 0.0
    run(silence, clock, STATE_TIMEOUT - 0.1, robot_publishes=False)
    assert not silence.gone()  # not before a whole timeout of running
    run(silence, clock, 0.2, robot_publishes=False)
    assert silence.gone()


def test_a_look_only_a_little_late_is_no_stall():
    """Timer jitter (a look late by less than half its period) leaves the silence counted from
    the latest reading: a robot that stopped is not given more time for it."""
    clock = Clock()
    silence = RobotSilence(STATE_TIMEOUT, clock)
    run(silence, clock, 1.0, robot_publishes=True)
    clock.now += WATCH_PERIOD * 1.4
    assert silence.look() > WATCH_PERIOD


def test_before_any_reading_the_robot_is_gone():
    clock = Clock()
    assert RobotSilence(STATE_TIMEOUT, clock).gone()
