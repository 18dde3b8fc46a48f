"""The postures protocol of a robot: its tests and parameters, read from
``humanoid_description/robots/<robot>/postures.yaml`` (documented there).

Every value is checked when the file is read (unknown keys, joints, poses and
directions, non-positive times) and reported with the file and line, so that a typo
never surfaces halfway through a long run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from humanoid_core.motion import YamlNode, compose_file, require_keys
from humanoid_description import POSTURES_PROTOCOL, PositionScale, RobotModel

#: Where a test's feet may tip: the sign of the foot's tilt about y (pitch) or x (roll).
FALL_DIRECTIONS = ("forward", "backward", "left", "right")


@dataclass(frozen=True)
class ProtocolParameters:
    """How the tests are run (the ``parameters`` section; defaults documented in the YAML)."""

    step: float = math.radians(0.5)  # rad moved per step
    coarse_step: float = math.radians(2.0)  # rad, simulation: first search in these steps
    step_time: float = 0.25  # s, duration of each step's rest-to-rest move
    settle_time: float = 0.5  # s held after each step, watching the feet
    start_settle_time: float = 1.0  # s held in the start pose before the first step
    contact_threshold: float = 2.0  # N, a foot carrying less ...
    lift_time: float = 0.05  # s, ... for this long has left the ground
    tip_angle: float = math.radians(15.0)  # rad, every sole (ball feet: the body) leaning this much more = tipping
    return_speed: float = math.radians(10.0)  # rad/s, --real: back to the start pose


#: YAML key -> (field, scale from the file's unit to the field's)
_PARAMETER_KEYS = {"step": ("step", math.pi / 180.0), "coarse_step": ("coarse_step", math.pi / 180.0),
                   "step_time": ("step_time", 1.0),
                   "settle_time": ("settle_time", 1.0), "start_settle_time": ("start_settle_time", 1.0),
                   "contact_threshold": ("contact_threshold", 1.0), "lift_time": ("lift_time", 1.0),
                   "tip_angle": ("tip_angle", math.pi / 180.0), "return_speed": ("return_speed", math.pi / 180.0)}


@dataclass(frozen=True)
class PostureTest:
    """One test: move ``joints`` together in ``direction`` from the ``start`` pose."""

    number: int
    name: str
    joints: tuple[str, ...]
    direction: int  # +1 or -1, in the URDF's joint axes
    start: str  # a named pose of the robot
    falls: str  # where the robot must tip (one of FALL_DIRECTIONS; "unknown" for a reference candidate)
    real_limit: float | None  # rad, the real robot's limit when known
    start_positions: tuple[float, ...] | None = None  # rad, every joint: a start that is no named pose
    max_travel: float | None = None  # rad, the farthest the joints go from the start (None: to their limit)

    def __str__(self) -> str:
        return f"test {self.number} ({self.name})"


@dataclass(frozen=True)
class ReferenceExperiment:
    """One experiment of the reference's static validation, when it kept register values: a
    starting posture, one servo stepped until the robot fell, the servo's value there on the
    real robot and on the reference's simulation of it (the ``reference: experiments`` section)."""

    number: int
    start_raw: dict[str, int]  # the reference's servo name -> register value; every other servo at neutral
    stepped: str | None  # the reference's name of the servo stepped; None: not known
    real: int  # register value where the real robot fell
    simulated: int | None  # where the reference's simulation fell; None: see simulated_missing
    simulated_missing: str  # why there is no simulated value
    start: dict[str, float]  # rad, the starting posture in our joints (through the joint map)
    beyond_limits: tuple[str, ...]  # our joints the starting posture puts beyond the model's limits, described
    start_pose: str | None  # our named pose with the same register values (where our tests can start)
    candidates: tuple[str, ...] = ()  # the servos the reference hints were stepped (empty: no hint)
    hint: str = ""  # what the hint rests on


@dataclass(frozen=True)
class EquilibriumReference:
    """The reference's static validation in register values (the ``reference`` section)."""

    experiments: tuple[ReferenceExperiment, ...]
    accepted_deg: float  # the reference's tolerance between real and simulated
    scale: PositionScale  # the servos' position register
    neutral_raw: int  # the register value of a servo not listed in a starting posture
    servos: dict[str, str]  # the reference's servo names -> our joints
    note: str = ""  # what else the reference lost
    max_travel_deg: float | None = None  # a candidate servo is stepped this far from the start at most
    step_deg: float | None = None  # a candidate servo's step (None: the protocol's coarse then fine steps)

    def difference_deg(self, experiment: ReferenceExperiment) -> float | None:
        """|real - simulated| of one experiment, in degrees (None without a simulated value)."""
        if experiment.simulated is None:
            return None
        return abs(self.scale.raw_to_degrees(experiment.real) - self.scale.raw_to_degrees(experiment.simulated))

    def accepted(self, experiment: ReferenceExperiment) -> bool | None:
        """Whether the reference's simulation agreed within its tolerance (None: no simulated value)."""
        difference = self.difference_deg(experiment)
        return None if difference is None else difference < self.accepted_deg


