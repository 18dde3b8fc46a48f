"""Time series of an experiment, taken from a bag (through :class:`~humanoid_tools.recording.reading.Bag`).

Times are robot time in seconds (header stamps: the simulator's clock, or the robot
computer's clock), from the first ``joint_states`` stamp. Messages without a usable
stamp (streaming commands sent with a zero stamp, String, Bool) are placed on that
time axis through the log times of ``joint_states``.

Staleness contract: a joint whose reading was stale is NaN in ``joint_states``; it
stays NaN here (the plots draw gaps), and is counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from humanoid_control.ros import absolute, frame_prefix, topics, unprefixed
from humanoid_control.ros import seconds as stamp_seconds
from humanoid_tools.recording import Bag

#: The bag's topics (absolute: the recorder records from the root namespace).
JOINT_STATES = absolute(topics.JOINT_STATES)
JOINT_COMMANDS = absolute(topics.JOINT_COMMANDS)
JOINT_SETPOINTS = absolute(topics.JOINT_SETPOINTS)
JOINT_TRAJECTORY = absolute(topics.JOINT_TRAJECTORY)
FEEDBACK = absolute(topics.action_topics(topics.FOLLOW_JOINT_TRAJECTORY)[0])
BALANCE = absolute(topics.BALANCE_STATE)
SELF_COLLISION = absolute(topics.SELF_COLLISION_STATE)
DIAGNOSTICS = absolute(topics.DIAGNOSTICS)
FALLEN = absolute(topics.FALLEN)
FALL_STATE = absolute(topics.FALL_STATE)
ENERGY = absolute(topics.ENERGY_STATE)
BASE_POSE = absolute(topics.BASE_POSE)
ROBOT_DESCRIPTION = absolute(topics.ROBOT_DESCRIPTION)
#: The actions whose goals are recorded through their status topic (``/<action>/_action/status``).
ACTIONS = (topics.FOLLOW_JOINT_TRAJECTORY, topics.PLAY_MOTION)
#: Every topic :func:`load` reads (in one pass of the bag).
READ_BY_LOAD = (JOINT_STATES, JOINT_COMMANDS, JOINT_SETPOINTS, JOINT_TRAJECTORY, FEEDBACK, BALANCE, SELF_COLLISION,
                DIAGNOSTICS, FALLEN, FALL_STATE, ENERGY, ROBOT_DESCRIPTION,
                *(absolute(topics.action_topics(action)[1]) for action in ACTIONS))
#: Two times of one event within this of each other are on one clock (a joint_states stamp and
#: its reception by the recorder, an action's acceptance stamp and its status' arrival).
SAME_CLOCK = 1.0  # s


@dataclass
class Signal:
    """Samples of one quantity: times (s) and values; NaN = unknown."""

    t: np.ndarray
    v: np.ndarray

    @classmethod
    def of(cls, pairs: list[tuple[float, float]]) -> Signal:
        if not pairs:
            return cls(np.zeros(0), np.zeros(0))
        t, v = np.array(pairs, dtype=float).T
        order = np.argsort(t, kind="stable")
        return cls(t[order], v[order])

    def __len__(self) -> int:
        return len(self.t)

    def at(self, times: np.ndarray) -> np.ndarray:
        """Linear interpolation at ``times``; NaN outside the samples or next to an unknown one."""
        result = np.full(len(times), np.nan)
        if len(self.t) < 2:
            return result
        right = np.searchsorted(self.t, times, side="left")
        inside = (right > 0) & (right < len(self.t)) | (times == self.t[0])
        right = np.clip(right, 1, len(self.t) - 1)
        left = right - 1
        span = self.t[right] - self.t[left]
        weight = np.where(span > 0, (times - self.t[left]) / np.where(span > 0, span, 1.0), 0.0)
        value = self.v[left] + weight * (self.v[right] - self.v[left])  # NaN if either side is NaN
        result[inside] = value[inside]
        return result


@dataclass
class JointTracking:
    """Measured and commanded position of one joint (rad)."""

    name: str
    measured: Signal
    #: What the robot executed: its joint_setpoints where the bag has them, else the action
    #: feedback's desired positions and the streaming commands, merged
    commanded: Signal
    waypoints: Signal  # joint_trajectory points (time = message time + time_from_start)
    stale_samples: int

    @property
    def error(self) -> Signal:
        """Commanded minus measured, at the commanded times (NaN where the reading is unknown)."""
        return Signal(self.commanded.t, self.commanded.v - self.measured.at(self.commanded.t))

    def error_stats(self) -> tuple[float, float]:
        """(RMS, max |error|) in rad over the known samples; NaN without any."""
        error = self.error.v
        error = error[np.isfinite(error)]
        if not len(error):
            return float("nan"), float("nan")
        return float(np.sqrt(np.mean(error ** 2))), float(np.max(np.abs(error)))


@dataclass(frozen=True)
class Goal:
    """One goal of an action, from the action's status topic (and feedback)."""

    action: str
    #: robot time (s) the server accepted it: its stamp when that is on the robot's clock, else
    #: when the recorder received the first status listing it (the simulator's action server
    #: stamps with the computer's clock, its joint_states with the simulated one)
    accepted_at: float
    status: int  # the last status seen (action_msgs/GoalStatus: 4 succeeded, 5 canceled, 6 aborted)
    #: robot time (s) its trajectory started (follow_joint_trajectory: feedback stamp minus the
    #: desired point's time from start); None without feedback
    started_at: float | None = None


