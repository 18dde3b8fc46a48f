"""``humanoid push``: the largest push the simulated robot survives, standing and walking.

Brings up the simulation graph (lockstep: the simulation waits for this client at every
state, so that each push lands at the same robot time in every run) and, per direction
(forward, backward, left, right of the robot's heading at the push), finds by bisection the
largest impulse at the root link's centre of mass (``base_link``, the trunk) that does not
topple the robot: a push of ``--push-duration`` s through the simulator's ``apply_push``
service, the robot watched for ``--watch`` s after it (the simulator's ``fallen``). The
bracket starts at a push of 0.1 m/s times the robot's mass and doubles until the robot
falls; ``--iterations`` halvings follow. Every trial starts from a reset of the simulation
(the ``reset`` service) and a second of standing. Walking trials (bipeds) push the robot
``--walk-lead`` s after a 1 m walk goal was accepted (the ``walk`` action), cancel it after
the watch, and count a fall until 2 s after the walk has stopped.

In the same trials the balance monitor is watched (``balance_state``: ``stable`` false is
the moment it warns): at the smallest push that toppled the robot, whether it warned
between the push and the fall, and how long before the simulator's ``fallen`` (stamped
with the ground truth that came with it).

``--json`` prints ``{"standing": {"forward": N s, ...}, "walking": {...}}`` plus the
bracket's upper ends (``toppled``) and the warnings.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from humanoid_control.ros import topics

# rclpy and the clients are imported where they are used: the `humanoid` command builds its
# parser from this module and must start fast.

#: The experiment's node (a lockstep participant).
CLIENT = "humanoid_push"
#: Unit vectors of the push directions in the robot's heading frame (x forward, y left).
DIRECTIONS: dict[str, tuple[float, float]] = {"forward": (1.0, 0.0), "backward": (-1.0, 0.0),
                                              "left": (0.0, 1.0), "right": (0.0, -1.0)}
#: s of robot time the robot stands after a reset before a trial goes on.
SETTLE = 1.0
#: s before a push in which a not-stable verdict counts as given before it (after the reset's
#: drop: the robot is put down 0.5 mm above the ground, and without a foot on it no support)
BEFORE = 0.5
#: m/s: the first push of a bracket gives the robot's whole mass this speed.
FIRST_SPEED = 0.1
#: m: the walk goal of a walking trial (longer than the robot walks in a trial).
WALK_DISTANCE = 1.0
#: s of robot time a walking robot that stood the push is watched once its walk has stopped
#: (the walk canceled after the watch: the stop follows the push's disturbance)
STOPPED_WATCH = 2.0
#: Wall seconds allowed for one wait on the simulation (generous: a loaded machine).
WAIT = 120.0


@dataclass
class Trial:
    """One push and what followed."""

    impulse: float  # N s
    fell: bool
    pushed_at: float  # s, robot time the push began
    fell_at: float | None  # robot time of the first fallen (its ground truth's stamp)
    warned_at: float | None  # robot time of the first not-stable balance_state from the push on
    unstable_before: bool  # the balance monitor already said not stable within BEFORE s before the push

    @property
    def warning_lead(self) -> float | None:
        if self.fell_at is None or self.warned_at is None or self.warned_at > self.fell_at:
            return None
        return self.fell_at - self.warned_at


@dataclass
class DirectionResult:
    """The bisection's outcome in one direction."""

    survived: float  # N s, the largest push the robot stood
    toppled: float | None  # N s, the smallest push that toppled it (None: none up to the bound)
    trials: int
    warned: bool | None  # at the toppling push: did the balance monitor warn before the fall
    warning_lead_s: float | None
    unstable_before_push: bool | None


