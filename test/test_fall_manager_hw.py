"""The fall manager on the hardware node: the Bioloid on the emulated Dynamixel bus
(``humanoid real``'s graph, a process per node so that the test can be the robot's IMU).

The emulated bus has no physics and the Bioloid no IMU: the test feeds the manager the
readings a falling, lying and standing trunk would give on ``imu/data`` (the hardware node
publishes none), stamped with the robot's clock. What is checked: the balance monitor's
support estimate makes the manager controllable at the start; a reading older than its
budget decides nothing; a fall fed while a motion plays stops the motion ``FELL`` with the
manager's cause, and the protective posture (``protect: posture``) sends the robot to its pose
within its duration (measured on the set-points the hardware node wrote to the servos); lying
still on its belly the robot gets up by itself when asked to (``--auto-getup``; off by default
on the robot) with the library's get-up from the belly, played on the servos to its end, while
a walk goal is refused ``GETTING_UP``; upright and still again it is controllable. And
``protect: limp``: on the bus (the servos released, then taken again by the get-up), and with
no robot interface at all (the limp refused with its reason, the robot held).

One graph serves the whole story (a graph start and stop fewer than a graph for the protective
posture and one for the rest): the trunk rocks on the floor (not still) until the posture is
reached, so the get-up, which begins once the trunk lies still, never cuts the posture short."""

from __future__ import annotations

import math
import threading
import time

import pytest
from action_msgs.msg import GoalStatus
from sensor_msgs.msg import Imu
from system_support import collector, on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_control.nodes import FALL_MANAGER, with_node_parameters
from humanoid_control.ros import FALL_STATE_QOS, RobotClientError, clock_seconds, poll_until, to_time
from humanoid_core.balance import FallManagerParameters
from humanoid_interfaces.action import PlayMotion, Walk
from humanoid_interfaces.msg import FallManagerState

pytestmark = pytest.mark.system

PATIENCE = 120.0
#: A goal's statuses once it has ended.
ENDED = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_ABORTED, GoalStatus.STATUS_CANCELED)
#: s: the IMU readings' period (the HOAP-2's IMU rate).
PERIOD = 0.01
#: deg/s: a trunk landing rocking, not still yet (twice the manager's still_rate): a fall is
#: still seen coming once the trunk lies, however late the fall's own readings were taken.
ROCKING = 2.0 * FallManagerParameters().still_rate


class Trunk:
    """Publishes the IMU readings of a trunk pitched ``pitch`` deg (backward: negative) turning
    at ``rate`` deg/s, every PERIOD, stamped with the node's clock (the robot's: ROS time)."""

    def __init__(self, node) -> None:
        self.node = node
        self.pitch, self.rate = 0.0, 0.0
        self.age = 0.0  # s subtracted from the stamps (stale readings)
        self._publisher = node.create_publisher(Imu, "imu/data", 10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5.0)

    def _run(self) -> None:
        while not self._stop.wait(PERIOD):
            self.publish()

    def publish(self) -> None:
        half = math.radians(self.pitch) / 2.0
        msg = Imu()
        msg.header.stamp = to_time(clock_seconds(self.node) - self.age)
        msg.header.frame_id = "imu_link"
        msg.orientation.y, msg.orientation.w = math.sin(half), math.cos(half)
        msg.angular_velocity.y = math.radians(self.rate)
        self._publisher.publish(msg)

    def fall(self, sign: float, rocking: float = 0.0) -> None:
        """From upright to lying (90 deg; ``sign`` -1: backward onto the back, 1: forward onto
        the belly) as a pendulum tips, in wall time, however late this thread is woken (a robot
        falls in its own time: stepped by PERIOD, a starved test process once made the fall
        outlast the motion it was to stop); then still, or turning at ``rocking`` deg/s
        (rocking on the floor: not lying still)."""
        theta, dtheta = math.radians(2.0), 0.0
        last = time.monotonic()
        while theta < math.radians(90.0):
            time.sleep(PERIOD)
            now = time.monotonic()
            step, last = now - last, now
            dtheta += 8.0 ** 2 * math.sin(theta) * step
            theta = min(theta + dtheta * step, math.radians(90.0))
            self.pitch, self.rate = sign * math.degrees(theta), sign * math.degrees(dtheta)
        self.rate = sign * rocking