@dataclass
class Balance:
    t: np.ndarray
    #: each sample's ground frame: world once the simulator's ground truth arrives, else a sole's
    frames: np.ndarray
    com: np.ndarray  # (n, 2) projection on the ground
    zmp_model: np.ndarray  # (n, 2), NaN where invalid
    zmp_measured: np.ndarray  # (n, 2), NaN where invalid
    margin: np.ndarray  # stability margin (m), NaN without support
    zmp_margin: np.ndarray
    stable: np.ndarray  # bool
    polygons: list[np.ndarray]  # each (k, 2), the support polygon of each sample


@dataclass
class Energy:
    """The energy monitor's estimate over time (robot seconds)."""

    t: np.ndarray
    current: np.ndarray  # A, the whole robot
    power: np.ndarray  # W
    energy: np.ndarray  # J since the monitor started
    mechanical_power: np.ndarray  # W

    @property
    def consumed(self) -> float:
        """J over the recording (the monitor's count may have begun before it)."""
        return float(self.energy[-1] - self.energy[0]) if len(self.energy) else 0.0


@dataclass
class Collisions:
    t: np.ndarray
    in_collision: np.ndarray  # bool
    closest: np.ndarray  # m
    closest_pair: list[str]
    colliding_pairs: set[str]


@dataclass
class Experiment:
    """Everything the figures show, from one bag."""

    path: Path
    topics: dict[str, int]  # topic -> messages read
    indexed: dict[str, int]  # topic -> messages the bag's index lists
    types: dict[str, str]
    received: dict[str, int]
    written: dict[str, int]
    start_wall_ns: int
    duration: float  # robot seconds covered by joint_states
    joints: list[JointTracking] = field(default_factory=list)
    balance: Balance | None = None
    collisions: Collisions | None = None
    rates: dict[str, Signal] = field(default_factory=dict)  # label -> Hz
    bus_bytes: dict[str, Signal] = field(default_factory=dict)  # label -> bytes per cycle
    fault_counts: dict[str, Signal] = field(default_factory=dict)  # label -> cumulative count
    latencies: dict[str, Signal] = field(default_factory=dict)  # label -> ms (diagnostics' *_ms values)
    joint_state_interval: Signal | None = None  # ms between consecutive joint_states
    #: ms from a joint_states stamp to its arrival at the recorder; None when the stamps are on
    #: another clock (the simulator's)
    joint_state_delay: Signal | None = None
    goals: list[Goal] = field(default_factory=list)  # in order of acceptance
    first_command: dict[str, float] = field(default_factory=dict)  # topic -> time of its first message
    fell_at: float | None = None
    #: the robot's own estimate (fall_state): when it first said fallen, and how it lay
    fall_estimated_at: float | None = None
    fall_posture: str | None = None
    energy: Energy | None = None
    robot_name: str | None = None
    damage: list[str] = field(default_factory=list)  # what could not be read (a damaged bag)


