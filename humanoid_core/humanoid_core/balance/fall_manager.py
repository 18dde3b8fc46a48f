"""The robot's state with respect to falling, and what to do about it: no ROS, no simulator.

One state machine (:class:`FallManager`) fed timestamped readings, the same on simulation and
hardware; the ROS node (``humanoid_control.nodes.fall_manager``) turns its decisions into
messages and commands. States:

- ``CONTROLLABLE``: upright; the controllers' goals are taken.
- ``FALLING``: a fall is seen coming. From the IMU: the trunk's tilt from the vertical beyond
  ``warning_tilt`` and tilting away at ``min_tilt_rate`` or faster, so fast that
  ``tilt + rate * lookahead`` reaches ``fall_tilt``. A slow lean (a bow, the trunk bent at
  the waist) is no fall until it tips: then its rate grows. (A trunk found lying still beyond
  ``fall_tilt`` without a fall seen, a slow lean or readings missed, is ``FALLEN`` at once:
  nothing is protected any more.) Without an IMU: the balance monitor's support estimate says fallen (the
  model's CoM far outside the reach of the feet): nothing earlier can be seen. Actions: the
  running goals stop (:attr:`ActionKind.STOP_GOALS`: the controllers watch the state) and the
  protective action (``protect``: hold where the robot is, move to ``protect_pose``, or go limp) is
  sent at once and again ``protect_repeat`` s later (a controller's last command, sent
  before it saw the state, is overridden).
- ``FALLEN``: lying still (trunk tilt beyond ``lying_tilt``, its rate below ``still_rate``
  for ``still_time``), on a side: back, belly, left, right (unknown without an IMU or lying
  diagonally). With ``auto_getup`` and a get-up motion for that side, the manager gets up;
  without, it says why and stays here until the robot is up by other means (upright and
  still for ``still_time``, the feet loaded where the robot measures it).
- ``GETTING_UP``: the side's get-up motion is playing (attempt of ``max_attempts``); once it
  ended, the robot must be up (trunk within ``up_tilt`` of the vertical and still, the feet
  carrying ``feet_loaded_fraction`` of the robot's weight where foot sensors tell) within
  ``up_check_time``. A failed attempt goes back to ``FALLEN`` (and tries again while
  attempts remain); ``getup_timeout`` bounds a motion that never ends.
- ``UNKNOWN``: no reading yet.

Nothing is decided on a reading older than ``reading_budget`` (robot time, from the
reading's stamp to the decision): such a reading is counted and ignored, and a manager whose
latest reading is that old says it is stale. Every decision carries its cause.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from humanoid_core.balance.fall import LYING_AXIS, Posture, lying, tilt_of_axis
from humanoid_core.parameter_fields import documented
from humanoid_core.parameter_files import control_node_parameters

NODE_NAME = "fall_manager"

#: A falling trunk's direction is told once its vertical is this far off (sin of 3 deg).
DIRECTION_AXIS = math.sin(math.radians(3.0))


class State(enum.Enum):
    """The manager's states; ``code`` is the message's constant."""

    CONTROLLABLE = ("controllable", 0)
    FALLING = ("falling", 1)
    FALLEN = ("fallen", 2)
    GETTING_UP = ("getting_up", 3)
    UNKNOWN = ("unknown", 4)

    @property
    def text(self) -> str:
        return self.value[0]

    @property
    def code(self) -> int:
        return self.value[1]


class Side(enum.Enum):
    NONE = ""
    BACK = "back"
    BELLY = "belly"
    LEFT = "left"
    RIGHT = "right"
    UNKNOWN = "unknown"


class Protect(enum.Enum):
    """The protective action taken when a fall is seen coming."""

    #: Stop every motion where it is (the robot interface holds its set-points).
    HOLD = "hold"
    #: Move to ``protect_pose`` within ``protect_duration`` (arms forward, knees bent ...).
    POSTURE = "posture"
    #: Release every joint (torque off through the robot interface's ``torque`` service): the
    #: robot falls limp; the get-up's first command takes the joints again.
    LIMP = "limp"


class ActionKind(enum.Enum):
    #: The running goals end (walk, gait, trajectory, motion) and new ones are refused.
    STOP_GOALS = "stop goals"
    #: Send the protective action (``protect``); ``repeat``: the second sending.
    PROTECT = "protect"
    #: Play the get-up motion ``motion``.
    GET_UP = "get up"
    #: Cancel the get-up motion in progress.
    CANCEL_GET_UP = "cancel get-up"


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    protect: Protect | None = None
    motion: str = ""
    repeat: bool = False


@dataclass(frozen=True)
class FallManagerParameters:
    """What a user may tune; defaults are generic, each robot's ``control.yaml`` has its own
    (``fall_manager:``)."""

    fall_tilt: float = documented(
        45.0, "deg, trunk tilt from the vertical beyond which the robot lies (as the balance monitor's fall_tilt)")
    lying_tilt: float = documented(
        30.0, "deg, a still trunk tilted beyond this lies (FALLEN); its side is told from then on")
    warning_tilt: float = documented(
        12.0, "deg, below this trunk tilt no fall is seen coming, whatever the rate")
    min_tilt_rate: float = documented(
        30.0, "deg/s, a fall is seen coming only while the trunk tilts away at least this fast ...")
    lookahead: float = documented(
        0.3, "s, ... and fast enough that tilt + rate * lookahead reaches fall_tilt")
    up_tilt: float = documented(
        20.0, "deg, a robot whose trunk is within this of the vertical, still, is up")
    still_rate: float = documented(
        20.0, "deg/s, a trunk tilting slower than this is still")
    still_time: float = documented(
        0.3, "s (robot time), still this long: lying (FALLEN) or up again (CONTROLLABLE)")
    falling_timeout: float = documented(
        3.0, "s, FALLING this long without lying or being up: FALLEN (the robot leans on something)")
    joint_still_range: float = documented(
        1.0, "deg, a get-up starts once every joint has also stayed within this range for still_time (the "
             "servos done moving, e.g. to protect_pose: a get-up planned from a moving joint starts where the joint "
             "no longer is, and the robot refuses it); 0: the joints are not checked")
    joint_settle_timeout: float = documented(
        2.0, "s (robot time) FALLEN after which the get-up starts even if a joint still moves")
    feet_loaded_fraction: float = documented(
        0.5, "share of the robot's weight the feet must carry for it to be up, where foot sensors tell")
    reading_budget: float = documented(
        0.1, "s (robot time), nothing is decided on a reading older than this")
    protect: str = documented(
        "hold", "the protective action when a fall is seen coming: hold (every joint stops where it is), "
                "posture (protect_pose in protect_duration) or limp (torque off through the robot interface's "
                "torque service; hold where the driver has no torque-off command)")
    protect_pose: str = documented(
        "", "posture: a named pose of the robot's robot.yaml (poses:) the robot moves to")
    protect_duration: float = documented(
        0.3, "s, posture: the time to reach protect_pose (lengthened to the joints' velocity limits)")
    protect_repeat: float = documented(
        0.05, "s (robot time), the protective action is sent again this long after the first time (a "
              "controller's command sent before it saw FALLING is overridden)")
    auto_getup: bool = documented(
        False, "get up by itself once lying still (the simulation graph turns it on; off by default on the robot)")
    getup_prefix: str = documented(
        "getup_", "the get-up motion of a side is <getup_prefix><side> (getup_back, getup_belly, getup_left, "
                  "getup_right) in the robot's motion library, or in getup_directory")
    getup_directory: str = documented(
        "", "a folder holding the get-up motion files (<name>.yaml); empty: the robot's motion library")
    max_attempts: int = documented(3, "get-up attempts per fall before the manager gives up (stays FALLEN)")
    up_check_time: float = documented(
        2.0, "s (robot time) after the get-up motion ended within which the robot must be up")
    getup_timeout: float = documented(
        60.0, "s (robot time), a get-up motion not ended by then is canceled (the attempt failed)")
    use_imu: bool = documented(True, "decide on imu/data (trunk tilt and rate) when it arrives")
    use_foot_sensors: bool = documented(True, "check the feet's load (<side>_foot/wrench) when they arrive")
    state_rate: float = documented(10.0, "Hz (robot time), fall_manager_state while it does not change")
    diagnostics_rate: float = documented(1.0, "Hz of the diagnostics entry")

    def __post_init__(self) -> None:
        positive = ("fall_tilt", "lying_tilt", "lookahead", "up_tilt", "still_rate", "reading_budget",
                    "protect_duration", "up_check_time", "getup_timeout", "state_rate", "diagnostics_rate",
                    "falling_timeout", "max_attempts")
        non_negative = ("warning_tilt", "min_tilt_rate", "still_time", "feet_loaded_fraction", "protect_repeat",
                        "joint_still_range", "joint_settle_timeout")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ValueError(f"parameter {name} must be > 0, got {getattr(self, name)}")
        for name in non_negative:
            if not getattr(self, name) >= 0:
                raise ValueError(f"parameter {name} must be >= 0, got {getattr(self, name)}")
        if not self.warning_tilt <= self.fall_tilt or not self.lying_tilt <= self.fall_tilt:
            raise ValueError(f"parameters warning_tilt ({self.warning_tilt}) and lying_tilt ({self.lying_tilt}) must "
                             f"not exceed fall_tilt ({self.fall_tilt})")
        if not self.up_tilt < self.lying_tilt:
            raise ValueError(f"parameter up_tilt ({self.up_tilt}) must be below lying_tilt ({self.lying_tilt})")
        if self.protect not in {p.value for p in Protect}:
            raise ValueError(f"parameter protect must be hold, posture or limp, got {self.protect!r}")
        if self.protect == Protect.POSTURE.value and not self.protect_pose:
            raise ValueError("parameter protect is posture: name the pose in protect_pose (a pose of robot.yaml)")

    @classmethod
    def for_robot(cls, robot: str, **overrides: Any) -> FallManagerParameters:
        """The robot's values from its parameter file (for in-process use: tests)."""
        return control_node_parameters(cls, robot, NODE_NAME, **overrides)


