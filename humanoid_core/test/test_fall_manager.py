"""The fall manager's state machine on synthetic readings (no ROS): a fall seen coming from
the trunk's tilt and rate before the tilt reaches the fallen threshold, the side it lies on,
stale readings ignored, the protective action sent twice, bounded get-up attempts, and the
support estimate without an IMU."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pinocchio as pin
import pytest

from humanoid_core.balance import (
    ActionKind,
    FallManager,
    FallManagerParameters,
    FeetReading,
    Protect,
    Side,
    State,
    SupportReading,
    TrunkReading,
    side_of,
    tilt_rate,
)

PERIOD = 0.01


def rotation(roll_deg: float = 0.0, pitch_deg: float = 0.0) -> np.ndarray:
    """The IMU frame in the world (a positive pitch leans forward, a positive roll lifts the left side)."""
    return pin.rpy.rpyToMatrix(math.radians(roll_deg), math.radians(pitch_deg), 0.0)


def reading(t: float, roll: float = 0.0, pitch: float = 0.0, rate: tuple[float, float, float] | None = None
            ) -> TrunkReading:
    return TrunkReading.of(t, rotation(roll, pitch), None if rate is None else np.radians(rate))


def manager(getup: dict[Side, str] | None = None, weight: float = 0.0, **overrides) -> FallManager:
    params = dataclasses.replace(FallManagerParameters(), **overrides)
    motions = getup or {}
    return FallManager(params, getup_motion=motions.get, weight=weight)


def feed(m: FallManager, readings) -> list:
    """Feed readings (each decided at its own stamp, then the clock ticks); the decisions."""
    decisions = []
    for r in readings:
        for d in (m.trunk(r, r.stamp), m.tick(r.stamp)):
            if d is not None:
                decisions.append(d)
    return decisions


def fall(start: float, direction: str = "forward", seconds: float = 1.2, rate_from_gyro: bool = True):
    """A trunk falling like an inverted pendulum from 2 deg, then lying still at 90 deg."""
    omega, theta, t, out = 5.9, math.radians(2.0), start, []
    dtheta = 0.0
    while t < start + seconds:
        if theta < math.radians(90.0):
            dtheta += omega ** 2 * math.sin(theta) * PERIOD
            theta = min(theta + dtheta * PERIOD, math.radians(90.0))
        else:
            dtheta = 0.0
        deg, rate = math.degrees(theta), math.degrees(dtheta)
        pitch, roll, gyro = {"forward": (deg, 0.0, (0.0, rate, 0.0)), "backward": (-deg, 0.0, (0.0, -rate, 0.0)),
                             "left": (0.0, -deg, (-rate, 0.0, 0.0)), "right": (0.0, deg, (rate, 0.0, 0.0))}[direction]
        out.append(reading(round(t, 6), roll, pitch, gyro if rate_from_gyro else None))
        t += PERIOD
    return out


def test_tilt_rate_from_the_gyro_matches_the_tilt_change():
    r0, r1 = rotation(0.0, 20.0), rotation(0.0, 20.5)
    rate = tilt_rate(r0, np.radians([0.0, 50.0, 0.0]))  # pitching forward at 50 deg/s
    assert math.degrees(rate) == pytest.approx(50.0, rel=1e-6)
    assert math.degrees(tilt_rate(r1, np.radians([0.0, -50.0, 0.0]))) == pytest.approx(-50.0, rel=1e-6)
    assert math.degrees(tilt_rate(rotation(), np.radians([30.0, 40.0, 0.0]))) == pytest.approx(50.0)


@pytest.mark.parametrize("rate_from_gyro", [True, False])
def test_a_fall_is_seen_coming_before_the_tilt_reaches_the_fallen_threshold(rate_from_gyro):
    m = manager()
    readings = [reading(t * PERIOD) for t in range(20)] + fall(0.2, rate_from_gyro=rate_from_gyro)
    decisions = feed(m, readings)
    falling = next(d for d in decisions if d.state is State.FALLING)
    at_fall_tilt = next(r.stamp for r in readings if r.tilt >= math.radians(45.0))
    assert falling.stamp < at_fall_tilt - 0.05, (falling.stamp, at_fall_tilt)  # tens of ms ahead
    assert [a.kind for a in falling.actions] == [ActionKind.STOP_GOALS, ActionKind.PROTECT]
    assert falling.actions[1].protect is Protect.HOLD
    assert falling.side is Side.BELLY  # falling forward
    assert "a fall is seen coming" in falling.cause and "deg/s" in falling.cause
    # the protective action again protect_repeat later
    repeat = next(d for d in decisions if d.actions and d.actions[0].kind is ActionKind.PROTECT)
    assert repeat.actions[0].repeat and repeat.stamp == pytest.approx(falling.stamp + 0.05, abs=PERIOD)
    lying = decisions[-1]
    assert lying.state is State.FALLEN and lying.side is Side.BELLY
    assert "auto_getup is off" in lying.cause


def test_swaying_and_a_slow_bend_are_not_falls():
    m = manager()
    sway = [reading(i * PERIOD, 0.0, 8.0 * math.sin(i * PERIOD * 2 * math.pi), (0.0, 50.0, 0.0))
            for i in range(300)]
    # a bend at the waist, to 40 deg at 10 deg/s: no fall until it tips
    slow = [reading(3.0 + i * PERIOD, 0.0, 0.1 * i, (0.0, 10.0, 0.0)) for i in range(400)]
    decisions = feed(m, sway + slow)
    assert [d.state for d in decisions] == [State.CONTROLLABLE]


def test_a_trunk_found_lying_still_without_a_fall_seen_is_fallen_and_not_protected():
    m = manager()
    # bent at the waist at 10 deg/s to 60 deg, then held there
    bend = [reading(i * PERIOD, 0.0, min(0.1 * i, 60.0), (0.0, 10.0 if 0.1 * i < 60.0 else 0.0, 0.0))
            for i in range(1000)]
    decisions = feed(m, bend)
    assert [d.state for d in decisions[1:]] == [State.FALLEN]
    assert "without a fall seen coming" in decisions[1].cause and not decisions[1].actions
    assert decisions[1].stamp >= 4.5 + 0.3  # beyond fall_tilt (45 deg at 4.5 s), still for still_time


@pytest.mark.parametrize(("direction", "side"), [
    ("forward", Side.BELLY), ("backward", Side.BACK), ("left", Side.LEFT), ("right", Side.RIGHT)])
def test_the_side_it_lies_on(direction, side):
    m = manager()
    decisions = feed(m, [reading(0.0), *fall(0.01, direction)])
    assert decisions[-1].state is State.FALLEN and decisions[-1].side is side
    assert side.value in decisions[-1].cause


def test_side_of_diagonal_and_upside_down_is_unknown():
    assert side_of(tuple(rotation(0.0, 180.0)[2, :])) is Side.UNKNOWN
    assert side_of((0.3, 0.3, 0.9)) is Side.UNKNOWN


def test_stale_readings_decide_nothing():
    m = manager()
    assert m.trunk(reading(0.0), 0.0).state is State.CONTROLLABLE
    # a reading of a fall, 0.2 s old when it comes (budget 0.1 s): ignored
    old = reading(0.8, 0.0, 40.0, (0.0, 200.0, 0.0))
    assert m.trunk(old, 1.0) is None
    assert m.state is State.CONTROLLABLE and m.counts.stale == 1
    assert m.stale(1.0)
    # the same reading in time: decided
    fresh = reading(1.0, 0.0, 40.0, (0.0, 200.0, 0.0))
    assert m.trunk(fresh, 1.05).state is State.FALLING
    assert not m.stale(1.05)


def lie_still(m: FallManager, start: float, seconds: float, pitch: float = -90.0, feet: float | None = None):
    decisions = []
    t = start
    while t < start + seconds:
        if feet is not None:
            m.feet(FeetReading(t, feet))
        decisions += feed(m, [reading(round(t, 6), 0.0, pitch, (0.0, 0.0, 0.0))])
        t += PERIOD
    return decisions


def stand_up(m: FallManager, start: float, seconds: float, feet: float | None = None):
    return lie_still(m, start, seconds, 0.0, feet)


def test_auto_getup_plays_the_sides_motion_and_checks_the_robot_is_up():
    m = manager({Side.BACK: "getup_back"}, auto_getup=True, weight=70.0)
    decisions = feed(m, [reading(0.0), *fall(0.01, "backward")])
    getting_up = decisions[-1]
    assert getting_up.state is State.GETTING_UP and getting_up.side is Side.BACK
    assert getting_up.actions[0].kind is ActionKind.GET_UP and getting_up.actions[0].motion == "getup_back"
    assert "attempt 1 of 3" in getting_up.cause
    assert m.getting_up_motion == "getup_back"
    # the motion ends with the robot up, but the feet not loaded yet: not up
    assert m.getup_ended(True, "", 3.0).state is State.GETTING_UP
    assert not stand_up(m, 3.0, 0.5, feet=10.0)
    # loaded: up
    decisions = stand_up(m, 3.5, 0.5, feet=60.0)
    assert decisions[-1].state is State.CONTROLLABLE and "up after get-up attempt 1" in decisions[-1].cause
    assert m.counts.getups == 1


def lie_still_moving_joints(m: FallManager, start: float, seconds: float, joints: Callable[[float], np.ndarray]):
    """The trunk lying still on its back while the joints read ``joints(t)``; the decisions."""
    decisions = []
    t = start
    while t < start + seconds:
        m.joints(round(t, 6), joints(t))
        decisions += feed(m, [reading(round(t, 6), 0.0, -90.0, (0.0, 0.0, 0.0))])
        t += PERIOD
    return decisions


def test_a_get_up_waits_for_the_joints_to_settle():
    """The trunk lies still while the servos still move to the protective posture: the get-up
    starts only once every joint has stayed within joint_still_range for still_time (it would
    be planned from where a joint no longer is), steps of a servo's resolution read as still."""
    m = manager({Side.BACK: "getup_back"}, auto_getup=True)
    feed(m, [reading(0.0), *fall(0.01, "backward", seconds=0.6)])
    assert m.state in (State.FALLING, State.FALLEN)
    start = 0.61
    # one joint at 0.5 rad/s until start + 0.5 s, then settled with an AX-12's 0.29 deg steps
    steps = math.radians(0.29)

    def joints(t: float) -> np.ndarray:
        moving = 0.5 * min(t - start, 0.5)
        jitter = steps * (round(t / PERIOD) % 2)
        return np.array([0.1, moving + jitter, np.nan])

    decisions = lie_still_moving_joints(m, start, 1.5, joints)
    getting_up = [d for d in decisions if d.state is State.GETTING_UP]
    assert getting_up, [d.cause for d in decisions]
    fallen_at = next(d.stamp for d in decisions if d.state is State.FALLEN)
    assert fallen_at < start + 0.5  # the trunk alone would have started the get-up then
    assert getting_up[0].stamp == pytest.approx(start + 0.5 + 0.3, abs=2 * PERIOD)  # settled for still_time
    assert getting_up[0].actions[0].motion == "getup_back"


