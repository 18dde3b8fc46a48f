"""The balance monitor's signal processing, in-process: joint readings under the staleness
contract, the CoM low-pass, the margin alarm."""

import math

import numpy as np
import pytest

from humanoid_control.ros import JointReadings, MalformedJointStateError
from humanoid_core.balance import AlarmChange, CoMFilter, MarginAlarm
from humanoid_description import load_model


@pytest.fixture()
def readings():
    model = load_model("bioloid")
    return JointReadings(model.joints, model.home_positions())


def test_a_complete_message_updates_every_joint(readings):
    names = list(readings.joints.names)
    issues = readings.update(names, [0.1] * len(names))
    assert not issues and np.all(readings.positions == 0.1) and readings.never_measured == ()


def test_stale_missing_and_unknown_joints_keep_their_last_known_value_and_are_counted(readings):
    names = list(readings.joints.names)
    readings.update(names, [0.2] * len(names))
    values = [0.3] * len(names)
    values[0], values[1] = math.nan, math.inf
    issues = readings.update(names, values)
    assert issues.stale == (names[0], names[1])
    assert readings.positions[0] == readings.positions[1] == 0.2 and readings.positions[2] == 0.3
    issues = readings.update([*names[3:], "tail_joint"], [0.4] * (len(names) - 2))
    assert issues.missing == tuple(names[:3]) and issues.unknown == ("tail_joint",)
    assert readings.positions[2] == 0.3 and readings.positions[3] == 0.4
    assert (readings.counts.stale, readings.counts.missing, readings.counts.unknown) == (2, 3, 1)
    assert np.all(np.isfinite(readings.positions))


def test_a_joint_never_measured_keeps_its_initial_value_and_is_listed(readings):
    names = list(readings.joints.names)
    initial = readings.positions.copy()
    readings.update(names[1:], [0.0] * (len(names) - 1))
    assert readings.never_measured == (names[0],) and readings.positions[0] == initial[0]


@pytest.mark.parametrize(("names", "positions", "reason"), [
    (["r_knee", "l_knee"], [0.1], "2 names but 1 positions"),
    (["r_knee", "r_knee"], [0.1, 0.2], "more than once: r_knee"),
])
def test_unreadable_messages_are_refused_whole(readings, names, positions, reason):
    before = readings.positions.copy()
    with pytest.raises(MalformedJointStateError, match=reason):
        readings.update(names, positions)
    assert np.array_equal(readings.positions, before) and readings.counts.malformed == 1


def sample(filt, times, signal):
    return [filt.update(float(t), (signal(t), 0.0, 0.0)) for t in times]


def test_the_filter_recovers_a_constant_acceleration_and_delays_the_velocity_by_its_delay():
    filt = CoMFilter(4.0)
    times = np.arange(0.0, 2.0, 0.01)
    _, velocity, acceleration = sample(filt, times, lambda t: 0.5 * 0.3 * t * t)[-1]
    assert acceleration[0] == pytest.approx(0.3, rel=1e-2)
    assert velocity[0] == pytest.approx(0.3 * (times[-1] - filt.delay), rel=1e-4)


