"""Support polygons and static stability margins on a flat ground.

The support polygon is the convex hull of the sole corners touching the ground; the
static stability margin is the signed distance from the CoM's vertical projection to
the polygon's boundary, positive inside. Both the offline tools and the balance
monitor use these functions; the monitor asks for a margin at every ``joint_states``
message, so :class:`ConvexPolygon` prepares a polygon once for many queries.
"""

from __future__ import annotations

import itertools
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


def signed_margin(point: np.ndarray, polygon: np.ndarray) -> float:
    """Signed distance (same unit as the input) from ``point`` to a convex polygon.

    Positive inside, negative outside, zero on the edge. ``polygon`` is
    counter-clockwise as returned by :func:`convex_hull`. NaN for an empty polygon;
    a polygon of one or two points has no inside (the result is minus the distance).
    """
    p = np.asarray(point, dtype=float)
    return ConvexPolygon(polygon).margin(float(p[0]), float(p[1]))


class ConvexPolygon:
    """A convex polygon (counter-clockwise, as :func:`convex_hull` returns it) with its
    edges prepared for many :meth:`margin` queries: the balance monitor asks for one at
    every ``joint_states`` message, on a polygon of at most eight vertices (two soles),
    where plain float arithmetic beats numpy's per-call overhead.
    ``len(polygon)`` is the number of edges."""

    __slots__ = ("_edges", "_lines", "vertices")

    def __init__(self, vertices: np.ndarray) -> None:
        self.vertices = np.asarray(vertices, dtype=float).reshape(-1, 2)
        points = self.vertices.tolist()
        edges, lines = [], []
        for (ax, ay), (bx, by) in zip(points, points[1:] + points[:1], strict=True):
            length = math.hypot(bx - ax, by - ay)
            edges.append((ax, ay, bx - ax, by - ay, length))
            if length > 0.0:  # inward unit normal n and offset c: n . p - c is the distance to the line
                nx, ny = -(by - ay) / length, (bx - ax) / length
                lines.append((nx, ny, nx * ax + ny * ay))
        #: (start x, start y, direction x, direction y, length) of each edge
        self._edges = tuple(edges)
        self._lines = tuple(lines)

    def __len__(self) -> int:
        return len(self._edges)

    def margin(self, x: float, y: float) -> float:
        """Signed distance from (x, y) to the boundary: positive inside, negative outside,
        NaN for an empty polygon (see :func:`signed_margin`)."""
        if not self._edges:
            return math.nan
        if len(self._edges) > 2:
            # inside a convex polygon the nearest boundary point lies on the nearest edge line
            nearest = math.inf
            for nx, ny, c in self._lines:  # a plain loop: twice as fast as min() over a generator
                distance = nx * x + ny * y - c
                if distance < nearest:
                    nearest = distance
            if nearest >= 0.0:
                return nearest
        return -min(_segment_distance(x, y, edge) for edge in self._edges)


def _segment_distance(x: float, y: float, edge: tuple[float, float, float, float, float]) -> float:
    """Distance from (x, y) to an edge (a segment; a point when its length is 0)."""
    ax, ay, dx, dy, length = edge
    t = 0.0 if length == 0.0 else min(1.0, max(0.0, ((x - ax) * dx + (y - ay) * dy) / (length * length)))
    return math.hypot(x - (ax + t * dx), y - (ay + t * dy))


#: Two soles are level with each other (both support the robot) when they are parallel
#: within this angle and their heights differ by less than LEVEL_HEIGHT: a servo robot
#: stands on both feet with such small differences.
LEVEL_ANGLE_DEG = 3.0
LEVEL_HEIGHT = 0.005  # m


def supporting_side(left_in_right_rotation: np.ndarray, left_in_right_translation: np.ndarray,
                    max_angle_deg: float = LEVEL_ANGLE_DEG, max_height: float = LEVEL_HEIGHT) -> str:
    """Which sole(s) a robot with flat feet stands on, from the left sole's placement in the
    right sole's frame: ``both`` when the soles are level with each other, else the lower one."""
    r = left_in_right_rotation
    cosine = (float(r[0, 0]) + float(r[1, 1]) + float(r[2, 2]) - 1.0) / 2.0  # of the angle between them
    height = float(left_in_right_translation[2])
    if cosine > math.cos(math.radians(max_angle_deg)) and abs(height) < max_height:
        return "both"
    return "left" if height < 0.0 else "right"