def test_a_joint_that_never_settles_delays_the_get_up_by_joint_settle_timeout_at_most():
    m = manager({Side.BACK: "getup_back"}, auto_getup=True, joint_settle_timeout=1.0)
    feed(m, [reading(0.0), *fall(0.01, "backward", seconds=0.6)])
    decisions = lie_still_moving_joints(m, 0.61, 2.0, lambda t: np.array([math.sin(20.0 * t)]))
    fallen_at = next(d.stamp for d in decisions if d.state is State.FALLEN)
    getting_up = next(d for d in decisions if d.state is State.GETTING_UP)
    assert getting_up.stamp == pytest.approx(fallen_at + 1.0, abs=2 * PERIOD)


def test_without_the_joint_check_the_trunk_alone_decides():
    """joint_still_range 0, or no joint reading at all: the get-up starts as soon as the trunk
    is found lying still (one decision: fallen, getting up), while a joint moves."""
    for m, moving in ((manager({Side.BACK: "getup_back"}, auto_getup=True, joint_still_range=0.0), True),
                      (manager({Side.BACK: "getup_back"}, auto_getup=True), False)):
        decisions = feed(m, [reading(0.0), *fall(0.01, "backward", seconds=0.6)])
        decisions += (lie_still_moving_joints(m, 0.61, 1.0, lambda t: np.array([t])) if moving
                      else lie_still(m, 0.61, 1.0))
        down = [d for d in decisions if d.state in (State.FALLEN, State.GETTING_UP)]
        assert down[0].state is State.GETTING_UP and "lying still" in down[0].cause, [d.cause for d in down]