@dataclass(frozen=True)
class TrunkReading:
    """The IMU's trunk orientation at ``stamp`` (robot time, s)."""

    stamp: float
    tilt: float  # rad from the vertical
    #: rad/s, positive tilting away from the vertical; NaN: unknown (worked out from the
    #: previous reading's tilt).
    tilt_rate: float
    #: The vertical in the trunk's frame (x forward, y left, z up): the side.
    up: tuple[float, float, float]

    @classmethod
    def of(cls, stamp: float, orientation: np.ndarray, angular_velocity: np.ndarray | None = None) -> TrunkReading:
        """From the IMU frame's rotation in a gravity-aligned frame (3x3) and its angular
        velocity in its own frame (rad/s; None or non-finite: the rate is unknown). In floats:
        with numpy's calls on 3-vectors a reading took 7.8 us in process, so 4.1 (every IMU reading)."""
        rows = np.asarray(orientation, dtype=float).tolist()
        rate = math.nan
        if angular_velocity is not None:
            turn = [float(v) for v in angular_velocity]
            if all(math.isfinite(v) for v in turn):
                rate = _tilt_rate(rows, turn)
        up = rows[2]
        return cls(stamp, tilt_of_axis(up[2]), rate, (up[0], up[1], up[2]))


@dataclass(frozen=True)
class SupportReading:
    """The balance monitor's fall estimate from the model's support (no IMU) at ``stamp``."""

    stamp: float
    fallen: bool


