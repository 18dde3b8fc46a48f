"""``humanoid play-gait``: play a gait on a running quadruped through the ``play_gait`` action.

The command is a client of the running graph (``humanoid sim`` or ``humanoid real``, either
alike): it checks the gait here first (the gait controller's own resolver: a robot.yaml gait
name, a CPG gait file, a gait search's ``search.json`` or directory; the frequency, the
duration, the servos' speed), so that bad input is one line on stderr and exit status 2
before anything moves; then it sends one goal, prints the feedback on stderr about once a
second, and prints what was played. In simulation it adds what the robot did, from the
simulator's ground truth: the distance along the heading it had when the goal was sent, the
sideways drift, the turn, whether it fell, and how far the odometry (``odom``) drifted from
the ground truth meanwhile. Ctrl-C cancels the goal (the robot returns to
its stance) and waits for it to end. ``--json`` prints the result as one JSON object.

Exit status: 0 when the gait played to its end, 2 for bad input (refused here or by the
node), 1 otherwise (no gait controller, stopped, canceled).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from humanoid_core import UsageError, non_negative_number, positive_number, robot_name

# rclpy and the clients are imported where they are used: the `humanoid` command builds its
# parser from this module and must start fast.

#: Wall seconds to wait for the gait controller's action server.
CONNECT_TIMEOUT = 30.0
#: Wall seconds to wait for a publisher of the simulator's ground truth once the graph is
#: discovered (a real robot has none).
GROUND_TRUTH_WAIT = 3.0
#: Wall seconds between two progress lines.
PROGRESS_PERIOD = 1.0


@dataclass
class GaitReport:
    """What was played, and, in simulation, what the robot did (m, deg)."""

    gait: str
    frequency: float
    duration_s: float  # asked
    elapsed_s: float  # of gait played
    status: str  # succeeded / aborted / canceled
    error_code: int
    message: str
    distance_m: float | None = None  # along the heading at the start (simulation ground truth)
    lateral_m: float | None = None  # to its left
    turn_deg: float | None = None  # counter-clockwise
    fell: bool | None = None
    # the odometry node's drift against the ground truth over the goal (simulation, with odometry)
    odometry_error_m: float | None = None
    odometry_heading_error_deg: float | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_control.ros import add_namespace_option

    parser.add_argument("gait", help="a gait of the robot's robot.yaml (walk, trot, transverse_gallop, rotary_gallop, "
                                     "canter, amble, pace, bound, pronk), or a gait file: a CPG gait (.yaml) or a gait "
                                     "search's search.json or directory")
    parser.add_argument("--robot", type=robot_name, default="bioloid_quadruped",
                        help="the running robot (bioloid_quadruped)")
    parser.add_argument("--frequency", type=non_negative_number, default=0.0,
                        help="Hz; 0 (default): the gait's own")
    parser.add_argument("--duration", type=positive_number, default=5.0, help="seconds of gait (5)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    add_namespace_option(parser)


def run(args: argparse.Namespace) -> int:
    gait = checked_gait(args.robot, args.gait, args.frequency, args.duration)
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from humanoid_control.ros import RobotClient, RobotClientError

    # Ctrl-C must reach this code (to cancel the goal), not shut ROS down under it
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    try:
        with RobotClient("humanoid_play_gait", namespace=args.namespace) as client:
            report = play(client, gait, args.frequency, args.duration)
    except RobotClientError as error:
        print(f"humanoid play-gait: {error}", file=sys.stderr)
        return 1
    finally:
        rclpy.try_shutdown()
    if report.error_code == _invalid_goal():
        raise UsageError(report.message)
    if args.json:
        print(json.dumps(asdict(report)))
    else:
        print(summary(report))
    return 0 if report.status == "succeeded" else 1


def checked_gait(robot: str, gait: str, frequency: float, duration: float) -> str:
    """The gait as the node must read it (a file: its absolute path), checked as the node
    checks it; UsageError otherwise."""
    from humanoid_core.loop import VELOCITY_MARGIN
    from humanoid_core.quadruped_gaits import GaitControllerParameters, GaitError, gaited_robot, load_gait
    from humanoid_description import load_model

    if not gaited_robot(robot):
        raise UsageError(f"robot {robot} has no gaits (robot.yaml gaits.phases): play-gait is for the quadruped")
    model = load_model(robot)
    try:
        player = load_gait(model, gait, GaitControllerParameters.for_robot(robot).period, frequency)
        player.check_speeds(VELOCITY_MARGIN * model.joints.velocity, model.joints.names)
    except (GaitError, ValueError) as error:
        raise UsageError(str(error)) from None
    path = Path(gait).expanduser()
    return str(path.resolve()) if path.exists() and gait not in model.config.sections["gaits"]["phases"] else gait


def play(client, gait: str, frequency: float, duration: float) -> GaitReport:
    """One goal to its end (Ctrl-C: canceled, and waited for)."""
    from action_msgs.msg import GoalStatus

    from humanoid_control.ros import OdometryDrift, ResultWaiter, poll_until, topics

    odometry = OdometryDrift(client)
    client.wait_for_gait_controller(CONNECT_TIMEOUT)  # the graph is discovered: its ground truth too, if any
    start = client.ground_truth_if_any(GROUND_TRUTH_WAIT, CONNECT_TIMEOUT)  # None on a real robot
    if start is not None and client.node.count_publishers(topics.ODOM):  # the graph's default
        poll_until(odometry.placements, "the odometry's first message", CONNECT_TIMEOUT)
    odometry.mark()
    progress = Progress(duration)
    handle = client.send_gait(gait, frequency, duration, feedback=progress, timeout=CONNECT_TIMEOUT)
    waiter = ResultWaiter(handle)
    try:
        while not waiter.wait(0.5):
            pass
    except KeyboardInterrupt:
        print("canceling: back to the stance ...", file=sys.stderr, flush=True)
        client.cancel(handle)
        while not waiter.wait(0.5):
            pass
    response = waiter.response
    result = response.result
    status = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_CANCELED: "canceled"}.get(
        response.status, "aborted")
    report = GaitReport(result.gait or gait, result.frequency, duration, result.elapsed, status, result.error_code,
                        result.error_string, fell=client.fallen)
    end = client.base_pose
    if start is not None and end is not None:
        report.distance_m, report.lateral_m, report.turn_deg = displacement(start, end)
        error, heading = odometry.drift()
        if math.isfinite(error):
            report.odometry_error_m, report.odometry_heading_error_deg = error, heading
    return report


class Progress:
    """The action's feedback as a line on stderr about once a second."""

    def __init__(self, duration: float) -> None:
        self.duration, self._printed, self._stage = duration, -math.inf, ""

    def __call__(self, feedback) -> None:
        now = time.monotonic()
        if feedback.stage == self._stage and now - self._printed < PROGRESS_PERIOD:
            return
        self._printed, self._stage = now, feedback.stage
        print(f"{feedback.stage}: {feedback.elapsed:.1f} of {self.duration:g} s, phase {feedback.phase:.2f}",
              file=sys.stderr, flush=True)


