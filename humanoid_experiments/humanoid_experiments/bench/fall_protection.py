"""``humanoid bench fall-protection``: how soon after the fall manager sees a fall coming the
running goal has ended ``FELL`` and the protective action (``--protect``) is in force.

Each trial measures, from the reading the manager said ``FALLING`` on (robot time, the state's
``since``: a client behind the graph may lose the first of the manager's states, as the topic
keeps the last ten, and take a later one stamped when it was said again):

- ``goal_fell_s``: to the running goal's result ``FELL`` (its arrival at this client, on the
  client's ROS clock: the simulation's, or the system clock on the robot);
- ``protect_s``: to the protective action in force: ``hold``, the last set-point that still
  moved (the set-points stand still from then on, until the robot lies still); ``posture``, the
  first set-point within 1 mrad of every joint of ``protect_pose``; ``limp``, the time the robot
  interface answered the torque-off in (the manager's ``protect_result`` diagnostics: the loop's
  cycle that released the joints, reported by the driver).

Beside them, the baseline from the same trial: ``margin_s``, from the fall seen coming to the
robot on the ground (the simulator's ground truth says fallen; the emulated bus has none): the
protective action is in force in time when ``protect_s`` is below it.

Simulation (default): the robot's default graph in lockstep, the fall manager with ``protect``
and no get-up; each trial walks (``--stand``: stands) and is pushed forward at the trunk
(20 N s), then the robot is reset standing. ``--real --emulate``: the real-robot graph on the
emulated Dynamixel bus (``humanoid real``'s nodes); the bus has no physics and the robot no
IMU, so this command feeds ``imu/data`` a trunk that tips over forward while a motion plays
(``wave``), as ``test/test_fall_manager_hw.py`` does; its graph runs at real time.

Per trial and the worst, and the load average (the graph shares the machine: robot time
stretches in lockstep, real time does not on the robot).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from humanoid_core import positive_number
from humanoid_description import ROBOTS
from humanoid_experiments.bench.cpu_time import load_average

# rclpy and the graphs are imported where they are used: the `humanoid` command builds its
# parser from this module and must start fast.

CLIENT = "humanoid_bench_fall_protection"
PROTECTS = ("hold", "posture", "limp")
#: Forward push at the trunk: 200 N for 0.1 s (far beyond what the robots stand).
PUSH = ((200.0, 0.0, 0.0), 0.1)
#: s (robot time) from a trial's start to the walk goal and to the push.
WALK_AFTER, PUSH_AFTER = 0.5, 1.5
#: rad: a set-point this close to every joint of protect_pose is at the pose.
POSE_TOLERANCE = 1e-3
#: s (wall): the patience for anything a trial waits for.
PATIENCE = 120.0
#: s: the emulated trunk's IMU period.
IMU_PERIOD = 0.01


class Watch:
    """What the trials measure, gathered from the graph's topics by the client's node."""

    def __init__(self, client, protect_pose_index: list[int] | None) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import JointState

        from humanoid_control.ros import FALL_STATE_QOS, topics
        from humanoid_interfaces.msg import FallManagerState, RobotState

        self.lock = threading.Condition()
        self.states: list[Any] = []
        self.setpoints: list[tuple[float, tuple[float, ...]]] = []
        self.fell: list[float] = []  # ground truth: stamps of states said fallen
        self.protect_results: list[str] = []
        self._via_robot_state = False  # before the subscriptions: the client's node already spins
        node = client.node
        node.create_subscription(FallManagerState, topics.FALL_MANAGER_STATE, self._on_state, FALL_STATE_QOS)
        # whole states through the client's feed: states waiting behind a busy client are taken
        # at once, not one executor event each ahead of everything else (docs/graph_cost.md)
        client.take_readings(topics.ROBOT_STATE, RobotState, self._on_robot_state)
        node.create_subscription(JointState, topics.JOINT_SETPOINTS, self._on_setpoints, 1000)
        node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 100)

    def _on_state(self, msg) -> None:
        with self.lock:
            self.states.append(msg)
            self.lock.notify_all()

    def _on_robot_state(self, msg) -> None:
        from humanoid_control.ros import seconds

        stamp = seconds(msg.header.stamp)
        with self.lock:
            if msg.fallen and msg.fallen[0].data:
                self.fell.append(stamp)
            if msg.setpoints:
                self._via_robot_state = True
                self.setpoints.append((stamp, tuple(msg.setpoints[0].position)))

    def _on_setpoints(self, msg) -> None:
        from humanoid_control.ros import seconds

        with self.lock:
            if not self._via_robot_state:
                self.setpoints.append((seconds(msg.header.stamp), tuple(msg.position)))

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            for value in status.values:
                if value.key == "protect_result" and value.value != "none yet":
                    with self.lock:
                        if not self.protect_results or self.protect_results[-1] != value.value:
                            self.protect_results.append(value.value)
                            self.lock.notify_all()

    def first(self, states: tuple[int, ...], after: int, what: str):
        deadline = time.monotonic() + PATIENCE
        with self.lock:
            while True:
                found = next((m for m in self.states[after:] if m.state in states), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {what} within {PATIENCE:g} s: {[m.cause for m in self.states[-5:]]}")
                self.lock.wait(left)

    def new_protect_result(self, after: int) -> str:
        deadline = time.monotonic() + PATIENCE
        with self.lock:
            while len(self.protect_results) <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no new protect_result within {PATIENCE:g} s")
                self.lock.wait(left)
            return self.protect_results[after]


def protect_time(watch: Watch, protect: str, seen: float, lying: float, pose: list[float] | None,
                 results_before: int) -> float:
    """Robot seconds from ``seen`` to the protective action in force (see the module docstring)."""
    if protect == "limp":
        result = watch.new_protect_result(results_before)
        if not result.startswith("torque off"):
            raise RuntimeError(f"limp not in force: {result}")
        return float(result.rsplit("t = ", 1)[1].split()[0]) - seen
    with watch.lock:
        after = [(t, p) for t, p in watch.setpoints if seen <= t <= lying]
    if not after:
        raise RuntimeError("no set-points between the fall seen coming and the robot lying still")
    if protect == "posture":
        assert pose is not None
        at_pose = next((t for t, p in after if max(abs(a - b) for a, b in zip(p, pose, strict=True))
                        < POSE_TOLERANCE), None)
        if at_pose is None:
            raise RuntimeError("the set-points never reached protect_pose before the robot lay still")
        return at_pose - seen
    final = after[-1][1]
    moving = [t for t, p in after if max(abs(a - b) for a, b in zip(p, final, strict=True)) > 1e-9]
    return (moving[-1] if moving else after[0][0]) - seen


def protect_pose(robot: str, protect: str) -> tuple[str, list[float] | None]:
    """The pose (name, positions in canonical order) ``posture`` goes to, from the robot's parameters."""
    from humanoid_core.balance import FallManagerParameters
    from humanoid_description import RobotModel

    if protect != "posture":
        return "", None
    name = FallManagerParameters.for_robot(robot).protect_pose or "home"
    return name, RobotModel(robot).pose_positions(name).tolist()