class _Clock:
    """Robot time of a log time, from the (log time, stamp) pairs of joint_states."""

    def __init__(self, log_ns: np.ndarray, stamps: np.ndarray, origin: float) -> None:
        self.log = log_ns.astype(float)
        self.stamps = stamps
        self.origin = origin

    def robot_time(self, log_ns: int) -> float:
        if len(self.log) == 0:
            return float("nan")
        if len(self.log) == 1:
            return float(self.stamps[0] - self.origin)
        return float(np.interp(float(log_ns), self.log, self.stamps) - self.origin)


def load(path: Path) -> Experiment:
    """Read the series the figures need (one pass over the bag); what a damaged bag could not
    give is listed in ``damage``, and ``topics`` counts the messages read."""
    with Bag(path) as bag:
        return extract(bag)


def extract(bag: Bag) -> Experiment:
    """:func:`load` of a bag already open (``humanoid compare`` opens both before reading either)."""
    bag.preload(READ_BY_LOAD)
    data = bag.custom_data
    experiment = Experiment(path=bag.path, topics=dict(bag.counts), indexed=dict(bag.indexed),
                            types=dict(bag.types),
                            received=json.loads(data.get("received_messages", "{}")),
                            written=json.loads(data.get("written_messages", "{}")),
                            start_wall_ns=0, duration=0.0)
    states = bag.all(JOINT_STATES) if JOINT_STATES in bag.types else []
    stamps = np.array([stamp_seconds(m.header.stamp) for _, m in states])
    origin = float(stamps[0]) if len(stamps) else 0.0
    clock = _Clock(np.array([log for log, _ in states]), stamps, origin)
    if states:
        experiment.start_wall_ns = states[0][0]
        experiment.duration = float(stamps[-1] - stamps[0])
        # to the microsecond: stamps are float seconds, their differences carry rounding noise
        experiment.joint_state_interval = Signal(stamps[1:] - origin, np.round(1000.0 * np.diff(stamps), 3))
        experiment.joint_state_delay = _delay(clock.log, stamps, origin)

    def when(log_ns: int, header=None) -> float:
        if header is not None and (header.stamp.sec or header.stamp.nanosec):
            return stamp_seconds(header.stamp) - origin
        return clock.robot_time(log_ns)

    commands = _commands(bag, states, origin, when)
    experiment.joints, experiment.first_command = commands.joints, commands.first
    experiment.goals = _goals(bag, origin, when, commands.trajectory_starts)
    if BALANCE in bag.types:
        experiment.balance = _balance(bag.all(BALANCE), when, frame_prefix(bag.namespace))
    if SELF_COLLISION in bag.types:
        experiment.collisions = _collisions(bag.all(SELF_COLLISION), when)
    if DIAGNOSTICS in bag.types:
        _diagnostics(bag.all(DIAGNOSTICS), when, experiment)
    if FALLEN in bag.types:
        fallen = [when(log) for log, m in bag.all(FALLEN) if m.data]
        experiment.fell_at = min(fallen) if fallen else None
    if FALL_STATE in bag.types:
        fell = [(when(log, m.header), m.posture) for log, m in bag.all(FALL_STATE) if m.fallen]
        if fell:
            experiment.fall_estimated_at, experiment.fall_posture = fell[0][0], fell[-1][1]
    if ENERGY in bag.types:
        experiment.energy = _energy(bag.all(ENERGY), when)
    experiment.robot_name = robot_name(bag)
    experiment.topics, experiment.damage = bag.read_counts(), bag.damage()
    return experiment


def identity(bag: Bag) -> tuple[str | None, list[str]]:
    """What an open bag is of, from its first messages only (the chunk or two holding them, not
    the whole bag): the robot's name in its robot_description and the joints of its first
    joint_states."""
    first = next((msg for _topic, _log, msg in bag.messages([JOINT_STATES])), None)
    return robot_name(bag), list(first.name) if first is not None else []


def robot_name(bag: Bag) -> str | None:
    """The ``<robot name>`` of the bag's robot_description (None without one); read with the
    rest when ``bag`` preloaded the topic."""
    import xml.etree.ElementTree as ET

    for _log, msg in bag.all(ROBOT_DESCRIPTION) if ROBOT_DESCRIPTION in bag.types else []:
        try:
            return ET.fromstring(msg.data).get("name")
        except ET.ParseError:
            continue
    return None