def displacement(start, end) -> tuple[float, float, float]:
    """Forward and leftward distance (m) along the start pose's heading, and the turn (deg)."""
    heading = _yaw(start.pose.orientation)
    dx = end.pose.position.x - start.pose.position.x
    dy = end.pose.position.y - start.pose.position.y
    forward = dx * math.cos(heading) + dy * math.sin(heading)
    left = -dx * math.sin(heading) + dy * math.cos(heading)
    turn = math.degrees(math.remainder(_yaw(end.pose.orientation) - heading, 2.0 * math.pi))
    return forward, left, turn


def _yaw(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def _invalid_goal() -> int:
    from humanoid_interfaces.action import PlayGait

    return PlayGait.Result.INVALID_GOAL


def summary(report: GaitReport) -> str:
    lines = [f"{report.gait} at {report.frequency:g} Hz: {report.elapsed_s:.2f} of {report.duration_s:g} s of gait "
             f"played, {report.status}" + (f" ({report.message})" if report.message else "")]
    if report.distance_m is not None:
        lines.append(f"moved {report.distance_m * 1000:.0f} mm forward, {report.lateral_m * 1000:.0f} mm left, "
                     f"turned {report.turn_deg:.1f} deg (simulation ground truth, lead-in and stance included)")
    if report.odometry_error_m is not None:
        lines.append(f"odometry error: {report.odometry_error_m * 1000:.0f} mm, heading "
                     f"{report.odometry_heading_error_deg:+.1f} deg (odom against the ground truth)")
    if report.fell is not None:
        lines.append(f"fell: {'yes' if report.fell else 'no'}")
    return "\n".join(lines)
