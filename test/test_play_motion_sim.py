"""``play_motion`` in simulation, as a user calls it: motion files and library motions are
played on the simulated HOAP-2 and the robot follows them.

What users rely on: a motion in the robot's own csv format and a keyframe motion are
played as planned (the joints follow the trajectory ``plan_playback`` plans, the same
call the trajectory generator makes); feedback runs up to the end; a cancel stops the
robot where it is; a malformed file is refused with its file, line and problem and
the robot does not move; a speed the servos cannot follow is slowed and the result
says by how much.

Each motion is started with the simulator paused, so that the trajectory's start on
the robot clock is known exactly (feedback's ``elapsed`` while the clock stands still)
and the measured ``joint_states`` can be compared with the plan sample by sample.

One graph serves the module (``module_graph``): each test starts from the robot reset to
its home pose and settled there (:func:`robot`), as a freshly started graph has it (the
malformed files are played one after the other on one such start, and the robot's hold is
checked once after the last: :func:`refusals`), or,
when a played motion is compared with its plan, reset with one light joint off the
motion's start (:func:`away_from_the_start`: a reset of its own, which leaves nothing of
the robot's state before it, so a reset home and settled before it would only cost time).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus

from humanoid_control.ros import JOINT_STATES_DEPTH, RobotClient, seconds
from humanoid_core.loop import Spline
from humanoid_core.motion import Motion, Playback, load_motion, plan_playback
from humanoid_interfaces.action import PlayMotion
from humanoid_robot_hoap2 import CsvLayout, write_hoap2_csv
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "hoap2"
#: The module's graph (conftest.py ``module_graph``): the default graph users run, in lockstep with
#: its control container (docs/lockstep.md), so that it runs as fast as the machine allows and
#: the observers (balance monitor, self-collision checker, ...) see every state.
GRAPH = sim_nodes(ROBOT, lockstep=True)
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 300.0  # a motion of ~15 robot seconds on a 2-core machine under load
#: The trajectory generator's sampling period (its `sample_period` parameter, default 0.02 s).
SAMPLE_PERIOD = 0.02
#: Tracking tolerance (deg) of the simulated HOAP-2. Its servos follow the set-point with a
#: trapezoidal profile (4.76 rad/s, 417 rad/s^2) and a stiff position loop: they lag it by
#: about one control cycle (5 ms), and the start is known to a control cycle, so the
#: error stays under 10 ms of motion at the peak speed: 1.3 deg for the wave's elbow
#: (2.2 rad/s; measured 0.66 deg), 0.4 deg for the squat's knees (0.65 rad/s; measured 0.17 deg).
#: 2 deg is below the interface's goal tolerance (0.05 rad) and fails for a trajectory
#: played 20 ms late, at another speed, or to other positions.
TRACKING_TOLERANCE_DEG = 2.0
#: A robot holding still moves less than this (deg) in a second.
HOLD_TOLERANCE_DEG = 0.1


class FeedbackLog:
    """PlayMotion feedback as it arrives, with waits on it."""

    def __init__(self) -> None:
        self.messages: list[PlayMotion.Feedback] = []
        self._changed = threading.Condition()

    def __call__(self, feedback: PlayMotion.Feedback) -> None:
        with self._changed:
            self.messages.append(feedback)
            self._changed.notify_all()

    def wait_for(self, condition: Callable[[PlayMotion.Feedback], bool], after: int = 0,
                 timeout: float = PATIENCE) -> PlayMotion.Feedback | None:
        """The first message from index ``after`` on that meets ``condition`` (None: timed out)."""
        with self._changed:
            found: list[PlayMotion.Feedback] = []

            def met() -> bool:
                found[:] = [m for m in self.messages[after:] if condition(m)][:1]
                return bool(found)

            return found[0] if self._changed.wait_for(met, timeout) else None


@dataclass
class Played:
    """One play_motion goal: its handle, feedback, and the trajectory's start on the robot clock."""

    handle: object
    feedback: FeedbackLog
    start: float

    def result(self) -> tuple[int, PlayMotion.Result]:
        response = RobotClient.wait_future(self.handle.get_result_async(), PATIENCE, "play_motion result")
        return response.status, response.result


def send(client: RobotClient, goal: PlayMotion.Goal, feedback: FeedbackLog | None = None):
    return client.send_motion(goal, feedback, timeout=PATIENCE)