def test_get_up_attempts_are_bounded():
    m = manager({Side.BACK: "getup_back"}, auto_getup=True, max_attempts=2, up_check_time=1.0)
    decisions = feed(m, [reading(0.0), *fall(0.01, "backward")])
    assert decisions[-1].state is State.GETTING_UP
    # attempt 1: the motion fails
    failed = m.getup_ended(False, "the robot fell", 2.0)
    assert failed.state is State.FALLEN and "attempt 1 failed" in failed.cause and "1 attempt(s) left" in failed.cause
    # still again: attempt 2; the motion ends, the robot still lies: failed after up_check_time
    again = lie_still(m, 2.0, 0.5)
    assert again[-1].state is State.GETTING_UP and "attempt 2 of 2" in again[-1].cause
    assert m.getup_ended(True, "", 2.6).state is State.GETTING_UP
    checked = lie_still(m, 2.6, 1.5)
    assert checked[0].state is State.FALLEN and "not up 1 s after" in checked[0].cause
    assert checked[-1].state is State.FALLEN and "gave up after 2 get-up attempt(s)" in checked[-1].cause
    assert not lie_still(m, 4.1, 1.0)  # said once, no further attempt
    assert m.counts.getups_failed == 2


def test_a_roll_off_the_side_is_followed_by_the_get_up_of_the_side_it_lands_on():
    """A side's get-up may only roll the robot over (the Bioloid's getup_left): the attempt ends
    not up, and lying still on another side, the next attempt plays that side's get-up."""
    m = manager({Side.LEFT: "getup_left", Side.BACK: "getup_back"}, auto_getup=True, up_check_time=1.0)
    decisions = feed(m, [reading(0.0), *fall(0.01, "left")])
    assert decisions[-1].state is State.GETTING_UP and decisions[-1].actions[0].motion == "getup_left"
    assert m.getup_ended(True, "", 2.0).state is State.GETTING_UP
    rolled = lie_still(m, 2.0, 2.0, pitch=-90.0)  # now on its back
    assert rolled[0].state is State.FALLEN and "not up 1 s after" in rolled[0].cause
    playing = rolled[-1]
    assert playing.state is State.GETTING_UP and playing.side is Side.BACK, [d.cause for d in rolled]
    assert playing.actions[0].motion == "getup_back" and "attempt 2 of 3" in playing.cause


