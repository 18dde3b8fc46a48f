"""The walk controller without ROS: commands in, joint set-points out, once per reading.

:class:`WalkController` is driven by the robot's own readings (``update`` with each
joint state, on the robot's clock) and holds three phases:

- ``IDLE``: not commanding anything (the robot interface holds the last set-point).
  A walking command starts the walk if the readings allow it: every joint known, both
  soles flat on the ground.
- ``PREPARING``: from the posture the robot stands in to the walking posture (CoM
  lowered to the walking height over the middle of the feet, trunk upright, the other
  joints to the configured posture), feet planted, in ``prepare_duration``, beginning
  ``command_lead`` after the reading that started it (so that a late first trajectory
  still finds the path at rest where the robot stands).
- ``WALKING``: the pattern (:class:`~humanoid_core.biped_walking.pattern.WalkPattern`)
  advanced to the reading's time plus the command lead, turned into joint positions by
  the whole-body IK (:class:`~humanoid_description.inverse_kinematics.StanceSolver`).
  When the pattern stands again (double support, CoM settled) the phase is ``IDLE``.

Staleness: a joint read as NaN is unknown. Walking, the controller then stops the walk
(the step under way ends, the feet come side by side: it stands) and says why; idle,
it refuses to start. The pattern itself never uses measured joint positions, so an
unknown reading never becomes a set-point.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from humanoid_core.biped_walking.footsteps import Pose2, midpoint
from humanoid_core.biped_walking.parameters import WalkParameters
from humanoid_core.biped_walking.pattern import Mode, PatternSample, WalkPattern
from humanoid_core.biped_walking.preview_control import preview_gains
from humanoid_core.biped_walking.stabilizer import Sensors, Stabilizer
from humanoid_core.biped_walking.swing import rest_to_rest
from humanoid_core.loop import VELOCITY_MARGIN, Setpoint
from humanoid_description import RobotModel, StanceSolver

#: At most this many pattern periods are computed for one update: readings that stop for a
#: while (a busy machine) make the walk lag behind the robot's clock by the rest, reported,
#: rather than jump ahead in one set-point.
MAX_PERIODS_PER_UPDATE = 5
#: s: the pattern running this far behind the robot's clock is reported.
LATE_WARNING = 0.05
#: IK iterations and residual (m, rad) for the walking posture computed before a walk.
READY_ITERATIONS = 200
READY_TOLERANCE = 1e-4
#: rad: a preparation moving some joint this far takes the whole prepare_duration
#: (shorter moves take proportionally less).
PREPARE_FULL_MOTION = 0.5


class Phase(enum.Enum):
    IDLE = "idle"
    PREPARING = "preparing"
    WALKING = "walking"


class WalkRefusedError(RuntimeError):
    """A walking command that cannot start now; the message says why."""


def checked_walk_goal(forward: float, lateral: float, turn: float,
                      params: WalkParameters) -> tuple[float, float, float]:
    """A walk goal's (forward, lateral, turn) as floats, or :class:`WalkRefusedError` naming
    the value and its bound: finite, within ``max_goal_distance``/``max_goal_lateral`` (a
    unit slip such as centimetres typed as metres would walk on until canceled) and
    within +-pi (the shorter turn)."""
    values = (float(forward), float(lateral), float(turn))
    if not all(math.isfinite(v) for v in values):
        raise WalkRefusedError(f"the walk goal has a non-finite component: {values}")
    for name, value, bound in (("distance", values[0], params.max_goal_distance),
                               ("lateral", values[1], params.max_goal_lateral)):
        if abs(value) > bound:
            raise WalkRefusedError(f"{name} {value:.4g} m is beyond max_goal_{name} = {bound:g} m (either way): "
                                   "walk in several goals (or raise the parameter)")
    if abs(values[2]) > math.pi:
        raise WalkRefusedError(f"turn {values[2]:.4g} rad is beyond +-pi: give the shorter turn")
    return values


def yaw_rotation(yaw: float, pitch: float = 0.0) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    cp, sp = math.cos(pitch), math.sin(pitch)
    return rz @ np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])


def sole_placement(pose: Pose2, height: float) -> pin.SE3:
    return pin.SE3(yaw_rotation(pose.yaw), np.array([pose.x, pose.y, height]))


def ground_pose(placement: pin.SE3) -> Pose2:
    """A sole placement projected on the ground: position and heading."""
    rotation = placement.rotation
    return Pose2(float(placement.translation[0]), float(placement.translation[1]),
                 math.atan2(rotation[1, 0], rotation[0, 0]))


@dataclass
class _Preparation:
    start: float
    duration: float  # of the crouch into the walking posture
    feet: dict[str, Pose2]
    positions: np.ndarray  # joints at the start
    ready: np.ndarray  # joints in the walking posture
    landed: np.ndarray | None = None  # from one foot: the other put down first, the CoM kept where it is
    landing: float = 0.0  # s, the landing's duration (before the crouch)


class GoalState(enum.Enum):
    PENDING = "pending"  # waiting for the walk to start
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    STOPPED = "stopped"  # ended before the goal (the message says why); the robot stands
    CANCELED = "canceled"
    REFUSED = "refused"  # could not start (the message says why)


@dataclass
class WalkGoal:
    """One walk to a pose (the walk action): its state, and where the feet went."""

    target: tuple[float, float, float]  # forward, lateral, turn from the start
    state: GoalState = GoalState.PENDING
    message: str = ""
    origin: Pose2 | None = None  # centre of the feet at the start (walking frame)
    started: float = math.nan  # robot time the walk started
    ended: float = math.nan  # robot time it ended
    first_step: int = 0  # the pattern's landed-step count at the start
    cancel_requested: bool = False

    @property
    def done(self) -> bool:
        return self.state in (GoalState.SUCCEEDED, GoalState.STOPPED, GoalState.CANCELED, GoalState.REFUSED)

    def finish(self, state: GoalState, message: str, time: float) -> None:
        if not self.done:
            self.state, self.message, self.ended = state, message, time


class WalkController:
    """Walking commands and readings to joint set-points for one robot."""

    def __init__(self, model: RobotModel, params: WalkParameters) -> None:
        self.model = model
        self.params = params
        feet = model.config.feet
        self.soles = {side: feet[side].sole for side in ("right", "left")}
        self.leg_joints = model.chain_joints(self.soles["right"]) + model.chain_joints(self.soles["left"])
        self.posture = model.pose_positions(params.posture)
        self.gains = preview_gains(params.period, params.com_height, params.preview_horizon,
                                   params.preview_error_weight, params.preview_jerk_weight)
        self.limits = params.step_limits(feet["right"])
        self.solver = StanceSolver(model, self.posture, self.leg_joints)
        self.stabilizer = Stabilizer(model, params)
        self.phase = Phase.IDLE
        self.pattern: WalkPattern | None = None
        #: Why the last walk ended or was refused ("" while all is well).
        self.message = ""
        #: The walk action's goal in hand (None for cmd_vel walking).
        self.goal: WalkGoal | None = None
        self._preparation: _Preparation | None = None
        self._pending_velocity: tuple[float, float, float] | None = None  # cmd_vel before the walk starts
        self._last_cmd_vel = -math.inf
        self._last: Setpoint | None = None
        self._stopping_reason = ""
        self._time = math.nan  # robot time of the latest update
        #: How far the pattern is behind the robot's clock (s): above LATE_WARNING the
        #: controller is not keeping up with its clock and the walk slows down.
        self.lag = 0.0

    # -- commands ---------------------------------------------------------------------
    def walk_velocity(self, vx: float, vy: float, wz: float, now: float) -> None:
        """Walk at this velocity (cmd_vel: m/s and rad/s in the robot's frame); zero stops.
        Keeps walking while repeated within ``cmd_vel_timeout``. A non-zero velocity ends
        a walk goal in hand (stopped: cmd_vel took over); a zero one leaves it alone."""
        values = (float(vx), float(vy), float(wz))
        if not all(math.isfinite(v) for v in values):
            raise WalkRefusedError(f"cmd_vel has a non-finite component: {values}")
        if self.goal is not None and not self.goal.done:
            if not any(values):
                return
            self.goal.finish(GoalState.STOPPED, "cmd_vel took over", now)
        self._last_cmd_vel = now if any(values) else -math.inf
        if self.phase is Phase.WALKING:
            assert self.pattern is not None
            self.pattern.set_velocity(*values)
        else:
            self._pending_velocity = values if any(values) else None

    def walk_to(self, forward: float, lateral: float, turn: float) -> WalkGoal:
        """Walk until the centre of the feet is at this pose relative to where it is now
        (m, m, rad), then stop. Replaces any goal in hand (which ends as stopped)."""
        values = checked_walk_goal(forward, lateral, turn, self.params)
        if self.goal is not None and not self.goal.done:
            self.goal.finish(GoalState.STOPPED, "replaced by a newer walk goal", self._time)
        self._pending_velocity = None
        self._last_cmd_vel = -math.inf
        self.goal = WalkGoal(values)
        if self.phase is Phase.WALKING:
            self._start_goal(self.goal)
        return self.goal

    def cancel(self, goal: WalkGoal) -> None:
        """Cancel a walk goal: the walk stops (the step under way ends, the feet come side
        by side); the goal ends as canceled once the robot stands."""
        if goal is self.goal and not goal.done:
            goal.cancel_requested = True
            self.stop("the walk goal was canceled")

    def stop(self, reason: str = "") -> None:
        """Stop walking: finish the step under way and stand in double support."""
        self._pending_velocity = None
        self._last_cmd_vel = -math.inf
        if reason:
            self.message = reason
        if self.phase is Phase.WALKING:
            assert self.pattern is not None
            self.pattern.stop()
        elif self.phase is Phase.PREPARING:
            self.phase = Phase.IDLE  # feet planted all along: stopping here is standing
            self._preparation = None
        if self.phase is Phase.IDLE:
            self._settle_goal()

    def abandon(self, reason: str) -> None:
        """The robot stopped answering: stop commanding at once (whatever the robot does
        with the last set-point) and end the goal in hand as stopped."""
        self._pending_velocity = None
        self._last_cmd_vel = -math.inf
        self.message = reason
        self._stopping_reason = reason
        self.phase = Phase.IDLE
        self._preparation = None
        self._settle_goal()

    def _start_goal(self, goal: WalkGoal) -> None:
        assert self.pattern is not None
        goal.origin = self.pattern.centre
        goal.state = GoalState.RUNNING
        goal.started = self._time
        goal.first_step = self.pattern.landed
        self.pattern.set_goal(goal.origin.compose(Pose2(*goal.target)), self.params.goal_position_tolerance,
                              self.params.goal_turn_tolerance)

    def _settle_goal(self) -> None:
        """Standing again: the goal in hand ends (reached, canceled or stopped)."""
        goal = self.goal
        if goal is None or goal.done:
            return
        if goal.cancel_requested:
            goal.finish(GoalState.CANCELED, "canceled", self._time)
        elif goal.state is GoalState.RUNNING and not self._stopping_reason and self.pattern is not None \
                and self.pattern.goal_reached:
            goal.finish(GoalState.SUCCEEDED, "", self._time)
        else:
            goal.finish(GoalState.STOPPED if goal.state is GoalState.RUNNING else GoalState.REFUSED,
                        self.message or "stopped", self._time)

    # -- state --------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Walking, preparing to, or about to start."""
        return (self.phase is not Phase.IDLE or self._pending_velocity is not None
                or (self.goal is not None and self.goal.state is GoalState.PENDING))

    def progress(self, goal: WalkGoal | None = None) -> Pose2:
        """Where the centre of the landed feet is relative to where ``goal`` (default: the
        goal in hand) started (the identity before it started)."""
        goal = goal or self.goal
        if goal is None or goal.origin is None or self.pattern is None:
            return Pose2()
        feet = self.pattern.feet
        return goal.origin.relative(midpoint(feet["right"], feet["left"]))

    def steps(self, goal: WalkGoal | None = None) -> int:
        """Steps landed since ``goal`` (default: the goal in hand) started."""
        goal = goal or self.goal
        if goal is None or goal.origin is None or self.pattern is None:
            return 0
        return self.pattern.landed - goal.first_step

    # -- the cycle ----------------------------------------------------------------------
    def update(self, now: float, positions: np.ndarray, sensors: Sensors | None = None) -> Setpoint | None:
        """One cycle at robot time ``now`` with the measured joint positions (canonical
        order, NaN = unknown): the set-point to stream, or None when there is nothing to
        command (idle)."""
        self._time = now
        unknown = [self.model.joints.names[i] for i in np.flatnonzero(~np.isfinite(positions))]
        if unknown:
            self._on_unknown(unknown)
        if self.phase is Phase.IDLE:
            if not self.active or unknown:
                return None
            self._begin(now, positions)
            if self.phase is Phase.IDLE:
                return None
        if self.phase is Phase.WALKING:
            assert self.pattern is not None
            if (self.pattern.mode is Mode.VELOCITY and now - self._last_cmd_vel > self.params.cmd_vel_timeout
                    and self._last_cmd_vel > -math.inf):
                self._last_cmd_vel = -math.inf
                self.message = f"no cmd_vel for {self.params.cmd_vel_timeout:g} s: stopping"
                self.pattern.stop()
        target = now + self.params.command_lead
        if self.phase is Phase.PREPARING:
            return self._prepare(target, sensors)
        return self._walk(target, sensors)

    def _on_unknown(self, unknown: list[str]) -> None:
        names = ", ".join(unknown[:4]) + (f" and {len(unknown) - 4} more" if len(unknown) > 4 else "")
        if self.phase is Phase.IDLE:
            if self.active:
                self._refuse(f"cannot start walking: joints {names} read NaN (stale, unknown)")
            return
        if not self._stopping_reason:
            self._stopping_reason = f"joints {names} read NaN (stale, unknown): stopping the walk"
            self.stop(self._stopping_reason)

    def _refuse(self, message: str) -> None:
        self.message = message
        self._pending_velocity = None
        if self.goal is not None and not self.goal.done:
            self.goal.finish(GoalState.REFUSED, message, self._time)

    def _begin(self, now: float, positions: np.ndarray) -> None:
        """Start preparing from the measured posture: on both soles, a crouch into the walking
        posture; on one (a walk that stopped mid-step, the robot left on one foot), the other
        sole is put down flat beneath where it is first (:meth:`_landing`)."""
        model = self.model
        landed = None
        support = model.support_side(positions)
        if support != "both":
            landed = self._landing(positions, support)
            if landed is None:
                return
        start = positions if landed is None else landed
        base = model.standing_base(start, "both")
        placements = model.frame_placements(list(self.soles.values()), start, base)
        feet = {side: ground_pose(placements[sole]) for side, sole in self.soles.items()}
        centre = midpoint(feet["right"], feet["left"])
        ready_com = np.array([centre.x, centre.y, self.params.com_height])
        ready_trunk = yaw_rotation(centre.yaw, self.params.trunk_pitch)
        self.solver.reset(start, base)
        ready = self.solver.solve(sole_placement(feet["right"], 0.0), sole_placement(feet["left"], 0.0),
                                  ready_com, ready_trunk, self.posture, iterations=READY_ITERATIONS)
        if self.solver.error > READY_TOLERANCE:
            self._refuse(f"cannot start walking: no walking posture with the CoM at {self.params.com_height:g} m "
                         f"over these feet (IK residual {self.solver.error:.3g})")
            return
        # the move begins command_lead after this reading: a first trajectory reaching the robot
        # up to that late still finds the path at rest where the robot stands (the robot joins a
        # late trajectory on its timeline, and would otherwise have to jump to it)
        self._preparation = _Preparation(now + self.params.command_lead, self._move_duration(start, ready), feet,
                                         np.array(positions, dtype=float), ready, landed,
                                         0.0 if landed is None else self._move_duration(positions, landed))
        self._last = Setpoint(now, np.array(positions, dtype=float), np.zeros(len(positions)))
        self.phase = Phase.PREPARING
        self._stopping_reason = ""
        self.message = "" if landed is None else (f"the robot stands on its {support} foot: the other is put down "
                                                  "beneath where it is before the walk")

    def _move_duration(self, start: np.ndarray, end: np.ndarray) -> float:
        moved = float(np.max(np.abs(end - start)))
        return max(self.params.prepare_duration * min(1.0, moved / PREPARE_FULL_MOTION), self.params.period)

    def _landing(self, positions: np.ndarray, stance: str) -> np.ndarray | None:
        """The posture with the free sole flat on the ground beneath where it is, the stance
        sole and the CoM's ground projection where they are (the robot stands over the stance
        foot), the CoM no higher than the walking height; None, refused with the reason, where
        the IK finds none."""
        model = self.model
        base = model.standing_base(positions, stance)
        placements = model.frame_placements(list(self.soles.values()), positions, base)
        feet = {side: ground_pose(placements[sole]) for side, sole in self.soles.items()}
        free = "left" if stance == "right" else "right"
        com = model.com(positions, base)
        com[2] = min(com[2], self.params.com_height)  # at most the walking height: a straight leg cannot lower
        self.solver.reset(positions, base)
        landed = self.solver.solve(sole_placement(feet["right"], 0.0), sole_placement(feet["left"], 0.0),
                                   com, yaw_rotation(feet[stance].yaw, self.params.trunk_pitch),
                                   self.posture, iterations=READY_ITERATIONS)
        if self.solver.error > READY_TOLERANCE or model.support_side(landed) != "both":
            self._refuse(f"cannot start walking: the robot stands on its {stance} foot and the {free} foot cannot "
                         f"be put down beneath where it is (IK residual {self.solver.error:.3g}); bring it down "
                         "with a trajectory first")
            return None
        return landed

    def _prepare(self, target: float, sensors: Sensors | None) -> Setpoint:
        """Joint-space moves to the walking posture: from one foot, the landing first (the
        stance sole and the CoM stay where they are at both ends); then the crouch, where
        both ends have the soles flat where they are, and the symmetric crouch keeps them so
        in between (an IK along the way would start at the straight-leg singularity)."""
        prep = self._preparation
        assert prep is not None
        elapsed = target - prep.start
        if prep.landed is not None and elapsed < prep.landing:
            s = rest_to_rest(elapsed / prep.landing)
            return self._setpoint(target, prep.positions + s * (prep.landed - prep.positions))
        start = prep.positions if prep.landed is None else prep.landed
        elapsed -= prep.landing
        s = rest_to_rest(elapsed / prep.duration)
        positions = start + s * (prep.ready - start)
        if elapsed >= prep.duration:
            self._start_pattern(target, prep.feet)
            return self._setpoint(target, positions, at_rest=True)
        return self._setpoint(target, positions)

    def _start_pattern(self, now: float, feet: dict[str, Pose2]) -> None:
        p = self.params
        self.pattern = WalkPattern(self.gains, p.timing, self.limits, p.com_height, p.swing_profile, p.max_velocity,
                                   p.acceleration, (p.zmp_offset_x, p.zmp_offset_y), feet, time=now)
        self.phase = Phase.WALKING
        self._preparation = None
        self.stabilizer.reset()
        if self.goal is not None and self.goal.state is GoalState.PENDING:
            self._start_goal(self.goal)
        elif self._pending_velocity is not None:
            self.pattern.set_velocity(*self._pending_velocity)
        self._pending_velocity = None

    def _walk(self, target: float, sensors: Sensors | None) -> Setpoint:
        pattern = self.pattern
        assert pattern is not None
        sample: PatternSample | None = None
        for _ in range(MAX_PERIODS_PER_UPDATE):
            if pattern.time + pattern.gains.dt / 2.0 > target:
                break
            sample = pattern.advance()
        if sample is None:
            sample = pattern.sample()
        self.lag = max(0.0, target - pattern.time)
        soles = {side: sole_placement(*sample.feet[side]) for side in ("right", "left")}
        trunk = yaw_rotation(sample.trunk_yaw, self.params.trunk_pitch)
        previous = self._last.positions if self._last is not None else self.posture
        correction = self.stabilizer.update(sample.time, sample.zmp, previous, trunk, soles, sensors)
        positions = self.solver.solve(soles["right"], soles["left"], sample.com + correction.com,
                                      trunk @ correction.trunk, self.posture)
        if not pattern.walking:
            self.phase = Phase.IDLE
            if self._stopping_reason:
                self.message = self._stopping_reason
            self._settle_goal()
            return self._setpoint(sample.time, positions, at_rest=True)
        return self._setpoint(sample.time, positions)

    def _setpoint(self, stamp: float, positions: np.ndarray, at_rest: bool = False) -> Setpoint:
        """The set-point with its velocities (the change since the previous one). ``at_rest``:
        zero velocities, the end of a motion (a servo that takes the velocity as its moving
        speed then closes any remaining lag at full speed instead of creeping)."""
        positions = np.clip(positions, self.model.joints.lower, self.model.joints.upper)
        previous = self._last
        if previous is not None and stamp > previous.stamp:
            # within the joints' speed limits (the front refuses a trajectory that is not): an
            # IK solution moving a joint faster is followed as fast as the joint can
            reach = VELOCITY_MARGIN * self.model.joints.velocity * (stamp - previous.stamp)
            positions = previous.positions + np.clip(positions - previous.positions, -reach, reach)
        if previous is not None and stamp > previous.stamp and not at_rest:
            velocities = (positions - previous.positions) / (stamp - previous.stamp)
        else:
            velocities = np.zeros(len(positions))
        self._last = Setpoint(stamp, positions, velocities)
        return self._last