def play_from_pause(client: RobotClient, goal: PlayMotion.Goal) -> Played:
    """Send ``goal`` with the simulator paused, step it until the trajectory runs, resume."""
    try:
        return started_paused(client, goal)
    finally:
        client.resume()


def started_paused(client: RobotClient, goal: PlayMotion.Goal) -> Played:
    """Pause the simulator, send ``goal`` and step until its trajectory runs, the simulator
    left paused (the caller resumes it).

    While the clock stands still, the feedback's ``elapsed`` (trajectory time) is that of
    the frozen instant, so start = now - elapsed; it is read once two successive feedback
    messages agree (the frozen state has reached the generator), which makes it exact to
    a control cycle (5 ms) however late the feedback is relayed."""
    client.pause()
    log = FeedbackLog()
    handle = send(client, goal, log)
    for _ in range(100):
        now = client.step(1)
        elapsed = settled_elapsed(log)
        if elapsed > 0.0:
            return Played(handle, log, now - elapsed)
    raise AssertionError("the trajectory did not start within 100 control cycles")


def settled_elapsed(log: FeedbackLog, attempts: int = 50) -> float:
    """``elapsed`` once two successive new feedback messages carry the same value."""
    index, previous = len(log.messages), None
    for _ in range(attempts):
        message = log.wait_for(lambda _m: True, after=index)
        assert message is not None, "no play_motion feedback"
        if previous is not None and message.elapsed == previous:
            return message.elapsed
        previous, index = message.elapsed, index + 1
    raise AssertionError(f"play_motion feedback did not settle in {attempts} messages")


def expected_setpoints(playback: Playback, start: float, stamps: np.ndarray) -> np.ndarray:
    """The set-points of the planned trajectory at ``stamps`` (robot clock), with the law the
    robot interface interpolates a sampled trajectory with (positions, velocities and
    accelerations given: quintic)."""
    samples = playback.trajectory
    spline = Spline.build(samples.times, samples.positions, samples.velocities, samples.accelerations)
    return spline.sample_many(stamps - start)[0]


def tracking_errors_deg(recorded: list, playback: Playback, start: float) -> dict[str, float]:
    """Per joint, the largest |measured - planned| (deg) over the trajectory."""
    joints = playback.trajectory.joint_names
    names = list(recorded[0].name)
    columns = [names.index(j) for j in joints]
    window = [m for m in recorded if start <= seconds(m.header.stamp) <= start + playback.duration]
    # the client may drop some of the 100 Hz joint_states when the simulation runs fast
    assert len(window) >= 20 * playback.duration, f"only {len(window)} joint_states during the motion"
    stamps = np.array([seconds(m.header.stamp) for m in window])
    measured = np.array([np.array(m.position)[columns] for m in window])
    errors = np.degrees(np.max(np.abs(measured - expected_setpoints(playback, start, stamps)), axis=0))
    return dict(zip(joints, errors.tolist(), strict=True))


def squat_csv(path: Path) -> Motion:
    """The library squat as the robot's own csv file (a line every 20 ms, linear between
    lines as the robot plays it), written by the motion package's writer; read back."""
    squat = load_motion(ROBOT, "squat").select(CsvLayout.for_robot(ROBOT).columns)
    write_hoap2_csv(squat, path, multiplier=10)
    return load_motion(ROBOT, path)


#: Joints a test may turn away from a motion's start without upsetting the robot's balance.
LIGHT_JOINTS = ("head_joint1", "rarm_joint3", "larm_joint3")


def away_from_the_start(client: RobotClient, motion: Motion) -> None:
    """Reset the robot with one light joint of ``motion`` 0.2 rad off its first keyframe, so
    that the generator and the test both plan a transition, of its shortest duration. (A
    robot within 1e-4 rad of the first keyframe gets none, and a robot settling after its
    start can be on either side of that when each of them looks.)"""
    joint = next(j for j in LIGHT_JOINTS if j in motion.joint_names)
    start = motion.positions[0][motion.joint_names.index(joint)]
    away = start + 0.2 if start < 0.5 else start - 0.2
    client.reset({joint: away})
    # the generator plans from the latest joint_states it has: let the reset robot's reach it.
    # States from before the reset may still be queued for this client (the simulation runs
    # ahead of a slow client, up to its queue: JOINT_STATES_DEPTH at 100 Hz, 10 s of robot time)
    queued = JOINT_STATES_DEPTH / 100.0
    client.wait_for_state(lambda m: abs(m.position[list(m.name).index(joint)] - away) < 0.01,
                          f"{joint} reset 0.2 rad off the motion's start", robot_seconds=queued + 0.5)


