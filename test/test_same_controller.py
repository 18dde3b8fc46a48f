"""THE SAME CONTROLLER, UNCHANGED: one client, the simulated Bioloid and the Bioloid on its emulated bus.

A controller written once against the shared robot interface (RobotClient: the
standard topics and the follow_joint_trajectory action, nothing else) is run against
(a) the simulation node and (b) the hardware node driving the emulated Dynamixel bus
in its own process, as a real bus sits outside the driver. Both must look the same
to it: the same joints in the same order, the same topics, types and actions, the
same answers to bad goals, the same trajectory followed, and the same ``play_motion``
call playing a library motion.

The two graphs share the test's ROS domain, so they run one after the other; each is
started once and everything the comparisons need is collected while it runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml
from action_msgs.msg import GoalStatus
from rclpy.action import get_action_server_names_and_types_by_node
from rclpy.node import NodeNameNonExistentError
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from system_support import on_emulated_bus, running
from trajectory_msgs.msg import JointTrajectory

from humanoid_bringup import real_nodes
from humanoid_control.ros import GoalOutcome, RobotClient, make_trajectory, poll_until, seconds
from humanoid_core.processes import NodeSpec
from humanoid_description import MOTION_LIBRARY, load_model
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.action import FollowJointTrajectory, PlayMotion
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 60.0
#: The robot interface every driver node serves (DESIGN: "The shared robot interface").
INTERFACE_PUBLISHED = {"/joint_states": "sensor_msgs/msg/JointState",
                       "/robot_description": "std_msgs/msg/String",
                       "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"}
INTERFACE_SUBSCRIBED = {"/joint_commands": "sensor_msgs/msg/JointState",
                        "/joint_trajectory": "trajectory_msgs/msg/JointTrajectory",
                        # a lockstep controller answers on it, and runs unchanged on the hardware
                        "/lockstep/ready": "humanoid_interfaces/msg/LockstepReady"}
INTERFACE_ACTIONS = {
    "/follow_joint_trajectory": "humanoid_interfaces/action/FollowJointTrajectory",
    "/joint_trajectory_controller/follow_joint_trajectory": "control_msgs/action/FollowJointTrajectory"}

#: The controller's motion: arm joints (light loads in simulation, where gravity acts),
#: offsets from where they are (rad) at each point's time from start (s): out, back past
#: the start, home. Positions only, so the interface interpolates linearly.
ARM_JOINTS = ("r_elbow", "l_elbow", "r_shoulder_roll", "l_shoulder_pitch")
ARM_OFFSETS = ((0.6, -0.6, -0.4, 0.3), (-0.3, 0.3, 0.0, -0.3), (0.0, 0.0, 0.0, 0.0))
ARM_TIMES = (1.0, 2.0, 3.0)
#: Each joint's fastest segment (rad/s): 0.9, 0.9, 0.4, 0.6.
PEAK_SPEEDS = np.max(np.abs(np.diff(np.vstack([np.zeros(len(ARM_JOINTS)), ARM_OFFSETS]), axis=0))
                     / np.diff([0.0, *ARM_TIMES])[:, None], axis=0)
#: How closely the joints must follow: a joint may trail its commanded position by its
#: peak speed times (DEAD_TIME + twice the longest pause between two joint_states during
#: the run), plus the AX-12's resolution (0.29 deg). Why: the hardware node reads, then
#: writes each set-point with the segment's speed as the servo's moving speed. An AX-12
#: reaches a goal only by the next read, and when the loop pauses it stops at its last goal,
#: then moves on at the set-point's speed: it stays as far behind as the longest pause until
#: the segment ends; and the emulator, a process sharing the cores, takes a goal only when it
#: next runs, which on a busy machine is about as late again. Against the emulator the lag
#: measured 10-25 ms more than the longest pause on an idle machine (25-50 ms in all), 76 ms
#: more (250 ms in all, the longest pause 174 ms) in a clean-clone suite beside a fit
#: (load 10). The pause is measured, not guessed, so a busy machine that delays cycles does
#: not fail the test, while a joint that does not move (0.4-0.9 rad off) or moves late does
#: (on an idle machine a joint may trail by 70-90 ms of its speed). The simulated servos stay
#: within 0.01 rad.
DEAD_TIME = 0.05
AX12_RESOLUTION = math.radians(300.0 / 1023)
#: Final pose: within the interface's goal tolerance, reached within its goal time tolerance
#: (goal_position_tolerance and goal_time_tolerance of the Bioloid's sim.yaml and hw.yaml alike).
GOAL_TOLERANCE = 0.05
GOAL_TIME_TOLERANCE = 1.0
MOTION = "wave"

# -- the controller: written once, knows only the robot interface --------------------------
@dataclass
class Tracking:
    """A trajectory as commanded (with its start on the robot clock) and as measured."""

    outcome: GoalOutcome
    start: float
    times: np.ndarray  # point times from the start, the start position first (t = 0)
    positions: np.ndarray  # (points, joints)
    samples: list[tuple[float, np.ndarray]]  # (stamp, measured positions of ARM_JOINTS)

    def commanded(self, stamp: float) -> np.ndarray:
        """The linearly interpolated set-point (positions-only trajectory) at ``stamp``."""
        t = stamp - self.start
        return np.array([np.interp(t, self.times, self.positions[:, k]) for k in range(self.positions.shape[1])])

    @property
    def end(self) -> float:
        return self.start + float(self.times[-1])

    def errors(self) -> np.ndarray:
        """|measured - commanded| of every sample taken while the trajectory ran."""
        return np.array([np.abs(p - self.commanded(t)) for t, p in self.samples if self.start <= t <= self.end])

    def longest_pause(self) -> float:
        """The longest time between two joint_states while the trajectory ran (from the last one before it)."""
        stamps = [t for t, _ in self.samples if t <= self.end]
        first = max(0, sum(t < self.start for t in stamps) - 1)
        return float(np.max(np.diff(stamps[first:])))

    def tolerance(self) -> np.ndarray:
        """Per joint, as DEAD_TIME's comment explains."""
        return PEAK_SPEEDS * (DEAD_TIME + 2.0 * self.longest_pause()) + AX12_RESOLUTION


