"""Bioloid balanced poses played in the simulator: does the robot hold each one?

``humanoid balance-poses --simulate`` asks, for each thesis pose (J1..J18 degrees),
what the real robot showed in Tyropoulos (2008): standing on the right foot in that
pose, does the robot stay up? Each pose is played the way the library's P motions
play it (:func:`~humanoid_core.motion.pose_demo.pose_demo_motion`): from the
home pose, shift the weight over the right foot, raise the left foot, move to the
pose and hold it. The motion ends with the hold: the way back the library's motions
take (three more moves, 40 % of the motion) cannot change the verdict, which is made
from the arrival to the end of the hold, and the next pose starts from a reset
anyway. The motion is planned with
:func:`~humanoid_core.motion.plan_playback` (the trajectory generator's own
planning) and sent to ``follow_joint_trajectory``, so the robot is driven only
through the shared interface; the simulator is reset to the home pose, standing,
before every pose so that one pose's fall does not spoil the next.

A pose is *held* when both are true:

- the simulator never reported ``fallen`` from the arrival at the pose to the end of
  its hold (a fall on the way in counts: the robot is then still down on arrival);
- the joints reached the pose: every joint within :data:`TRACKING_TOLERANCE_DEG` of
  the pose over the second half of the hold, once the servos have settled (a servo
  that cannot carry the load, or a pose the robot cannot take, is not "held" even if
  nothing touched the ground).

Only the simulation node runs (the motions are planned here, the trajectory generator
would idle), headless and as fast as it can, in lockstep with this command's client
(:mod:`humanoid_control.ros.lockstep`): the client holds it between its acts (a reset, a
goal, the end of a pose), so every run plays each pose from the same simulated state and
judges it the same way, however busy the machine.
"""

from __future__ import annotations

import contextlib
import math
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from std_msgs.msg import Bool

from humanoid_control.ros import RobotClient, playback_trajectory, seconds, topics
from humanoid_core.loop import STAMP_TOLERANCE
from humanoid_core.motion import JointPose, Motion, plan_playback, pose_demo_motion
from humanoid_core.processes import Graph, in_namespace
from humanoid_description import load_model
from humanoid_robot_bioloid.thesis import ThesisFrame
from humanoid_sim.sim_node_spec import sim_node_spec

#: Robot-time seconds to wait after a reset: the simulator drops the robot 0.5 mm onto
#: the ground, and its contacts and servos settle within a few tenths of a second.
SETTLE_TIME = 0.5

#: Largest joint error (deg) during the second half of the hold for the pose to count
#: as reached. The simulated AX-12 servos are torque-limited position servos (1.5 N m)
#: that sag under load like the real ones; 3 deg is about the sim's goal position
#: tolerance (0.05 rad) and ten AX-12 register steps (0.29 deg each). Measured: the
#: poses that stand are tracked within 0.2 deg; a servo that cannot carry its load, a
#: foot jammed against the ground or a robot lying on the floor miss it by far more.
TRACKING_TOLERANCE_DEG = 3.0

#: The command's node: the lockstep simulation's one participant.
CLIENT = "humanoid_balance_poses"

#: Wall-clock seconds to wait for one pose's trajectory (generous: a loaded 2-core
#: machine runs the simulation slower than real time).
POSE_TIMEOUT = 300.0


@dataclass(frozen=True)
class PoseHold:
    """What happened to one pose in the simulator."""

    label: str
    held: bool
    fell_after: float | None  # s from the arrival at the pose to the first fallen report; None: never fell
    tracking_error_deg: float  # worst joint's largest |measured - pose| over the second half of the hold
    worst_joint: str
    trajectory_result: str  # what follow_joint_trajectory answered ("" when it succeeded)

    def describe(self) -> str:
        verdict = "held" if self.held else "NOT held"
        fall = ("stood through the hold" if self.fell_after is None
                else f"fell {self.fell_after:+.2f} s after arriving at the pose")
        text = (f"{self.label}: {verdict}: {fall}; joints within {self.tracking_error_deg:.2f} deg of the pose "
                f"(worst {self.worst_joint}, tolerance {TRACKING_TOLERANCE_DEG:g} deg)")
        return text + (f"; trajectory: {self.trajectory_result}" if self.trajectory_result else "")


class FallLog:
    """Robot times at which the simulator reported the robot fallen.

    RobotClient keeps only the latest ``fallen`` value; judging a time window needs
    every report, stamped with the robot clock when it arrived (the simulator publishes
    ``clock`` just before ``fallen`` in the same control cycle; a busy client stamps a
    report late by its processing lag, typically milliseconds).
    """

    def __init__(self, client: RobotClient) -> None:
        self._client = client
        self.times: list[float] = []
        client.node.create_subscription(Bool, topics.FALLEN, self._on_fallen, 50)

    def _on_fallen(self, msg: Bool) -> None:
        if msg.data:
            self.times.append(self._client.now())

    def first_between(self, start: float, end: float) -> float | None:
        """The first fallen report in [start, end] (robot time), or None."""
        return next((t for t in self.times if start <= t <= end), None)


class PoseRefusedError(RuntimeError):
    """The robot refused to play the pose (the self-collision veto, a limit): the pose is
    not judged, and the reason says why."""


