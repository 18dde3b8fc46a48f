"""Which of a controller's computed set-points a trajectory sent now carries, and when.

The walk and gait controller nodes compute set-points ahead of the robot's clock and send
those not yet due when the trajectory begins (:class:`SetpointBatcher`). A node that got no
CPU for longer than its lead leaves the robot holding the last set-point it sent; its next
trajectory then resumes the motion from there, later by the time the robot held, instead of
heading for where the motion would be by now (a jump the front refuses, and every later
trajectory with it: the robot would stay where it stopped). A robot measured away from what
it was sent (a trajectory refused, as one come too late) is sent the motion from where it
stands in the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Share of a joint's speed limit a controller's set-points may use (the rest is the front's margin).
VELOCITY_MARGIN = 0.95


@dataclass(frozen=True)
class Setpoint:
    """Joint positions (rad) and velocities (rad/s) for every joint, canonical order."""

    stamp: float  # robot time the set-point is for
    positions: np.ndarray
    velocities: np.ndarray


#: s: a node's clock this far or more ahead of the reading it handles is not the robot's clock
#: (:meth:`SetpointBatcher.flush`): a node a minute behind its readings has no motion left to save.
MAX_LAG = 60.0

def handled_at(now: float, clock: float | None) -> float:
    """The robot's time at which a reading stamped ``now`` is handled: the node's ``clock``
    where it is the robot's clock too (the hardware node stamps its readings with the system
    clock) and ahead of the reading (a node behind its readings, a queue of them on a loaded
    machine); else ``now``. A clock :data:`MAX_LAG` or more ahead is another clock (the
    system's against a simulation's time)."""
    return clock if clock is not None and now < clock < now + MAX_LAG else now


#: rad, s: a robot measured farther than this from every set-point it was sent for the last
#: ``FOLLOW_WINDOW`` did not take them (:meth:`SetpointBatcher.flush`); servos that lag their
#: set-points by less than the window, or miss them by less than the tolerance, follow.
FOLLOW_TOLERANCE = 0.15
FOLLOW_WINDOW = 0.5
#: Resumes from where the robot stands in a row that it did not take, after which a motion
#: goes on as planned (:meth:`SetpointBatcher.flush`).
MAX_RESUMES = 2

#: s: a trajectory sent begins this far after the reading it answers (its header stamp):
#: the front runs the previous one until then, so delays below it change nothing.
TRAJECTORY_DELAY = 0.1

#: s: the robot's set-point (:meth:`SetpointBatcher.heard_setpoint`) counts for a reading no
#: older than this: a robot released writes none, and its last one is no longer where the
#: executor would lead in from.
SETPOINT_AGE = TRAJECTORY_DELAY


@dataclass(frozen=True)
class Batch:
    """One trajectory to send: it begins at ``start`` (robot time, its header stamp); point k
    is for robot time ``setpoints[k].stamp`` with ``velocities[k]``."""

    start: float
    setpoints: list[Setpoint]
    velocities: list[np.ndarray]


class SetpointBatcher:
    """The set-points a controller computed and not yet due, and the trajectories that carry
    them: at every reading it handles, those not yet due when a trajectory sent now would
    begin (``TRAJECTORY_DELAY`` after the reading) go out as one trajectory every
    ``send_period`` of robot time. Each trajectory replaces the previous one where the robot
    is, so the robot moves on through a controller that gets no CPU for a while instead of
    holding a stale set-point mid-motion. Without ROS: the nodes publish its batches
    (:mod:`humanoid_control.ros.setpoint_stream`), the in-process runs hand them to the
    simulation directly, so both send the same set-points.

    The controller's set-points are stamped on its plan; the robot's time of each is the
    plan's plus ``delay``, 0 while the node keeps up. When a set-point never sent is due
    before the next trajectory begins (the node had no CPU for longer than its lead), the
    robot has run out of set-points and holds the last one sent: ``delay`` then grows so that
    the motion resumes from that one (the robot moves from it to the next set-point over the
    node's command lead, then on as planned: within the joints' speed limits, as the
    controller made them), and stays so until the motion's final set-point. It grows too when
    the measured joints show that the robot did not take what was sent
    (:meth:`_resume_from_measured`).

    A lead-in (a resume's, a last set-point's sent again) is timed from where the robot is
    measured and from the robot's own set-point when it is known (:meth:`heard_setpoint`):
    the robot interface heads for a trajectory's first point from its set-point at the
    trajectory's start and refuses a lead-in beyond the speed limits from there, and on a
    loaded bus the set-point runs up to 0.55 rad ahead of the servos (docs/robot_interface.md)."""

    def __init__(self, velocity_limit: np.ndarray, command_lead: float, send_period: float,
                 smooth_velocities: bool = True, warn: Callable[[str], None] = lambda _text: None) -> None:
        if command_lead < 2.0 * TRAJECTORY_DELAY + send_period:
            raise ValueError(f"command_lead must be at least {2.0 * TRAJECTORY_DELAY:g} s plus send_period, got "
                             f"{command_lead:g} s")
        self._velocity_limit = velocity_limit
        self.command_lead, self.send_period = command_lead, send_period
        #: Replace each moving set-point's velocity by the central difference of its neighbours
        #: (a controller whose set-points carry exact velocities keeps its own: the difference of
        #: two robot times of 1.8e9 s, wall-clock time, loses digits)
        self.smooth_velocities = smooth_velocities
        self.warn = warn
        self.ahead: list[Setpoint] = []  # computed (plan stamps), not yet due
        #: The set-point just before ``ahead[0]`` (plan stamps), gone due at this ``delay``: the
        #: neighbour a trajectory's first set-point is smoothed with (None: none such)
        self._before: Setpoint | None = None
        self.delay = 0.0  # s, the robot's time of a set-point minus its plan stamp (this motion)
        self.sent_at = -math.inf  # robot time of the last trajectory sent
        self.last_sent: Setpoint | None = None  # its last point (robot time)
        self._sent_plan = -math.inf  # plan stamp of the last point sent
        self._sent: list[Setpoint] = []  # the robot's set-points if it took all sent (robot time)
        self._resumed_to: float | None = None  # robot time a resume's lead-in ends (under way)
        self._resumes = 0  # resumes in a row the robot did not take
        self._gave_up = False  # said that the motion goes on as planned
        #: The robot's latest set-point (robot time, positions in canonical order, NaN: unknown)
        self._robot_setpoint: tuple[float, np.ndarray] | None = None

    def heard_setpoint(self, stamp: float, positions: np.ndarray) -> None:
        """The robot wrote set-point ``positions`` (canonical order, NaN: unknown) at robot
        time ``stamp`` (``joint_setpoints``): lead-ins are timed from it too."""
        self._robot_setpoint = (stamp, positions)

    def origin(self, now: float, measured: np.ndarray) -> np.ndarray:
        """Where a motion starting at a reading at ``now`` starts from: the robot's set-point
        where a fresh one is known (the robot interface leads in from there, and a robot
        held short of its set-point, a Bioloid sagging in its stance, would otherwise start
        with a jump), else the ``measured`` joints; a joint measured unknown (NaN) stays so."""
        setpoint = self._fresh_setpoint(now)
        if setpoint is None:
            return measured
        return np.where(np.isfinite(measured) & np.isfinite(setpoint), setpoint, measured)

    def _origins(self, now: float, measured: np.ndarray) -> list[np.ndarray]:
        """Where the robot leads in from at a reading at ``now``: the ``measured`` joints, and
        its set-point when a fresh one is known."""
        setpoint = self._fresh_setpoint(now)
        return [measured] if setpoint is None else [measured, setpoint]

    def _fresh_setpoint(self, now: float) -> np.ndarray | None:
        """The robot's set-point heard no longer than :data:`SETPOINT_AGE` before ``now`` (None: none such)."""
        heard = self._robot_setpoint
        return heard[1] if heard is not None and heard[0] >= now - SETPOINT_AGE else None

    @property
    def sent_until(self) -> float:
        """Robot time of the last set-point sent (-inf before the first trajectory)."""
        return -math.inf if self.last_sent is None else self.last_sent.stamp

    def add(self, setpoint: Setpoint, final: bool) -> None:
        """A newly computed set-point (``final``: the motion's last, at rest, which replaces
        one computed for the same time)."""
        if not self.ahead or setpoint.stamp > self.ahead[-1].stamp:
            self.ahead.append(setpoint)
        elif final:
            self.ahead[-1] = setpoint

    def abandon(self) -> None:
        """Forget the motion under way (nothing more of it is sent: a fall, a new gait): the
        next motion starts on its own plan, whatever delay this one had."""
        self.ahead = []
        self._before = None
        self.delay = 0.0
        self._sent_plan = -math.inf
        self._sent = []
        self._resumed_to, self._resumes, self._gave_up = None, 0, False

    def flush(self, now: float, final: bool = False, clock: float | None = None,
              measured: np.ndarray | None = None) -> Batch | None:
        """At a reading stamped ``now``: keep the set-points still ahead and return the
        trajectory to send when one is due (always with the motion's ``final`` set-point,
        after which nothing is kept). ``clock``: the node's clock when it handles the reading.
        A node behind its readings schedules from the clock (:func:`handled_at`): nothing it
        sends is already past. ``measured``: the reading's joint positions
        (canonical order, NaN: unknown), which tell a robot that did not take what was sent
        (:meth:`_resume_from_measured`)."""
        now = handled_at(now, clock)
        begins = now + TRAJECTORY_DELAY
        self._resume_if_run_out(now, begins)
        kept = [s for s in self.ahead if s.stamp + self.delay > begins + 1e-6]
        if len(kept) < len(self.ahead):
            self._before = self.ahead[len(self.ahead) - len(kept) - 1]
        if final and not kept and self.ahead:
            # the final set-point due already: sent alone, for a time a late trajectory still
            # reaches (the command lead after now), so that the motion ends where it should
            last = self.ahead[-1]
            self.warn(f"the final set-point came {begins - (last.stamp + self.delay):.3f} s late (this node lagged "
                      f"behind the robot's clock): sent for {self.command_lead:g} s from now")
            kept = [Setpoint(now + self.command_lead - self.delay, last.positions, last.velocities)]
        self.ahead = kept
        batch = None
        if self.ahead and (final or now - self.sent_at >= self.send_period - 1e-9):
            if measured is not None:
                self._resume_from_measured(now, measured)
            batch = self._batch(now)
        if final:
            self.abandon()
        return batch

    def _resume_if_run_out(self, now: float, begins: float) -> None:
        """A set-point of a motion under way never sent and due before ``begins``: the robot
        holds the last one sent; the motion resumes from it, its next set-point ``command_lead``
        after ``now`` (the margin a motion's first trajectory has against a late arrival), the
        rest as planned after it (``delay`` grows). Before anything of the motion was sent, the
        motion starts at its first set-point still ahead, from where the robot is (led in to it
        within the speed limits: :meth:`_resume_from_measured`)."""
        if not math.isfinite(self._sent_plan):
            return
        unsent = [s for s in self.ahead if s.stamp > self._sent_plan + 1e-9]
        if not unsent or unsent[0].stamp + self.delay > begins + 1e-6:
            return
        held = begins - (self._sent_plan + self.delay)
        self.ahead = unsent  # those sent are behind the robot, which holds the last of them
        self._before = None  # the robot comes to the first from where it holds, not from it
        self.delay = now + self.command_lead - unsent[0].stamp
        self.warn(f"the robot ran out of set-points (this node got no CPU for a while) and holds the last one sent "
                  f"from {held:.3f} s before this trajectory's start: the motion resumes from there, "
                  f"{self.delay:.3f} s behind its plan")

    def _resume_from_measured(self, now: float, measured: np.ndarray) -> None:
        """The next trajectory's first set-point is out of reach from where the robot is
        measured (faster than the joints' limits: the front would refuse it). Either nothing
        of the motion was sent yet (a node behind the robot's clock skipped its first
        set-points, already due) or the robot did not take what was sent: it is measured away
        from every set-point it was sent for the last :data:`FOLLOW_WINDOW` (servos lagging
        behind their set-points are near one of them), standing where a refused trajectory
        left it (the robot interface's log says why). The motion goes on from where the robot
        is: its next set-point after a lead-in at half the joints' speed limits, the rest as
        planned after it (``delay`` grows). The robot has until that set-point is due to take
        it; after :data:`MAX_RESUMES` resumes in a row that it did not take, the motion goes on
        as planned (a robot that refuses everything: the motion ends on time, and the
        controller's end check says the robot did not reach it)."""
        known = np.isfinite(measured)
        if self._resumed_to is not None:
            if now < self._resumed_to:
                return  # the lead-in under way: the robot has until its end to take it
            if self._sent and self._off_path(now, measured, known) <= FOLLOW_TOLERANCE:
                self._resumes = 0  # it took the lead-in
            self._resumed_to = None
        first = self.ahead[0]
        need = self._time_to_reach(first.positions, *self._origins(now, measured))
        if need <= first.stamp + self.delay - now:
            return
        if self._sent:
            off = self._off_path(now, measured, known)
            if off <= FOLLOW_TOLERANCE:
                return
            why = (f"the robot did not take the set-points sent (measured {off:.3f} rad from every one of the last "
                   f"{FOLLOW_WINDOW:g} s; refused? the robot interface's log says why)")
        else:
            why = "the motion's first set-point still ahead is out of reach from where the robot is (this node lagged)"
        if self._resumes == MAX_RESUMES:
            if math.isfinite(self._sent_plan) and not self._gave_up:
                self._gave_up = True
                self.warn(f"{why}: it took none of the last {MAX_RESUMES} resumes from where it stood; the motion "
                          "goes on as planned")
            return
        self._resumes += 1
        self.delay = now + self._lead_in(need) - first.stamp
        self._before = None  # the robot comes to the first from where it stands
        self._resumed_to = first.stamp + self.delay
        begins = now + TRAJECTORY_DELAY
        start = np.where(known, measured, first.positions)
        self._sent = [s for s in self._sent if s.stamp < begins] + [Setpoint(begins, start, np.zeros_like(start))]
        self.warn(f"{why}: the motion goes on from where the robot is, {self.delay:.3f} s behind its plan")

    def resend_last(self, now: float, measured: np.ndarray, clock: float | None = None) -> Batch | None:
        """The last set-point sent, again, as a trajectory starting ``TRAJECTORY_DELAY`` after
        the reading stamped ``now`` is handled (the node's ``clock``: :func:`handled_at`) and
        led in from where the robot is ``measured`` (and its set-point: :meth:`_origins`) at
        half the joints' speed limits (at least the command lead): for a robot that is not
        there once it is due (its last trajectory refused, as one that came too late); None
        before anything was sent. A node behind its readings that scheduled from the reading
        sent a trajectory already under way, refused as late again."""
        last = self.last_sent
        if last is None:
            return None
        now = handled_at(now, clock)
        need = self._time_to_reach(last.positions, *self._origins(now, measured))
        again = Setpoint(now + self._lead_in(need), last.positions, np.zeros_like(last.positions))
        self.sent_at, self.last_sent = now, again
        return Batch(now + TRAJECTORY_DELAY, [again], [again.velocities])

    def _time_to_reach(self, positions: np.ndarray, *origins: np.ndarray) -> float:
        """s the farthest joint needs at its speed limit to ``positions`` from the farthest of
        ``origins`` (each a reading, NaN: left out)."""
        need = 0.0
        for origin in origins:
            known = np.isfinite(origin)
            need = max(need, float(np.max(np.abs(positions - origin)[known] / self._velocity_limit[known],
                                          initial=0.0)))
        return need

    def _lead_in(self, need: float) -> float:
        """s from a reading to a set-point ``need`` s away at the speed limits, reached at half
        of them after the trajectory's start, and no sooner than the command lead."""
        return max(self.command_lead, TRAJECTORY_DELAY + 2.0 * need)

    def _off_path(self, now: float, measured: np.ndarray, known: np.ndarray) -> float:
        """How far (rad, the farthest joint) ``measured`` is from the nearest set-point the
        robot was sent for the last :data:`FOLLOW_WINDOW` up to ``now``."""
        times = np.array([s.stamp for s in self._sent])
        path = np.array([s.positions for s in self._sent])
        recent = (times >= now - FOLLOW_WINDOW) & (times <= now)
        samples = [np.array([np.interp(t, times, path[:, j]) for j in range(path.shape[1])])
                   for t in (now - FOLLOW_WINDOW, now)]
        candidates = np.vstack([path[recent], *samples])
        return float(np.min(np.max(np.abs(candidates - measured)[:, known], axis=1, initial=0.0)))

    def _batch(self, now: float) -> Batch:
        """The set-points still ahead, as one trajectory starting ``TRAJECTORY_DELAY`` after
        ``now``: the front follows the previous one until that time and joins this one
        from where its set-point is then, so the motion keeps its timing whatever the
        transport's delay below that (a later arrival joins it where its timeline is then:
        :func:`~humanoid_core.loop.trajectory_executor.joined_at`)."""
        delay = self.delay
        ahead = [Setpoint(s.stamp + delay, s.positions, s.velocities) for s in self.ahead] if delay else self.ahead
        velocities = [s.velocities for s in ahead]
        # the first set-point too when the one before it is known: each set-point then goes out
        # with the same velocity in every trajectory that carries it, so that consecutive
        # trajectories share their path where they overlap (the robot's path check clears only
        # what the last one did not: humanoid_core.guards.self_collision_guard)
        neighbours = ([] if self._before is None else [self._before]) + self.ahead
        if self.smooth_velocities and len(neighbours) > 2:  # where both neighbours are known
            positions = np.array([s.positions for s in neighbours])
            stamps = np.array([s.stamp for s in neighbours])
            smoothed = np.clip((positions[2:] - positions[:-2]) / (stamps[2:] - stamps[:-2])[:, None],
                               -self._velocity_limit, self._velocity_limit)
            shift = len(neighbours) - len(ahead)
            for k in range(1, len(neighbours) - 1):
                if np.count_nonzero(neighbours[k].velocities):  # zero: a set-point at rest stays so
                    velocities[k - shift] = smoothed[k - 1]
        self.sent_at = now
        self.last_sent = ahead[-1]
        self._sent_plan = self.ahead[-1].stamp
        start = now + TRAJECTORY_DELAY
        self._sent = [s for s in self._sent if now - FOLLOW_WINDOW - self.send_period <= s.stamp <= start] + ahead
        return Batch(start, list(ahead), velocities)


def farthest_joint(measured: np.ndarray, target: np.ndarray) -> tuple[int, float]:
    """The joint (index) measured farthest from ``target``, and how far (rad); a joint read
    as unknown (NaN) is left out (its staleness is reported by itself)."""
    error = np.abs(np.asarray(measured, dtype=float) - target)
    error[~np.isfinite(error)] = 0.0
    worst = int(np.argmax(error))
    return worst, float(error[worst])