def sim_trials(robot: str, protect: str, trials: int, stand: bool, folder: Path,
               namespace: str = "/") -> list[dict[str, float]]:
    from humanoid_control.nodes import FALL_MANAGER, with_node_parameters
    from humanoid_control.ros import RobotClient, seconds
    from humanoid_core.processes import Graph
    from humanoid_interfaces.action import Walk
    from humanoid_interfaces.msg import FallManagerState as S
    from humanoid_sim import sim_nodes

    pose_name, pose = protect_pose(robot, protect)
    parameters: dict[str, Any] = {"protect": protect, "auto_getup": False, "diagnostics_rate": 10.0}
    if pose_name:
        parameters["protect_pose"] = pose_name
    nodes = with_node_parameters(sim_nodes(robot, lockstep=True, namespace=namespace), FALL_MANAGER, parameters)
    rows = []
    with Graph(nodes, log_dir=folder / "logs") as graph, RobotClient(CLIENT, namespace=namespace) as client:
        client.wait_for_joint_states(PATIENCE)
        watch = Watch(client, None)
        walk = None if stand else client.action_client(Walk, "walk")
        if walk is not None and not walk.wait_for_server(timeout_sec=PATIENCE):
            raise TimeoutError("no walk server")
        for trial in range(trials):
            mark = len(watch.states)
            if trial:
                client.reset(timeout=PATIENCE)
            watch.first((S.CONTROLLABLE,), mark, "controllable (standing)")
            start = client.now()
            handle = None
            if walk is not None:
                client.wait_until(start + WALK_AFTER, PATIENCE)
                handle = client.wait_future(walk.send_goal_async(Walk.Goal(distance=1.0)), PATIENCE, "walk goal")
            client.wait_until(start + PUSH_AFTER, PATIENCE)
            mark, results = len(watch.states), len(watch.protect_results)
            client.apply_push(*PUSH)
            falling = watch.first((S.FALLING,), mark, "FALLING after the push")
            seen = seconds(falling.since)
            row: dict[str, float] = {"trial": trial + 1, "seen_at_s": round(seen, 3)}
            if handle is not None:
                result = client.wait_result(handle, PATIENCE, "walk result").result
                row["goal_fell_s"] = round(client.now() - seen, 3) if result.error_code == Walk.Result.FELL \
                    else math.nan
            lying = watch.first((S.FALLEN,), mark, "FALLEN (lying still)")
            row["protect_s"] = round(protect_time(watch, protect, seen, seconds(lying.since), pose, results), 3)
            with watch.lock:
                down = next((t for t in watch.fell if t >= seen), math.nan)
            row["margin_s"] = round(down - seen, 3)
            rows.append(row)
        if graph.exited():
            raise RuntimeError(f"node(s) exited: {graph.exited()}")
    return rows


