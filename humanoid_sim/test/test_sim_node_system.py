"""The simulation node as an external client sees it: a real node process, real DDS
(loopback only, private domain), real PyBullet physics.

Most tests share one HOAP-2 simulation running as fast as possible (time is robot
time: the simulated clock) and reset the robot first.
"""

import math
import time
from dataclasses import dataclass

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import WrenchStamped
from loop_processes import loop_process
from process_priority import priorities
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import Imu, JointState

from humanoid_control.ros import RobotClient, make_trajectory, poll_until, seconds
from humanoid_core.loop import Law, Spline
from humanoid_core.processes import Graph
from humanoid_description import load_model, units
from humanoid_sim.sim_node_spec import sim_node_spec

ERR = {"INVALID_GOAL": -1, "INVALID_JOINTS": -2, "PREEMPTED": -6, "CANCELED": -7}


@pytest.fixture(scope="module")
def hoap2_graph(tmp_path_factory):
    """One HOAP-2 simulation for the module (its own process), and a client. In real time:
    the tests act on goals while they run (cancel a quarter of the way, preempt, count
    feedback), which a simulation running as fast as it can may finish first on a busy
    machine (measured: a 4 s goal succeeded before its cancel arrived)."""
    graph = Graph([sim_node_spec("hoap2", {"real_time_factor": 1.0})],
                  log_dir=tmp_path_factory.mktemp("hoap2_logs")).start()
    client = RobotClient("sim_test_client")
    try:
        client.wait_for_joint_states(60.0)
        client.wait_for_server(60.0)
        yield graph, client
    finally:
        client.close()
        graph.stop()


@pytest.fixture(scope="module")
def hoap2(hoap2_graph):
    """The module's HOAP-2 client."""
    return hoap2_graph[1]


@pytest.fixture
def robot(hoap2):
    """The shared HOAP-2, reset to its home pose, standing, at rest."""
    hoap2.reset()
    hoap2.wait_for_state(at_rest, "the robot at rest after a reset", robot_seconds=5.0)
    return hoap2


#: Joint speed (rad/s) below which every joint counts as at rest.
REST_SPEED = 0.01


def at_rest(msg: JointState) -> bool:
    return bool(np.max(np.abs(msg.velocity)) < REST_SPEED)


def measured(client: RobotClient) -> np.ndarray:
    msg = client.wait_for_joint_states()
    return np.array(msg.position)


def largest_motion(client: RobotClient, reference: np.ndarray, seconds_: float) -> float:
    """How far (rad) any joint strayed from ``reference`` in any joint_states message of the
    next ``seconds_`` of robot time: proving that nothing moves takes watching for a while."""
    recorded = client.record(seconds_)
    assert recorded, "no joint_states while watching the robot"
    return float(np.max(np.abs(np.array([m.position for m in recorded]) - reference)))


def position_of(joint: str, target: float, tolerance: float):
    """A joint_states condition: ``joint`` within ``tolerance`` of ``target`` (rad)."""
    return lambda msg: abs(msg.position[list(msg.name).index(joint)] - target) <= tolerance


# -- joint_states ----------------------------------------------------------------------------
#: s: a joint_states message this close to /clock counts as the current state.
FRESH = 0.05
#: s of robot time watched: the clock's advance is compared over it (a long window), and the
#: rate and fields of joint_states are checked on every message of it.
WATCH = 5.0


@dataclass(frozen=True)
class Watch:
    """The robot standing for WATCH s: every joint_states message, and (clock, state stamp)
    pairs taken at its start and end."""

    messages: list[JointState]
    first: tuple[float, float]
    last: tuple[float, float]


@pytest.fixture(scope="module")
def watch(hoap2) -> Watch:
    """One watch of the reset robot serves the two tests that only watch it (the rate test
    watched 2 s of its own before, the clock test 5 s): the rate is measured over the 5 s
    now, the clock compared over the same 5 s as before; a watch and a reset are saved."""
    def fresh() -> tuple[float, float]:
        state = hoap2.wait_for_state(lambda m: seconds(m.header.stamp) >= hoap2.now() - FRESH,
                                     "a joint_states message as recent as /clock")
        return hoap2.now(), seconds(state.header.stamp)

    hoap2.reset()
    hoap2.wait_for_state(at_rest, "the robot at rest after a reset", robot_seconds=5.0)
    first = fresh()
    hoap2.start_recording()
    hoap2.wait_until(first[0] + WATCH)
    messages = hoap2.stop_recording()
    return Watch(messages, first, fresh())