@dataclass
class PushReport:
    robot: str
    link: str
    push_duration_s: float
    iterations: int
    standing: dict[str, DirectionResult]
    walking: dict[str, DirectionResult] | None  # None: not a walking robot, or --no-walking

    def as_dict(self) -> dict:
        modes = {"standing": self.standing, "walking": self.walking}
        out: dict = {mode: None if results is None else {d: _rounded(r.survived) for d, r in results.items()}
                     for mode, results in modes.items()}
        out["toppled"] = {mode: None if results is None else {d: _rounded(r.toppled) for d, r in results.items()}
                          for mode, results in modes.items()}
        out["balance_warning"] = {mode: None if results is None else {
            d: {"warned": r.warned, "lead_s": _rounded(r.warning_lead_s),
                "unstable_before_push": r.unstable_before_push}
            for d, r in results.items()} for mode, results in modes.items()}
        out.update(robot=self.robot, link=self.link, push_duration_s=self.push_duration_s,
                   iterations=self.iterations,
                   trials={mode: None if results is None else {d: r.trials for d, r in results.items()}
                           for mode, results in modes.items()})
        return out

    def text(self) -> str:
        lines = [f"{self.robot}: largest push survived, N s ({self.push_duration_s:g} s at {self.link}'s centre of "
                 f"mass, {self.iterations} bisection steps; in brackets the smallest that toppled it)"]
        modes = [("standing", self.standing)] + ([("walking", self.walking)] if self.walking is not None else [])
        lines.append(f"{'':10}" + "".join(f"{mode:>22}" for mode, _ in modes))
        for direction in DIRECTIONS:
            lines.append(f"{direction:10}" + "".join(f"{_bracket(results[direction]):>22}" for _, results in modes))
        lines.append("balance monitor's warning before the fall, at the smallest toppling push:")
        for direction in DIRECTIONS:
            lines.append(f"{direction:10}" + "".join(f"{_warning(results[direction]):>22}" for _, results in modes))
        return "\n".join(lines)


def _rounded(value: float | None) -> float | None:
    """N s and s to the millisecond (the figures' resolution is far coarser)."""
    return None if value is None else round(value, 3)


def _bracket(result: DirectionResult) -> str:
    toppled = f"({result.toppled:.2f})" if result.toppled is not None else "(none fell)"
    return f"{result.survived:.2f} {toppled}"


def _warning(result: DirectionResult) -> str:
    if result.toppled is None:
        return "-"
    if not result.warned:
        return "no warning"
    text = f"{result.warning_lead_s:.3f} s before"
    return text + " (unstable before)" if result.unstable_before_push else text


def bisect(trial: Callable[[float], Trial], first: float, bound: float, iterations: int,
           ) -> tuple[DirectionResult, list[Trial]]:
    """The largest impulse ``trial`` survives: doubling from ``first`` until a fall (at most
    ``bound``), then ``iterations`` halvings of the bracket."""
    survived, toppled, toppling = 0.0, None, None
    trials: list[Trial] = []
    impulse = min(first, bound)
    while True:
        outcome = trial(impulse)
        trials.append(outcome)
        if outcome.fell:
            toppled, toppling = impulse, outcome
            break
        survived = impulse
        if impulse >= bound:
            break
        impulse = min(2.0 * impulse, bound)
    for _ in range(iterations if toppled is not None else 0):
        assert toppled is not None
        middle = (survived + toppled) / 2.0
        outcome = trial(middle)
        trials.append(outcome)
        if outcome.fell:
            toppled, toppling = middle, outcome
        else:
            survived = middle
    return DirectionResult(
        survived=survived, toppled=toppled, trials=len(trials),
        warned=None if toppling is None else toppling.warning_lead is not None,
        warning_lead_s=None if toppling is None else toppling.warning_lead,
        unstable_before_push=None if toppling is None else toppling.unstable_before), trials


class FallWitness:
    """The balance monitor's verdicts and the simulator's fall, as this client receives them
    (subscriptions on the robot client's node, spun by its executor)."""

    def __init__(self, client) -> None:
        from std_msgs.msg import Bool

        from humanoid_interfaces.msg import BalanceState

        self.client = client
        self._lock = threading.Lock()
        self._unstable: list[float] = []  # stamps of not-stable balance_state, this trial
        self._since = math.inf
        self._falls_since = math.inf
        self.fell_at: float | None = None
        client.node.create_subscription(BalanceState, topics.BALANCE_STATE, self._on_balance, 100)
        client.node.create_subscription(Bool, topics.FALLEN, self._on_fallen, 10)

    def arm(self, since: float) -> None:
        """Collect the balance monitor's verdicts stamped ``since`` or later (robot time; the
        previous trial's forgotten), and no fall yet."""
        with self._lock:
            self._unstable, self._since, self._falls_since, self.fell_at = [], since, math.inf, None

    def watch_falls(self, since: float) -> None:
        """Take the first fall whose ground truth is stamped ``since`` or later."""
        with self._lock:
            self._falls_since, self.fell_at = since, None

    def _on_balance(self, msg) -> None:
        from humanoid_control.ros import seconds

        stamp = seconds(msg.header.stamp)
        if not msg.stable:
            with self._lock:
                if stamp >= self._since:
                    self._unstable.append(stamp)

    def _on_fallen(self, msg) -> None:
        from humanoid_control.ros import seconds

        if not msg.data:
            return
        # `fallen` has no stamp: the simulator publishes it right after the ground truth of its cycle
        pose = self.client.base_pose
        stamp = seconds(pose.header.stamp) if pose is not None else self.client.now()
        with self._lock:
            if self.fell_at is None and stamp >= self._falls_since:
                self.fell_at = stamp

    def first_unstable(self, after: float) -> float | None:
        with self._lock:
            return next((t for t in self._unstable if t >= after), None)

    def unstable_between(self, start: float, end: float) -> bool:
        with self._lock:
            return any(start <= t < end for t in self._unstable)