def test_a_get_up_motion_that_never_ends_is_canceled():
    m = manager({Side.BELLY: "getup_belly"}, auto_getup=True, getup_timeout=5.0)
    feed(m, [reading(0.0), *fall(0.01, "forward")])
    assert m.state is State.GETTING_UP
    timeout = m.tick(m.since + 5.1)
    assert timeout.state is State.FALLEN and timeout.actions[0].kind is ActionKind.CANCEL_GET_UP
    assert "did not end within getup_timeout" in timeout.cause


def test_no_get_up_motion_for_the_side_stays_fallen_and_says_so():
    m = manager({Side.BACK: "getup_back"}, auto_getup=True)
    decisions = feed(m, [reading(0.0), *fall(0.01, "left")])
    assert decisions[-1].state is State.FALLEN
    assert "no get-up motion getup_left for this robot" in decisions[-1].cause


def test_up_by_other_means_and_a_fall_that_did_not_happen():
    m = manager()
    feed(m, [reading(0.0), *fall(0.01, "forward")])
    assert m.state is State.FALLEN
    decisions = stand_up(m, 2.0, 0.5)
    assert decisions[-1].state is State.CONTROLLABLE and "up again" in decisions[-1].cause
    # a lean seen as a fall coming, caught: back to controllable once upright and still
    lean = [reading(3.0 + i * PERIOD, 0.0, 14.0 + i, (0.0, 100.0, 0.0)) for i in range(5)]
    decisions = feed(m, lean)
    assert decisions[0].state is State.FALLING
    decisions = stand_up(m, 3.1, 0.5)
    assert decisions[-1].state is State.CONTROLLABLE and "did not happen" in decisions[-1].cause


