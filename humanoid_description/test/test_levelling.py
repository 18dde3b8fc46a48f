"""The plane of a robot's resting points and the rotation that levels it (the quadruped's
odometry and balance monitor use both at every state): checked against what they mean, on
random planes, rather than against another implementation."""

import numpy as np
import pytest

from humanoid_description import levelling_rotation, plane_normal, triangle_normal


def planes(count: int = 500):
    rng = np.random.default_rng(7)
    for _ in range(count):
        normal = rng.normal(size=3)
        normal[2] = abs(normal[2]) + 0.2  # roughly up, as a robot's ground is in its frame
        normal /= np.linalg.norm(normal)
        across = np.cross(normal, rng.normal(size=3))
        across /= np.linalg.norm(across)
        along = np.cross(normal, across)
        offsets = rng.uniform(-0.1, 0.1, (int(rng.integers(3, 6)), 2))
        yield normal, rng.normal(size=3) + offsets[:, :1] * across + offsets[:, 1:] * along


@pytest.mark.parametrize("count", [3, 4])
def test_the_normal_is_the_planes_unit_normal_pointing_up(count):
    for normal, points in planes():
        points = points[:count]
        if len(points) < count:
            continue
        found = plane_normal(points)
        assert np.linalg.norm(found) == pytest.approx(1.0, abs=1e-12) and found[2] > 0.0
        assert np.allclose(found, normal, atol=1e-9)


def test_points_on_a_line_have_no_triangle_normal_and_still_a_plane_normal():
    line = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.3, 0.0, 0.0]])
    assert triangle_normal(line) is None
    assert np.linalg.norm(plane_normal(line)) == pytest.approx(1.0)


def test_the_levelling_rotation_turns_the_plane_flat_about_a_horizontal_axis():
    for normal, points in planes():
        rotation = levelling_rotation(points)
        assert np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)
        assert np.allclose(rotation @ normal, [0.0, 0.0, 1.0], atol=1e-9)
        levelled = points @ rotation.T
        assert np.ptp(levelled[:, 2]) < 1e-9  # every point at one height
        # the axis is horizontal (no turn about z: the heading is kept)
        assert rotation[0, 1] == pytest.approx(rotation[1, 0], abs=1e-12)


def test_a_level_plane_and_too_few_points_need_no_rotation():
    flat = np.array([[0.0, 0.0, 0.1], [0.2, 0.0, 0.1], [0.0, 0.2, 0.1]])
    assert np.array_equal(levelling_rotation(flat), np.eye(3))
    assert np.array_equal(levelling_rotation(flat[:2]), np.eye(3))
