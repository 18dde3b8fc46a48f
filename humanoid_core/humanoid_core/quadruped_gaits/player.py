"""Playing a quadruped gait: its joint set-points on a fixed grid of time, and one play of it
from where the robot stands, through the gait, back to a stable stance.

:class:`GaitPlayer` is the one generator of a gait's set-points: the gait controller node
(``play_gait``) and the headless evaluation (``humanoid gaits``, the gait search) both ask
it for set-point ``k`` (at ``k`` periods into the gait), so a gait played on the robot
sends the set-points the evaluation measured, given the same period. Set-points are a
function of ``k`` alone (a CPG integrates forward on the same grid whenever it is asked),
never of when the question comes.

:class:`GaitRun` adds what the node needs around it, still on the grid and without ROS: a
lead-in from the measured pose to the gait's first set-point, the gait for a duration, and
a return to the stance (the robot's home pose) at the end or from any step on a cancel.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np

from humanoid_core.loop import cubic
from humanoid_core.quadruped_gaits.cpg import CPGGait
from humanoid_core.quadruped_gaits.cpg_models import NetworkGait
from humanoid_core.quadruped_gaits.patterns import GaitError, IKGait
from humanoid_core.quadruped_gaits.stepping import Stepper, path_velocities

#: An IK gait (a function of time) or an oscillator network (integrated forward).
Gait = IKGait | CPGGait | NetworkGait
#: Set-points a player keeps at hand behind the latest (a central difference asks one back).
RECENT = 3


class GaitPlayer:
    """Set-point ``k`` of a gait is its position at ``k * period`` s into the gait; ``k``
    may repeat or grow, never go back (a CPG integrates forward, through every step on the
    way, so that its set-point ``k`` is the same bit for bit however the steps are asked)."""

    def __init__(self, gait: Gait, period: float, name: str) -> None:
        if not period > 0.0:
            raise GaitError(f"the set-point period must be > 0, got {period}")
        self.gait, self.period, self.name = gait, period, name
        #: how a run joins and leaves this gait when its file says (glide, step), else None
        self.transition: str | None = None
        self._recent: dict[int, np.ndarray] = {}  # the latest set-points computed, by step

    @property
    def frequency(self) -> float:
        return self.gait.frequency

    def setpoint(self, k: int) -> np.ndarray:
        """Every joint's position (rad, canonical order) at ``k`` periods into the gait."""
        if k in self._recent:
            return self._recent[k]
        latest = max(self._recent, default=None)
        if not isinstance(self.gait, IKGait) and latest is not None and k > latest + 1:
            for j in range(latest + 1, k):  # the oscillators integrate through every step
                self.gait.positions(j * self.period)
        positions = self.gait.positions(k * self.period)
        self._recent[k] = positions
        for old in [j for j in self._recent if j < k - RECENT]:
            del self._recent[old]
        return positions

    def phase(self, k: int) -> float:
        """Where in its cycle the gait is at set-point ``k``, 0..1, at its frequency."""
        return (self.frequency * k * self.period) % 1.0

    def peak_speeds(self, cycles: float = 2.0) -> np.ndarray:
        """Each joint's fastest speed (rad/s) between two set-points over ``cycles`` cycles, on a
        copy of the gait (this player's stays at its start)."""
        player = GaitPlayer(self.gait.fresh(), self.period, self.name)
        steps = max(2, math.ceil(cycles / (self.frequency * self.period)))
        positions = np.array([player.setpoint(k) for k in range(steps + 1)])
        return np.max(np.abs(np.diff(positions, axis=0)), axis=0) / self.period

    def check_speeds(self, limits: np.ndarray, names: tuple[str, ...]) -> None:
        """GaitError naming the first joint the gait would drive faster than its limit."""
        speeds = self.peak_speeds()
        for name, speed, limit in zip(names, speeds, limits, strict=True):
            if speed > limit:
                raise GaitError(f"{self.name} at {self.frequency:g} Hz drives {name} at {speed:.2f} rad/s, beyond "
                                f"its limit of {limit:.2f} rad/s")