def test_a_quadruped_held_on_its_feet_after_a_fall_seen_coming_is_controllable_again():
    """The quadruped's own parameters (its control.yaml): a trot at 0.5 Hz seen falling at 18 deg
    and 110 deg/s and held (the protective action) stands still on its feet, its trunk at 21 deg
    (as in simulation): the fall did not happen, and the robot may play again. Its held gait
    poses tilt the trunk more than a biped's stance, hence an up_tilt of 25 deg, not the 20 of
    the bipeds (a robot still at 21 deg was FALLEN, "still, leaning", and refused every gait)."""
    params = FallManagerParameters.for_robot("bioloid_quadruped")
    m = FallManager(params, getup_motion=lambda _side: None, weight=17.0)
    feed(m, [reading(i * PERIOD) for i in range(10)])
    decisions = feed(m, [reading(0.1 + i * PERIOD, 0.0, -16.2 - 1.1 * i, (0.0, -110.0, 0.0)) for i in range(3)])
    assert decisions and decisions[0].state is State.FALLING
    decisions = lie_still(m, 0.2, 1.0, pitch=-21.3, feet=12.0)
    assert decisions[-1].state is State.CONTROLLABLE and "did not happen" in decisions[-1].cause
    assert all(d.state is not State.FALLEN for d in decisions)


def test_posture_and_limp_protection_and_an_unknown_one_refused():
    m = manager(protect="posture", protect_pose="crouch")
    decisions = feed(m, [reading(0.0), *fall(0.01)])
    falling = next(d for d in decisions if d.state is State.FALLING)
    assert falling.actions[1].protect is Protect.POSTURE
    m = manager(protect="limp")
    decisions = feed(m, [reading(0.0), *fall(0.01)])
    falling = next(d for d in decisions if d.state is State.FALLING)
    assert falling.actions[1].protect is Protect.LIMP and "protective action: limp" in falling.cause
    with pytest.raises(ValueError, match="must be hold, posture or limp, got 'floppy'"):
        FallManagerParameters(protect="floppy")
    with pytest.raises(ValueError, match="protect_pose"):
        FallManagerParameters(protect="posture")


def test_without_an_imu_the_support_estimate_decides():
    m = manager({Side.BACK: "getup_back"}, auto_getup=True)
    t = 0.0
    assert m.support(SupportReading(t, False), t).state is State.CONTROLLABLE
    falling = m.support(SupportReading(0.5, True), 0.5)
    assert falling.state is State.FALLING and falling.side is Side.UNKNOWN and "no IMU" in falling.cause
    decisions = [m.support(SupportReading(0.5 + i * PERIOD, True), 0.5 + i * PERIOD) for i in range(1, 50)]
    decisions = [d for d in decisions if d is not None]
    assert decisions[0].state is State.FALLEN and decisions[-1].state is State.FALLEN
    assert "side the robot lies on is unknown" in decisions[-1].cause  # no get-up without a side
    up = [m.support(SupportReading(1.0 + i * PERIOD, False), 1.0 + i * PERIOD) for i in range(40)]
    assert [d for d in up if d is not None][-1].state is State.CONTROLLABLE
    # an IMU reading in time wins over the support estimate
    m.trunk(reading(2.0), 2.0)
    assert m.support(SupportReading(2.01, True), 2.01) is None