def move_arms(client: RobotClient) -> Tracking:
    """The controller: swing four arm joints out, back past the start, and home again."""
    measured = client.positions()
    here = np.array([measured[j] for j in ARM_JOINTS])
    points = here + np.array(ARM_OFFSETS)
    client.wait_for_server(PATIENCE)
    client.start_recording()
    try:
        outcome = client.follow(make_trajectory(ARM_JOINTS, ARM_TIMES, points), timeout=PATIENCE)
        # The goal starts when it arrives; its feedback says when.
        start = outcome.start_time
        end = (start if start is not None else -math.inf) + ARM_TIMES[-1]
        # The result can overtake the joint_states that show the goal reached: record on until
        # they do, or for as long as the goal time tolerance allows.
        while True:
            stamp, arm = arm_positions(client.wait_for_joint_states(PATIENCE))
            if stamp >= end and (np.all(np.abs(arm - points[-1]) <= GOAL_TOLERANCE)
                                 or stamp >= end + GOAL_TIME_TOLERANCE):
                break
    finally:
        recorded = client.stop_recording()
    samples = [arm_positions(m) for m in recorded]
    return Tracking(outcome, start if start is not None else math.nan, np.array([0.0, *ARM_TIMES]),
                    np.vstack([here, points]), samples)


def arm_positions(msg: JointState) -> tuple[float, np.ndarray]:
    """Stamp and positions of ARM_JOINTS of one joint_states message."""
    positions = dict(zip(msg.name, msg.position, strict=True))
    return seconds(msg.header.stamp), np.array([positions[j] for j in ARM_JOINTS])


def invalid_goals(client: RobotClient) -> dict[str, JointTrajectory]:
    """One goal per documented rejection, each otherwise a gentle, valid motion of r_elbow."""
    here = client.positions()["r_elbow"]
    beyond = float(load_model(ROBOT).joints["r_elbow"].limits.upper) + 0.3
    return {
        "unknown joint": make_trajectory(["r_elbow", "no_such_joint"], [1.0], [[here, 0.0]]),
        "NaN": make_trajectory(["r_elbow"], [1.0, 2.0], [[here], [math.nan]]),
        "length mismatch": make_trajectory(["r_elbow", "l_elbow"], [1.0], [[here]]),
        "non-increasing times": make_trajectory(["r_elbow"], [1.0, 1.0], [[here], [here]]),
        "out of limits": make_trajectory(["r_elbow"], [2.0], [[beyond]]),
    }


def send_invalid_goals(client: RobotClient) -> dict[str, GoalOutcome]:
    """What the robot answers to each invalid goal (all are accepted, then aborted with a code and a message)."""
    return {name: client.follow(goal, timeout=PATIENCE) for name, goal in invalid_goals(client).items()}