class Stage(enum.Enum):
    STARTING = "starting"  # the lead-in, from where the robot stood to the gait's first set-point
    PLAYING = "playing"
    STOPPING = "stopping"  # to the stance
    DONE = "done"


@dataclass(frozen=True)
class RunTiming:
    """How a run joins and leaves its gait (s, rad/s)."""

    start_duration: float  # the lead-in at least
    stop_duration: float  # the return to the stance at least
    transition_speed: float  # both are lengthened so that no joint's peak speed exceeds this

    def steps(self, duration: float, distance: np.ndarray, period: float) -> int:
        """Periods of a rest-to-rest cubic over ``distance`` (rad per joint): at least
        ``duration``, long enough for its peak speed (1.5 times the mean) to stay under
        ``transition_speed``."""
        needed = max(duration, 1.5 * float(np.max(np.abs(distance), initial=0.0)) / self.transition_speed)
        return max(1, math.ceil(needed / period - 1e-9))


@dataclass(frozen=True)
class RunSetpoint:
    """One set-point of a run: step ``step`` (``step`` periods after the run begins)."""

    step: int
    positions: np.ndarray
    velocities: np.ndarray
    stage: Stage
    elapsed: float  # s of gait played at this set-point (0 in the lead-in)
    phase: float  # the gait's phase, 0..1