def settled_positions(client: RobotClient, seconds_: float = 1.0) -> tuple[dict[str, float], dict[str, float]]:
    """Positions now and ``seconds_`` of robot time later."""
    before = client.current_positions()
    client.wait_until(client.now() + seconds_)
    return before, client.current_positions()


def largest_change_deg(before: dict[str, float], after: dict[str, float]) -> float:
    return math.degrees(max(abs(after[j] - before[j]) for j in before))


#: Robot seconds the reset robot is given to land and settle (it is put down from a few mm up).
SETTLE = 1.0


def reset_and_settle(client: RobotClient) -> RobotClient:
    """The robot reset to its home pose, settled, and its readings from after the reset
    reached this client (states from before it may still be queued)."""
    client.reset()
    reset_at = client.simulator_time()  # the simulator's clock goes on through a reset
    client.wait_for_state(lambda m: seconds(m.header.stamp) >= reset_at, "joint_states from after the reset",
                          robot_seconds=JOINT_STATES_DEPTH / 100.0 + 0.5)
    client.wait_until(client.now() + SETTLE, timeout=PATIENCE)
    return client


@pytest.fixture
def robot(module_graph: RobotClient) -> RobotClient:
    """The module's robot reset to its home pose and settled (:func:`reset_and_settle`)."""
    return reset_and_settle(module_graph)


# -- tests ------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", ["csv file", "library keyframes"])
def test_a_motion_is_played_as_planned(module_graph, tmp_path, source):
    """The robot follows the planned trajectory of a csv motion file (the squat, sampled by
    the csv writer) and of a library keyframe motion (wave); feedback reaches progress 1
    and the last keyframe."""
    client = module_graph
    if source == "csv file":
        path = tmp_path / "squat.csv"
        motion = squat_csv(path)
        goal = PlayMotion.Goal(motion_file=str(path))
    else:
        motion = load_motion(ROBOT, "wave")
        goal = PlayMotion.Goal(motion_name="wave")
    away_from_the_start(client, motion)
    playback = plan_playback(motion, current=client.current_positions(), period=SAMPLE_PERIOD)
    assert playback.transition_duration > 0.0
    client.start_recording()
    played = play_from_pause(client, goal)
    # the final feedback first: rclpy drops the feedback of a goal whose result it has taken,
    # and the generator publishes progress 1 before it reports the result
    last = played.feedback.wait_for(lambda m: m.progress >= 1.0)
    status, result = played.result()
    recorded = client.stop_recording()

    assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
    assert result.error_code == PlayMotion.Result.SUCCESSFUL
    assert result.time_scale == pytest.approx(1.0)
    assert result.duration == pytest.approx(playback.duration, abs=1e-6)
    errors = tracking_errors_deg(recorded, playback, played.start)
    assert max(errors.values()) < TRACKING_TOLERANCE_DEG, errors
    moved = max(np.ptp(playback.trajectory.positions, axis=0))
    assert math.degrees(moved) > 40.0  # a real motion was compared, not a robot standing still
    assert last is not None, f"progress stopped at {played.feedback.messages[-1].progress}"
    assert last.progress == 1.0
    assert last.elapsed == pytest.approx(result.duration)
    assert last.keyframe == motion.keyframe_count - 1
    progress = [m.progress for m in played.feedback.messages]
    assert progress == sorted(progress)


#: Robot seconds into the squat (speed 0.25: an 8 s descent to the knees' 50 deg) at which the
#: cancel test cancels, reached by stepping the paused simulator this many control cycles at a time.
CANCEL_AFTER_S, STEP_CYCLES = 2.0, 20