class Trunk:
    """Publishes on ``imu/data`` a trunk pitched ``pitch`` deg turning at ``rate`` deg/s, every
    IMU_PERIOD, stamped with the node's clock (test/test_fall_manager_hw.py's)."""

    def __init__(self, node) -> None:
        from sensor_msgs.msg import Imu

        from humanoid_control.ros import topics

        self.node, self.pitch, self.rate = node, 0.0, 0.0
        self._publisher = node.create_publisher(Imu, topics.IMU, 10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from sensor_msgs.msg import Imu

        from humanoid_control.ros import clock_seconds, to_time

        while not self._stop.wait(IMU_PERIOD):
            half = math.radians(self.pitch) / 2.0
            msg = Imu()
            msg.header.stamp = to_time(clock_seconds(self.node))
            msg.header.frame_id = "imu_link"
            msg.orientation.y, msg.orientation.w = math.sin(half), math.cos(half)
            msg.angular_velocity.y = math.radians(self.rate)
            self._publisher.publish(msg)

    def fall(self) -> None:
        """Upright to lying on the belly as a pendulum tips (wall time), then still."""
        theta, dtheta = math.radians(2.0), 0.0
        while theta < math.radians(90.0):
            time.sleep(IMU_PERIOD)
            dtheta += 8.0 ** 2 * math.sin(theta) * IMU_PERIOD
            theta = min(theta + dtheta * IMU_PERIOD, math.radians(90.0))
            self.pitch, self.rate = math.degrees(theta), math.degrees(dtheta)
        self.rate = 0.0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)