@dataclass(frozen=True)
class FeetReading:
    """The vertical force the feet carry (N, summed) at ``stamp``."""

    stamp: float
    load: float


@dataclass(frozen=True)
class Decision:
    """A change of state (or an action) and why."""

    state: State
    side: Side
    cause: str
    stamp: float
    actions: tuple[Action, ...] = ()


@dataclass
class Counts:
    readings: int = 0
    stale: int = 0
    decisions: int = 0
    falls: int = 0
    getups: int = 0
    getups_failed: int = 0


def tilt_rate(rotation: np.ndarray, angular_velocity: np.ndarray) -> float:
    """d(tilt)/dt (rad/s) of a frame whose rotation in a gravity-aligned frame is ``rotation``
    turning at ``angular_velocity`` (its own frame): positive tilting away from the vertical.
    Upright (no direction to tilt in yet), the horizontal part of the turn rate."""
    return _tilt_rate(np.asarray(rotation, dtype=float).tolist(), [float(v) for v in angular_velocity])


def _tilt_rate(rows: list[list[float]], turn: list[float]) -> float:
    """:func:`tilt_rate` of a rotation's rows and a turn rate, as floats."""
    (r00, r01, r02), (r10, r11, r12), (_, _, r22) = rows
    wx, wy, wz = turn
    omega_x = r00 * wx + r01 * wy + r02 * wz  # the turn in the gravity-aligned frame
    omega_y = r10 * wx + r11 * wy + r12 * wz
    dz_z = omega_x * r12 - omega_y * r02  # (omega x z)_z, z the frame's axis (the rotation's last column)
    sine = math.sqrt(max(0.0, 1.0 - r22 * r22))
    if sine > 1e-3:
        return -dz_z / sine
    return math.hypot(omega_x, omega_y)


