"""Support polygons and static stability margins on a flat ground.

The support polygon is the convex hull of the sole corners touching the ground; the
static stability margin is the signed distance from the CoM's vertical projection to
the polygon's boundary, positive inside. Both the offline tools and the balance
monitor use these functions.
"""

from __future__ import annotations

import math

import numpy as np


def convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of 2-D points (Andrew's monotone chain).

    Collinear points on the hull are dropped. Returns an (m, 2) array; m can be 0, 1
    or 2 for degenerate input.
    """
    pts = sorted({(float(x), float(y)) for x, y in np.asarray(points, dtype=float)[:, :2]})
    if len(pts) <= 2:
        return np.array(pts, dtype=float).reshape(-1, 2)

    def cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[tuple[float, float]] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[tuple[float, float]] = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1], dtype=float)


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    length2 = float(ab @ ab)
    t = 0.0 if length2 == 0.0 else min(1.0, max(0.0, float((p - a) @ ab) / length2))
    return float(np.linalg.norm(p - (a + t * ab)))


def signed_margin(point: np.ndarray, polygon: np.ndarray) -> float:
    """Signed distance (same unit as the input) from ``point`` to a convex polygon.

    Positive inside, negative outside, zero on the edge. ``polygon`` is
    counter-clockwise as returned by :func:`convex_hull`. NaN for an empty polygon;
    a polygon of one or two points has no inside (the result is minus the distance).
    """
    p = np.asarray(point, dtype=float)[:2]
    poly = np.asarray(polygon, dtype=float).reshape(-1, 2)
    if len(poly) == 0:
        return math.nan
    if len(poly) == 1:
        return -float(np.linalg.norm(p - poly[0]))
    edges = [(poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly))]
    distance = min(_segment_distance(p, a, b) for a, b in edges)
    if len(poly) == 2:
        return -distance
    inside = all((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) >= 0.0
                 for a, b in edges)
    return distance if inside else -distance


def rectangle_corners(length: float, width: float) -> np.ndarray:
    """Corners (4, 3) of a sole of the given size in its own frame (centred, z = 0)."""
    hx, hy = length / 2.0, width / 2.0
    return np.array([[hx, hy, 0.0], [-hx, hy, 0.0], [-hx, -hy, 0.0], [hx, -hy, 0.0]])