def emulated_trials(robot: str, protect: str, trials: int, folder: Path,
                    namespace: str = "/") -> list[dict[str, float]]:
    from humanoid_bringup import real_nodes
    from humanoid_control.nodes import FALL_MANAGER, with_node_parameters
    from humanoid_control.ros import RobotClient, poll_until, seconds
    from humanoid_core.processes import Graph
    from humanoid_hw import NODE_NAME as HW_NODE
    from humanoid_hw.emulator import emulator_process
    from humanoid_interfaces.action import PlayMotion
    from humanoid_interfaces.msg import FallManagerState as S

    pose_name, pose = protect_pose(robot, protect)
    parameters: dict[str, Any] = {"protect": protect, "auto_getup": False, "diagnostics_rate": 10.0}
    if pose_name:
        parameters["protect_pose"] = pose_name
    rows = []
    with emulator_process(robot, 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(with_node_parameters(real_nodes(robot, port=port, namespace=namespace), HW_NODE,
                                                          {"latency_timer_ms": 50.0}), FALL_MANAGER, parameters)
        with Graph(nodes, log_dir=folder / "logs") as graph, RobotClient(CLIENT, namespace=namespace) as client:
            client.wait_for_joint_states(PATIENCE)
            watch = Watch(client, None)
            watch.first((S.CONTROLLABLE,), 0, "controllable (the support estimate)")
            trunk = Trunk(client.node)
            try:
                poll_until(lambda: watch.states and watch.states[-1].source == "imu", "the manager on imu/data",
                           PATIENCE)
                for trial in range(trials):
                    mark = len(watch.states)
                    trunk.pitch, trunk.rate = 0.0, 0.0
                    watch.first((S.CONTROLLABLE,), mark if trial else 0, "controllable (upright and still)")
                    feedback: list = []
                    handle = client.send_motion(PlayMotion.Goal(motion_name="wave"), feedback=feedback.append)
                    poll_until(lambda feedback=feedback: feedback, "the wave in force", PATIENCE)
                    client.wait_until(client.now() + 0.3, timeout=PATIENCE)
                    mark, results = len(watch.states), len(watch.protect_results)
                    trunk.fall()
                    falling = watch.first((S.FALLING,), mark, "FALLING")
                    seen = seconds(falling.since)
                    result = client.wait_result(handle, PATIENCE, "play_motion result").result
                    row: dict[str, float] = {"trial": trial + 1, "seen_at_s": round(seen, 3)}
                    row["goal_fell_s"] = round(client.now() - seen, 3) \
                        if result.error_code == PlayMotion.Result.FELL else math.nan
                    lying = watch.first((S.FALLEN,), mark, "FALLEN (lying still)")
                    row["protect_s"] = round(protect_time(watch, protect, seen, seconds(lying.since), pose,
                                                          results), 3)
                    row["margin_s"] = math.nan  # no ground truth on the bus
                    rows.append(row)
            finally:
                trunk.stop()
            if graph.exited():
                raise RuntimeError(f"node(s) exited: {graph.exited()}")
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from humanoid_bringup import add_own_robot_namespace

    parser.add_argument("--robot", default="hoap2", choices=ROBOTS)
    parser.add_argument("--protect", default="hold", choices=PROTECTS, help="the protective action (hold)")
    parser.add_argument("--trials", type=positive_number, default=3, help="falls to measure (3)")
    parser.add_argument("--stand", action="store_true", help="simulation: push the standing robot (default: walking)")
    parser.add_argument("--real", action="store_true", help="the real-robot graph (with --emulate)")
    parser.add_argument("--emulate", action="store_true", help="with --real: on the emulated Dynamixel bus")
    add_own_robot_namespace(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    trials = int(args.trials)
    if trials != args.trials or trials < 1:
        print("humanoid bench fall-protection: error: --trials must be a whole number >= 1", file=sys.stderr)
        return 2
    if args.real and not args.emulate:
        print("humanoid bench fall-protection: error: --real needs --emulate (the benchmark tips the robot over: "
              "not on a real one)", file=sys.stderr)
        return 2
    from humanoid_bringup import free_namespace

    namespace = free_namespace(args.namespace)
    with tempfile.TemporaryDirectory(prefix="humanoid_bench_fall_protection_") as folder:
        if args.real:
            rows = emulated_trials(args.robot, args.protect, trials, Path(folder), namespace)
        else:
            rows = sim_trials(args.robot, args.protect, trials, args.stand, Path(folder), namespace)

    def worst(key: str) -> float:
        values = [r[key] for r in rows if key in r]
        return math.nan if not values or any(math.isnan(v) for v in values) else max(values)

    where = "emulated bus, real time" if args.real else "simulation, lockstep"
    result = {"robot": args.robot, "protect": args.protect, "where": where, "trials": rows,
              "worst_goal_fell_s": worst("goal_fell_s"), "worst_protect_s": worst("protect_s"),
              "least_margin_s": math.nan if args.real else min(r["margin_s"] for r in rows),
              "load_average": load_average()}
    if args.json:  # NaN (not measured) as null
        print(json.dumps(result).replace("NaN", "null"))
        return 0
    print(f"{args.robot}, protect {args.protect}, {where} (load average {result['load_average']}): robot seconds "
          "from the fall seen coming (FALLING) to")
    print("  trial   goal ended FELL   protective action in force   simulator says fallen (baseline)")
    for r in rows:
        print(f"  {r['trial']:5d}   {r.get('goal_fell_s', math.nan):12.3f} s   {r['protect_s']:23.3f} s   "
              f"{r['margin_s']:12.3f} s")
    print(f"  worst   {result['worst_goal_fell_s']:12.3f} s   {result['worst_protect_s']:23.3f} s   "
          f"{result['least_margin_s']:12.3f} s (least)")
    return 0