def _delay(log_ns: np.ndarray, stamps: np.ndarray, origin: float) -> Signal | None:
    """Arrival at the recorder minus stamp (ms), when both are on one clock."""
    delay = 1e-9 * log_ns - stamps
    if not len(delay) or abs(float(np.median(delay))) > SAME_CLOCK:
        return None
    return Signal(stamps - origin, 1000.0 * delay)


def _goals(bag: Bag, origin: float, when, starts: dict[bytes, float]) -> list[Goal]:
    """Every goal seen in the recorded status topics: acceptance (see :class:`Goal`), last
    status, and the start of its trajectory (``starts``: goal id -> time, from the feedback)."""
    accepted: dict[tuple[str, bytes], float] = {}
    last: dict[tuple[str, bytes], int] = {}
    for action in ACTIONS:
        topic = absolute(topics.action_topics(action)[1])
        if topic not in bag.types:
            continue
        for log, msg in bag.all(topic):
            for goal in msg.status_list:
                key = (action, bytes(goal.goal_info.goal_id.uuid))
                if key not in accepted:
                    stamp, arrival = stamp_seconds(goal.goal_info.stamp) - origin, when(log)
                    accepted[key] = stamp if abs(stamp - arrival) <= SAME_CLOCK else arrival
                last[key] = int(goal.status)
    goals = [Goal(action, t, last[(action, uuid)], starts.get(uuid) if action == "follow_joint_trajectory" else None)
             for (action, uuid), t in accepted.items()]
    return sorted(goals, key=lambda g: g.accepted_at)


@dataclass
class _Commands:
    joints: list[JointTracking]
    first: dict[str, float]  # topic -> time of its first message
    trajectory_starts: dict[bytes, float]  # follow_joint_trajectory goal id -> start of its trajectory


def _commands(bag: Bag, states, origin: float, when) -> _Commands:
    names: list[str] = []
    measured: dict[str, list[tuple[float, float]]] = {}
    for _log, msg in states:
        t = stamp_seconds(msg.header.stamp) - origin
        for name, value in zip(msg.name, msg.position, strict=False):
            if name not in measured:
                names.append(name)
                measured[name] = []
            measured[name].append((t, float(value)))
    commanded: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    waypoints: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    executed = JOINT_SETPOINTS in bag.types and bag.indexed.get(JOINT_SETPOINTS, 0) > 0
    topics = [t for t in (FEEDBACK, JOINT_COMMANDS, JOINT_TRAJECTORY, JOINT_SETPOINTS) if t in bag.types]
    first: dict[str, float] = {}
    starts: dict[bytes, float] = {}
    for topic, log, msg in bag.messages(topics):
        if topic not in (FEEDBACK, JOINT_SETPOINTS) and topic not in first:
            first[topic] = when(log, msg.header)
        if topic == FEEDBACK:
            feedback = msg.feedback
            t = when(log, feedback.header)
            starts.setdefault(bytes(msg.goal_id.uuid), t - stamp_seconds(feedback.desired.time_from_start))
            if not executed:
                for name, value in zip(feedback.joint_names, feedback.desired.positions, strict=False):
                    commanded.setdefault(name, []).append((t, float(value)))
        elif topic in (JOINT_COMMANDS, JOINT_SETPOINTS):
            if (topic == JOINT_SETPOINTS) != executed:
                continue
            t = when(log, msg.header)
            for name, value in zip(msg.name, msg.position, strict=False):
                commanded.setdefault(name, []).append((t, float(value)))
        else:
            start = when(log, msg.header)
            for point in msg.points:
                t = start + stamp_seconds(point.time_from_start)
                for name, value in zip(msg.joint_names, point.positions, strict=False):
                    waypoints.setdefault(name, []).append((t, float(value)))
    result = []
    for name in names:
        signal = Signal.of(measured[name])
        result.append(JointTracking(name, signal, Signal.of(commanded.get(name, [])),
                                    Signal.of(waypoints.get(name, [])), int(np.count_nonzero(np.isnan(signal.v)))))
    return _Commands(result, first, starts)


def _point(p) -> tuple[float, float]:
    return float(p.x), float(p.y)