class PushExperiment:
    """Trials on a running simulation through a lockstep :class:`RobotClient`."""

    def __init__(self, client, robot: str, duration: float, watch: float, walk_lead: float) -> None:
        from humanoid_description import load_model

        self.client, self.robot = client, robot
        self.model = load_model(robot)
        self.duration, self.watch, self.walk_lead = duration, watch, walk_lead
        self.witness = FallWitness(client)
        self._walk = None

    def heading(self) -> float:
        """The base link's yaw in the world (ground truth)."""
        o = self.client.wait_for_base_pose().pose.orientation
        return math.atan2(2.0 * (o.w * o.z + o.x * o.y), 1.0 - 2.0 * (o.y * o.y + o.z * o.z))

    def standing(self, direction: str, impulse: float) -> Trial:
        self._reset()
        return self._push_and_watch(direction, impulse, self.client.now() + SETTLE)

    def walking(self, direction: str, impulse: float) -> Trial:
        from humanoid_interfaces.action import Walk

        self._reset()
        client = self.client
        if self._walk is None:
            self._walk = client.action_client(Walk, topics.WALK)
            if not self._walk.wait_for_server(timeout_sec=60.0):
                raise RuntimeError("no walk action server within 60 s: is the walk controller running?")
        with client.lockstep.paused_at(client.now() + SETTLE, WAIT) as start:
            handle = client.wait_future(self._walk.send_goal_async(Walk.Goal(distance=WALK_DISTANCE)), WAIT,
                                        "walk goal response")
        if not handle.accepted:
            raise RuntimeError("the walk goal was rejected")
        try:
            outcome = self._push_and_watch(direction, impulse, start + self.walk_lead)
        finally:
            client.wait_future(handle.cancel_goal_async(), WAIT, "walk cancel")
            client.wait_result(handle, WAIT, "walk result")
        if not outcome.fell:  # it must still stand once the walk has stopped
            self._watch_until(client.now() + STOPPED_WATCH)
            outcome.fell, outcome.fell_at = self.witness.fell_at is not None, self.witness.fell_at
            outcome.warned_at = self.witness.first_unstable(outcome.pushed_at)
        return outcome

    def _reset(self) -> None:
        self.client.reset()
        self.witness.arm(self.client.now())

    def _watch_until(self, end: float) -> None:
        """Until robot time ``end``, or a fall."""
        deadline = time.monotonic() + WAIT
        while self.client.now() < end and self.witness.fell_at is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the simulation did not reach t = {end:.2f} s within {WAIT:g} s")
            time.sleep(0.02)

    def _push_and_watch(self, direction: str, impulse: float, at: float) -> Trial:
        client, witness = self.client, self.witness
        with client.lockstep.paused_at(at, WAIT) as pushed_at:
            witness.watch_falls(pushed_at)
            yaw = self.heading()
            ux, uy = DIRECTIONS[direction]
            force = impulse / self.duration
            world = (force * (math.cos(yaw) * ux - math.sin(yaw) * uy),
                     force * (math.sin(yaw) * ux + math.cos(yaw) * uy), 0.0)
            response = client.apply_push(world, self.duration)
            if not response.success:
                raise RuntimeError(response.message)
        self._watch_until(pushed_at + self.duration + self.watch)
        return Trial(impulse=impulse, fell=witness.fell_at is not None, pushed_at=pushed_at,
                     fell_at=witness.fell_at, warned_at=witness.first_unstable(pushed_at),
                     unstable_before=witness.unstable_between(pushed_at - BEFORE, pushed_at))