# -- what else the comparisons need ------------------------------------------------------
@dataclass
class Interface:
    """What one driver node offers: topic -> type(s), action -> type(s)."""

    published: dict[str, tuple[str, ...]]
    subscribed: dict[str, tuple[str, ...]]
    actions: dict[str, tuple[str, ...]]
    description: str


@dataclass
class Report:
    """Everything observed of one back end."""

    joint_names: list[str]
    interface: Interface
    tracking: Tracking
    rejections: dict[str, GoalOutcome]
    motion: PlayMotion.Result
    final_positions: dict[str, float]


def _by_name(pairs: Sequence[tuple[str, Sequence[str]]]) -> dict[str, tuple[str, ...]]:
    return {name: tuple(sorted(types)) for name, types in pairs if "/_action/" not in name}


def node_interface(client: RobotClient, node_name: str) -> Interface:
    """The topics and actions of a driver node (its front and its control loop's node,
    ``<name>_loop``), once discovery shows the whole interface."""
    node = client.node
    names = (node_name, f"{node_name}_loop")

    def union(query) -> dict[str, tuple[str, ...]]:
        return {topic: types for name in names for topic, types in _by_name(query(name)).items()}

    def snapshot() -> Interface | None:
        try:
            interface = Interface(union(lambda name: node.get_publisher_names_and_types_by_node(name, "/")),
                                  union(lambda name: node.get_subscriber_names_and_types_by_node(name, "/")),
                                  union(lambda name: get_action_server_names_and_types_by_node(node, name, "/")),
                                  "")
        except NodeNameNonExistentError:  # its topics can arrive before the node itself is discovered
            return None
        complete = (INTERFACE_PUBLISHED.keys() <= interface.published.keys()
                    and INTERFACE_SUBSCRIBED.keys() <= interface.subscribed.keys()
                    and INTERFACE_ACTIONS.keys() <= interface.actions.keys())
        return interface if complete else None

    interface = poll_until(snapshot, f"the robot interface of node {node_name}", PATIENCE)
    interface.description = robot_description(client)
    return interface


def robot_description(client: RobotClient) -> str:
    """The latched robot_description (a late subscriber gets it: transient local)."""
    received: list[str] = []
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    # Left to the node's end: destroying entities under the client's spinning executor races it.
    client.node.create_subscription(String, "robot_description", lambda m: received.append(m.data), qos)
    return poll_until(lambda: received[0] if received else "", "robot_description", PATIENCE)


def play_motion(client: RobotClient, motion: str) -> PlayMotion.Result:
    """The play_motion call a user makes (trajectory generator node), by motion name."""
    return client.play_motion(motion, timeout=120.0).result


def exercise(client: RobotClient, node_name: str) -> Report:
    """Everything the comparisons need, gathered the same way from either back end."""
    names = list(client.wait_for_joint_states(PATIENCE).name)
    interface = node_interface(client, node_name)
    tracking = move_arms(client)
    rejections = send_invalid_goals(client)
    motion = play_motion(client, MOTION)
    return Report(names, interface, tracking, rejections, motion, client.current_positions(PATIENCE))





def run_simulation(log_dir: Path) -> Report:
    # The default graph in lockstep with its control container: as fast as the machine allows
    # (every wait of the controller is on the robot's clock), no observer falling behind.
    nodes = sim_nodes(ROBOT, lockstep=True)
    with running(nodes, log_dir, "same_controller") as client:
        return exercise(client, "humanoid_sim")


def hardware_nodes(port: str) -> list[NodeSpec]:
    """The default real-robot graph on ``port``, with the bus timeout the emulator needs."""
    return on_emulated_bus(real_nodes(ROBOT, port=port))


def run_hardware(log_dir: Path) -> Report:
    with emulator_process(ROBOT) as port, running(hardware_nodes(port), log_dir, "same_controller") as client:
        return exercise(client, "humanoid_hw")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    """The simulation, then the hardware node on the emulated bus (never both at once)."""
    return {"sim": run_simulation(tmp_path_factory.mktemp("sim_logs")),
            "hw": run_hardware(tmp_path_factory.mktemp("hw_logs"))}


def final_keyframe(motion: str) -> dict[str, float]:
    """The last keyframe of a library motion file, in rad (read here, not through the motion loader)."""
    path = MOTION_LIBRARY.path(ROBOT) / f"{motion}.yaml"
    data = yaml.safe_load(path.read_text())
    assert data["units"] == "deg"
    return {name: math.radians(value) for name, value in zip(data["joints"], data["keyframes"][-1]["positions"],
                                                              strict=True)}


