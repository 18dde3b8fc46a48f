"""Whether a simulation keeps to its real-time factor: one that cannot gives its control loop's
raised priority up.

A simulation at a real-time factor runs its loop at ``loop_nice`` (-5), as a robot's: it keeps
to the wall clock as a robot's loop keeps to its bus. A machine that cannot step the physics
that fast gains nothing from it: the loop then never sleeps, and at its raised priority takes
the CPU first from the nodes of its own graph, which the simulation exists to serve. Three
real-time simulations behind on a 2-core machine left a nice-0 process 4 % of a core: the
simulation node's own front answered no action request for 118 s, and in-process tests beside
it ran ten times slower (``humanoid_sim/test/test_sim_node_system.py`` beside
``test/test_namespaces.py``). So the pace is measured over windows of wall time, and a window
that reached less than a share of the real-time factor puts the loop back at the default
priority for the rest of the run (said once in the log).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["PaceWatch"]


@dataclass
class PaceWatch:
    """The pace of a simulation at ``real_time_factor`` over windows of ``window`` s of wall
    time; a window below ``share`` of the factor is reported."""

    real_time_factor: float
    window: float
    share: float
    _origin: tuple[float, float] | None = field(default=None, init=False)

    def update(self, wall: float, simulated: float, paused: bool = False) -> float | None:
        """Note the simulated time ``simulated`` (s) reached at ``wall`` (s, monotonic); the
        share of the real-time factor the window that ends now reached, when it fell short of
        ``share`` (None otherwise, and while a window runs). A pause or a reset (simulated time
        going back) starts a new window: neither is the machine's pace."""
        origin = self._origin
        if paused or origin is None or simulated < origin[1]:
            self._origin = (wall, simulated)
            return None
        elapsed = wall - origin[0]
        if elapsed < self.window:
            return None
        self._origin = (wall, simulated)
        reached = (simulated - origin[1]) / elapsed / self.real_time_factor
        return reached if reached < self.share else None
