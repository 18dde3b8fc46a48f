"""One PyBullet world for several robots (``humanoid sim --count N``).

Each robot keeps its own driver, control loop, node and namespace; what they share is the
physics client, the ground and the physics steps. A robot's control cycle is its servos'
set-points over ``steps`` physics steps; the world takes a cycle only when every robot has
come to it: the last to arrive applies each robot's motors before every physics step and
steps the world once for all, and the others wait meanwhile. So the robots see one clock,
touch each other, and a robot that is held (paused, waiting in lockstep for its graph's
answers, still starting) holds the world: pausing one robot pauses the world, stepping it
steps the world.

A robot that does not come within a wait (:data:`ARRIVAL_WAIT` control periods) gives its
place back and its cycle does not step, as a paused one: its loop then goes on as for a
paused simulation (its stop request is seen; nothing hangs on a robot that has stopped).

Why not a process per robot, as one simulated robot has: PyBullet's world lives in one
process's memory, and stepping it through a server (PyBullet's shared-memory mode) would
add a round trip per physics step and robot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import pybullet

from humanoid_sim.sim_parameters import SimParameters

#: Control periods a robot waits for the others at a cycle before it gives its place back.
ARRIVAL_WAIT = 10
#: Acceleration of gravity (m/s^2).
GRAVITY = 9.81
#: m between neighbouring robots along y (a Bioloid quadruped is 0.2-0.3 m across its feet).
DEFAULT_SPACING = 0.5


@dataclass(frozen=True)
class WorldSeat:
    """Where one robot stands in a shared world: its ``index`` (0-based) of ``count`` robots,
    placed ``spacing`` m apart along the world's y axis (robot 0 at the origin)."""

    index: int
    count: int
    spacing: float

    @property
    def offset(self) -> tuple[float, float]:
        """The robot's place on the ground (x, y), m."""
        return 0.0, self.index * self.spacing


class SharedWorld:
    """The physics client, the ground and the steps of the robots of one world."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._expected = count  # robots a cycle waits for: those that have not left
        self.client: int | None = None
        self.ground = -1
        #: held by the stepping robot for a whole cycle, and by any change of a body
        self.lock = threading.RLock()
        self._arrival = threading.Condition(threading.Lock())
        self._waiting: dict[int, Callable[[float], None]] = {}  # seat index: its step's motors
        self._cycles = 0
        self._members = 0
        #: every robot that came has left: the world is gone
        self.closed = False

    def connect(self, params: SimParameters) -> tuple[int, int]:
        """The world's client and ground, made by the first robot that starts (its physics
        settings are the world's: every robot of a world has the same)."""
        with self.lock:
            if self.client is None:
                client = pybullet.connect(pybullet.GUI if params.gui else pybullet.DIRECT)
                if client < 0:
                    raise RuntimeError("cannot connect to PyBullet (GUI needs a display)")
                pybullet.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
                pybullet.setTimeStep(params.physics_period, physicsClientId=client)
                pybullet.setPhysicsEngineParameter(**params.engine_settings(), physicsClientId=client)
                plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
                self.ground = pybullet.createMultiBody(0.0, plane, physicsClientId=client)
                pybullet.changeDynamics(self.ground, -1, lateralFriction=1.0, restitution=0.0,
                                        physicsClientId=client)
                self.client = client
            self._members += 1
            return self.client, self.ground

    def leave(self) -> None:
        """A robot leaves the world (its driver closed); the last one closes the client."""
        with self.lock:
            self._members -= 1
            if self._members == 0 and self.client is not None:
                pybullet.disconnect(physicsClientId=self.client)
                self.client, self.closed = None, True
        with self._arrival:
            self._expected -= 1
            self._arrival.notify_all()

    def cycle(self, seat: int, steps: int, motors: Callable[[float], None], dt: float, period: float) -> bool:
        """Robot ``seat``'s control cycle of ``steps`` physics steps of ``dt`` s, ``motors``
        applying its motors before each: True once the world has taken it, False when the
        others did not all come within :data:`ARRIVAL_WAIT` control ``period`` s (nothing
        stepped)."""
        with self._arrival:
            self._waiting[seat] = motors
            cycle = self._cycles
            if len(self._waiting) < self._expected:
                if self._arrival.wait_for(lambda: self._cycles != cycle, timeout=ARRIVAL_WAIT * period):
                    return True
                del self._waiting[seat]
                return False
            everyone, self._waiting = list(self._waiting.values()), {}
            with self.lock:
                for _ in range(steps):
                    for apply in everyone:
                        apply(dt)
                    pybullet.stepSimulation(physicsClientId=self.client)
            self._cycles += 1
            self._arrival.notify_all()
            return True


#: The world of this process (a loop's process serves one world).
_world: SharedWorld | None = None


def process_world(count: int) -> SharedWorld:
    """This process's shared world of ``count`` robots, made by the first robot built (and
    again once every robot of the previous one has left)."""
    global _world
    if _world is None or _world.closed:
        _world = SharedWorld(count)
    elif _world.count != count:
        raise ValueError(f"this process's world is of {_world.count} robots, not {count}")
    return _world