# -- the comparisons ---------------------------------------------------------------------
def test_the_same_joints_in_the_same_order(reports: dict[str, Report]) -> None:
    """A controller indexes joint_states by position too: the order must be the URDF's on both."""
    sim, hw = reports["sim"], reports["hw"]
    assert hw.joint_names == sim.joint_names
    assert hw.joint_names == list(load_model(ROBOT).joints.names)


def test_every_interface_topic_and_action_of_the_hardware_node_is_the_same_on_the_simulation(
        reports: dict[str, Report]) -> None:
    """Whatever the hardware node offers, the simulation offers under the same name and type (it adds
    simulator topics such as clock); both publish the same robot description."""
    sim, hw = reports["sim"].interface, reports["hw"].interface
    for topic, kind in INTERFACE_PUBLISHED.items():
        assert hw.published[topic] == (kind,)
    for topic, kind in INTERFACE_SUBSCRIBED.items():
        assert hw.subscribed[topic] == (kind,)
    assert {topic: types for topic, types in hw.published.items() if sim.published.get(topic) != types} == {}
    assert {topic: types for topic, types in hw.subscribed.items() if sim.subscribed.get(topic) != types} == {}
    assert hw.actions == sim.actions == {name: (kind,) for name, kind in INTERFACE_ACTIONS.items()}
    assert hw.description == sim.description and "<robot" in hw.description


def test_the_same_invalid_goals_get_the_same_codes_and_messages(reports: dict[str, Report]) -> None:
    """Validation lives in the shared front: a bad goal fails identically, before it can reach either driver."""
    sim, hw = reports["sim"].rejections, reports["hw"].rejections
    expected = {"unknown joint": FollowJointTrajectory.Result.INVALID_JOINTS,
                "NaN": FollowJointTrajectory.Result.INVALID_GOAL,
                "length mismatch": FollowJointTrajectory.Result.INVALID_GOAL,
                "non-increasing times": FollowJointTrajectory.Result.INVALID_GOAL,
                "out of limits": FollowJointTrajectory.Result.INVALID_GOAL}
    assert {name: outcome.error_code for name, outcome in sim.items()} == expected
    for name, outcome in sim.items():
        assert outcome.status == GoalStatus.STATUS_ABORTED, name
        assert outcome.error_string, name
        assert (hw[name].status, hw[name].error_code, hw[name].error_string) == (
            outcome.status, outcome.error_code, outcome.error_string), name
    assert "no_such_joint" in sim["unknown joint"].error_string
    assert "r_elbow" in sim["NaN"].error_string and "r_elbow" in sim["out of limits"].error_string


@pytest.mark.parametrize("backend", ["sim", "hw"])
def test_the_controller_trajectory_is_followed(reports: dict[str, Report], backend: str) -> None:
    """The measured joints follow the commanded trajectory on both back ends (DEAD_TIME says how closely)."""
    tracking = reports[backend].tracking
    assert tracking.outcome.succeeded, tracking.outcome.error_string
    errors = tracking.errors()
    # 100 Hz for 3 s; a starved client may drop some, but a handful would make the check hollow.
    assert len(errors) >= 30, f"only {len(errors)} joint_states while the trajectory ran"
    worst, tolerance = errors.max(axis=0), tracking.tolerance()
    assert np.all(worst <= tolerance), {joint: (round(float(w), 4), round(float(t), 4)) for joint, w, t in zip(
        ARM_JOINTS, worst, tolerance, strict=True)}
    last_stamp, last = tracking.samples[-1]
    assert last_stamp >= tracking.end
    assert np.allclose(last, tracking.positions[-1], atol=GOAL_TOLERANCE)


@pytest.mark.parametrize("backend", ["sim", "hw"])
def test_the_same_play_motion_call_plays_the_motion(reports: dict[str, Report], backend: str) -> None:
    """The trajectory generator drives either robot through the shared interface: the motion ends in its last pose."""
    report = reports[backend]
    assert report.motion.error_code == PlayMotion.Result.SUCCESSFUL, report.motion.error_string
    assert report.motion.duration > 0.0
    target = final_keyframe(MOTION)
    off = {name: round(report.final_positions[name] - value, 4) for name, value in target.items()
           if abs(report.final_positions[name] - value) > GOAL_TOLERANCE}
    assert off == {}