def getup_end(lock: threading.Lock, states: list[FallManagerState], since: int) -> FallManagerState:
    """The first state from ``states[since:]`` saying the first get-up motion ended; when none
    comes, the error names the manager's decisions instead (a CI run saw only "up again")."""
    from humanoid_control.ros import seconds

    try:
        return poll_until(lambda: next((m for m in states[since:] if "ended (attempt 1" in m.cause), None),
                          "the get-up motion's end", PATIENCE)
    except RobotClientError as error:
        said: list[str] = []
        with lock:
            for m in states[since:]:
                if not said or not said[-1].endswith(f"{m.state_name}: {m.cause}"):
                    said.append(f"t = {seconds(m.header.stamp):.3f} s {m.state_name}: {m.cause}")
        raise RobotClientError(f"{error}; the manager's decisions since the fall: {' | '.join(said)}") from None


def diagnostic_values(lock: threading.Lock, diagnostics: list, key: str) -> list[str]:
    """Every value of ``key`` in the diagnostics heard so far, oldest first."""
    with lock:
        return [v.value for d in diagnostics for s in d.status for v in s.values if v.key == key]


def latest_diagnostic(lock: threading.Lock, diagnostics: list, key: str) -> str | None:
    values = diagnostic_values(lock, diagnostics, key)
    return values[-1] if values else None


def test_the_fall_manager_on_the_emulated_bus(robot_graph):
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import seconds
    from humanoid_description import RobotModel
    from humanoid_hw.emulator import emulator_process

    model = RobotModel("bioloid")
    pose = model.pose_positions("home")
    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(on_emulated_bus(real_nodes("bioloid", port=port, auto_getup=True)),
                                     FALL_MANAGER, {"max_attempts": 2, "protect": "posture", "protect_pose": "home",
                                                    "protect_duration": 0.5})
        _, client = robot_graph(nodes)
        lock, states, setpoints = threading.Lock(), [], []

        def first(state: int, since: int = 0, what: str = "") -> FallManagerState:
            def found():
                with lock:
                    return next((m for m in states[since:] if m.state == state), None)
            return poll_until(found, what or f"fall_manager_state {state}", PATIENCE)

        client.node.create_subscription(FallManagerState, "fall_manager_state", collector(lock, states), FALL_STATE_QOS)
        client.node.create_subscription(JointState, "joint_setpoints", collector(lock, setpoints), 1000)
        # no IMU on the robot: the balance monitor's support estimate says upright
        start = first(FallManagerState.CONTROLLABLE)
        assert start.source == "support" and "upright" in start.cause, start.cause
        names = list(client.wait_for_joint_states(PATIENCE).name)
        index = [model.joints.index(n) for n in names]

        trunk = Trunk(client.node)
        # a reading of a lying trunk, half a second old (budget 0.1 s): nothing decided
        trunk.pitch, trunk.age = -90.0, 0.5
        for _ in range(20):
            trunk.publish()
            time.sleep(PERIOD)
        time.sleep(0.5)
        with lock:
            assert states[-1].state == FallManagerState.CONTROLLABLE and states[-1].source == "support"
            assert not any(m.state in (FallManagerState.FALLING, FallManagerState.FALLEN) for m in states)
        trunk.pitch, trunk.age = 0.0, 0.0
        trunk.start()
        try:
            poll_until(lambda: states[-1].source == "imu", "the manager on the IMU readings", PATIENCE)
            # a motion plays; the trunk falls forward: the motion stops FELL, with the manager's cause
            with lock:
                before = len(setpoints)
            handle = client.send_motion(PlayMotion.Goal(motion_name="wave"))

            def moving() -> bool:  # the robot's set-points leave where they stood
                with lock:
                    return any(max(abs(a - b) for a, b in zip(m.position, setpoints[before - 1].position, strict=True))
                               > 1e-3 for m in setpoints[before:])

            # in force on the robot (its set-points move: a loaded machine took 0.8 s), or ended
            # without (then its result says why)
            poll_until(lambda: moving() or handle.status in ENDED, "the wave in force on the robot", PATIENCE)
            if not moving():
                ended = client.wait_result(handle, PATIENCE, "play_motion result").result
                pytest.fail(f"the wave ended before it was in force on the robot: {ended.error_string}")
            client.wait_until(client.now() + 0.5, timeout=PATIENCE)
            mark = len(states)
            trunk.fall(1.0, rocking=ROCKING)  # lands rocking: not still yet
            falling = first(FallManagerState.FALLING, mark)
            seen = seconds(falling.since)
            motion = client.wait_result(handle, PATIENCE, "play_motion result after the fall").result
            assert motion.error_code == PlayMotion.Result.FELL, motion.error_string
            # the manager's word, or the trajectory generator's own sight of the robot lying, when
            # the manager's readings came too late for it (a machine loaded from outside: its
            # readings older than reading_budget, its "falling" after the generator's "fell")
            assert "the fall manager: falling" in motion.error_string or "the robot fell (on_belly" in \
                motion.error_string, motion.error_string
            assert "a fall is seen coming" in falling.cause and falling.side == FallManagerState.BELLY

            # the protective posture: the set-points at the named pose within its duration
            def at_the_pose():
                with lock:
                    return next((seconds(m.header.stamp) for m in setpoints if seconds(m.header.stamp) > seen
                                 and max(abs(m.position[k] - pose[i]) for k, i in enumerate(index)) < 1e-3), None)

            reached = poll_until(at_the_pose, "the set-points at the protective pose", PATIENCE)
            print(f"protective posture (home) reached {reached - seen:.2f} s after the reading that said falling")
            # 0.5 s (the servos are fast enough for it) from the second sending, 50 ms after the
            # first; the rest: the graph runs at real time here, beside the suite's other workers
            # (1.18 s once with three of them: the figure itself is `humanoid bench
            # fall-protection`'s; this bound is against a posture that never comes or comes late)
            assert reached - seen <= 0.05 + 0.5 + 1.45
            with lock:
                assert not any(m.state == FallManagerState.GETTING_UP for m in states[mark:])  # still rocking
            trunk.rate = 0.0  # lying still

            # lying still on its belly: the library's get-up from the belly (the one the simulated
            # robot stands up with) plays on the servos, not refused by limits or the self-collision
            # veto; a walk goal is refused meanwhile
            getting_up = first(FallManagerState.GETTING_UP, mark)
            assert getting_up.side == FallManagerState.BELLY and getting_up.attempt == 1
            assert getting_up.getup_motion == "getup_belly"
            walk = client.action_client(Walk, "walk")
            refused = client.wait_result(client.wait_future(walk.send_goal_async(Walk.Goal(distance=0.1)), PATIENCE,
                                                            "walk goal"), PATIENCE, "walk result").result
            assert refused.error_code == Walk.Result.GETTING_UP, refused.error_string
            # the robot rises as the get-up plays: its trunk upright and still before the motion
            # ends (set after its end, the readings of an upright trunk may come later than the
            # up_check_time the manager allows on a loaded machine: the attempt failed, and the
            # next upright readings said "up again" from FALLEN)
            trunk.pitch, trunk.rate = 0.0, 0.0
            # the get-up motion played to its end on the servos, and only then is the robot up
            ended = getup_end(lock, states, mark)
            assert ended.state == FallManagerState.GETTING_UP
            up = first(FallManagerState.CONTROLLABLE, states.index(ended))
            assert "up after get-up attempt 1" in up.cause, up.cause
        finally:
            trunk.stop()


