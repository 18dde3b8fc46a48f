"""When ``humanoid pose`` takes a move to be over (:class:`humanoid_tools.posing.Rest`), on the
readings the simulated Bioloid's elbow gave once after a 20 deg move: one slow reading 0.3 deg
short of where the joint came to rest, then a fast one, then rest."""

import math

from humanoid_tools import posing

#: (robot s after the trajectory's end, elbow deg, deg/s), as read in that run.
READINGS = [(0.00, 19.703, 5.151), (0.01, 19.699, -0.035), (0.02, 20.002, -1.559), (0.03, 19.999, -0.045),
            (0.04, 19.999, -0.003), (0.05, 19.999, -0.0001), (0.06, 19.998, -0.224), (0.07, 19.999, 0.141),
            (0.08, 19.999, 0.199), (0.09, 20.000, 0.023)]


def rest_position(readings: list[tuple[float, float, float]]) -> float | None:
    rest = posing.Rest()
    for stamp, position, speed in readings:
        if rest.reached(stamp, [math.radians(speed)]):
            return position
    return None


def test_a_slow_reading_between_fast_ones_is_not_rest():
    assert rest_position(READINGS) == 19.999


def test_rest_is_taken_once_the_joints_have_been_slow_for_the_span():
    slow_from = 0.03
    ends = [stamp for stamp, _, _ in READINGS if rest_position([r for r in READINGS if r[0] <= stamp]) is not None]
    assert min(ends) >= slow_from + posing.SETTLED_SPAN - 1e-9


def test_one_fast_joint_of_several_keeps_the_move_going():
    rest = posing.Rest()
    assert not any(rest.reached(0.01 * k, [0.0, math.radians(2.0)]) for k in range(20))
    assert [rest.reached(stamp, [0.0, 0.0]) for stamp in (0.2, 0.22, 0.24, 0.26)] == [False, False, False, True]