@dataclass(frozen=True)
class Protocol:
    robot: str
    parameters: ProtocolParameters
    tests: tuple[PostureTest, ...]
    source: str
    #: ROS parameters of the simulation node when the command starts one (name -> value)
    simulation: dict[str, object] = field(default_factory=dict)
    reference: EquilibriumReference | None = None

    def select(self, numbers: list[int] | None) -> list[PostureTest]:
        """The tests with these numbers, in the order given (all of them for None)."""
        if numbers is None:
            return list(self.tests)
        by_number = {test.number: test for test in self.tests}
        unknown = [n for n in numbers if n not in by_number]
        if unknown:
            raise ValueError(f"no test {', '.join(map(str, unknown))} in {self.source} "
                             f"(tests: {', '.join(str(t.number) for t in self.tests)})")
        return [by_number[n] for n in numbers]


def protocol_path(robot: str) -> Path:
    return POSTURES_PROTOCOL.path(robot)


def load_protocol(model: RobotModel, path: Path | None = None) -> Protocol:
    """Read and check a protocol file (default: the robot's own); MotionError (a ValueError)
    names the file, the line and the problem."""
    path = protocol_path(model.name) if path is None else path
    root = compose_file(path)
    top = root.mapping("the protocol")
    require_keys(top, root, "the protocol", {"robot", "parameters", "tests"}, {"simulation", "reference"})
    robot = top["robot"].text("robot")
    if robot != model.name:
        raise top["robot"].error(f"this protocol is for {robot!r}, not {model.name!r}")
    parameters = _parameters(top["parameters"])
    tests = tuple(_test(key, node, model) for key, node in top["tests"].mapping("tests").items())
    if not tests:
        raise top["tests"].error("tests: no test defined")
    simulation = {}
    if "simulation" in top:
        for key, value in top["simulation"].mapping("simulation").items():
            simulation[key] = value.number(f"simulation: {key}")
    reference = _reference(top["reference"], model) if "reference" in top else None
    return Protocol(robot, parameters, tests, str(path), simulation, reference)


def _reference(node: YamlNode, model: RobotModel) -> EquilibriumReference:
    """The ``reference`` section: register values, so the robot's servos must share one register."""
    entries = node.mapping("reference")
    require_keys(entries, node, "reference", {"accepted_deg", "neutral_raw", "servos", "experiments"},
                 {"note", "max_travel_deg", "step_deg"})
    joint_map = model.config.joint_map
    scales = {servo.scale for servo in joint_map.values()} if joint_map is not None else set()
    if joint_map is None or len(scales) != 1:
        raise node.error(f"reference: register values need a robot whose servos share one position register "
                         f"({model.name} has {'no joint map' if joint_map is None else 'several'})")
    (scale,) = scales
    accepted = entries["accepted_deg"].number("reference: accepted_deg")
    if accepted <= 0.0:
        raise entries["accepted_deg"].error(f"reference: accepted_deg must be > 0, got {accepted:g}")
    neutral = _register(entries["neutral_raw"], "reference: neutral_raw", scale)
    servos = {}
    for name, joint in entries["servos"].mapping("reference: servos").items():
        servos[name] = joint.text(f"reference: servos: {name}")
        if servos[name] not in joint_map:
            raise joint.error(f"reference: servos: {name}: {servos[name]!r} is not a joint of {model.name}'s joint map")
    experiments = tuple(_experiment(key, item, model, servos, neutral, scale)
                        for key, item in entries["experiments"].mapping("reference: experiments").items())
    if not experiments:
        raise entries["experiments"].error("reference: experiments: at least one")
    note = entries["note"].text("reference: note") if "note" in entries else ""
    travel, step = (_positive(entries, key) for key in ("max_travel_deg", "step_deg"))
    return EquilibriumReference(experiments, accepted, scale, neutral, servos, note, travel, step)


def _positive(entries: dict[str, YamlNode], key: str) -> float | None:
    """An optional number > 0 of the reference section."""
    if key not in entries:
        return None
    value = entries[key].number(f"reference: {key}")
    if value <= 0.0:
        raise entries[key].error(f"reference: {key} must be > 0, got {value:g}")
    return value


def _register(node: YamlNode, what: str, scale: PositionScale) -> int:
    value = node.integer(what)
    if not scale.raw_min <= value <= scale.raw_max:
        raise node.error(f"{what}: {value} outside the {scale.name} register [{scale.raw_min}, {scale.raw_max}]")
    return value


