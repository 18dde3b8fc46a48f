"""Signed margins in convex polygons, compiled (_polygon.cpp); see support.ConvexPolygon."""

from collections.abc import Sequence

class ConvexPolygon:
    """A convex polygon's edges prepared for margin queries."""

    def __init__(self, vertices: Sequence[Sequence[float]]) -> None: ...
    def margin(self, x: float, y: float) -> float:
        """Signed distance from (x, y) to the boundary: positive inside, negative outside,
        NaN for an empty polygon (see :func:`humanoid_description.support.signed_margin`)."""
    def __len__(self) -> int:
        """The number of edges."""