def pose_motion(robot: str, label: str, angles_deg: Sequence[float], hold_seconds: float) -> Motion:
    """The library P motions' program for one thesis pose, up to the end of the hold: home,
    weight shift over the right foot, left foot raised, the pose held ``hold_seconds``
    (the motion's last keyframe, so its trajectory ends when the hold does)."""
    model = load_model(robot)
    positions = model.joints.to_dict(ThesisFrame(model).joint_positions(angles_deg))
    pose = JointPose(label, positions, line=0, support="right")
    return pose_demo_motion(robot, label, [pose], hold_time=hold_seconds, back_home=False)


def play_pose(client: RobotClient, falls: FallLog, label: str, motion: Motion) -> PoseHold:
    """Reset the robot to its home pose, play ``motion`` (from :func:`pose_motion`) and judge
    it; ``client`` holds the lockstep simulation between its acts, so that the reset, the
    goal and the end of the pose come at the same simulated state in every run."""
    lockstep = client.lockstep
    assert lockstep is not None and lockstep.held_at is not None, "play_pose needs a held lockstep client"
    client.reset()
    lockstep.run_to(lockstep.held_at + SETTLE_TIME, POSE_TIMEOUT)
    playback = plan_playback(motion, current=client.current_positions())
    index = motion.labels.index(label)
    target = np.array([motion.keyframe(index)[j] for j in motion.joint_names])
    trajectory = playback_trajectory(playback)
    client.start_recording()
    feedback: list = []
    try:
        handle = client.send_goal_held(trajectory, feedback, POSE_TIMEOUT)
        if feedback:  # in force at the held state: run to its end (whose stamp may fall short by a rounding)
            lockstep.run_to(lockstep.held_at + seconds(trajectory.points[-1].time_from_start) + STAMP_TOLERANCE,
                            POSE_TIMEOUT)
        outcome = client.held_result(handle, feedback, POSE_TIMEOUT)
    finally:
        recorded = client.stop_recording()
    start = outcome.start_time
    if start is None:
        raise PoseRefusedError(f"the robot refused the motion into the pose: {outcome.error_string}")
    arrival = start + float(playback.keyframe_times[index])
    hold = float(playback.played.holds[index])
    fell = falls.first_between(arrival, arrival + hold)
    columns = [list(recorded[0].name).index(j) for j in motion.joint_names]
    window = [m for m in recorded if arrival + hold / 2 <= seconds(m.header.stamp) <= arrival + hold]
    stamps = [seconds(m.header.stamp) for m in recorded]
    # the motion ends with the hold: judged only if the simulation really ran to its end
    if not window or max(stamps) < arrival + hold - STAMP_TOLERANCE:
        raise RuntimeError(f"{label}: the joint_states recorded do not cover the hold "
                           f"({arrival:.3f}..{arrival + hold:.3f} s; "
                           f"recorded {min(stamps, default=math.nan):.3f}..{max(stamps, default=math.nan):.3f} s, "
                           f"{len(feedback)} feedback, trajectory: {outcome.error_string or 'succeeded'})")
    errors = np.abs(np.array([np.array(m.position)[columns] for m in window]) - target)
    worst = np.max(errors, axis=0)
    error = math.degrees(float(np.max(worst)))
    return PoseHold(label=label, held=fell is None and error <= TRACKING_TOLERANCE_DEG,
                    fell_after=None if fell is None else fell - arrival, tracking_error_deg=error,
                    worst_joint=motion.joint_names[int(np.argmax(worst))],
                    trajectory_result="" if outcome.succeeded else outcome.error_string)


class PoseSimulator:
    """A headless simulation of ``robot`` (only its simulation node, as fast as it runs) in
    which poses are played one after another; a context manager that starts and stops it."""

    def __init__(self, robot: str, hold_seconds: float = 2.0, namespace: str = "/") -> None:
        """``namespace``: the simulation and this command's client run there (absolute, checked)."""
        if not hold_seconds > 0.0 or not math.isfinite(hold_seconds):
            raise ValueError(f"hold time must be a positive number of seconds, got {hold_seconds}")
        self.robot = robot
        self.hold_seconds = hold_seconds
        self.namespace = namespace
        self._stack = contextlib.ExitStack()
        self._client: RobotClient | None = None
        self._falls: FallLog | None = None

    def __enter__(self) -> PoseSimulator:
        log_dir = Path(tempfile.mkdtemp(prefix="humanoid_balance_"))
        print(f"starting the {self.robot} simulation (logs: {log_dir}) ...", file=sys.stderr, flush=True)
        with contextlib.ExitStack() as stack:
            overrides = {"real_time_factor": 0.0, "lockstep": True, "lockstep_participants": CLIENT}
            stack.enter_context(Graph(in_namespace([sim_node_spec(self.robot, overrides)], self.namespace),
                                      log_dir=log_dir))
            self._client = stack.enter_context(RobotClient(CLIENT, lockstep=True, namespace=self.namespace))
            self._client.wait_for_joint_states(60.0)
            self._falls = FallLog(self._client)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stack.close()

    def play(self, label: str, angles_deg: Sequence[float]) -> PoseHold:
        """Play one thesis pose (J1..J18 deg) and judge it (see the module docstring)."""
        assert self._client is not None and self._falls is not None, "use the simulator as a context manager"
        return play_pose(self._client, self._falls, label, pose_motion(self.robot, label, angles_deg,
                                                                        self.hold_seconds))
