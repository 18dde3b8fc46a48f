"""The walking pattern: footsteps in time, the ZMP reference through them, the CoM path.

:class:`WalkPattern` holds the plan and advances it one sampling period at a time:

- A step is a double support (the ZMP reference moves from the old support foot to
  the new one) then a single support (the ZMP stays on the support foot while the
  other swings to its landing, :mod:`~humanoid_core.biped_walking.swing`). Walking starts
  with a longer double support (the ZMP reference stays between the feet for its first
  half, so that the CoM starts moving first, then goes to the first support foot) and
  ends with one back to between the feet: it always stops in double support.
- Footsteps are planned ahead, one at a time (:func:`~humanoid_core.biped_walking.footsteps.plan_step`),
  far enough to cover the preview horizon, from what is wanted: a velocity (``cmd_vel``)
  or a goal pose (the ``walk`` action), each step's velocity moving towards the
  wanted one within the acceleration limits. A new wish replaces the steps whose
  double support has not begun; those under way are kept.
- The CoM follows from the ZMP reference by Kajita's preview control
  (:mod:`~humanoid_core.biped_walking.preview_control`) at a constant height.

Everything is in the walking frame: the ground plane where the feet stood when the
pattern was created, x forward, z up; nothing here knows ROS or the robot's joints.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from humanoid_core.biped_walking.footsteps import (
    SIDES,
    Footstep,
    Pose2,
    StepLimits,
    aligned,
    midpoint,
    other_side,
    plan_step,
    side_sign,
    wrap_angle,
)
from humanoid_core.biped_walking.preview_control import PreviewController, PreviewGains
from humanoid_core.biped_walking.swing import SwingProfile

#: The CoM has settled once this close (m) to the middle of the feet and this slow (m/s).
SETTLED_POSITION = 0.001
SETTLED_SPEED = 0.001


@dataclass(frozen=True)
class Timing:
    """Durations of the gait (s)."""

    step_period: float  # one step: double support + single support
    double_support_ratio: float  # share of the step in double support
    start_duration: float  # the first double support, from standing
    stop_duration: float  # the last one, back to standing

    @property
    def double_support(self) -> float:
        return self.step_period * self.double_support_ratio

    @property
    def single_support(self) -> float:
        return self.step_period - self.double_support


@dataclass(frozen=True)
class Step:
    """One foot moving from ``start`` to ``target``: lift-off at ``lift``, touch-down at ``land``."""

    swing: str
    start: Pose2
    target: Pose2
    lift: float
    land: float
    velocity: tuple[float, float, float]  # the centre frame's velocity this step was planned for
    first: bool  # the first step after standing (its double support starts between the feet)


class Mode(enum.Enum):
    STANDING = "standing"
    VELOCITY = "velocity"  # following cmd_vel
    GOAL = "goal"  # walking to a pose
    STOPPING = "stopping"  # no new steps: finishing the last one


@dataclass(frozen=True)
class PatternSample:
    """What the pattern asks of the robot at one instant."""

    time: float
    com: np.ndarray  # (3,) world
    zmp: np.ndarray  # (2,) reference
    feet: dict[str, tuple[Pose2, float]]  # side -> (ground placement, height of the sole)
    trunk_yaw: float
    support: str  # "both", "right" or "left"


@dataclass
class _Goal:
    pose: Pose2  # where the centre frame should end, walking frame
    tolerance: tuple[float, float]  # (m, rad)


@dataclass
class WalkPattern:
    """The plan and its state; :meth:`advance` moves it on by one period."""

    gains: PreviewGains
    timing: Timing
    limits: StepLimits
    com_height: float
    swing_profile: SwingProfile
    max_velocity: tuple[float, float, float]
    acceleration: tuple[float, float, float]  # limits: m/s^2, m/s^2, rad/s^2
    zmp_offset: tuple[float, float]  # ZMP reference in each foot: forward, inwards (m)
    feet: dict[str, Pose2]  # where the feet stand (steps under way land later)
    time: float = 0.0
    mode: Mode = Mode.STANDING
    steps: list[Step] = field(default_factory=list)
    _velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)  # wanted (cmd_vel)
    _goal: _Goal | None = None
    #: The last double support of a walk, from the support foot to between the feet:
    #: ((start time, point), (end time, point)); standing from its end on.
    _stop_ramp: tuple[tuple[float, np.ndarray], tuple[float, np.ndarray]] | None = None
    _knots: tuple[np.ndarray, np.ndarray] | None = None
    #: Steps that have landed since the pattern was created.
    landed: int = 0
    #: The last goal (set_goal) was planned to the end: no step remains to take for it.
    goal_reached: bool = False

    def __post_init__(self) -> None:
        self.feet = dict(self.feet)
        self._preview = PreviewController(self.gains, self.standing_zmp(self.feet))

    # -- wishes -----------------------------------------------------------------------
    def set_velocity(self, vx: float, vy: float, wz: float) -> None:
        """Walk at this velocity of the centre frame (m/s, rad/s; clipped to the limits);
        all zero: stop (in double support, feet side by side)."""
        wanted = tuple(math.copysign(min(abs(v), m), v) for v, m in zip((vx, vy, wz), self.max_velocity,
                                                                         strict=True))
        if self.mode is Mode.VELOCITY and wanted == self._velocity:
            return
        self._goal = None
        self.goal_reached = False
        self._velocity = wanted  # type: ignore[assignment]
        if self.mode is Mode.STANDING and not any(wanted):
            return
        self.mode = Mode.VELOCITY
        self._replan()

    def set_goal(self, pose: Pose2, position_tolerance: float = 0.005, turn_tolerance: float = 0.02) -> None:
        """Walk until the centre frame is at ``pose`` (walking frame), then stop."""
        self._goal = _Goal(pose, (position_tolerance, turn_tolerance))
        self.goal_reached = False
        self._velocity = (0.0, 0.0, 0.0)
        self.mode = Mode.GOAL
        self._replan()

    def stop(self) -> None:
        """Finish the step under way, bring the feet side by side and stand."""
        self.set_velocity(0.0, 0.0, 0.0)

    # -- state ------------------------------------------------------------------------
    @property
    def walking(self) -> bool:
        """Steps planned or under way, the ZMP still on its way back between the feet, or
        the CoM not yet settled over it (within 1 mm, moving less than 1 mm/s)."""
        if self.steps or self.mode is not Mode.STANDING:
            return True
        if self._stop_ramp is not None and self.time < self._stop_ramp[1][0]:
            return True
        state = self._preview.state
        return bool(np.max(np.abs(state[0] - self.standing_zmp(self.feet))) > SETTLED_POSITION
                    or np.max(np.abs(state[1])) > SETTLED_SPEED)

    @property
    def centre(self) -> Pose2:
        """The centre frame of the feet once the planned steps have landed."""
        feet = self._feet_after(self.steps)
        return midpoint(feet["right"], feet["left"])

    @property
    def com(self) -> np.ndarray:
        """The CoM (x, y, z) the pattern is at."""
        return np.array([*self._preview.com, self.com_height])

    def standing_zmp(self, feet: dict[str, Pose2]) -> np.ndarray:
        return midpoint(feet["right"], feet["left"]).position

    def foot_zmp(self, foot: Footstep) -> np.ndarray:
        forward, inwards = self.zmp_offset
        return foot.pose.point(forward, -side_sign(foot.side) * inwards)

    # -- planning ----------------------------------------------------------------------
    def _double_support_start(self, step: Step) -> float:
        return step.lift - (self.timing.start_duration if step.first else self.timing.double_support)

    def _replan(self) -> None:
        """Keep the steps whose double support has begun; plan the rest anew."""
        self.steps = [s for s in self.steps if self._double_support_start(s) <= self.time + 1e-9]
        self._knots = None
        self._extend()

    def _feet_after(self, steps: list[Step]) -> dict[str, Pose2]:
        feet = dict(self.feet)
        for step in steps:
            feet[step.swing] = step.target
        return feet

    def _extend(self) -> None:
        """Plan steps until the preview horizon is covered or the walk ends."""
        horizon = self.time + self.gains.steps * self.gains.dt + self.timing.step_period
        while self.mode in (Mode.VELOCITY, Mode.GOAL) and not (self.steps and self.steps[-1].land > horizon):
            step = self._next_step()
            if step is None:
                break
            self.steps.append(step)
            self._knots = None

    def _next_step(self) -> Step | None:
        """The step after the last planned one, or None when the walk ends (the mode then
        becomes STANDING: the pattern stops in double support after the last step)."""
        feet = self._feet_after(self.steps)
        timing = self.timing
        if self.steps:
            last = self.steps[-1]
            swing, lift, previous = other_side(last.swing), last.land + timing.double_support, last.velocity
        else:
            swing = self._first_swing(feet)
            standing_from = self._stop_ramp[1][0] if self._stop_ramp is not None else self.time
            lift = max(self.time, standing_from) + timing.start_duration
            previous = (0.0, 0.0, 0.0)
        support = Footstep(other_side(swing), feet[other_side(swing)])
        remaining = None
        if self._goal is not None:
            centre = support.pose.compose(Pose2(0.0, side_sign(swing) * self.limits.stance_width / 2.0, 0.0))
            offset = centre.relative(self._goal.pose)
            remaining = (offset.x, offset.y, offset.yaw)
            # decelerate so as to arrive at rest
            wanted = tuple(math.copysign(min(m, math.sqrt(2.0 * a * abs(r))), r)
                           for r, m, a in zip(remaining, self.max_velocity, self.acceleration, strict=True))
            done = (math.hypot(offset.x, offset.y) <= self._goal.tolerance[0]
                    and abs(offset.yaw) <= self._goal.tolerance[1])
        else:
            wanted = self._velocity
            done = not any(wanted)
        ramp = [a * timing.step_period for a in self.acceleration]
        velocity = tuple(p + max(-r, min(r, w - p)) for p, w, r in zip(previous, wanted, ramp, strict=True))
        if done and aligned(support, Footstep(swing, feet[swing]), self.limits.stance_width):
            self.mode = Mode.STANDING
            self.goal_reached = self._goal is not None
            self._goal = None
            return None
        target = plan_step(support, velocity, timing.step_period, self.limits, remaining)  # type: ignore[arg-type]
        return Step(swing, feet[swing], target.pose, lift, lift + timing.single_support,
                    velocity, first=not self.steps)  # type: ignore[arg-type]

    def _first_swing(self, feet: dict[str, Pose2]) -> str:
        """Which foot steps first: the one on the side of the motion (turning counts most)."""
        if self._goal is not None:
            offset = midpoint(feet["right"], feet["left"]).relative(self._goal.pose)
            lateral, turn = offset.y, offset.yaw
        else:
            lateral, turn = self._velocity[1], self._velocity[2]
        direction = turn if abs(turn) > 1e-6 else lateral
        return "left" if direction > 0.0 else "right"

    # -- the ZMP reference ---------------------------------------------------------------
    def _reference_knots(self) -> tuple[np.ndarray, np.ndarray]:
        """Times and points (k, 2) of the piecewise linear ZMP reference from now on."""
        if self._knots is not None:
            return self._knots
        times: list[float] = []
        points: list[np.ndarray] = []

        def add(t: float, p: np.ndarray) -> None:
            if not times or t > times[-1]:
                times.append(t)
                points.append(p)

        if self._stop_ramp is not None and self.time < self._stop_ramp[1][0]:
            for t, p in self._stop_ramp:
                add(t, p)
        feet = dict(self.feet)
        if self.steps:
            first = self.steps[0]
            if first.first:  # the CoM starts moving before the reference leaves the middle
                add(self._double_support_start(first), self.standing_zmp(feet))
                add((self._double_support_start(first) + first.lift) / 2.0, self.standing_zmp(feet))
            else:
                add(self._double_support_start(first), self.foot_zmp(Footstep(first.swing, feet[first.swing])))
            for step in self.steps:
                point = self.foot_zmp(Footstep(other_side(step.swing), feet[other_side(step.swing)]))
                add(step.lift, point)
                add(step.land, point)
                feet[step.swing] = step.target
            if self.mode is Mode.STANDING:
                add(self.steps[-1].land + self.timing.stop_duration, self.standing_zmp(feet))
        elif not times:
            add(self.time, self.standing_zmp(feet))
        self._knots = (np.array(times), np.array(points))
        return self._knots

    def reference(self, times: np.ndarray) -> np.ndarray:
        """The ZMP reference (len(times), 2) at these times."""
        knots_t, knots_p = self._reference_knots()
        return np.column_stack([np.interp(times, knots_t, knots_p[:, 0]), np.interp(times, knots_t, knots_p[:, 1])])

    # -- advancing -------------------------------------------------------------------------
    def advance(self) -> PatternSample:
        """Move on by one sampling period and return the pattern at the new time."""
        if self.mode in (Mode.VELOCITY, Mode.GOAL):
            self._extend()
        future = self.time + self.gains.dt * np.arange(self.gains.steps + 1)
        self._preview.step(self.reference(future))
        self.time += self.gains.dt
        self._retire_landed()
        return self.sample()

    def _retire_landed(self) -> None:
        """Steps that have landed become the feet's placements."""
        while self.steps and self.steps[0].land <= self.time + 1e-9:
            step = self.steps.pop(0)
            support = Footstep(other_side(step.swing), self.feet[other_side(step.swing)])
            self.feet[step.swing] = step.target
            self.landed += 1
            self._knots = None
            if not self.steps and self.mode is Mode.STANDING:
                end = step.land + self.timing.stop_duration
                self._stop_ramp = ((step.land, self.foot_zmp(support)), (end, self.standing_zmp(self.feet)))

    def sample(self) -> PatternSample:
        """The pattern at the current time."""
        t = self.time
        feet = {side: (self.feet[side], 0.0) for side in SIDES}
        support = "both"
        step = self.steps[0] if self.steps else None
        if step is not None and step.lift < t < step.land:
            phase = (t - step.lift) / (step.land - step.lift)
            feet[step.swing] = self.swing_profile.pose(step.start, step.target, phase)
            support = other_side(step.swing)
        right, left = feet["right"][0], feet["left"][0]
        trunk_yaw = wrap_angle(right.yaw + wrap_angle(left.yaw - right.yaw) / 2.0)
        return PatternSample(t, self.com, self.reference(np.array([t]))[0], feet, trunk_yaw, support)