class GaitRun:
    """One play of a gait on the grid of its player's period: step 0 is where the robot stands,
    the lead-in (a rest-to-rest cubic) reaches the gait's first set-point at step
    :attr:`gait_start`, the gait plays ``duration`` (whole periods), then a rest-to-rest cubic
    from the gait's last set-point brings every joint to the stance at :attr:`end`: between
    two poses within the joints' limits, never beyond them, its speed bounded by the timing.
    :meth:`stop` starts that return from an earlier step instead (a cancel, a joint gone
    unknown).

    With a ``stepper`` the lead-in and the return step instead (a leg at a time, the body
    shifted over the standing feet: :mod:`~humanoid_core.quadruped_gaits.stepping`), each as
    long as its steps take, where both its ends stand on four feet at one height: a return from
    within the lead-in, or from a gait stopped with a foot lifted, glides.

    Steps are asked in order, each once or again, as a control loop does; after a stop, from
    the step after it (the set-points computed beyond it are dropped by the caller)."""

    def __init__(self, player: GaitPlayer, start: np.ndarray, stance: np.ndarray, duration: float,
                 timing: RunTiming, stepper: Stepper | None = None) -> None:
        if not (math.isfinite(duration) and duration > 0.0):
            raise GaitError(f"the duration must be a finite number of seconds > 0, got {duration}")
        if not np.all(np.isfinite(start)):
            raise GaitError("the start positions must all be known")
        self.player, self.timing = player, timing
        self.period = player.period
        self.start, self.stance = np.asarray(start, dtype=float), np.asarray(stance, dtype=float)
        self.stepper = stepper
        #: the stepped lead-in from the start (row 0) to the gait's first set-point (the last row)
        self._lead = None if stepper is None else stepper.between(self.start, player.setpoint(0))
        if self._lead is not None:
            self.gait_start = len(self._lead) - 1
        else:
            self.gait_start = timing.steps(timing.start_duration, player.setpoint(0) - self.start, self.period)
        self.gait_steps = max(1, round(duration / self.period))
        self._stop_from: int | None = None  # the step the return to the stance leaves from, when planned
        self._stop_positions = self.stance
        self._stop_steps = 0
        self._back: np.ndarray | None = None  # the stepped return, from where it leaves (row 0) to the stance
        self._stopped_early = False
        self._last: RunSetpoint | None = None  # the latest set-point asked
        self._asked = -1  # its step; after a stop, the stop's step

    @property
    def gait_end(self) -> int:
        """The gait's last step when it plays to its end."""
        return self.gait_start + self.gait_steps

    @property
    def end(self) -> int | None:
        """The run's last step (at rest in the stance), once the return is planned."""
        return None if self._stop_from is None else self._stop_from + self._stop_steps

    @property
    def stopped_early(self) -> bool:
        return self._stopped_early

    @property
    def played(self) -> float:
        """Seconds of gait played, up to where the return leaves (or the latest step)."""
        last = self._stop_from if self._stop_from is not None else (-1 if self._last is None else self._last.step)
        return max(0, min(last, self.gait_end) - self.gait_start) * self.period

    def stop(self, step: int, positions: np.ndarray) -> bool:
        """Return to the stance from ``step`` on, leaving from ``positions`` (the set-point
        at ``step``, already computed): a cancel. False (nothing changes) when the return
        was already planned (a second stop, or the gait's own end)."""
        if self._stop_from is not None:
            return False
        step = max(step, 0)
        self._plan_return(step, np.asarray(positions, dtype=float))
        self._stopped_early = step < self.gait_end
        if self._last is not None and self._last.step > step:
            self._last, self._asked = None, step  # the set-points beyond it are not played
        return True

    def setpoint(self, step: int) -> RunSetpoint:
        """The set-point at ``step``; after :attr:`end` the stance, at rest (stage DONE)."""
        last = self._last
        if last is not None and step == last.step:
            return last
        if step < self._asked or (last is None and step == self._asked):
            raise GaitError(f"a run goes forward: step {step} asked after step {self._asked}")
        if self._stop_from is None and step > self.gait_end:
            if last is None or last.step != self.gait_end:
                raise GaitError(f"the return to the stance leaves from step {self.gait_end}, which was not played")
            self._plan_return(self.gait_end, last.positions)
        if self._stop_from is not None and step > self._stop_from:
            point = self._returning(step)
        else:
            point = self._before_stop(step)
        self._last, self._asked = point, step
        return point

    def _before_stop(self, step: int) -> RunSetpoint:
        """The lead-in and the gait (central differences on the gait, so that the
        interface's cubic passes each set-point at the gait's speed)."""
        if step < self.gait_start and self._lead is not None:
            return RunSetpoint(step, self._lead[step], path_velocities(self._lead, self.period, step), Stage.STARTING,
                               0.0, 0.0)
        if step < self.gait_start:
            t, t1 = step * self.period, self.gait_start * self.period
            zero = np.zeros_like(self.start)
            positions, velocities, _ = cubic(t, 0.0, t1, self.start, zero, self.player.setpoint(0), zero)
            return RunSetpoint(step, positions, velocities, Stage.STARTING, 0.0, 0.0)
        k = step - self.gait_start
        last = self._last
        here = self.player.setpoint(k)
        if k == 0 or step == self.gait_end:
            velocities = np.zeros_like(here)  # the lead-in arrives at rest; the return leaves from rest
        else:
            if last is None or last.step != step - 1:
                raise GaitError(f"gait step {step} asked without step {step - 1} before it")
            velocities = (self.player.setpoint(k + 1) - last.positions) / (2.0 * self.period)
        return RunSetpoint(step, here, velocities, Stage.PLAYING, k * self.period, self.player.phase(k))

    def _returning(self, step: int) -> RunSetpoint:
        assert self._stop_from is not None
        i = min(step - self._stop_from, self._stop_steps)
        if self._back is not None:
            positions, velocities = self._back[i], path_velocities(self._back, self.period, i)
        else:
            zero = np.zeros_like(self.stance)
            positions, velocities, _ = cubic(i * self.period, 0.0, self._stop_steps * self.period,
                                             self._stop_positions, zero, self.stance, zero)
        stage = Stage.DONE if step >= self._stop_from + self._stop_steps else Stage.STOPPING
        k = max(0, min(self._stop_from, self.gait_end) - self.gait_start)
        return RunSetpoint(step, positions, velocities, stage, k * self.period, self.player.phase(k))

    def _plan_return(self, step: int, positions: np.ndarray) -> None:
        self._stop_from, self._stop_positions = step, positions
        if self.stepper is not None and step >= self.gait_start:  # from within the lead-in: glide
            self._back = self.stepper.between(positions, self.stance)
        if self._back is not None:
            self._stop_steps = len(self._back) - 1
        else:
            self._stop_steps = self.timing.steps(self.timing.stop_duration, self.stance - positions, self.period)