#: The side a trunk lying so faces down with.
_SIDES = {Posture.ON_BACK: Side.BACK, Posture.ON_BELLY: Side.BELLY, Posture.ON_LEFT: Side.LEFT,
          Posture.ON_RIGHT: Side.RIGHT, Posture.UNKNOWN: Side.UNKNOWN}


def side_of(up: tuple[float, float, float], threshold: float = LYING_AXIS) -> Side:
    """Which side of the trunk faces down, from the vertical in its frame (the fall estimate's
    :func:`~humanoid_core.balance.fall.lying`); UNKNOWN when neither the forward nor the
    sideways axis is ``threshold`` (a cosine) near the vertical."""
    return _SIDES[lying(np.asarray(up), threshold)]


@dataclass
class _Still:
    """Since when (robot time) a condition holds, over successive readings."""

    since: float | None = None

    def update(self, holds: bool, stamp: float) -> float:
        """How long it has held at ``stamp`` (0 when it does not)."""
        if not holds:
            self.since = None
            return 0.0
        if self.since is None or stamp < self.since:
            self.since = stamp
        return stamp - self.since


@dataclass
class _Settled:
    """Since when (robot time) every joint has stayed within a band ``width`` wide (rad); a
    band rather than a speed, so that a servo's position steps (0.29 deg on an AX-12) read
    as still. Unknown readings (NaN) are left out."""

    width: float
    since: float | None = None
    last: float = -math.inf  # the latest reading's stamp
    _low: np.ndarray | None = None
    _high: np.ndarray | None = None

    def update(self, stamp: float, positions: np.ndarray) -> None:
        self.last = stamp
        if self._low is None or self._low.shape != positions.shape or self.since is None or stamp < self.since:
            self._low, self._high, self.since = positions.copy(), positions.copy(), stamp
            return
        low, high = np.fmin(self._low, positions), np.fmax(self._high, positions)
        if np.any(high - low > self.width):
            self._low, self._high, self.since = positions.copy(), positions.copy(), stamp
        else:
            self._low, self._high = low, high


@dataclass
class _Attempt:
    motion: str
    started: float
    ended: float | None = None  # robot time the motion ended (succeeded)
    outcome: str = ""