def test_joint_states_carry_every_urdf_joint_at_the_configured_rate(watch):
    model = load_model("hoap2")
    messages = watch.messages
    assert messages, "no joint_states while watching the robot"
    for msg in messages:
        assert tuple(msg.name) == model.joints.names  # every URDF joint, canonical order
        assert len(msg.position) == len(msg.velocity) == len(msg.effort) == len(model.joints)
    stamps = np.array([seconds(m.header.stamp) for m in messages])
    assert np.all(np.diff(stamps) > 0)
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    assert rate == pytest.approx(100.0, rel=0.05)  # publish_rate of the HOAP-2's sim.yaml


def test_clock_is_the_simulated_time_of_the_joint_states(watch):
    """/clock and the joint_states stamps are one clock: over a long window they advance by
    the same amount. Each topic is delivered with its own latency, and a loaded client may
    still hold older joint_states in its queue: each reading pairs the clock with a state
    stamped within FRESH of it (none older is taken), and only the advance is compared."""
    (first_clock, first_stamp), (last_clock, last_stamp) = watch.first, watch.last
    assert last_clock - first_clock >= WATCH - 1e-9  # clock values 5 s apart, in binary floating point
    assert last_clock - first_clock == pytest.approx(last_stamp - first_stamp, abs=2 * FRESH + 0.1)