def measure(client, robot: str, iterations: int, duration: float, watch: float, walk_lead: float,
            walking: bool, progress: Callable[[str], None] | None = None) -> PushReport:
    """Bisect every direction walking (when ``walking``: the longer trials, first), then standing."""
    from humanoid_sim import PushParameters

    experiment = PushExperiment(client, robot, duration, watch, walk_lead)
    first = FIRST_SPEED * experiment.model.total_mass
    bound = PushParameters().max_force * duration
    client.wait_for_joint_states(60.0)
    modes: dict[str, dict[str, DirectionResult]] = {}
    for mode, trial in (("walking", experiment.walking), ("standing", experiment.standing)):
        if mode == "walking" and not walking:
            continue
        modes[mode] = {}
        for direction in DIRECTIONS:
            def run_trial(impulse: float, mode=mode, trial=trial, direction=direction) -> Trial:
                outcome = trial(direction, impulse)
                if progress is not None:
                    progress(f"{mode} {direction}: {impulse:.3f} N s -> {'fell' if outcome.fell else 'stood'}")
                return outcome

            modes[mode][direction], _ = bisect(run_trial, first, bound, iterations)
    return PushReport(robot=robot, link=experiment.model.root_link, push_duration_s=duration, iterations=iterations,
                      standing=modes["standing"], walking=modes.get("walking"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_core import integer_in, new_folder, positive_number
    from humanoid_description import ROBOTS
    from humanoid_sim import physics_profiles

    parser.add_argument("--robot", required=True, choices=ROBOTS, help="the robot to push")
    parser.add_argument("--iterations", type=integer_in(0, 20), default=2,
                        help="bisection steps after the bracket is found (default 2: a quarter of the bracket; "
                             "each adds a trial per direction, about 5 s standing and 30 s walking on a loaded "
                             "machine)")
    parser.add_argument("--push-duration", type=positive_number, default=0.1,
                        help="s, how long each push lasts (a constant force; default 0.1)")
    parser.add_argument("--watch", type=positive_number, default=3.0,
                        help="s of robot time the robot is watched after a push (default 3; falls come up to 2 s "
                             "after the push)")
    parser.add_argument("--walk-lead", type=positive_number, default=2.0,
                        help="s of robot time from the walk goal to the push in walking trials (default 2)")
    parser.add_argument("--no-walking", dest="walking", action="store_false",
                        help="standing trials only (the quadruped has no walk: standing only anyway)")
    add_own_robot_namespace(parser)
    physics_profiles.add_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--log-dir", type=new_folder, default=None, help="keep the nodes' logs here")


def run(args: argparse.Namespace) -> int:
    import sys

    from humanoid_bringup import free_namespace
    from humanoid_control.ros import RobotClient
    from humanoid_core import UsageError
    from humanoid_core.biped_walking import walking_robot
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot
    from humanoid_sim import PushParameters, physics_profiles, sim_nodes

    robot = resolve_robot(args.robot)  # once: the option check and the graph below ask this object
    limits = PushParameters()
    if args.push_duration > limits.max_duration:
        raise UsageError(f"--push-duration must be at most {limits.max_duration:g} s (push.max_duration), "
                         f"got {args.push_duration:g}")
    physics_profiles.chosen(robot, args.physics)
    namespace = free_namespace(args.namespace)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="humanoid_push_"))
    print(f"starting the {args.robot} simulation (logs: {log_dir}) ...", file=sys.stderr if args.json else sys.stdout,
          flush=True)
    walking = args.walking and walking_robot(robot)
    nodes = sim_nodes(robot, real_time_factor=0.0, lockstep=True, participants=(CLIENT,),
                      walk_controller=walking, gait_controller=False, self_collision_checker=False,
                      physics_profile=args.physics, auto_getup=False,  # each trial starts from a reset
                      namespace=namespace)
    with Graph(nodes, log_dir=log_dir), RobotClient(CLIENT, namespace=namespace, lockstep=True) as client:
        report = measure(client, args.robot, args.iterations, args.push_duration, args.watch, args.walk_lead,
                         walking, progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.text())
    return 0

