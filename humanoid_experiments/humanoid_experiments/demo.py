"""``humanoid demo``: the main job, a headless HOAP-2 simulation doing something measurable.

The simulated HOAP-2 stands in its zero pose, lowers its arms, does a slow squat and
comes back up, all through the ``follow_joint_trajectory`` action, exactly as any
controller would drive the real robot. Then it prints a summary: per-joint tracking
error (RMS and max, measured ``joint_states`` against the commanded trajectory),
whether it fell, the final CoM height, what the balance monitor saw (least margin,
time without full support, cart-table against measured ZMP) and the real-time factor
achieved. In lockstep (the default) the simulation waits for its nodes at every state: as
fast as the machine allows, and the same demo in every run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from humanoid_control.ros import topics
from humanoid_core import new_folder, non_negative_number, positive_number

# rclpy, Pinocchio and the robot client are imported where they are used: the
# `humanoid` command builds its parser from this module and must start fast.

#: s of robot time a lockstep demo starts at: the robot, placed a hair above the ground,
#: has settled on its soles.
SETTLED = 0.5

#: The demo's node (a lockstep participant).
CLIENT = "humanoid_demo"

#: Keyframes of the demo (time s, joint -> degrees); joints not named stay at 0.
KEYFRAMES: list[tuple[float, dict[str, float]]] = [
    (1.0, {}),                                                     # stand still
    (3.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0}),             # lower the arms
    (4.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0}),
    (8.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0,               # slow squat, feet flat
           "rleg_joint3": -25.0, "lleg_joint3": -25.0, "rleg_joint4": 50.0, "lleg_joint4": 50.0,
           "rleg_joint5": -25.0, "lleg_joint5": -25.0}),
    (9.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0,
           "rleg_joint3": -25.0, "lleg_joint3": -25.0, "rleg_joint4": 50.0, "lleg_joint4": 50.0,
           "rleg_joint5": -25.0, "lleg_joint5": -25.0}),
    (13.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0}),             # and back up
    (14.0, {"rarm_joint1": 90.0, "larm_joint1": 90.0}),
]


@dataclass(frozen=True)
class BalanceFigures:
    """What the balance monitor published during the demo (``balance_state``)."""

    least_margin: float  # m, of the CoM projection, over the stable states
    unstable_seconds: float  # robot time with `stable` false
    foot_off_seconds: float  # robot time with a foot off the ground
    zmp_rms: float  # m, cart-table against measured ZMP, both feet loaded and both valid
    states: int

    @classmethod
    def of(cls, states: list, start: float, end: float) -> BalanceFigures | None:
        """Figures of the balance_state messages stamped in [start, end] (None without any)."""
        from humanoid_control.ros import seconds

        window = [s for s in states if start <= seconds(s.header.stamp) <= end]
        if not window:
            return None
        margins = [s.stability_margin for s in window if s.stable]
        period = (end - start) / len(window)
        both = [(s.zmp_model.x - s.zmp_measured.x, s.zmp_model.y - s.zmp_measured.y) for s in window
                if s.zmp_model_valid and s.zmp_measured_valid and s.left_foot_contact and s.right_foot_contact]
        return cls(least_margin=min(margins, default=math.nan),
                   unstable_seconds=period * sum(not s.stable for s in window),
                   foot_off_seconds=period * sum(not (s.left_foot_contact and s.right_foot_contact) for s in window),
                   zmp_rms=float(np.sqrt(np.mean(np.sum(np.square(both), axis=1)))) if both else math.nan,
                   states=len(window))

    def text(self) -> str:
        return (f"balance: least CoM margin {self.least_margin * 1000:.1f} mm when stable; not stable "
                f"{self.unstable_seconds:.2f} s, a foot off the ground {self.foot_off_seconds:.2f} s; "
                f"cart-table vs measured ZMP RMS {self.zmp_rms * 1000:.1f} mm ({self.states} balance_state)")


@dataclass
class DemoSummary:
    joint_names: list[str]
    rms_error: np.ndarray  # rad
    max_error: np.ndarray  # rad
    succeeded: bool
    result: str
    fell: bool
    final_com_height: float  # m
    real_time_factor: float
    robot_seconds: float
    wall_seconds: float
    balance: BalanceFigures | None = None  # None when no balance monitor ran

    def as_dict(self) -> dict:
        return {
            "joints": {n: {"rms_deg": math.degrees(r), "max_deg": math.degrees(m)}
                       for n, r, m in zip(self.joint_names, self.rms_error, self.max_error, strict=True)},
            "trajectory_succeeded": self.succeeded, "result": self.result, "fell": self.fell,
            "final_com_height_m": self.final_com_height, "real_time_factor": self.real_time_factor,
            "robot_seconds": self.robot_seconds, "wall_seconds": self.wall_seconds,
            "balance": None if self.balance is None else {
                "least_margin_m": self.balance.least_margin, "unstable_seconds": self.balance.unstable_seconds,
                "foot_off_seconds": self.balance.foot_off_seconds,
                "zmp_model_vs_measured_rms_m": self.balance.zmp_rms, "states": self.balance.states},
        }

    def text(self) -> str:
        lines = ["HOAP-2 demo: stand, lower the arms, slow squat and back up (follow_joint_trajectory)",
                 f"{'joint':14s} {'RMS err (deg)':>14s} {'max err (deg)':>14s}"]
        for name, rms, worst in zip(self.joint_names, self.rms_error, self.max_error, strict=True):
            lines.append(f"{name:14s} {math.degrees(rms):14.3f} {math.degrees(worst):14.3f}")
        lines.append(f"{'all joints':14s} {math.degrees(float(np.sqrt(np.mean(self.rms_error ** 2)))):14.3f} "
                     f"{math.degrees(float(np.max(self.max_error))):14.3f}")
        lines.append(f"trajectory: {'succeeded' if self.succeeded else 'FAILED'} {self.result}".rstrip())
        lines.append(f"fell: {'YES' if self.fell else 'no'}")
        lines.append(f"final CoM height: {self.final_com_height:.4f} m")
        lines.append(self.balance.text() if self.balance is not None else "balance: no balance_state received")
        lines.append(f"real-time factor: {self.real_time_factor:.2f} "
                     f"({self.robot_seconds:.1f} s simulated in {self.wall_seconds:.1f} s)")
        return "\n".join(lines)


def demo_trajectory(names: list[str]) -> tuple[list[float], np.ndarray]:
    times = [t for t, _ in KEYFRAMES]
    positions = np.array([[math.radians(pose.get(n, 0.0)) for n in names] for _, pose in KEYFRAMES])
    return times, positions


def run_demo(client, robot: str = "hoap2") -> DemoSummary:
    """Play the demo through ``client`` (a :class:`~humanoid_control.ros.robot_client.RobotClient`)."""
    import pinocchio as pin

    from humanoid_control.ros import make_trajectory, poll_until, seconds
    from humanoid_core.loop import Law, Spline
    from humanoid_description import load_model
    from humanoid_interfaces.msg import BalanceState

    model = load_model(robot)
    balance: list = []
    client.node.create_subscription(BalanceState, topics.BALANCE_STATE, balance.append, 100)
    state = client.wait_for_joint_states(60.0)
    names = list(state.name)
    times, positions = demo_trajectory(names)
    velocities = np.zeros_like(positions)
    trajectory = make_trajectory(names, times, positions, velocities)
    client.wait_for_server(60.0)
    feedback: list = []
    # a lockstep client holds the simulation at its first state from SETTLED on until the
    # trajectory is in force (the interface's first feedback): the same start in every run
    with client.lockstep.paused_at(SETTLED, 60.0) if client.lockstep else contextlib.nullcontext():
        wall0, robot0 = time.monotonic(), client.now()
        client.start_recording()
        handle = client.send_goal(trajectory, feedback=feedback)
        poll_until(lambda: feedback or handle.get_result_async().done(), "the demo's first feedback", 60.0,
                   interval=0.001)
    outcome = client.result(handle, 300.0, feedback)
    recorded = client.stop_recording()
    wall, robot_time = time.monotonic() - wall0, client.now() - robot0
    start = outcome.start_time
    if start is None:
        raise RuntimeError(f"the trajectory produced no feedback: {outcome.error_string}")

    # what was asked: the same keyframes with the same law (cubic, resting at keyframes),
    # starting from the pose the robot held when the goal started
    reference = Spline.build([start, *(start + t for t in times)],
                             np.vstack([np.array(state.position), positions]),
                             np.vstack([np.zeros(len(names)), velocities]), law=Law.CUBIC)
    samples = [m for m in recorded if start <= seconds(m.header.stamp) <= start + times[-1]]
    errors = np.array([np.array(m.position) - reference.sample(seconds(m.header.stamp))[0] for m in samples])
    final = recorded[-1] if recorded else state
    base = client.base_pose
    placement = pin.XYZQUATToSE3(np.array([
        base.pose.position.x, base.pose.position.y, base.pose.position.z, base.pose.orientation.x,
        base.pose.orientation.y, base.pose.orientation.z, base.pose.orientation.w])) if base else None
    com = model.com(model.joints.to_array(dict(zip(final.name, final.position, strict=True))), placement)
    return DemoSummary(
        joint_names=names, rms_error=np.sqrt(np.mean(errors**2, axis=0)), max_error=np.max(np.abs(errors), axis=0),
        succeeded=outcome.succeeded, result=outcome.error_string, fell=bool(client.fallen),
        final_com_height=float(com[2]), real_time_factor=robot_time / wall if wall > 0 else math.nan,
        robot_seconds=robot_time, wall_seconds=wall, balance=BalanceFigures.of(balance, start, start + times[-1]))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace
    from humanoid_sim import params_file, physics_profiles

    parser.add_argument("--real-time-factor", type=non_negative_number, default=None,
                        help="simulation speed: 1 = real time, 0 = as fast as possible (the default; with "
                             "--no-lockstep and --walk 1: the walk controller cannot follow a faster clock)")
    parser.add_argument("--no-lockstep", dest="lockstep", action="store_false",
                        help="let the simulation run on its own clock instead of waiting for its nodes at every "
                             "state (lockstep, the default: as fast as the machine allows, and the same demo twice)")
    parser.add_argument("--walk", type=positive_number, default=None, metavar="M",
                        help="then walk M metres forward through the walk action and print what the walk achieved "
                             "(humanoid walk's measurements)")
    parser.add_argument("--gui", action="store_true", help="show the PyBullet window (needs a display)")
    add_own_robot_namespace(parser)
    physics_profiles.add_argument(parser)
    params_file.add_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--log-dir", type=new_folder, default=None, help="keep the nodes' logs here")


def run(args: argparse.Namespace) -> int:
    from humanoid_bringup import free_namespace
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph
    from humanoid_description import resolve_robot
    from humanoid_sim import sim_nodes

    robot = resolve_robot("hoap2")  # once: the option checks and the graph below ask this object
    if args.walk is not None:
        from humanoid_experiments.walk import check_goal

        check_goal(robot, args.walk)
    from humanoid_sim import params_file, physics_profiles

    physics_profiles.chosen(robot, args.physics)
    params = params_file.chosen(robot, args.params)
    namespace = free_namespace(args.namespace)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="humanoid_demo_"))
    real_time_factor = args.real_time_factor
    if real_time_factor is None:
        real_time_factor = 1.0 if args.walk is not None and not args.lockstep else 0.0
    print(f"starting the HOAP-2 simulation (logs: {log_dir}) ...", flush=True)
    nodes = sim_nodes(robot, gui=args.gui, real_time_factor=real_time_factor, physics_profile=args.physics,
                      params_file=params, lockstep=args.lockstep, participants=(CLIENT,), namespace=namespace)
    with Graph(nodes, log_dir=log_dir), RobotClient(CLIENT, namespace=namespace, lockstep=args.lockstep) as client:
        summary = run_demo(client)
        walked = None
        if args.walk is not None and summary.succeeded and not summary.fell:
            from humanoid_experiments.walk import walk

            walked = walk(client, "hoap2", args.walk, stay_in_lockstep=False)
    if args.json:
        print(json.dumps({**summary.as_dict(), "walk": None if walked is None else walked.as_dict()}, indent=2))
    else:
        print(summary.text() + ("" if walked is None else "\n" + walked.text()))
    ok = summary.succeeded and not summary.fell
    return 0 if ok and (walked is None or (walked.error_code == 0 and not walked.fell)) else 1
