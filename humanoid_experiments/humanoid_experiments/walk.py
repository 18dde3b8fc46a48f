"""``humanoid walk``: walk the simulated robot and measure how it went.

Brings up the simulation graph (the PyBullet node, the trajectory generator and the
walk controller), sends one goal to the ``walk`` action, exactly as any client would,
and measures the walk from the simulator's ground truth and the robot's own readings:

- distance reached along the heading the robot had at the start, lateral drift (the
  sideways distance beyond what was asked), heading error (the turn beyond what was
  asked): the centre of the soles (ground-truth base + measured joints) standing
  before and after;
- mean speed: the distance covered (in the plane) over the walk's duration (from the
  first weight shift to standing again, as the action's result gives it);
- the share of the balance monitor's readings (``balance_state``) during the walk in
  which the ZMP measured by the foot force sensors lay inside the support polygon;
- whether the robot fell (the simulator's ``fallen``).

``--json`` prints ``distance_m``, ``speed_mps``, ``lateral_drift_m``, ``heading_error_rad``,
``zmp_inside_ratio``, ``fell`` and more.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from humanoid_control.ros import topics

if TYPE_CHECKING:
    from humanoid_description import Robot

# rclpy, Pinocchio and the clients are imported where they are used: the `humanoid`
# command builds its parser from this module and must start fast.

#: Wall seconds allowed for the whole walk (the action's result), generous.
WALK_TIMEOUT = 600.0
#: s of robot time: in lockstep, the walk goal goes at the first state at or after this (the
#: robot has settled on its feet since the simulation began).
LOCKSTEP_START = 0.5
#: The experiment's node (a lockstep participant).
CLIENT = "humanoid_walk"


@dataclass
class WalkReport:
    """What a walk achieved, measured (ground truth and foot sensors)."""

    robot: str
    requested: dict[str, float]  # distance_m, lateral_m, turn_rad
    result: str  # the action's outcome: succeeded / aborted / canceled, and its message
    error_code: int
    distance_m: float  # along the start heading
    lateral_m: float  # to the left of the start heading
    turn_rad: float
    speed_mps: float
    lateral_drift_m: float  # lateral_m beyond the lateral distance asked for
    heading_error_rad: float  # turn beyond the turn asked for
    zmp_inside_ratio: float  # of the balance monitor's readings with a measured ZMP; NaN without any
    zmp_samples: int
    fell: bool
    duration_s: float  # robot time of the walk (the action's result)
    steps: int
    odometry: dict[str, float] = field(default_factory=dict)  # the controller's footstep odometry
    real_time_factor: float = math.nan
    # the odometry node's (odom) drift against the ground truth over the walk: distance between both
    # final positions, each from its start, and the heading error of the turn made; NaN without odom
    odometry_error_m: float = math.nan
    odometry_heading_error_deg: float = math.nan

    def text(self) -> str:
        r = self.requested
        asked = (f"{r['distance_m']:g} m forward, {r['lateral_m']:g} m left, "
                 f"{math.degrees(r['turn_rad']):g} deg")
        lines = [f"{self.robot}: walk of {asked}: {self.result}",
                 f"distance reached:   {self.distance_m:.3f} m (along the start heading)",
                 f"lateral:            {self.lateral_m:.3f} m (drift {self.lateral_drift_m:+.3f} m)",
                 f"turn:               {math.degrees(self.turn_rad):.1f} deg "
                 f"(heading error {math.degrees(self.heading_error_rad):+.1f} deg)",
                 f"mean speed:         {self.speed_mps:.3f} m/s over {self.duration_s:.1f} s, {self.steps} steps",
                 f"ZMP inside support: {self.zmp_inside_ratio:.1%} of {self.zmp_samples} balance_state readings "
                 "(measured ZMP)",
                 f"fell:               {'YES' if self.fell else 'no'}",
                 f"odometry error:     {self.odometry_error_m * 1000:.1f} mm, heading "
                 f"{self.odometry_heading_error_deg:+.2f} deg (odom against the ground truth)",
                 f"real-time factor:   {self.real_time_factor:.2f}"]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return asdict(self)


class WalkWitness:
    """What the balance monitor said while a walk ran (``balance_state``), and the
    ground-truth placement of the feet before and after (subscriptions on the robot
    client's node, spun by its executor).

    The balance readings are taken by their stamps, the robot's time: those of the walk's
    span (the goal's state to the result's ``duration`` later), each state once, however late
    they reach this client. Counting what came between the goal and the result counted a part
    that shrank with the load (242 readings of a 0.1 m Bioloid walk beside four CPU hogs,
    555-592 on a quiet machine, some stamped after the walk's end; its span holds about 390)."""

    #: Readings the subscription keeps for a client behind the robot: 20 s of the HOAP-2's
    #: 200 Hz states (its 1 m walk takes about 9 s).
    DEPTH = 4000
    #: Wall seconds :meth:`stop` waits for the readings up to the walk's end.
    LATE = 30.0

    def __init__(self, client, robot: str) -> None:
        from humanoid_description import load_model
        from humanoid_interfaces.msg import BalanceState

        self.client = client
        self.model = load_model(robot)
        self._lock = threading.Lock()
        self._span: tuple[float, float] | None = None  # robot seconds, from the walk's start to its end
        #: From the span's start: whether the ZMP was inside, by stamp (a state the simulation sent
        #: again while it waited for its participants is read again: counted once)
        self._readings: dict[float, bool] = {}
        self._newest = -math.inf  # the newest reading's stamp
        self._reached = threading.Event()  # a reading at or after the span's end came
        self.balance_states = 0
        client.node.create_subscription(BalanceState, topics.BALANCE_STATE, self._on_balance, self.DEPTH)
        from humanoid_control.ros import OdometryDrift
        self.odometry = OdometryDrift(client)  # the odometry node's drift, if it runs

    def _on_balance(self, msg) -> None:
        from humanoid_control.ros import seconds

        stamp = seconds(msg.header.stamp)
        with self._lock:
            self.balance_states += 1
            self._newest = max(self._newest, stamp)
            if self._span is None:
                return
            begin, end = self._span
            if stamp >= begin and msg.zmp_measured_valid and math.isfinite(msg.zmp_margin):
                self._readings[stamp] = msg.zmp_margin >= 0.0
            if stamp >= end:
                self._reached.set()

    def start(self, at: float) -> None:
        """Count the readings stamped from ``at`` (robot seconds) on."""
        with self._lock:
            self._readings = {}
            self._reached.clear()
            self._span = (at, math.inf)

    def stop(self, at: float, late: float = LATE) -> bool:
        """Count the readings stamped up to ``at`` (robot seconds) and no later, waiting up to
        ``late`` wall seconds for those still on their way; False when they did not all come
        (no reading at or after ``at``, while the balance monitor had spoken)."""
        with self._lock:
            if self._span is None:
                return True
            self._span = (self._span[0], at)
            if self._newest >= at:
                self._reached.set()
            silent = self.balance_states == 0
        return silent or self._reached.wait(late)

    def _counted(self) -> list[bool]:
        """Whether the ZMP was inside, for each reading of the span (its end as known now: one
        stamped after it may have come before :meth:`stop` told it)."""
        with self._lock:
            if self._span is None:
                return []
            begin, end = self._span
            return [inside for stamp, inside in self._readings.items() if begin <= stamp <= end]

    @property
    def samples(self) -> int:
        return len(self._counted())

    @property
    def inside(self) -> int:
        return sum(self._counted())

    @property
    def ratio(self) -> float:
        counted = self._counted()
        return sum(counted) / len(counted) if counted else math.nan

    def base(self):
        from humanoid_control.ros import pose_se3

        pose = self.client.base_pose
        return None if pose is None else pose_se3(pose.pose)

    def feet_centre(self) -> tuple[float, float, float]:
        """Ground truth: x, y and heading of the centre of the soles (the frame the walk
        action's goal is given in)."""
        state = self.client.current_positions()
        base = self.base()
        if base is None:
            raise RuntimeError("no ground_truth/base_pose from the simulator")
        return feet_centre(self.model, self.model.joints.to_array(state), base)


def feet_centre(model, positions: np.ndarray, base) -> tuple[float, float, float]:
    """x, y and heading of the centre of the soles in the world, from the base's placement
    (``pin.SE3``, ground truth) and the joint positions (canonical order)."""
    feet = model.config.feet
    soles = model.frame_placements([feet[s].sole for s in ("right", "left")], positions, base)
    right, left = soles[feet["right"].sole], soles[feet["left"].sole]
    centre = (right.translation + left.translation) / 2.0
    yaws = [math.atan2(s.rotation[1, 0], s.rotation[0, 0]) for s in (right, left)]
    yaw = yaws[0] + math.atan2(math.sin(yaws[1] - yaws[0]), math.cos(yaws[1] - yaws[0])) / 2.0
    return float(centre[0]), float(centre[1]), yaw


def displacement(start: tuple[float, float, float], end: tuple[float, float, float]) -> tuple[float, float, float]:
    """Forward, left (m) along the start heading, and the turn (rad), from ``start`` to ``end``
    (each x, y, heading)."""
    (x0, y0, yaw0), (x1, y1, yaw1) = start, end
    c, s = math.cos(yaw0), math.sin(yaw0)
    dx, dy = x1 - x0, y1 - y0
    return c * dx + s * dy, -s * dx + c * dy, math.atan2(math.sin(yaw1 - yaw0), math.cos(yaw1 - yaw0))


def walk(client, robot: str, distance: float, lateral: float = 0.0, turn: float = 0.0,
         timeout: float = WALK_TIMEOUT, start_at: float = LOCKSTEP_START, stay_in_lockstep: bool = True) -> WalkReport:
    """Walk through the ``walk`` action of a running simulation and measure it. A lockstep
    client (``client.lockstep``) sends the goal at the first state at or after ``start_at``
    (robot time), the simulation held there until the goal is accepted: the same walk in
    every run. ``stay_in_lockstep`` false: the client then leaves the lockstep (it only
    watches the walk, and does not slow it; it cannot hold the simulation afterwards)."""
    import time

    from action_msgs.msg import GoalStatus

    from humanoid_control.ros import ResultWaiter
    from humanoid_interfaces.action import Walk

    witness = WalkWitness(client, robot)
    action = client.action_client(Walk, topics.WALK)
    client.wait_for_joint_states(60.0)
    if not action.wait_for_server(timeout_sec=60.0):
        raise RuntimeError("no walk action server within 60 s: is the walk controller running?")
    deadline = time.monotonic() + 60.0
    while client.base_pose is None and time.monotonic() < deadline:
        time.sleep(0.05)
    with client.lockstep.paused_at(start_at, 60.0) if client.lockstep else contextlib.nullcontext():
        start = witness.feet_centre()
        witness.odometry.mark()
        fell = bool(client.fallen)
        wall0, robot0 = time.monotonic(), client.now()
        witness.start(robot0)
        handle = client.wait_future(action.send_goal_async(Walk.Goal(distance=distance, lateral=lateral, turn=turn)),
                                    60.0, "walk goal response")
    if not handle.accepted:
        raise RuntimeError("the walk goal was rejected")
    if not stay_in_lockstep:
        client.leave_lockstep()  # a no-op without lockstep
    done = ResultWaiter(handle)  # asks again for a result whose answer was lost (a loaded machine)
    while not done.wait(0.05):
        fell = fell or bool(client.fallen)
        if time.monotonic() - wall0 > timeout:
            raise RuntimeError(f"the walk did not end within {timeout:g} s")
    response = done.response
    if not witness.stop(robot0 + response.result.duration):
        client.node.get_logger().warning(
            "balance_state: the readings up to the walk's end did not all come: the ZMP share covers part of it")
    odometry_error = witness.odometry.drift()
    fell = fell or bool(client.fallen)
    wall, robot_time = time.monotonic() - wall0, client.now() - robot0
    result = response.result
    status = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_ABORTED: "aborted",
              GoalStatus.STATUS_CANCELED: "canceled"}.get(response.status, f"status {response.status}")
    return walk_report(
        robot, (distance, lateral, turn), start, witness.feet_centre(),
        result=f"{status}{': ' + result.error_string if result.error_string else ''}", error_code=result.error_code,
        duration=result.duration, steps=int(result.steps), fell=fell,
        odometry={"distance_m": result.distance, "lateral_m": result.lateral, "turn_rad": result.turn},
        zmp=(witness.ratio, witness.samples), real_time_factor=robot_time / wall if wall > 0.0 else math.nan,
        odometry_error=odometry_error)


def walk_report(robot: str, requested: tuple[float, float, float], start: tuple[float, float, float],
                end: tuple[float, float, float], result: str, error_code: int, duration: float, steps: int,
                fell: bool, odometry: dict[str, float], zmp: tuple[float, int] = (math.nan, 0),
                real_time_factor: float = math.nan,
                odometry_error: tuple[float, float] = (math.nan, math.nan)) -> WalkReport:
    """The report of a walk asked as ``requested`` (forward m, left m, turn rad) whose feet's
    centre went from ``start`` to ``end`` (:func:`feet_centre`), ``zmp``: the share of balance
    readings with the measured ZMP inside the support polygon, and their count."""
    distance, lateral, turn = requested
    forward, left, turned = displacement(start, end)
    return WalkReport(
        robot=robot, requested={"distance_m": distance, "lateral_m": lateral, "turn_rad": turn},
        result=result, error_code=error_code, distance_m=forward, lateral_m=left, turn_rad=turned,
        speed_mps=math.hypot(forward, left) / duration if duration > 0.0 else 0.0,
        lateral_drift_m=left - lateral, heading_error_rad=math.atan2(math.sin(turned - turn), math.cos(turned - turn)),
        zmp_inside_ratio=zmp[0], zmp_samples=zmp[1], fell=fell, duration_s=duration, steps=steps,
        odometry=odometry, real_time_factor=real_time_factor,
        odometry_error_m=odometry_error[0], odometry_heading_error_deg=odometry_error[1])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_core import finite_number, new_folder, non_negative_number, positive_number
    from humanoid_description import ROBOTS
    from humanoid_sim import params_file, physics_profiles

    parser.add_argument("--robot", required=True, choices=ROBOTS, help="the robot to walk")
    parser.add_argument("--distance", type=finite_number, default=None,
                        help="metres forward (negative: backward), along the heading at the start")
    parser.add_argument("--teleop", type=positive_number, default=None, metavar="SECONDS",
                        help="instead of a goal, drive the walk on cmd_vel for SECONDS of robot time with a seeded "
                        "schedule of varied commands (forward, backward, sideways, turning, stops), as a user "
                        "teleoperates it; print the minutes walked, the falls and the distance covered")
    parser.add_argument("--seed", type=int, default=0, help="the --teleop schedule's seed")
    parser.add_argument("--lateral", type=finite_number, default=0.0, help="metres to the left (negative: right)")
    parser.add_argument("--turn", type=finite_number, default=0.0,
                        help="degrees to turn, counter-clockwise, within +-180")
    parser.add_argument("--real-time-factor", type=non_negative_number, default=None,
                        help="simulation speed: 0 = as fast as the graph goes (the default in lockstep), 1 = real "
                        "time (the default without lockstep), 0.5 = half")
    parser.add_argument("--no-lockstep", dest="lockstep", action="store_false",
                        help="let the simulation run on its own clock instead of waiting for its nodes at every "
                        "state (lockstep, the default: as fast as the machine allows, and the same walk twice)")
    parser.add_argument("--gui", action="store_true", help="show the PyBullet window (needs a display)")
    add_own_robot_namespace(parser)
    physics_profiles.add_argument(parser)
    params_file.add_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--log-dir", type=new_folder, default=None, help="keep the nodes' logs here")


def check_goal(robot: Robot, distance: float, lateral: float = 0.0) -> None:
    """Refuse (UsageError) a walk the robot's walk controller would refuse, before anything starts
    (``robot``: resolved once by the command)."""
    from humanoid_core.biped_walking import WalkParameters, WalkRefusedError, checked_walk_goal, walking_robot

    if not walking_robot(robot):
        return  # the walk controller says so itself when it starts
    try:
        checked_walk_goal(distance, lateral, 0.0, WalkParameters.for_robot(robot.name))
    except WalkRefusedError as error:
        from humanoid_core import UsageError

        raise UsageError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import free_namespace
    from humanoid_control.ros import RobotClient
    from humanoid_core import UsageError
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot
    from humanoid_sim import sim_nodes

    robot = resolve_robot(args.robot)  # once: the option checks and the graph below ask this object
    if (args.distance is None) == (args.teleop is None):
        raise UsageError("give --distance METRES (a walk goal) or --teleop SECONDS (cmd_vel), one of them")
    if abs(args.turn) > 180.0:
        raise UsageError(f"--turn must be within +-180 degrees, got {args.turn:g}")
    if args.teleop is not None:
        from humanoid_core.biped_walking import walking_robot

        if not walking_robot(robot):
            raise UsageError(f"--teleop walks a biped: {args.robot} has no walk controller")
    else:
        check_goal(robot, args.distance, args.lateral)
    from humanoid_sim import params_file, physics_profiles

    physics_profiles.chosen(robot, args.physics)
    params = params_file.chosen(robot, args.params)
    namespace = free_namespace(args.namespace)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="humanoid_walk_"))
    if not args.json:
        print(f"starting the {args.robot} simulation (logs: {log_dir}) ...", flush=True)
    rtf = args.real_time_factor if args.real_time_factor is not None or args.lockstep else 1.0
    # the teleop stands a fallen robot up by a reset: the fall manager must not get it up meanwhile
    nodes = sim_nodes(robot, gui=args.gui, real_time_factor=rtf, lockstep=args.lockstep,
                      participants=(CLIENT,), physics_profile=args.physics, params_file=params,
                      auto_getup=False if args.teleop is not None else None, namespace=namespace)
    with Graph(nodes, log_dir=log_dir), RobotClient(CLIENT, namespace=namespace, lockstep=args.lockstep) as client:
        if args.teleop is not None:
            from humanoid_experiments.teleop import teleop

            driven = teleop(client, args.robot, args.teleop, args.seed)
            print(json.dumps(driven.as_dict(), indent=2) if args.json else driven.text())
            return 0 if not driven.falls_at else 1
        report = walk(client, args.robot, args.distance, args.lateral, math.radians(args.turn),
                      stay_in_lockstep=False)
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.text())
    return 0 if report.error_code == 0 and not report.fell else 1