def test_protect_limp_on_the_emulated_bus_releases_the_servos_and_the_get_up_takes_them_again(robot_graph,
                                                                                               tmp_path):
    """``protect: limp``: the robot interface releases every servo (its answer, in the manager's
    diagnostics, says the driver did it), no goal is written while the robot lies limp, and the
    get-up's first command takes the servos again: the (short) get-up plays on them to its end."""
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState

    from humanoid_control.ros import seconds
    from humanoid_description import RobotModel
    from humanoid_hw.emulator import emulator_process

    model = RobotModel("bioloid")
    home = model.pose_positions("home")
    joints = ", ".join(model.joints.names)
    positions = ", ".join(f"{math.degrees(v):.2f}" for v in home)
    (tmp_path / "getup_belly.yaml").write_text(
        f"format: keyframes\nrobot: bioloid\nname: getup_belly\nunits: deg\nlaw: cubic\njoints: [{joints}]\n"
        f"keyframes:\n  - time: 1.0\n    positions: [{positions}]\n")
    with emulator_process("bioloid", 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(on_emulated_bus(real_nodes("bioloid", port=port, auto_getup=True)),
                                     FALL_MANAGER, {"max_attempts": 1, "protect": "limp", "diagnostics_rate": 10.0,
                                                    "getup_directory": str(tmp_path)})
        _, client = robot_graph(nodes)
        lock, states, setpoints, diagnostics = threading.Lock(), [], [], []
        client.node.create_subscription(FallManagerState, "fall_manager_state", collector(lock, states), FALL_STATE_QOS)
        client.node.create_subscription(JointState, "joint_setpoints", collector(lock, setpoints), 1000)
        client.node.create_subscription(DiagnosticArray, "diagnostics", collector(lock, diagnostics), 100)

        def first(state: int, since: int = 0) -> FallManagerState:
            def found():
                with lock:
                    return next((m for m in states[since:] if m.state == state), None)
            return poll_until(found, f"fall_manager_state {state}", PATIENCE)

        def protect_result() -> str | None:
            values = diagnostic_values(lock, diagnostics, "protect_result")
            return next((v for v in reversed(values) if v != "none yet"), None)

        def diagnostic(key: str) -> str | None:
            return latest_diagnostic(lock, diagnostics, key)

        first(FallManagerState.CONTROLLABLE)
        trunk = Trunk(client.node)
        trunk.start()
        try:
            poll_until(lambda: states[-1].source == "imu", "the manager on the IMU readings", PATIENCE)
            # a limp asked for before the manager has discovered the torque service is refused (held)
            poll_until(lambda: diagnostic("torque_service") == "found", "the manager finding the torque service",
                       PATIENCE)
            mark = len(states)
            # onto the belly, landing rocking until the manager has seen the fall coming: a starved
            # container takes the fall's readings later than reading_budget and rightly decides
            # nothing on them (then a still landing would be "lying, no fall seen", no limp)
            trunk.fall(1.0, rocking=ROCKING)
            seen = seconds(first(FallManagerState.FALLING, mark).since)
            trunk.rate = 0.0  # lying still
            result = poll_until(protect_result, "the limp's answer in the manager's diagnostics", PATIENCE)
            assert result.startswith("torque off: every joint released at t = "), result
            released = float(result.rsplit("t = ", 1)[1].split()[0])
            print(f"limp in force {released - seen:.3f} s after the reading that said falling")
            # after the reading that said falling; how soon is measured by `humanoid bench fall-protection
            # --real --emulate --protect limp` (protect_s): on a starved CI machine it took 1.15 s here
            assert released >= seen
            getting_up = first(FallManagerState.GETTING_UP, mark)
            assert getting_up.getup_motion.endswith("getup_belly.yaml")
            ended = getup_end(lock, states, mark)
            with lock:
                limp = [seconds(m.header.stamp) for m in setpoints
                        if released < seconds(m.header.stamp) < seconds(getting_up.since)]
                after = [m for m in setpoints if seconds(m.header.stamp) > seconds(getting_up.since)]
            assert not limp, f"{len(limp)} set-points written while limp"
            assert after and max(abs(p - h) for p, h in zip(after[-1].position, home, strict=True)) < 1e-3
            trunk.pitch, trunk.rate = 0.0, 0.0
            up = first(FallManagerState.CONTROLLABLE, states.index(ended))
            assert "up after get-up attempt 1" in up.cause, up.cause
        finally:
            trunk.stop()


def test_a_limp_without_the_robot_interface_is_refused_and_the_robot_held(tmp_path):
    """``protect: limp`` with no robot interface to release the joints (its ``torque`` service
    not found): the manager says so in its diagnostics before any fall, and when the fall
    comes it logs why the limp was refused, holds instead (an empty trajectory: the robot
    interface stops every motion) and says so in its diagnostics; it keeps running."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from trajectory_msgs.msg import JointTrajectory

    from humanoid_control.nodes import fall_manager_node_spec
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph

    spec = fall_manager_node_spec("bioloid", {"protect": "limp", "auto_getup": False, "diagnostics_rate": 10.0})
    with Graph([spec], log_dir=tmp_path) as graph, RobotClient("limp_refused_test") as client:
        lock, states, diagnostics, trajectories = threading.Lock(), [], [], []
        client.node.create_subscription(FallManagerState, "fall_manager_state", collector(lock, states), FALL_STATE_QOS)
        client.node.create_subscription(DiagnosticArray, "diagnostics", collector(lock, diagnostics), 100)
        client.node.create_subscription(JointTrajectory, "joint_trajectory", collector(lock, trajectories),
                                        QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))

        def diagnostic(key: str) -> str | None:
            return latest_diagnostic(lock, diagnostics, key)

        trunk = Trunk(client.node)
        trunk.start()
        try:
            poll_until(lambda: states and states[-1].source == "imu"
                       and states[-1].state == FallManagerState.CONTROLLABLE, "the manager on the IMU readings",
                       PATIENCE)
            poll_until(lambda: diagnostic("torque_service") == "not found", "the manager saying no torque service",
                       PATIENCE)
            with lock:
                before = len(trajectories)
            trunk.fall(1.0, rocking=ROCKING)  # seen coming even if read late
            refused = poll_until(lambda: (r := diagnostic("protect_result")) and r != "none yet" and r,
                                 "the limp's outcome in the manager's diagnostics", PATIENCE)
            assert refused == ("limp refused (no torque service (the robot interface is not running)): "
                               "held instead"), refused
            with lock:
                assert len(trajectories) > before and trajectories[-1].points == [], trajectories  # the hold
            assert "protect: limp refused (no torque service" in graph.log_text(spec.name)
            assert graph.exited() == {}
        except BaseException:
            print(graph.log_text(spec.name)[-4000:])
            raise
        finally:
            trunk.stop()