@dataclass
class FallManager:
    """The state machine (robot time throughout; the caller passes ``now``, its clock)."""

    params: FallManagerParameters
    #: The get-up motion of a side, or None when the robot has none (the reason is said).
    getup_motion: Callable[[Side], str | None] = field(default=lambda _side: None)
    #: N: the robot's weight (the feet's load check); 0: no check.
    weight: float = 0.0
    state: State = State.UNKNOWN
    side: Side = Side.NONE
    cause: str = "no reading yet"
    since: float = 0.0
    attempt: int = 0
    #: The latest reading taken (stamp), its tilt and rate (NaN without an IMU) and source.
    stamp: float = -math.inf
    tilt: float = math.nan
    rate: float = math.nan
    source: str = "none"
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        p = self.params
        self._fall = math.radians(p.fall_tilt)
        self._lying_tilt = math.radians(p.lying_tilt)
        self._warning = math.radians(p.warning_tilt)
        self._min_rate = math.radians(p.min_tilt_rate)
        self._up = math.radians(p.up_tilt)
        self._still_rate = math.radians(p.still_rate)
        self._still = _Still()
        self._upright = _Still()
        self._lying_still = _Still()  # beyond lying_tilt and still
        self._beyond = _Still()  # beyond fall_tilt and still
        self._previous: TrunkReading | None = None
        self._feet: FeetReading | None = None
        self._support: SupportReading | None = None
        self._getup: _Attempt | None = None
        self._repeat_due: float | None = None
        self._last_imu = -math.inf
        self._given_up = ""
        self._settled = _Settled(math.radians(p.joint_still_range))

    # -- what the node asks -------------------------------------------------------------
    @property
    def protect(self) -> Protect:
        return Protect(self.params.protect)

    @property
    def getting_up_motion(self) -> str:
        return self._getup.motion if self._getup is not None else ""

    def stale(self, now: float) -> bool:
        """The latest reading is older than the budget (or there is none)."""
        return now - self.stamp > self.params.reading_budget

    # -- readings ------------------------------------------------------------------------
    def _fresh(self, stamp: float, now: float) -> bool:
        self.counts.readings += 1
        if now - stamp > self.params.reading_budget or not math.isfinite(stamp):
            self.counts.stale += 1
            return False
        return True

    def feet(self, reading: FeetReading) -> None:
        self._feet = reading

    def joints(self, stamp: float, positions: np.ndarray) -> None:
        """The measured joint positions (rad): a get-up waits for them to settle."""
        self._settled.update(stamp, np.asarray(positions, dtype=float))

    def trunk(self, reading: TrunkReading, now: float) -> Decision | None:
        """An IMU reading: the decisions it allows (None: no change)."""
        if not self._fresh(reading.stamp, now):
            return None
        if not (math.isfinite(reading.tilt) and all(math.isfinite(v) for v in reading.up)):
            return None
        rate = reading.tilt_rate
        previous = self._previous
        if not math.isfinite(rate):
            rate = 0.0
            if previous is not None and reading.stamp > previous.stamp:
                rate = (reading.tilt - previous.tilt) / (reading.stamp - previous.stamp)
        self._previous = reading
        self._last_imu = reading.stamp
        self.stamp, self.tilt, self.rate, self.source = reading.stamp, reading.tilt, rate, "imu"
        still = abs(rate) < self._still_rate
        still_for = self._still.update(still, reading.stamp)
        return self._decide_imu(reading, rate, still_for, now)

    def support(self, reading: SupportReading, now: float) -> Decision | None:
        """The balance monitor's estimate; used only while no fresh IMU reading comes."""
        if not self._fresh(reading.stamp, now):
            return None
        if reading.stamp - self._last_imu <= self.params.reading_budget:
            return None  # the IMU decides
        self._support = reading
        self.stamp, self.tilt, self.rate, self.source = reading.stamp, math.nan, math.nan, "support"
        up_for = self._upright.update(not reading.fallen, reading.stamp)
        down_for = self._still.update(reading.fallen, reading.stamp)
        return self._decide_support(reading, up_for, down_for)

    # -- time ---------------------------------------------------------------------------
    def tick(self, now: float) -> Decision | None:
        """What time alone decides: the protective action's repetition, a get-up motion that
        never ends, a check after the get-up that never succeeds."""
        if self.state is State.FALLING and self._repeat_due is not None and now >= self._repeat_due:
            self._repeat_due = None
            return Decision(self.state, self.side, self.cause, now,
                            (Action(ActionKind.PROTECT, self.protect, repeat=True),))
        attempt = self._getup
        if self.state is State.GETTING_UP and attempt is not None:
            if attempt.ended is None and now - attempt.started > self.params.getup_timeout:
                return self._attempt_failed(
                    now, f"the get-up motion {attempt.motion} did not end within getup_timeout "
                         f"({self.params.getup_timeout:g} s)", cancel=True)
            if attempt.ended is not None and now - attempt.ended > self.params.up_check_time:
                return self._attempt_failed(
                    now, f"not up {self.params.up_check_time:g} s after the get-up motion {attempt.motion} ended "
                         f"({self._up_text()})")
        return None

    def getup_ended(self, succeeded: bool, text: str, now: float) -> Decision | None:
        """The get-up motion's result: ended (then the robot must be up within
        ``up_check_time``) or failed."""
        attempt = self._getup
        if self.state is not State.GETTING_UP or attempt is None or attempt.ended is not None:
            return None
        if not succeeded:
            return self._attempt_failed(now, f"the get-up motion {attempt.motion} failed: {text}")
        attempt.ended = now
        return self._change(State.GETTING_UP, self.side,
                            f"the get-up motion {attempt.motion} ended (attempt {self.attempt} of "
                            f"{self.params.max_attempts}): checking the robot is up", now)

    # -- decisions ----------------------------------------------------------------------
    def _decide_imu(self, reading: TrunkReading, rate: float, still_for: float, now: float) -> Decision | None:
        p, tilt, stamp = self.params, reading.tilt, reading.stamp
        what = f"trunk tilt {math.degrees(tilt):.1f} deg, rate {math.degrees(rate):.0f} deg/s"
        state = self.state
        still = abs(rate) < self._still_rate
        up_for = self._upright.update(tilt < self._up and still, stamp)
        lying_for = self._lying_still.update(tilt >= self._lying_tilt and still, stamp)
        beyond_for = self._beyond.update(tilt >= self._fall and still, stamp)
        if state is State.UNKNOWN:
            if tilt >= self._lying_tilt:
                return self._lying(reading, stamp, f"first reading: lying ({what})", still_for)
            return self._change(State.CONTROLLABLE, Side.NONE, f"first reading: upright ({what})", stamp)
        if state is State.CONTROLLABLE:
            predicted = tilt + max(rate, 0.0) * p.lookahead
            if beyond_for >= p.still_time:
                self.counts.falls += 1
                self.attempt = 0
                return self._lying(reading, stamp, f"lying still beyond fall_tilt {p.fall_tilt:g} deg without a fall "
                                                   f"seen coming (a slow lean, or readings missed; {what})", still_for)
            if tilt >= self._warning and rate >= self._min_rate and predicted >= self._fall:
                return self._falling_seen(
                    reading, f"{what}: {math.degrees(predicted):.0f} deg expected in {p.lookahead:g} s, beyond "
                             f"fall_tilt {p.fall_tilt:g} deg", stamp)
            return None
        if state is State.FALLING:
            if lying_for >= p.still_time:
                return self._lying(reading, stamp, f"lying still ({what}, still for {lying_for:.2f} s)", lying_for)
            if up_for >= p.still_time and self._feet_loaded(stamp) is not False:
                return self._change(State.CONTROLLABLE, Side.NONE,
                                    f"the fall did not happen: upright and still ({what}; {self._feet_text(stamp)})",
                                    stamp)
            if stamp - self.since >= p.falling_timeout and still_for >= p.still_time:
                return self._lying(reading, stamp, f"still, leaning, {stamp - self.since:.2f} s after the fall "
                                                   f"was seen ({what})", still_for)
            return None
        if state is State.FALLEN:
            if up_for >= p.still_time and self._feet_loaded(stamp) is not False:
                return self._change(State.CONTROLLABLE, Side.NONE,
                                    f"up again: upright and still ({what}; {self._feet_text(stamp)})", stamp)
            if still_for < p.still_time:
                return None
            if side_of(reading.up) is not self.side:
                return self._lying(reading, stamp, f"lying still on another side ({what})", still_for)
            return self._maybe_get_up(stamp)
        if state is State.GETTING_UP:
            attempt = self._getup
            if attempt is not None and attempt.ended is not None and up_for >= p.still_time \
                    and self._feet_loaded(stamp) is not False:
                self.counts.getups += 1
                self._getup, self._given_up = None, ""
                return self._change(State.CONTROLLABLE, Side.NONE,
                                    f"up after get-up attempt {self.attempt} ({attempt.motion}): {what}; "
                                    f"{self._feet_text(stamp)}", stamp)
            return None
        return None

    def _decide_support(self, reading: SupportReading, up_for: float, down_for: float) -> Decision | None:
        p, stamp, state = self.params, reading.stamp, self.state
        what = "the balance monitor's support estimate (no IMU)"
        if state is State.UNKNOWN:
            if reading.fallen:
                return self._change(State.FALLEN, Side.UNKNOWN, f"first reading: fallen by {what}", stamp)
            return self._change(State.CONTROLLABLE, Side.NONE, f"first reading: upright by {what}", stamp)
        if state is State.CONTROLLABLE and reading.fallen:
            return self._falling_seen(None, f"{what} says fallen: the CoM is beyond the reach of the feet (without "
                                            "an IMU nothing earlier is seen)", stamp)
        if state in (State.FALLING, State.FALLEN) and up_for >= p.still_time:
            return self._change(State.CONTROLLABLE, Side.NONE, f"upright again by {what} for {up_for:.2f} s", stamp)
        if state is State.FALLING and down_for >= p.still_time:
            return self._change(State.FALLEN, Side.UNKNOWN,
                                f"fallen by {what} for {down_for:.2f} s (no IMU: the side is unknown)", stamp)
        if state is State.FALLEN:
            return self._maybe_get_up(stamp)
        if state is State.GETTING_UP:
            attempt = self._getup
            if attempt is not None and attempt.ended is not None and up_for >= p.still_time:
                self.counts.getups += 1
                self._getup, self._given_up = None, ""
                return self._change(State.CONTROLLABLE, Side.NONE,
                                    f"up after get-up attempt {self.attempt} ({attempt.motion}): upright by {what}",
                                    stamp)
        return None

    def _joints_settled(self, stamp: float) -> bool:
        """Every joint still for ``still_time`` as far as the joint readings show (or no joint
        reading ever, no check, or FALLEN for ``joint_settle_timeout``: a servo that never settles,
        or readings that stopped, do not keep the robot down)."""
        p, settled = self.params, self._settled
        if p.joint_still_range <= 0 or settled.since is None:
            return True
        return settled.last - settled.since >= p.still_time or stamp - self.since >= p.joint_settle_timeout

    def _falling_seen(self, reading: TrunkReading | None, cause: str, stamp: float) -> Decision:
        self.counts.falls += 1
        self.attempt = 0
        self._given_up = ""
        self._still.since = None  # lying still is measured from here on
        side = side_of(reading.up, DIRECTION_AXIS) if reading is not None else Side.UNKNOWN
        self._repeat_due = stamp + self.params.protect_repeat
        protect = self.protect
        return self._change(State.FALLING, side, f"a fall is seen coming: {cause}; goals stopped, protective "
                                                 f"action: {protect.value}", stamp,
                            (Action(ActionKind.STOP_GOALS), Action(ActionKind.PROTECT, protect)))

    def _lying(self, reading: TrunkReading, stamp: float, cause: str, still_for: float) -> Decision:
        side = side_of(reading.up)
        decision = self._change(State.FALLEN, side, f"{cause}: on the {side.value}"
                                if side is not Side.UNKNOWN else f"{cause}: the side is unknown (lying diagonally)",
                                stamp)
        follow = self._maybe_get_up(stamp) if still_for >= self.params.still_time else None
        if follow is None:
            return decision
        self.cause = f"{decision.cause}; {follow.cause}"
        return Decision(follow.state, follow.side, self.cause, stamp, follow.actions)

    def _maybe_get_up(self, stamp: float) -> Decision | None:
        """In FALLEN: get up when allowed and possible; else say why once."""
        p = self.params
        reason = ""
        motion = None
        if not p.auto_getup:
            reason = "auto_getup is off: the robot stays down until it is got up by other means (play_motion)"
        elif self.attempt >= p.max_attempts:
            reason = (f"gave up after {self.attempt} get-up attempt(s) (max_attempts {p.max_attempts}): the robot "
                      "stays down until it is got up by other means")
        elif self.side in (Side.UNKNOWN, Side.NONE):
            reason = "the side the robot lies on is unknown: no get-up motion to choose; it stays down"
        else:
            motion = self.getup_motion(self.side)
            if motion is None:
                reason = (f"no get-up motion {p.getup_prefix}{self.side.value} for this robot: it stays down "
                          "(add the motion to get up by itself)")
        if motion is not None and not self._joints_settled(stamp):
            return None  # asked again at the next reading
        if motion is None:
            if reason != self._given_up:
                self._given_up = reason
                return self._change(State.FALLEN, self.side, reason, stamp)
            return None
        self.attempt += 1
        self._getup = _Attempt(motion, stamp)
        return self._change(State.GETTING_UP, self.side,
                            f"lying on the {self.side.value}, still: get-up attempt {self.attempt} of "
                            f"{p.max_attempts} ({motion})", stamp, (Action(ActionKind.GET_UP, motion=motion),))

    def _attempt_failed(self, now: float, why: str, cancel: bool = False) -> Decision:
        self.counts.getups_failed += 1
        self._getup = None
        self._still.since = None  # lying still again before the next attempt
        actions = (Action(ActionKind.CANCEL_GET_UP),) if cancel else ()
        left = self.params.max_attempts - self.attempt
        return self._change(State.FALLEN, self.side, f"get-up attempt {self.attempt} failed: {why}"
                            + (f"; {left} attempt(s) left" if left > 0 else "; no attempt left"), now, actions)

    def _change(self, state: State, side: Side, cause: str, stamp: float,
                actions: tuple[Action, ...] = ()) -> Decision:
        if state is not self.state:
            self.since = stamp
        if state is not State.FALLING:
            self._repeat_due = None
        if state is not State.GETTING_UP:
            self._getup = None
        self.state, self.side, self.cause = state, side, cause
        self.counts.decisions += 1
        return Decision(state, side, cause, stamp, actions)

    # -- the feet -------------------------------------------------------------------------
    def _feet_loaded(self, stamp: float) -> bool | None:
        """Do the feet carry the robot (None: not known: no fresh foot reading, or no weight)."""
        feet = self._feet
        if not self.params.use_foot_sensors or feet is None or self.weight <= 0.0 \
                or abs(stamp - feet.stamp) > self.params.reading_budget:
            return None
        return feet.load >= self.params.feet_loaded_fraction * self.weight

    def _feet_text(self, stamp: float) -> str:
        loaded = self._feet_loaded(stamp)
        if loaded is None:
            return "the feet's load is not measured"
        return f"the feet carry {self._feet.load:.0f} N of the robot's {self.weight:.0f} N"

    def _up_text(self) -> str:
        tilt = f"trunk tilt {math.degrees(self.tilt):.0f} deg" if math.isfinite(self.tilt) else "no trunk tilt"
        return f"{tilt}; {self._feet_text(self.stamp)}"