def rectangle_corners(length: float, width: float) -> np.ndarray:
    """Corners (4, 3) of a sole of the given size in its own frame (centred, z = 0)."""
    hx, hy = length / 2.0, width / 2.0
    return np.array([[hx, hy, 0.0], [-hx, hy, 0.0], [-hx, -hy, 0.0], [hx, -hy, 0.0]])


def triangle_normal(points: np.ndarray) -> np.ndarray | None:
    """Unit normal (z >= 0) of the plane through three points (rows); None when they lie on
    a line. Written out in floats: the odometry and the balance monitor ask for it at every
    state of a robot on ball feet, where numpy's cross product of two 3-vectors costs more
    than the arithmetic."""
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = np.asarray(points, dtype=float).tolist()
    ux, uy, uz, vx, vy, vz = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    length = math.sqrt(nx * nx + ny * ny + nz * nz)
    if length < 1e-12:
        return None
    if nz < 0.0:
        length = -length
    return np.array([nx / length, ny / length, nz / length])


def plane_normal(points: np.ndarray) -> np.ndarray:
    """Unit normal (z >= 0) of the least-squares plane through three or more points."""
    points = np.asarray(points, dtype=float)
    if len(points) == 3 and (normal := triangle_normal(points)) is not None:
        return normal  # the plane through all three
    normal = np.linalg.svd(points - np.mean(points, axis=0))[2][2]
    return normal if normal[2] >= 0.0 else -normal


def levelling_rotation(points: np.ndarray) -> np.ndarray:
    """The least rotation that makes the plane through ``points`` (3 or more, in a frame
    whose z is roughly up) horizontal: it keeps the frame's heading. Identity for fewer
    than three points (no plane: the frame is kept level)."""
    points = np.asarray(points, dtype=float)
    if len(points) < 3:
        return np.eye(3)
    nx, ny, nz = plane_normal(points).tolist()
    # Rodrigues' rotation of n onto z about k = (n x z) / |n x z| = (ny, -nx, 0) / sine:
    # R = I + sine K + (1 - cosine) K^2, with K^2 = k k^T - I (k is a unit vector)
    sine, cosine = math.hypot(nx, ny), nz
    if sine < 1e-12:
        return np.eye(3)
    kx, ky, fold = ny / sine, -nx / sine, 1.0 - cosine
    return np.array([[1.0 + fold * (kx * kx - 1.0), fold * kx * ky, sine * ky],
                     [fold * kx * ky, 1.0 + fold * (ky * ky - 1.0), -sine * kx],
                     [-sine * ky, sine * kx, cosine]])


def resting_points(points: np.ndarray, com: np.ndarray, tolerance: float = LEVEL_HEIGHT) -> tuple[int, ...]:
    """Which of a rigid body's equal balls (centres ``points`` (n, 3), in the body's frame,
    z roughly up) it rests on when put down on flat ground, its centre of mass at ``com``.

    All of them when they are coplanar within ``tolerance``; otherwise the three whose
    plane has every other ball above it (within ``tolerance``) and the CoM over their
    triangle (the largest margin wins; if the CoM is over none, the nearest triangle), plus
    any ball within ``tolerance`` of that plane. Fewer than three balls all support.
    """
    points = np.asarray(points, dtype=float)
    n = len(points)
    if n < 3:
        return tuple(range(n))
    normal = plane_normal(points)
    if np.all(np.abs((points - points.mean(axis=0)) @ normal) <= tolerance):
        return tuple(range(n))
    best: tuple[float, tuple[int, ...]] | None = None
    for triple in itertools.combinations(range(n), 3):
        corners = points[list(triple)]
        normal = triangle_normal(corners)
        if normal is None:
            continue
        heights = (points - corners[0]) @ normal
        if np.any(heights < -tolerance):
            continue  # another ball would be below the ground
        rotation = levelling_rotation(corners)
        triangle = convex_hull((rotation @ corners.T).T[:, :2])
        margin = signed_margin((rotation @ np.asarray(com, dtype=float))[:2], triangle)
        chosen = tuple(i for i in range(n) if heights[i] <= tolerance)
        if best is None or margin > best[0]:
            best = (margin, chosen)
    return best[1] if best is not None else tuple(range(n))
