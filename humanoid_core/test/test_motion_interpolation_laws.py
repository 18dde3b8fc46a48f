"""The interpolation laws motions are played with: the two-segment test vectors of
Lima et al. (platforms reference) and time-shift invariance of every law."""

import numpy as np
import pytest

from humanoid_core.loop import Law, Spline, two_segment, two_segment_mid_velocity

# (theta1, omega1, theta2, omega2) over t1 = 0, t2 = 1 s ->
# (omega_m, first acceleration, second acceleration, theta(tm), theta(t2)); None = not given.
VECTORS = [
    ((0.0, 0.0, 1.0, 0.0), (2.0, 4.0, -4.0, 0.5, 1.0)),
    ((0.0, 1.0, 1.0, 1.0), (1.0, 0.0, 0.0, 0.5, 1.0)),
    ((0.2, 0.5, 1.0, -0.3), (1.5, 2.0, -3.6, 0.7, 1.0)),
]


def _sample(t, t1, t2, p1, w1, p2, w2):
    return two_segment(t, t1, t2, np.array([p1]), np.array([w1]), np.array([p2]), np.array([w2]))


@pytest.mark.parametrize(("boundary", "expected"), VECTORS)
@pytest.mark.parametrize("shift", [0.0, 7.25, -3.5, 1234.5678])
def test_two_segment_vectors_hold_for_any_time_shift(boundary, expected, shift):
    p1, w1, p2, w2 = boundary
    wm, acc1, acc2, p_mid, p_end = expected
    t1, t2 = shift, shift + 1.0
    assert two_segment_mid_velocity(t1, t2, np.array([p1]), np.array([w1]),
                                    np.array([p2]), np.array([w2]))[0] == pytest.approx(wm)
    pos_mid, vel_mid, first = _sample(t1 + 0.5, t1, t2, p1, w1, p2, w2)
    assert pos_mid[0] == pytest.approx(p_mid)
    assert vel_mid[0] == pytest.approx(wm)
    assert first[0] == pytest.approx(acc1)
    assert _sample(t1 + 0.25, t1, t2, p1, w1, p2, w2)[2][0] == pytest.approx(acc1)
    pos_end, vel_end, second = _sample(t2, t1, t2, p1, w1, p2, w2)
    assert second[0] == pytest.approx(acc2)
    assert pos_end[0] == pytest.approx(p_end)
    assert vel_end[0] == pytest.approx(w2)


@pytest.mark.parametrize("law", list(Law))
def test_every_law_is_time_shift_invariant(law):
    times = np.array([0.0, 0.4, 1.1, 2.0])
    positions = np.array([[0.0, 1.0], [0.5, -0.2], [0.3, 0.4], [1.0, 0.0]])
    velocities = np.array([[0.0, 0.0], [0.8, -1.0], [-0.5, 0.7], [0.0, 0.0]])
    accelerations = np.array([[0.0, 0.0], [1.0, 2.0], [-3.0, 0.5], [0.0, 0.0]])
    base = Spline.build(times, positions, velocities, accelerations, law=law)
    probe = np.linspace(0.0, 2.0, 53)
    reference = base.sample_many(probe)
    for offset in (3.3, -17.0, 1e4 + 0.123):
        shifted = Spline.build(times + offset, positions, velocities, accelerations, law=law)
        for ref, got in zip(reference, shifted.sample_many(probe + offset), strict=True):
            np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("law", list(Law))
@pytest.mark.parametrize("data", ["positions", "velocities", "accelerations"])
def test_sampling_many_times_at_once_gives_what_sampling_each_gives(law, data):
    """Inside, at the points, at the ends and outside the span (held, at rest)."""
    times = np.array([0.0, 0.4, 1.1, 2.0])
    positions = np.array([[0.0, 1.0], [0.5, -0.2], [0.3, 0.4], [1.0, 0.0]])
    velocities = np.array([[0.0, 0.0], [0.8, -1.0], [-0.5, 0.7], [0.0, 0.0]])
    accelerations = np.array([[0.0, 0.0], [1.0, 2.0], [-3.0, 0.5], [0.0, 0.0]])
    spline = Spline.build(times, positions, velocities if data != "positions" else None,
                          accelerations if data == "accelerations" else None, law=law)
    probe = np.concatenate([[-1.0, 0.0], np.linspace(0.0, 2.0, 41), times, [2.0, 2.5]])
    together = spline.sample_many(probe)
    for k, t in enumerate(probe):
        for got, expected in zip((part[k] for part in together), spline.sample(float(t)), strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