def _balance(messages, when, prefix: str = "") -> Balance:
    """The balance series; the ground frames by the robot's names (its namespace's ``prefix`` off:
    two robots' ``a/world`` and ``b/world`` are each its own ``world``)."""
    n = len(messages)
    t = np.zeros(n)
    com, zmp_model, zmp_measured = (np.full((n, 2), np.nan) for _ in range(3))
    margin, zmp_margin = np.full(n, np.nan), np.full(n, np.nan)
    stable = np.zeros(n, dtype=bool)
    polygons = []
    frames = np.array([unprefixed(prefix, msg.header.frame_id) for _log, msg in messages], dtype=object)
    for i, (log, msg) in enumerate(messages):
        t[i] = when(log, msg.header)
        com[i] = _point(msg.com_projection)
        if msg.zmp_model_valid:
            zmp_model[i] = _point(msg.zmp_model)
        if msg.zmp_measured_valid:
            zmp_measured[i] = _point(msg.zmp_measured)
        margin[i], zmp_margin[i], stable[i] = msg.stability_margin, msg.zmp_margin, msg.stable
        polygons.append(np.array([_point(p) for p in msg.support_polygon.points]).reshape(-1, 2))
    return Balance(t, frames, com, zmp_model, zmp_measured, margin, zmp_margin, stable, polygons)


def _energy(messages, when) -> Energy:
    rows = [(when(log, m.header), m.total_current, m.power, m.energy, m.mechanical_power) for log, m in messages]
    t, current, power, energy, mechanical = (np.array(column, dtype=float) for column in zip(*rows, strict=True)) \
        if rows else (np.zeros(0),) * 5
    return Energy(t, current, power, energy, mechanical)


def _collisions(messages, when) -> Collisions:
    t, colliding, closest, pairs, colliding_pairs = [], [], [], [], set()
    for log, msg in messages:
        t.append(when(log, msg.header))
        colliding.append(bool(msg.in_collision))
        closest.append(float(msg.closest_pair.distance))
        pairs.append(f"{msg.closest_pair.link_a} / {msg.closest_pair.link_b}")
        colliding_pairs.update(f"{p.link_a} / {p.link_b}" for p in msg.colliding_pairs)
    return Collisions(np.array(t), np.array(colliding, dtype=bool), np.array(closest), pairs, colliding_pairs)


#: Diagnostic counters shown as faults when they ever become non-zero.
FAULT_KEYS = ("timeouts", "corrupt_packets", "retries", "port_losses", "deadline_misses", "dropped_writes",
              "commands_rejected", "driver_errors")


def _diagnostics(messages, when, experiment: Experiment) -> None:
    """Rates (``*_hz`` values, and the rate at which ``cycles`` counters advance), latencies
    (``*_ms*`` values), bus bytes per cycle and fault counters of every diagnostic status, over time."""
    rates: dict[str, list[tuple[float, float]]] = {}
    latencies: dict[str, list[tuple[float, float]]] = {}
    cycles: dict[str, list[tuple[float, float]]] = {}
    bus: dict[str, list[tuple[float, float]]] = {}
    faults: dict[str, list[tuple[float, float]]] = {}
    for log, msg in messages:
        t = when(log, msg.header)
        for status in msg.status:
            for item in status.values:
                try:
                    value = float(item.value)
                except ValueError:
                    continue
                label = f"{status.name}: {item.key}"
                if item.key.endswith("_hz"):
                    rates.setdefault(label, []).append((t, value))
                elif "_ms" in item.key:
                    latencies.setdefault(label, []).append((t, value))
                elif item.key == "cycles":
                    cycles.setdefault(status.name, []).append((t, value))
                elif item.key.startswith("bytes"):
                    bus.setdefault(label, []).append((t, value))
                elif item.key in FAULT_KEYS:
                    faults.setdefault(label, []).append((t, value))
    for name, samples in cycles.items():
        signal = Signal.of(samples)
        dt = np.diff(signal.t)
        ok = dt > 0
        if np.any(ok):
            rates[f"{name}: cycles per robot second"] = list(zip(signal.t[1:][ok], (np.diff(signal.v)[ok] / dt[ok]),
                                                          strict=True))
    experiment.rates = {k: Signal.of(v) for k, v in sorted(rates.items())}
    experiment.latencies = {k: Signal.of(v) for k, v in sorted(latencies.items())}
    experiment.bus_bytes = {k: Signal.of(v) for k, v in sorted(bus.items())}
    experiment.fault_counts = {k: Signal.of(v) for k, v in sorted(faults.items())
                               if any(value for _t, value in v)}
