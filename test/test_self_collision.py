"""Self-collision, end to end, on the simulated Bioloid and on the Bioloid's emulated bus
(the same robot interface, the same veto): the checker node follows the robot and answers
questions; an arm swung into the head through ``follow_joint_trajectory`` is refused and
the robot does not move; streaming commands toward the head stop the arm short of contact
and the arm follows again once commands are safe.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from sensor_msgs.msg import JointState

from humanoid_bringup.graphs import real_nodes, sim_nodes
from humanoid_control.node_graph import Graph
from humanoid_control.robot_client import RobotClient, make_trajectory, poll_until
from humanoid_control.ros_time import seconds
from humanoid_description.collision import CollisionModel
from humanoid_description.model import load_model
from humanoid_hw.emulator.process import emulator_process
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_interfaces.msg import SelfCollisionState

pytestmark = pytest.mark.system

ROBOT = "bioloid"
PATIENCE = 60.0
ARM = ("r_shoulder_roll", "r_elbow")
#: The right arm raised straight up (clear of everything), and with the elbow bent in: the
#: forearm over the head (a true collision of test_collision_geometry.py).
RAISED = (math.radians(-91.0), 0.0)
INTO_HEAD = (math.radians(-91.0), math.radians(-90.0))
#: The emulator's bus needs a generous packet timeout on a loaded machine (as test_same_controller).
BUS_LATENCY_TIMER_MS = 50
#: A joint that must not move stays within this of where it was (AX-12: 0.29 deg per step).
STILL = 0.01


@dataclasses.dataclass
class Robot:
    backend: str
    client: RobotClient
    states: list[SelfCollisionState]


def start(backend: str, stack, log_dir):
    if backend == "sim":
        # in real time, as a user runs it: a simulation at full speed outruns any subscriber
        nodes = sim_nodes(ROBOT, real_time_factor=1.0, balance_monitor=False, walk_controller=False)
    else:
        port = stack.enter_context(emulator_process(ROBOT))
        graph = real_nodes(ROBOT, port=port, balance_monitor=False, walk_controller=False)
        nodes = [dataclasses.replace(spec, parameters=spec.parameters | {"latency_timer_ms": BUS_LATENCY_TIMER_MS})
                 if spec.name == "humanoid_hw" else spec for spec in graph]
    return stack.enter_context(Graph(nodes, log_dir=log_dir))


@pytest.fixture(scope="module", params=["sim", "hw"])
def robot(request, tmp_path_factory):
    with contextlib.ExitStack() as stack:
        graph = start(request.param, stack, tmp_path_factory.mktemp(f"{request.param}_logs"))
        client = stack.enter_context(RobotClient(f"self_collision_{request.param}"))
        states: list[SelfCollisionState] = []
        lock = threading.Lock()

        def on_state(msg):
            with lock:
                states.append(msg)

        client.node.create_subscription(SelfCollisionState, "self_collision_state", on_state, 50)
        try:
            client.wait_for_joint_states(PATIENCE)
            poll_until(lambda: states, "self_collision_state from the checker node", PATIENCE)
            yield Robot(request.param, client, states)
        except BaseException:
            for spec in graph.nodes:
                print(f"----- log of {spec.name} -----\n{graph.log_text(spec.name)[-4000:]}")
            raise


def arm_positions(robot: Robot) -> np.ndarray:
    positions = robot.client.current_positions(PATIENCE)
    return np.array([positions[j] for j in ARM])


def raise_arm(robot: Robot) -> None:
    """Raise the right arm (a clear path), so that the elbow can then go toward the head."""
    outcome = robot.client.follow(make_trajectory(ARM, [3.0], [RAISED]), timeout=PATIENCE)
    assert outcome.succeeded, outcome.error_string
    poll_until(lambda: np.all(np.abs(arm_positions(robot) - RAISED) < STILL), "the arm at rest, raised", PATIENCE)


def clearance(positions: dict[str, float]) -> float:
    """Exact distance of the closest checked pair at measured positions."""
    model = load_model(ROBOT)
    return CollisionModel(model).distances(model.joints.to_array(positions))[0].distance


def test_the_checker_follows_joint_states_and_reports_the_robot_clear(robot):
    client = robot.client
    client.start_recording()
    start = client.now()
    client.wait_until(start + 2.0, PATIENCE)
    joint_states = client.stop_recording()
    stamps = {seconds(m.header.stamp) for m in joint_states}
    checked = {seconds(s.header.stamp) for s in list(robot.states)}
    assert len(joint_states) >= 10  # the emulated bus on a busy machine runs well below 100 Hz
    # one state per joint_states message, with its stamp: most readings have their state (on a
    # machine as busy as the shared test machines every subscriber drops some); a node
    # publishing on a timer of its own, or for every few readings only, would not reach half
    assert len(stamps & checked) >= 0.5 * len(stamps)
    latest = robot.states[-1]
    model = load_model(ROBOT)
    assert not latest.in_collision and latest.closest_pair.distance > model.config.safety_distance
    assert latest.checked_pairs == len(CollisionModel(model).link_pairs) and latest.unchecked_pairs == 0
    assert latest.safety_distance == pytest.approx(model.config.safety_distance)


def test_an_arm_swung_into_the_head_is_refused_and_the_robot_does_not_move(robot):
    client = robot.client
    raise_arm(robot)
    into_head = make_trajectory(ARM, [2.0], [INTO_HEAD])
    # the checker node finds the collision on the same path...
    answer = client.check_trajectory_self_collision(into_head)
    assert answer.valid and answer.in_collision, answer.message
    assert {answer.pair.link_a, answer.pair.link_b} == {"base_link", "r_forearm"}
    assert 0.0 < answer.time_from_start < 2.0
    # ... and the robot refuses it before any motion
    before = client.current_positions(PATIENCE)
    client.start_recording()
    outcome = client.follow(into_head, timeout=PATIENCE)
    assert outcome.status == GoalStatus.STATUS_ABORTED
    assert outcome.error_code == FollowJointTrajectory.Result.SELF_COLLISION
    message = outcome.error_string
    assert "r_forearm" in message and "base_link" in message and "t = " in message and "r_elbow = " in message
    # a second of robot time and at least 10 readings (the emulated bus is slow on a busy machine)
    client.wait_until(client.now() + 1.0, PATIENCE)
    for _ in range(10):
        client.wait_for_joint_states(PATIENCE)
    recorded = client.stop_recording()
    moved = {name: max(abs(dict(zip(m.name, m.position, strict=True))[name] - before[name]) for m in recorded)
             for name in before}
    assert max(moved.values()) <= STILL, {name: round(v, 4) for name, v in moved.items() if v > STILL}


def test_streaming_toward_the_head_stops_short_of_contact_and_follows_again(robot):
    client = robot.client
    raise_arm(robot)
    safety = load_model(ROBOT).config.safety_distance
    # the elbow bent in one degree per 20 ms of robot time, to 90 degrees: into the head
    for degrees in range(0, 91):
        client.commands.publish(make_command({"r_shoulder_roll": RAISED[0], "r_elbow": -math.radians(degrees)}))
        client.wait_until(client.now() + 0.02, PATIENCE)
    # the arm comes to rest short of the head
    client.wait_until(client.now() + 1.0, PATIENCE)
    rest = client.current_positions(PATIENCE)
    client.wait_until(client.now() + 0.5, PATIENCE)
    assert abs(client.current_positions(PATIENCE)["r_elbow"] - rest["r_elbow"]) <= STILL
    assert rest["r_elbow"] > math.radians(-85.0)  # stopped well before the commanded end
    assert clearance(rest) > 0.0  # short of contact
    interface = poll_until(lambda: veto_status(client), "the veto's diagnostics", PATIENCE)
    assert "holding" in interface.message and "r_forearm" in interface.message
    state = robot.states[-1]
    assert state.closest_pair.distance > 0.0
    assert state.closest_pair.distance >= safety - 0.002  # measured, so within the servos' resolution
    # a safe command is followed again
    client.commands.publish(make_command({"r_shoulder_roll": RAISED[0], "r_elbow": math.radians(-20.0)}))
    poll_until(lambda: abs(client.positions()["r_elbow"] - math.radians(-20.0)) < 0.02, "the elbow at -20 deg",
               PATIENCE)


def make_command(positions: dict[str, float]) -> JointState:
    return JointState(name=list(positions), position=list(positions.values()))


def veto_status(client: RobotClient):
    """The veto's entry in the robot interface's diagnostics, once it says it holds."""
    diagnostics = client.diagnostics
    if diagnostics is None:
        return None
    for status in diagnostics.status:
        if status.name == "self-collision veto" and "holding" in status.message:
            return status
    return None