def test_cancel_stops_the_motion_and_the_robot_holds(robot):
    """Canceled 2 s into the squat's 8 s descent (speed 0.25), at a robot time the test sets:
    the cancel is sent with the simulator paused there. Sent as the feedback passed a progress
    while the lockstep simulation ran on as fast as the machine allows, it reached the robot
    after the descent had ended once, in a clean-clone run."""
    client = robot
    try:
        played = started_paused(client, PlayMotion.Goal(motion_name="squat", speed_factor=0.25))
        while client.step(STEP_CYCLES) < played.start + CANCEL_AFTER_S:
            pass
        client.wait_future(played.handle.cancel_goal_async(), PATIENCE, "cancel response")
    finally:
        client.resume()
    response = client.wait_future(played.handle.get_result_async(), PATIENCE, "play_motion result")

    assert response.status == GoalStatus.STATUS_CANCELED
    assert response.result.error_code == PlayMotion.Result.CANCELED
    before, after = settled_positions(client)
    assert largest_change_deg(before, after) < HOLD_TOLERANCE_DEG
    knee = math.degrees(after["rleg_joint4"])
    assert 1.0 < knee < 49.0  # stopped on the way down to the squat's 50 deg, not at either end


#: Malformed motion files: name, content, the line and the problem the refusal must name.
MALFORMED = [
    ("bad.csv", "10,0" + ",0" * 21 + "\n10,0" + ",0" * 21 + "\n10,0,0,0,x" + ",0" * 18 + "\n",
     3, "field 4 (rleg_joint3) is not an integer pulse count: 'x'"),
    ("bad.yaml", "robot: hoap2\nunits: deg\njoints: [rleg_joint4]\nkeyframes:\n  - time: 0.0\n"
                 "    positions: [0.0]\n  - time: 1.0\n    positions: [140.0]\n",
     8, "keyframe 1: rleg_joint4 = 140.00 deg is outside its limits [-1.00, 130.00] deg"),
    ("binary.csv", bytes(range(256)) * 16, 1, "NUL byte at column 1: a binary file?"),
    ("latin1.yaml", "robot: hoap2\n# caf\xe9\n".encode("latin-1"), 2,
     "not UTF-8 text (byte 6 of the line is 0xe9): a binary file?"),
]


@dataclass
class Refusals:
    """Each malformed file's path and play_motion response, played one after the other on the
    robot reset and settled; its positions before the first and a second after the last."""

    responses: dict[str, tuple[Path, object]]
    before: dict[str, float]
    after: dict[str, float]


@pytest.fixture(scope="module")
def refusals(module_graph: RobotClient, tmp_path_factory: pytest.TempPathFactory) -> Refusals:
    """The four malformed files on one reset and settle, and one second's hold check after the
    last refusal: a file that moved the robot would show there as it did after its own."""
    client = reset_and_settle(module_graph)
    folder = tmp_path_factory.mktemp("malformed")
    before = client.current_positions()
    responses = {}
    for name, content, _, _ in MALFORMED:
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        responses[name] = (path, client.play_motion(path=str(path), timeout=PATIENCE))
    _, after = settled_positions(client)
    return Refusals(responses, before, after)


@pytest.mark.parametrize(("name", "content", "line", "problem"), MALFORMED,
                         ids=["csv", "keyframes", "binary", "not-utf8"])
def test_a_malformed_motion_file_is_refused_and_the_robot_stays(refusals, name, content, line, problem):
    path, response = refusals.responses[name]

    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == PlayMotion.Result.INVALID_MOTION
    assert response.result.error_string == f"{path}:{line}: {problem}"
    assert largest_change_deg(refusals.before, refusals.after) < HOLD_TOLERANCE_DEG


def test_a_speed_beyond_the_limits_is_slowed_and_reported(module_graph):
    """Wave at 10x would need the elbow 4.6 times faster than its servo: the generator slows
    the motion to the limits, the robot plays it, and time_scale says how much slower than
    asked (0.46 instead of 0.1: 4.6x the asked duration)."""
    client = module_graph
    wave = load_motion(ROBOT, "wave")
    away_from_the_start(client, wave)
    planned = plan_playback(wave, speed=10.0, current=client.current_positions(), period=SAMPLE_PERIOD)
    start = client.simulator_time()
    response = client.play_motion("wave", speed=10.0, timeout=PATIENCE)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    result = response.result
    assert result.time_scale == pytest.approx(planned.scaling.stretch)
    assert result.time_scale * 10.0 > 4.0  # slowed, by the limit factor the plan reports
    assert result.duration == pytest.approx(planned.duration, abs=1e-6)
    assert client.simulator_time() - start >= result.duration  # the robot took (at least) the slowed duration
