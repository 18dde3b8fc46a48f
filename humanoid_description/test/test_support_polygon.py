"""Support polygons and margins: the prepared polygon against distances worked out by hand
and against a dense sampling of the boundary; which soles support a flat-footed robot."""

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_description import ConvexPolygon, convex_hull, signed_margin, supporting_side

# A 0.1 x 0.06 rectangle centred at (0.02, -0.01), counter-clockwise.
RECTANGLE = np.array([[-0.03, -0.04], [0.07, -0.04], [0.07, 0.02], [-0.03, 0.02]])


def boundary_distance(point, polygon, samples=20000):
    """Distance from a point to the polygon's boundary by sampling every edge densely."""
    distances = []
    for a, b in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        t = np.linspace(0.0, 1.0, samples)[:, None]
        distances.append(np.min(np.linalg.norm(a + t * (b - a) - point, axis=1)))
    return min(distances)


@pytest.mark.parametrize(("point", "expected"), [
    ((0.02, -0.01), 0.03),           # centre: 3 cm to the long sides
    ((0.06, -0.01), 0.01),           # 1 cm from the front edge
    ((0.07, 0.0), 0.0),              # on the edge
    ((0.09, -0.01), -0.02),          # 2 cm in front
    ((0.10, 0.06), -0.05),           # beyond the corner (0.07, 0.02): 3-4-5
])
def test_margin_of_a_rectangle_is_the_signed_distance_to_its_boundary(point, expected):
    assert ConvexPolygon(RECTANGLE).margin(*point) == pytest.approx(expected, abs=1e-12)
    assert signed_margin(np.array(point), RECTANGLE) == pytest.approx(expected, abs=1e-12)


def test_margin_matches_a_sampled_boundary_for_random_hulls_and_points():
    rng = np.random.default_rng(9)
    for _ in range(30):
        hull = convex_hull(rng.uniform(-0.1, 0.1, size=(8, 2)))
        polygon = ConvexPolygon(hull)
        for point in rng.uniform(-0.15, 0.15, size=(5, 2)):
            margin = polygon.margin(*point)
            assert abs(margin) == pytest.approx(boundary_distance(point, hull), abs=2e-5)


def test_degenerate_polygons_have_no_inside():
    assert math.isnan(ConvexPolygon(np.zeros((0, 2))).margin(0.0, 0.0))
    assert ConvexPolygon(np.array([[0.0, 0.0]])).margin(0.3, 0.4) == pytest.approx(-0.5)
    assert ConvexPolygon(np.array([[0.0, 0.0], [1.0, 0.0]])).margin(0.5, 0.0) == pytest.approx(0.0)
    assert ConvexPolygon(np.array([[0.0, 0.0], [1.0, 0.0]])).margin(0.5, 0.2) == pytest.approx(-0.2)


def test_level_soles_both_support_and_otherwise_the_lower_one():
    identity = np.eye(3)
    assert supporting_side(identity, np.array([0.0, 0.08, 0.002])) == "both"
    assert supporting_side(identity, np.array([0.0, 0.08, 0.03])) == "right"  # left foot raised
    assert supporting_side(identity, np.array([0.0, 0.08, -0.03])) == "left"
    tilted = pin.utils.rotate("x", math.radians(5.0))
    assert supporting_side(tilted, np.array([0.0, 0.08, 0.0])) == "right"  # not parallel: the right is not higher
    assert supporting_side(tilted, np.array([0.0, 0.08, 0.0]), max_angle_deg=6.0) == "both"