def test_the_filter_attenuates_a_vibration_by_the_square_of_the_frequency_ratio():
    """20 Hz vibration (the simulated servos' standing jitter): its raw acceleration is
    (2 pi 20)^2 A; through a 4 Hz filter it must be at most (4/20)^2 of that."""
    filt = CoMFilter(4.0)
    amplitude, frequency = 2e-5, 20.0
    times = np.arange(0.0, 3.0, 0.001)
    out = sample(filt, times, lambda t: amplitude * math.sin(2 * math.pi * frequency * t))
    peak = max(abs(a[0]) for _, _, a in out[len(out) // 2:])
    raw = amplitude * (2 * math.pi * frequency) ** 2
    assert peak <= raw * (4.0 / frequency) ** 2 * 1.05


def test_the_filter_does_not_need_uniform_sampling():
    rng = np.random.default_rng(3)
    regular, jittered = CoMFilter(4.0), CoMFilter(4.0)
    times = np.arange(0.0, 2.0, 0.01)
    uneven = np.sort(times + rng.uniform(-0.004, 0.004, len(times)))
    motion = lambda t: 0.02 * math.sin(2 * math.pi * 0.5 * t)  # noqa: E731
    a = sample(regular, times, motion)[-1][2][0]
    b = sample(jittered, uneven, motion)[-1][2][0]
    assert b == pytest.approx(a, abs=0.02 * abs(a) + 1e-4)


def test_the_filter_restarts_when_time_goes_back():
    filt = CoMFilter(4.0)
    sample(filt, np.arange(0.0, 1.0, 0.01), lambda t: t)
    _, velocity, acceleration = filt.update(0.5, (3.0, 0.0, 0.0))
    assert velocity == (0.0, 0.0, 0.0) and acceleration == (0.0, 0.0, 0.0) and not filt.settled(0.5)


def test_the_alarm_warns_once_and_recovers_once_above_the_hysteresis():
    alarm = MarginAlarm(min_margin=0.01, hysteresis=0.002)
    margins = [0.02, 0.009, 0.008, 0.0105, 0.0095, 0.0115, 0.0125, 0.013, math.nan, 0.02]
    events = [(t, e.change) for t, m in enumerate(margins) if (e := alarm.update(float(t), m))]
    assert events == [(1, AlarmChange.WARNING), (6, AlarmChange.RECOVERED), (8, AlarmChange.WARNING),
                      (9, AlarmChange.RECOVERED)]
    assert alarm.warnings == 2 and alarm.last_raised_at == 8.0


def test_a_margin_that_dips_every_step_warns_once_and_recovers_once_it_stays_back():
    """A trot's support: the margin under the minimum for 10 ms every 0.3 s, then the robot
    stands: one warning, one recovery a clear time after the last dip, with the dips counted
    and the lowest margin; the last dip's start is kept (a fall's lead time is told from it)."""
    alarm = MarginAlarm(min_margin=0.005, hysteresis=0.002, clear_after=1.0)
    stamps = np.round(np.arange(0.0, 6.0, 0.01), 2)
    dips = {round(0.5 + 0.3 * k, 2): -0.01 * (k + 1) for k in range(10)}  # the last at 3.2 s
    events = [e for t in stamps if (e := alarm.update(float(t), dips.get(float(t), 0.009)))]
    assert [(e.change, e.stamp) for e in events] == [(AlarmChange.WARNING, 0.5), (AlarmChange.RECOVERED, 4.21)]
    recovered = events[1]
    assert recovered.dips == 10 and recovered.lowest == pytest.approx(-0.1) and recovered.above_since == 3.21
    assert alarm.warnings == 1 and alarm.last_raised_at == 3.2
    assert recovered.describe(0.005) == ("balance margin back to 9.0 mm at t = 4.210 s (back since "
                                         "t = 3.210 s; under 5.0 mm 10 times since the warning, "
                                         "lowest -100.0 mm)")


def test_a_margin_without_support_is_the_lowest_there_is():
    alarm = MarginAlarm(min_margin=0.005, hysteresis=0.002, clear_after=0.5)
    events = [e for t, m in enumerate([0.01, -0.02, math.nan, 0.01, 0.01]) if (e := alarm.update(0.5 * t, m))]
    assert [e.change for e in events] == [AlarmChange.WARNING, AlarmChange.RECOVERED]
    assert events[1].dips == 1 and math.isnan(events[1].lowest)
    assert events[0].describe(0.005) == "balance margin -20.0 mm below the minimum 5.0 mm at t = 0.500 s"
    assert "under 5.0 mm once since the warning, lowest undefined (no support)" in events[1].describe(0.005)