# -- the trajectory action --------------------------------------------------------------------
def test_a_trajectory_is_executed_with_feedback_and_tracked(robot):
    names = list(robot.wait_for_joint_states().name)
    home = robot.positions()
    raised = dict(home, rarm_joint1=-0.8, larm_joint1=-0.8, rarm_joint4=-0.6, larm_joint4=-0.6)
    times = [1.5, 3.0]
    positions = [[raised[n] for n in names], [home[n] for n in names]]
    velocities = np.zeros((2, len(names)))
    robot.start_recording()
    outcome = robot.follow(make_trajectory(names, times, positions, velocities))
    recorded = robot.stop_recording()
    assert outcome.succeeded and outcome.error_code == 0, outcome.error_string
    assert len(outcome.feedback) >= 5
    fb = outcome.feedback[len(outcome.feedback) // 2]
    assert list(fb.joint_names) == names
    assert np.allclose(np.array(fb.desired.positions) - np.array(fb.actual.positions), fb.error.positions)
    # the measured motion follows the commanded one (same cubic law, from the start pose)
    start = outcome.start_time
    reference = Spline.build([start, start + 1.5, start + 3.0], [[home[n] for n in names], *positions],
                             np.zeros((3, len(names))), law=Law.CUBIC)
    errors = [np.array(m.position) - reference.sample(seconds(m.header.stamp))[0]
              for m in recorded if start <= seconds(m.header.stamp) <= start + 3.0]
    assert len(errors) > 200
    assert np.max(np.abs(errors)) < 0.03  # rad; the servo profile lags the reference a little
    assert np.max(np.abs(measured(robot) - [home[n] for n in names])) < 0.01


def bad_goal(name: str, names: list[str], home: dict[str, float]):
    """(trajectory, expected error code, words the message must contain) of one bad input."""
    good = [home[n] for n in names]
    if name == "unknown joint":
        return make_trajectory([*names[:-1], "tail_joint"], [1.0], [good]), ERR["INVALID_JOINTS"], ["tail_joint"]
    if name == "NaN":
        point = list(good)
        point[3] = math.nan
        return make_trajectory(names, [1.0], [point]), ERR["INVALID_GOAL"], ["rleg_joint4", "nan"]
    if name == "length mismatch":
        return make_trajectory(names, [1.0], [good[:-2]]), ERR["INVALID_GOAL"], ["23 values for 25 joints"]
    if name == "non-increasing times":
        return make_trajectory(names, [1.0, 1.0], [good, good]), ERR["INVALID_GOAL"], ["point 1", "not after"]
    if name == "out of limits":
        point = list(good)
        point[names.index("rleg_joint4")] = 2.5  # limit 130 deg = 2.269 rad
        return make_trajectory(names, [2.0], [point]), ERR["INVALID_GOAL"], ["rleg_joint4", "2.5", "outside"]
    if name == "too fast":
        point = list(good)
        point[names.index("rarm_joint1")] = 2.0  # 2 rad in 0.1 s: 20 rad/s, limit 4.76
        return make_trajectory(names, [0.1], [point]), ERR["INVALID_GOAL"], ["rarm_joint1", "velocity limit"]
    raise ValueError(name)


@pytest.mark.parametrize("case", ["unknown joint", "NaN", "length mismatch", "non-increasing times",
                                  "out of limits", "too fast"])
def test_a_bad_goal_is_rejected_clearly_and_never_moves_the_robot(robot, case):
    names = list(robot.wait_for_joint_states().name)
    home = robot.positions()
    before = measured(robot)
    trajectory, code, words = bad_goal(case, names, home)
    outcome = robot.follow(trajectory)
    assert outcome.status == GoalStatus.STATUS_ABORTED
    assert outcome.error_code == code
    for word in words:
        assert word in outcome.error_string, outcome.error_string
    assert largest_motion(robot, before, 0.5) < 2e-3


def test_a_bad_trajectory_on_the_topic_is_rejected_and_counted(robot):
    names = list(robot.wait_for_joint_states().name)
    home = robot.positions()
    before = measured(robot)
    rejected_before = rejected_count(robot)
    trajectory, _, _ = bad_goal("out of limits", names, home)
    robot.send_trajectory(trajectory)
    poll_until(lambda: rejected_count(robot) > rejected_before, "the rejection counted in diagnostics")
    assert largest_motion(robot, before, 0.5) < 2e-3


def rejected_count(client: RobotClient) -> int:
    diagnostics = client.diagnostics
    if diagnostics is None:
        return 0
    for status in diagnostics.status:
        for value in status.values:
            if value.key == "commands_rejected":
                return int(value.value)
    return 0


def test_streaming_set_points_are_clamped_to_the_limits(robot):
    names = list(robot.wait_for_joint_states().name)
    elbow = names.index("rarm_joint4")  # elbow: -115 .. 1 deg
    robot.send_command(JointState(name=["rarm_joint4"], position=[-3.0]))
    # the elbow goes to its limit (-115 deg), not to -3 rad, and stops there
    robot.wait_for_state(position_of("rarm_joint4", math.radians(-115.0), 0.02), "the elbow at its limit")
    settled = robot.wait_for_state(at_rest, "the elbow at rest")
    assert settled.position[elbow] == pytest.approx(math.radians(-115.0), abs=0.02)
    # a malformed command (unknown joint) changes nothing
    before = np.array(settled.position)
    robot.send_command(JointState(name=["rarm_joint4", "wing"], position=[0.0, 1.0]))
    assert largest_motion(robot, before, 0.5) < 2e-3


def test_a_newer_goal_preempts_the_running_one(robot):
    names = list(robot.wait_for_joint_states().name)
    home = robot.positions()
    # long enough (robot time; the simulation runs as fast as it can) that the second goal, which
    # the veto checks first, always arrives while the first one runs
    slow = make_trajectory(names, [30.0], [[home[n] + (0.6 if n == "rarm_joint1" else 0.0) for n in names]])
    feedback: list = []
    first = robot.send_goal(slow, feedback=feedback)
    poll_until(lambda: feedback, "feedback of the first goal (it runs)")
    quick = make_trajectory(names, [1.0], [[home[n] for n in names]])
    second = robot.follow(quick)
    preempted = robot.result(first)
    assert preempted.status == GoalStatus.STATUS_ABORTED and preempted.error_code == ERR["PREEMPTED"]
    assert "preempted" in preempted.error_string
    assert second.succeeded


def test_cancel_stops_the_robot_where_it_is(robot):
    """Played paused, step by step, so that the cancel arrives a quarter of the way however
    far a busy client lags behind the real-time robot (a loaded run: it saw the quarter when the
    arm was nearly at the goal)."""
    names = list(robot.wait_for_joint_states().name)
    home = robot.positions()
    far = make_trajectory(names, [4.0], [[home[n] - (1.2 if n in ("rarm_joint1", "larm_joint1") else 0.0)
                                          for n in names]])
    arm = names.index("rarm_joint1")
    robot.pause()
    try:
        handle = robot.send_goal(far)
        while (at_cancel := robot.current_positions()["rarm_joint1"]) > home["rarm_joint1"] - 0.3:
            robot.step(20)
        robot.cancel(handle)
    finally:
        robot.resume()
    outcome = robot.result(handle)
    assert outcome.status == GoalStatus.STATUS_CANCELED and outcome.error_code == ERR["CANCELED"]
    settled = np.array(robot.wait_for_state(at_rest, "the robot at rest after the cancel").position)
    assert largest_motion(robot, settled, 1.0) < 2e-3  # holds
    assert settled[arm] == pytest.approx(at_cancel, abs=0.05)  # where it was, not at the goal
    assert at_cancel > home["rarm_joint1"] - 0.5  # a quarter of the way, not more


# -- simulator services ------------------------------------------------------------------------
def test_reset_to_home_and_to_a_given_configuration(robot):
    model = load_model("hoap2")
    robot.send_command(JointState(name=["rarm_joint1", "larm_joint1"], position=[1.0, 1.0]))
    robot.wait_for_state(position_of("rarm_joint1", 1.0, 0.05), "the arms moved away from home")
    robot.reset()
    home = model.home_positions()

    def at(pose: np.ndarray):
        # the reset robot's next reading: the latest one may predate the reset
        return lambda m: np.max(np.abs(model.joints.to_array(dict(zip(m.name, m.position, strict=True))) - pose)) < 0.01

    robot.wait_for_state(at(home), "the home pose after the reset", robot_seconds=0.2)
    lowered = model.pose_positions("arms_lowered")
    robot.reset(model.joints.to_dict(lowered))
    robot.wait_for_state(at(lowered), "the lowered arms after the reset", robot_seconds=0.2)
    assert not robot.fallen
    assert robot.base_pose.pose.position.z == pytest.approx(0.292, abs=0.005)  # standing on its soles
    with pytest.raises(Exception, match="outside its limits"):
        robot.reset({"rleg_joint4": 3.0})


def test_reset_lays_the_robot_on_its_back_and_refuses_an_unknown_side(robot):
    robot.reset(lying="back")
    # the simulator says fallen from the first state after the reset: the trunk lies flat,
    # its front up (the base's x axis along the world's z)
    robot.wait_for_state(lambda _m: robot.fallen, "fallen after the reset on its back", robot_seconds=0.5)
    q = robot.base_pose.pose.orientation
    front_up = 2.0 * (q.x * q.z - q.w * q.y)  # world z of the base's x axis
    assert front_up > 0.95
    with pytest.raises(Exception, match="refused: cannot lay the robot on 'sideways': one of back, belly, left, right"):
        robot.reset(lying="sideways")
    robot.reset()  # the node still serves: standing again
    robot.wait_for_state(lambda _m: not robot.fallen, "standing after the reset", robot_seconds=0.5)


def test_pause_resume_and_step(robot):
    robot.pause()
    first = robot.step(1)  # returns once the step is done: from here on nothing moves by itself
    time.sleep(0.5)  # wall time passes, simulated time must not
    assert robot.step(20) == pytest.approx(first + 20 / 200.0, abs=1e-6)  # 20 control periods of 5 ms
    time.sleep(0.5)
    assert robot.step(1) == pytest.approx(first + 21 / 200.0, abs=1e-6)
    robot.resume()
    robot.wait_until(first + 1.0, timeout=30.0)


def test_a_node_that_subscribes_while_paused_gets_the_state_the_simulation_stands_at(robot):
    """joint_states go out at 100 Hz, the control loop runs at 200 Hz: a pause between two
    publishing times too (a node that starts then, or whose subscription is matched late,
    must still learn where the robot is: a motion player plans from it)."""
    robot.pause()
    try:
        for _ in range(2):  # two successive cycles: one of them is between two publishing times
            paused = robot.step(1)
            with RobotClient("late_subscriber") as late:
                state = late.wait_for_joint_states(60.0)
            assert seconds(state.header.stamp) == pytest.approx(paused, abs=1e-6)
    finally:
        robot.resume()


# -- physics ------------------------------------------------------------------------------------
def test_hoap2_joints_never_exceed_the_measured_speed_and_acceleration(robot):
    """A far goal is reached with the trapezoidal profile of the real actuators: never
    faster than 57 pulse/ms, never accelerating more than 5 pulse/ms^2."""
    names = list(robot.wait_for_joint_states().name)
    arm = names.index("rarm_joint1")
    vmax = units.hoap2_pulse_rate_to_rad_s(57)
    amax = units.hoap2_pulse_accel_to_rad_s2(5)
    robot.start_recording()
    robot.send_command(JointState(name=["rarm_joint1"], position=[2.4]))  # one far step, no profile
    robot.wait_for_state(lambda m: position_of("rarm_joint1", 2.4, 0.01)(m) and at_rest(m), "the arm at 2.4 rad")
    recorded = robot.stop_recording()
    t = np.array([seconds(m.header.stamp) for m in recorded])
    q = np.array([m.position[arm] for m in recorded])
    v = np.array([m.velocity[arm] for m in recorded])
    assert q[-1] == pytest.approx(2.4, abs=0.01)
    assert np.max(np.abs(v)) <= vmax * 1.05
    assert np.max(np.abs(v)) >= vmax * 0.9  # it did cruise at the limit
    finite = np.diff(v) / np.diff(t)
    assert np.max(np.abs(finite)) <= amax * 1.2
    moving = t[np.abs(v) > 0.01]
    assert moving[-1] - moving[0] >= 2.4 / vmax  # no instant jump: the move takes its time


def test_standing_sensors_feel_gravity_and_the_weight(robot):
    model = load_model("hoap2")
    imu: list[Imu] = []
    wrenches: dict[str, list[WrenchStamped]] = {"left": [], "right": []}
    robot.node.create_subscription(Imu, "imu/data", imu.append, 10)
    for side in wrenches:
        robot.node.create_subscription(WrenchStamped, f"{side}_foot/wrench", wrenches[side].append, 10)
    poll_until(lambda: len(imu) >= 100 and all(wrenches.values()), "1 s of IMU and foot readings")
    # at rest the accelerometer reads gravity's reaction: +g along the world's up axis, seen in
    # the IMU frame (whose orientation the messages give); the median over 1 s: the stiff
    # servos keep a vibration of a few hundredths of a mm whose contact spikes moved a 0.5 s
    # mean 0.16 m/s^2 off once (clean-clone run 152)
    window = imu[-100:]
    q = window[-1].orientation
    up_in_imu = Rotation.from_quat([q.x, q.y, q.z, q.w]).inv().apply([0.0, 0.0, 1.0])
    typical = np.median([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
                         for m in window], axis=0)
    assert typical == pytest.approx(9.81 * up_in_imu, abs=0.15)
    assert math.degrees(math.acos(up_in_imu[2])) < 10.0  # the trunk stands upright
    spin = np.mean([[m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z] for m in window], axis=0)
    assert np.max(np.abs(spin)) < 0.01
    weight = sum(w[-1].wrench.force.z for w in wrenches.values())
    assert weight == pytest.approx(model.total_mass * 9.81, rel=0.05)
    # double support is statically indeterminate: both feet carry load, in some split
    assert all(w[-1].wrench.force.z > 0.2 * weight for w in wrenches.values())


def test_a_fall_is_detected_and_reported(robot):
    robot.reset({"body_joint1": math.radians(90.0), "rarm_joint1": math.radians(-90.0),
                 "larm_joint1": math.radians(-90.0)})  # bent at the waist, arms up: tips over
    deadline = robot.now() + 5.0
    while not robot.fallen:
        assert robot.now() < deadline, "the fall was not detected"
        robot.wait_until(robot.now() + 0.1)
    # diagnostics are published once a second of wall time: wait for one that says so
    simulation = poll_until(lambda: next((s for s in (robot.diagnostics.status if robot.diagnostics else [])
                                          if s.name == "simulation" and "fallen" in s.message), None),
                            "diagnostics reporting the fall")
    assert simulation.level == bytes([2]) and "fallen" in simulation.message


def test_the_control_loop_runs_at_its_priority_against_the_whole_machine(hoap2_graph):
    """The loop's process at ``loop_nice`` (-5, the default), and where the kernel schedules by
    session (autogroup) the node's session too: a process's nice then weighs only against its
    own session, and a busy machine took the CPU from the loop of a node busy with a huge
    command (test_oversized_messages). Unless the machine could not keep real time, which the
    log then says: the loop is back at the default priority (test_pace_watch.py)."""
    graph, _ = hoap2_graph
    (front,) = graph.processes.values()
    loop = loop_process(front.pid)
    if priorities(loop) == {-5}:
        return
    poll_until(lambda: "cannot keep real time" in graph.log_text("humanoid_sim"),
               f"the loop at {priorities(loop)} (not -5) and the log saying the machine could not keep real time",
               30.0)
    poll_until(lambda: priorities(loop) == {0}, "the loop and its session at the default priority", 30.0)