def _experiment(key: str, node: YamlNode, model: RobotModel, servos: dict[str, str], neutral: int,
                scale: PositionScale) -> ReferenceExperiment:
    try:
        number = int(key)
    except ValueError:
        raise node.error(f"reference: experiments: {key!r} is not an experiment number") from None
    what = f"reference: experiment {number}"
    entries = node.mapping(what)
    require_keys(entries, node, what, {"start_raw", "stepped", "real"},
                 {"simulated", "simulated_missing", "candidates", "hint"})
    start_raw = {}
    for name, value in entries["start_raw"].mapping(f"{what}: start_raw").items():
        if name not in servos:
            raise value.error(f"{what}: start_raw: unknown servo {name!r} (servos: {', '.join(servos)})")
        start_raw[name] = _register(value, f"{what}: start_raw: {name}", scale)
    stepped = entries["stepped"].text(f"{what}: stepped")
    if stepped != "unknown" and stepped not in servos:
        raise entries["stepped"].error(f"{what}: stepped must be a servo ({', '.join(servos)}) or unknown, "
                                       f"got {stepped!r}")
    real = _register(entries["real"], f"{what}: real", scale)
    if ("simulated" in entries) == ("simulated_missing" in entries):
        raise node.error(f"{what}: give either simulated (a register value) or simulated_missing (why there is none)")
    simulated = _register(entries["simulated"], f"{what}: simulated", scale) if "simulated" in entries else None
    missing = entries["simulated_missing"].text(f"{what}: simulated_missing") if "simulated_missing" in entries else ""
    joint_map = model.config.joint_map
    assert joint_map is not None
    raws = {joint: neutral for joint in joint_map}
    raws.update({servos[name]: value for name, value in start_raw.items()})
    start = {joint: joint_map[joint].raw_to_radians(raw) for joint, raw in raws.items()}
    beyond = tuple(_beyond(model, joint, angle) for joint, angle in start.items() if _beyond(model, joint, angle))
    pose = next((name for name, pose in model.config.poses.items()
                 if all(_raw_or_none(joint_map[j], pose[j]) == raws[j] for j in joint_map)), None)
    candidates: list[str] = []
    for item in entries["candidates"].sequence(f"{what}: candidates") if "candidates" in entries else []:
        name = item.text(f"{what}: candidates")
        if name not in servos or name in candidates:
            raise item.error(f"{what}: candidates: {name!r} is not a servo ({', '.join(servos)}) or is named twice")
        candidates.append(name)
    hint = entries["hint"].text(f"{what}: hint") if "hint" in entries else ""
    if bool(candidates) != bool(hint):
        raise node.error(f"{what}: candidates and the hint they rest on go together")
    return ReferenceExperiment(number, start_raw, None if stepped == "unknown" else stepped, real, simulated, missing,
                               start, beyond, pose, tuple(candidates), hint)


def _beyond(model: RobotModel, joint: str, angle: float) -> str:
    """How ``angle`` lies beyond ``joint``'s limits in the model ('' within them)."""
    limits = model.joints[joint].limits
    if limits.lower - 1e-9 <= angle <= limits.upper + 1e-9:
        return ""
    return (f"{joint} {math.degrees(angle):+.1f} deg (limits {math.degrees(limits.lower):+.1f} to "
            f"{math.degrees(limits.upper):+.1f})")


def _raw_or_none(servo, angle: float) -> int | None:
    try:
        return servo.radians_to_raw(angle)
    except ValueError:  # beyond the register
        return None


def _parameters(node: YamlNode) -> ProtocolParameters:
    entries = node.mapping("parameters")
    require_keys(entries, node, "parameters", set(), set(_PARAMETER_KEYS))
    values = {}
    for key, value in entries.items():
        number = value.number(f"parameters: {key}")
        if number <= 0.0:
            raise value.error(f"parameters: {key} must be > 0, got {number:g}")
        field, scale = _PARAMETER_KEYS[key]
        values[field] = number * scale
    return ProtocolParameters(**values)


def _test(key: str, node: YamlNode, model: RobotModel) -> PostureTest:
    try:
        number = int(key)
    except ValueError:
        raise node.error(f"tests: {key!r} is not a test number") from None
    what = f"test {number}"
    entries = node.mapping(what)
    require_keys(entries, node, what, {"name", "joints", "direction", "start", "falls"}, {"real"})
    joints = tuple(item.text(f"{what}: joints") for item in entries["joints"].sequence(f"{what}: joints"))
    for joint in joints:
        if joint not in model.joints:
            raise entries["joints"].error(f"{what}: unknown joint {joint!r} (joints: {', '.join(model.joints.names)})")
    if not joints:
        raise entries["joints"].error(f"{what}: joints: at least one joint")
    direction = entries["direction"].number(f"{what}: direction")
    if direction not in (1.0, -1.0):
        raise entries["direction"].error(f"{what}: direction must be 1 or -1, got {direction:g}")
    start = entries["start"].text(f"{what}: start")
    try:
        model.config.pose(start)
    except (KeyError, ValueError):
        raise entries["start"].error(f"{what}: start: the robot has no pose {start!r} "
                                     f"(poses: {', '.join(model.config.poses)})") from None
    falls = entries["falls"].text(f"{what}: falls")
    if falls not in FALL_DIRECTIONS:
        raise entries["falls"].error(f"{what}: falls must be one of {', '.join(FALL_DIRECTIONS)}, got {falls!r}")
    real = entries["real"].number(f"{what}: real") if "real" in entries else None
    return PostureTest(number, entries["name"].text(f"{what}: name"), joints, int(direction), start, falls, real)
