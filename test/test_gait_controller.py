"""The gait controller (``play_gait``) on the Bioloid quadruped: the same gait plays on the
simulation (``humanoid sim``'s graph) and on the hardware node driving the emulated bus
(``humanoid real --emulate``), and sends the same joint set-points on both, the simulation in
lockstep (the controller answers each state) and the bus at real time: a controller written
for lockstep runs unchanged on the robot (issue 23 item 6); the best gait of
a small ``humanoid optimize-gait`` search plays through the action; a cancel returns the
robot to its stance; bad goals are refused with the reason, and the node plays on.

What users rely on: a gait's set-points are a function of the gait, its frequency and the
elapsed robot time (recorded here from ``joint_trajectory``, as any subscriber sees them),
not of the machine or the back end; the robot stands in its stance afterwards, unfallen.
Both graphs are the default ones: the balance monitor's fall estimate (no IMU on the bus)
must not stop a gait as a fall (it once said FELL 2.3 s into a trot on the emulated bus;
every gait goes through the estimate in humanoid_core/test/test_fall_estimate_twin.py).

The two graphs share the test's ROS domain, so they run one after the other; each is started
once and everything the checks need is collected while it runs (on the simulation also
``humanoid play-gait``, the command, run twice against it: to its end through its entry point
in the test's process, where what is checked is its output (it plays an IK gait file, the
shipped flat trot, which the node reads from the file the command names), and as a
process of its own stopped with Ctrl-C). A few seconds of gait each.

Each graph is also where the quadruped is first seen behind the robot interface (these checks
had a graph of their own each, the same default graphs, in test_bioloid_quadruped_graphs.py):
before any gait the simulated quadruped stands 2 s in its home pose unfallen, publishes the
16 joints in the robot's order, rests on four feet by balance_state and plays a library motion
(then it is reset, standing as the graph started it, for the gaits); the hardware graph
publishes the 16 joints and a four-foot support from the model. What they check is the graph
as it comes up, which a gait played after them cannot change.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from cli_entry import entry_point
from process_priority import priorities
from system_support import LIVE_GRAPHS, on_emulated_bus, print_logs, running
from trajectory_msgs.msg import JointTrajectory

from humanoid_bringup import real_nodes
from humanoid_control.nodes import CONTROL_CONTAINER
from humanoid_control.ros import RobotClient, poll_until, seconds, topics
from humanoid_core.loop import InterfaceParameters
from humanoid_core.processes import Graph, NodeSpec
from humanoid_core.quadruped_gaits import GaitControllerParameters, load_gait
from humanoid_description import load_model
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.action import PlayGait
from humanoid_interfaces.msg import BalanceState
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid_quadruped"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 180.0
PERIOD = GaitControllerParameters.for_robot(ROBOT).period
#: The pace at 0.5 Hz stands with the servos moving at the set-points' speeds, as the robot
#: interface drives them, on the default foot path (the report's rules of thumb; the trot at 0.5 Hz
#: falls within 1.5 s on it: docs/quadruped.md).
GAIT, FREQUENCY, DURATION = "pace", 0.5, 2.0
#: An IK gait file: the trot on the flat path, 0.5 Hz (docs/quadruped.md).
TROT_FILE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "trot_flat.yaml"
#: The simulation in lockstep with the graph's controllers: the gait controller answers each
#: state, so a loaded machine slows the simulation instead of leaving the controller behind.
SIM_GRAPH = {"lockstep": True}  # the default graph: the balance monitor's fall estimate and the veto on
#: s of robot time after a goal's result before the robot's final pose is measured.
SETTLE = 0.5
#: s of robot time the simulation runs at a time while a goal to cancel plays (:func:`play`).
CANCEL_STEP = 0.05


class TrajectoryLog:
    """Every joint_trajectory message, as any subscriber sees it."""

    def __init__(self, client: RobotClient) -> None:
        self.messages: list[JointTrajectory] = []
        self._lock = threading.Lock()
        client.node.create_subscription(JointTrajectory, "joint_trajectory", self._on_message, 100)

    def _on_message(self, msg: JointTrajectory) -> None:
        with self._lock:
            self.messages.append(msg)

    def take(self) -> list[JointTrajectory]:
        with self._lock:
            taken, self.messages = self.messages, []
        return taken


def setpoints(messages: Sequence[JointTrajectory], started: float) -> tuple[dict[int, tuple], list[int]]:
    """What the robot was told to follow, from the gait's first set-point on (the lead-in before
    it starts where each robot happened to stand): set-point number -> (positions, velocities),
    each trajectory replacing the ones before it from its start (its header stamp) on, as the
    robot interface does (a controller that resumes a motion later sends it from its start on,
    its first point a lead-in after it: the points sent before for that span are not followed);
    and the set-points a later trajectory sent differently (a stop replaces what was sent ahead)."""
    found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    at: dict[int, float] = {}  # each set-point's time after ``started`` (s)
    changed: list[int] = []
    for msg in messages:
        stamp = seconds(msg.header.stamp) - started
        points = {round((stamp + seconds(p.time_from_start)) / PERIOD): p for p in msg.points}
        replaced = {k: found.pop(k) for k in [k for k in found if at[k] > stamp + 1e-6]}
        for k, point in points.items():
            if k < 0:
                continue
            found[k] = (np.array(point.positions), np.array(point.velocities))
            at[k] = stamp + seconds(point.time_from_start)
            if k in replaced and not np.array_equal(replaced[k][0], found[k][0]):
                changed.append(k)
    return found, changed


class LatestBalance:
    """The balance_state messages stamped after a given robot time."""

    def __init__(self, client: RobotClient) -> None:
        self.messages: list[BalanceState] = []
        self._lock = threading.Lock()
        self._client = client
        self._subscription = client.node.create_subscription(BalanceState, "balance_state", self._on_message, 100)

    def _on_message(self, msg: BalanceState) -> None:
        with self._lock:
            self.messages.append(msg)

    def after(self, robot_time: float) -> list[BalanceState]:
        with self._lock:
            return [m for m in self.messages if seconds(m.header.stamp) > robot_time]

    def close(self) -> None:
        """No more balance_state once the checks have theirs: in lockstep the simulation
        publishes them as fast as the graph runs, and the client's executor need not take them."""
        with self._client.between_turns():
            self._client.node.destroy_subscription(self._subscription)


@dataclass
class Arrival:
    """The quadruped's graph as it comes up, before any goal: the joint_states' names and first
    positions, balance_state from the given robot time on, and (simulation) the robot 2 s on."""

    names: list[str]
    positions: list[float]
    balance: list[BalanceState]
    base_pose_seen: bool = False
    fallen: bool | None = None  # 2 s after the first state
    held: dict[str, float] = field(default_factory=dict)  # measured then
    nod: tuple[int, str] | None = None  # the library motion's status and error string
    fallen_after_nod: bool | None = None


def arrive_on_simulation(client: RobotClient) -> Arrival:
    """The simulated quadruped stands 2 s, rests on four feet, plays "nod"; then it is reset."""
    balance = LatestBalance(client)
    state = client.wait_for_joint_states(PATIENCE)
    seen = poll_until(lambda: client.base_pose, "a ground_truth/base_pose message", PATIENCE) is not None
    start = client.now()
    client.wait_until(start + 2.0, timeout=PATIENCE)
    arrival = Arrival(list(state.name), list(state.position), [], seen, client.fallen, client.current_positions())
    arrival.balance = poll_until(lambda: len(s := balance.after(start + 1.0)) >= 20 and s, "20 balance_state",
                                 PATIENCE)
    balance.close()
    response = client.play_motion("nod", timeout=PATIENCE)
    arrival.nod, arrival.fallen_after_nod = (response.status, response.result.error_string), client.fallen
    client.reset(timeout=PATIENCE)  # the gaits start from the home pose, as the graph started the robot
    return arrival


def arrive_on_hardware(client: RobotClient) -> Arrival:
    """The hardware graph's first joint_states and 20 balance_state after it."""
    balance = LatestBalance(client)
    state = client.wait_for_joint_states(PATIENCE)
    start = seconds(state.header.stamp)
    states = poll_until(lambda: len(s := balance.after(start)) >= 20 and s, "20 balance_state", PATIENCE)
    balance.close()
    return Arrival(list(state.name), list(state.position), states)


@dataclass
class Played:
    """One play_gait goal: its result, feedback and the set-points it sent."""

    status: int
    result: PlayGait.Result
    feedback: list[PlayGait.Feedback] = field(default_factory=list)
    setpoints: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    changed: list[int] = field(default_factory=list)  # set-points sent again differently
    final: dict[str, float] = field(default_factory=dict)  # measured positions once the result came
    fallen: bool | None = None


def play(client: RobotClient, log: TrajectoryLog, gait: str, frequency: float = 0.0, duration: float = DURATION,
         cancel_after: float | None = None, meanwhile: Callable[[], None] | None = None) -> Played:
    """One goal to its end, or canceled once its feedback says ``cancel_after`` s of gait have
    played: a second client lets the simulation run in steps of ``CANCEL_STEP`` s (robot time)
    from the goal's sending to the cancel's acceptance, so that the cancel comes within a
    step of that time however slow the machine (a client that only watches the feedback
    cancels later in robot time the busier the machine is). ``meanwhile`` is called once the
    goal to cancel plays, the simulation held at a step (robot time does not pass in it)."""
    log.take()
    feedback: list[PlayGait.Feedback] = []
    if cancel_after is None:
        handle = client.send_gait(gait, frequency, duration, feedback=feedback.append, timeout=PATIENCE)
    else:
        with RobotClient("gait_test_canceller", lockstep=True) as canceller:
            held = canceller.lockstep.run_to(canceller.now() + PERIOD, PATIENCE)  # joins the lockstep
            handle = client.send_gait(gait, frequency, duration, feedback=feedback.append, timeout=PATIENCE)
            while not any(f.elapsed >= cancel_after for f in feedback):
                if meanwhile is not None and any(f.stage == "playing" for f in feedback):
                    meanwhile, then = None, meanwhile
                    then()
                held = canceller.lockstep.run_to(held + CANCEL_STEP, PATIENCE)
            if meanwhile is not None:  # playing since the first step
                meanwhile()
            client.cancel(handle)
    response = client.wait_result(handle, PATIENCE, "play_gait result")
    client.wait_until(client.now() + SETTLE, timeout=PATIENCE)  # the servos settle where the set-points ended
    played = Played(response.status, response.result, feedback, final=client.current_positions(PATIENCE),
                    fallen=client.fallen)
    if response.result.started.sec or response.result.started.nanosec:
        played.setpoints, played.changed = setpoints(log.take(), seconds(response.result.started))
    return played


@dataclass
class Report:
    arrival: Arrival
    trot: Played
    searched: Played | None = None
    canceled: Played | None = None
    refused: dict[str, Played] = field(default_factory=dict)
    sent_refused: list[JointTrajectory] = field(default_factory=list)  # joint_trajectory while refusing
    busy: Played | None = None
    command: subprocess.CompletedProcess | None = None  # humanoid play-gait to its end
    interrupted: tuple[int, str, str] | None = None  # humanoid play-gait stopped by Ctrl-C: code, stdout, stderr
    container_priorities: set[int] = field(default_factory=set)  # its threads' and session's nice values
    container_log: str = ""





def small_search(output: Path) -> Path:
    """A gait search of 2 particles x 1 iteration of 1 s, in this process's way (no Ray),
    through the command's entry point in the test's process: what the gait tests need is the
    search's saved best, not its process (no interpreter start and imports paid for it)."""
    done = entry_point("optimize-gait", "--particles", "2", "--iterations", "1", "--seconds", "1",
                       "--workers", "0", "--output", output)
    assert done.returncode == 0, done.stderr[-3000:]
    return output


def refuse(client: RobotClient, log: TrajectoryLog, goals: dict[str, tuple[str, float, float]]
           ) -> tuple[dict[str, Played], list[JointTrajectory]]:
    """Each goal to its result, one after the other; then what joint_trajectory carried from
    the first goal's sending to ``SETTLE`` s of robot time after the last result (nothing,
    for goals refused)."""
    log.take()
    played = {}
    for name, (gait, frequency, duration) in goals.items():
        handle = client.send_gait(gait, frequency, duration, timeout=PATIENCE)
        response = client.wait_result(handle, PATIENCE, "play_gait result")
        played[name] = Played(response.status, response.result)
    client.wait_until(client.now() + SETTLE, timeout=PATIENCE)
    return played, log.take()


def run_simulation(log_dir: Path, search: Path) -> Report:
    """The simulation graph. The test's client is closed before ``humanoid play-gait`` runs in
    this process (the command makes and shuts down a ROS context of its own)."""
    graph = Graph(sim_nodes(ROBOT, **SIM_GRAPH), log_dir=log_dir).start()
    try:
        with RobotClient("gait_test") as client:
            poll_until(lambda: client.joint_state is not None or graph.exited(), "joint_states from the robot node",
                       PATIENCE)
            assert not graph.exited(), f"node(s) exited: {graph.exited()}"
            arrival = arrive_on_simulation(client)
            log = TrajectoryLog(client)
            report = Report(arrival, trot=play(client, log, GAIT, FREQUENCY))
            report.searched = play(client, log, str(search), duration=1.5)
            client.reset(timeout=PATIENCE)  # a searched gait may have fallen: the robot stands in its home pose again
            report.refused, report.sent_refused = refuse(client, log, {
                "unknown gait": ("tolt", 0.0, 1.0), "no duration": (GAIT, 0.0, 0.0),
                "too fast": ("pace", 2.0, 1.0), "beyond the range": (GAIT, 3.0, 1.0)})
            busy: list[Played] = []

            def another_goal() -> None:  # while the pace to cancel plays: one gait at a time
                second = client.wait_result(client.send_gait(GAIT, 1.0, 1.0, timeout=PATIENCE), PATIENCE)
                busy.append(Played(second.status, second.result))

            report.canceled = play(client, log, "pace", 1.0, 20.0, cancel_after=0.5, meanwhile=another_goal)
            report.busy = busy[0]
        # the command's logic (progress, the JSON result) through its entry point in this process;
        # Ctrl-C in a process of its own, as a user stops it
        report.command = entry_point("play-gait", str(TROT_FILE), "--duration", "2", "--json")
        report.interrupted = interrupted_play_gait()
        return report
    except BaseException:
        print_logs(graph, 4000)
        raise
    finally:
        graph.stop()


def interrupted_play_gait() -> tuple[int, str, str]:
    """``humanoid play-gait`` on the running simulation, as a user runs it, stopped with Ctrl-C
    as soon as the gait plays: exit status, stdout, stderr. A client of the test holds the
    simulation (a lockstep participant) while the command's interpreter starts, until the
    command's node is seen: a lockstep simulation nobody holds runs as fast as it can, and
    spent the seconds of that start simulating a robot standing still. Held, it sends its
    state again (the command's first state and ground truth); the command sees nothing of it."""
    import signal

    with RobotClient("gait_test_holder", lockstep=True) as holder:
        holder.lockstep.run_to(holder.now() + PERIOD, PATIENCE)  # joins the lockstep, holds the simulation
        before = command_endpoints(holder)
        process = subprocess.Popen(["humanoid", "play-gait", "pace", "--frequency", "1", "--duration", "30"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        poll_until(lambda: command_endpoints(holder) - before or process.poll() is not None,
                   "the command's node", PATIENCE)
    try:
        assert process.stderr is not None
        for line in process.stderr:  # progress, until the gait plays
            if line.startswith("playing:"):
                break
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=PATIENCE)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, stdout, stderr


def command_endpoints(client: RobotClient) -> set[tuple[int, ...]]:
    """The robot_state subscriptions of nodes named as the command's, by endpoint: a new one is
    the command's process (the in-process run's node, gone, stays listed by name for seconds,
    and the simulation was once let go at once, to run free through the command's start)."""
    return {tuple(info.endpoint_gid) for info in client.node.get_subscriptions_info_by_topic("/" + topics.ROBOT_STATE)
            if info.node_name == "humanoid_play_gait"}


def hardware_nodes(port: str) -> list[NodeSpec]:
    return on_emulated_bus(real_nodes(ROBOT, port=port))  # the default graph, as `humanoid real` starts it


def run_hardware(log_dir: Path) -> Report:
    with emulator_process(ROBOT, 1, 1_000_000, timing=False) as port, \
            running(hardware_nodes(port), log_dir, "gait_test") as client:
        arrival = arrive_on_hardware(client)
        report = Report(arrival, trot=play(client, TrajectoryLog(client), GAIT, FREQUENCY))
        graph = LIVE_GRAPHS[-1]  # the graph `running` holds
        report.container_priorities = priorities(graph.processes[CONTROL_CONTAINER].pid)
        report.container_log = graph.log_text(CONTROL_CONTAINER)
        return report


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The simulation, then the hardware node on the emulated bus (never both at once)."""
    search = small_search(tmp_path_factory.mktemp("search") / "search")
    return {"search": search, "sim": run_simulation(tmp_path_factory.mktemp("sim_logs"), search),
            "hw": run_hardware(tmp_path_factory.mktemp("hw_logs"))}


def test_simulated_quadruped_stands_plays_a_motion_and_rests_on_four_feet(reports):
    """The quadruped stands in its home pose without falling, its joint_states list the 16
    joints in the robot's order, balance_state says it stands on its four ball feet with the
    CoM inside them, and play_motion plays its motions (the simulation graph as it came up)."""
    model = load_model(ROBOT)
    arrival = reports["sim"].arrival
    assert arrival.names == list(model.joints.names)
    assert arrival.base_pose_seen
    assert arrival.fallen is False
    assert np.max(np.abs(model.joints.to_array(arrival.held) - model.home_positions())) < 0.05
    # in the world frame from the ground truth; when that reading is older than the monitor's
    # sensor_timeout (a loaded machine delays it), from the model on flat ground (a foot's frame)
    frames = {"world"} | {foot.sole for foot in model.config.feet.values()}
    for state in arrival.balance:
        assert state.header.frame_id in frames
        assert len(state.support_polygon.points) == 4 and state.stable
        assert state.stability_margin > 0.02  # the CoM well inside the four feet (describe: 39.9 mm)
    status, error = arrival.nod
    assert status == GoalStatus.STATUS_SUCCEEDED, error
    assert arrival.fallen_after_nod is False


def test_emulated_hardware_graph_serves_the_quadruped(reports):
    """The hardware graph on the emulated bus as it came up: the 16 joints in the robot's order,
    every one read; no IMU, no foot sensors: the model's feet on flat ground, all four level."""
    model = load_model(ROBOT)
    arrival = reports["hw"].arrival
    assert arrival.names == list(model.joints.names)
    assert np.all(np.isfinite(arrival.positions))
    last = arrival.balance[-1]
    assert last.header.frame_id in {foot.sole for foot in model.config.feet.values()}
    assert len(last.support_polygon.points) == 4 and np.isfinite(last.stability_margin)


def test_the_robots_control_container_runs_at_its_loops_priority(reports):
    """On the robot the control container (the gait controller streaming set-points, the
    trajectory generator, the watchers) runs at the driver loop's ``loop_nice`` (-5, the
    default), every thread of it and its session: at the default priority a machine busy
    with other work starved it, the gait paused and the robot refused its late set-points.
    Where the user may not raise a priority, the log says so and it runs at the default."""
    hw = reports["hw"]
    if "cannot set the control container's priority" in hw.container_log:
        assert hw.container_priorities == {0}
    else:
        assert hw.container_priorities == {InterfaceParameters().loop_nice} == {-5}


def places_in(sent: Sequence[tuple[np.ndarray, np.ndarray]], plan: Sequence[tuple[np.ndarray, np.ndarray]]
              ) -> list[int | None]:
    """For each set-point ``sent``, its place in ``plan``: the first set-point of ``plan`` with
    the same positions at or after the previous match (None: none; a set-point of no plan)."""
    at: dict[bytes, list[int]] = {}
    for j, (positions, _) in enumerate(plan):
        at.setdefault(positions.tobytes(), []).append(j)
    places: list[int | None] = []
    last = 0
    for positions, _ in sent:
        place = next((j for j in at.get(positions.tobytes(), []) if j >= last), None)
        places.append(place)
        last = last if place is None else place
    return places


def unmatched_runs(places: Sequence[int | None], sent: Sequence[tuple[np.ndarray, np.ndarray]],
                   plan: Sequence[tuple[np.ndarray, np.ndarray]], first: int) -> str:
    """Where the set-points of no plan lie after ``first`` (runs of indices in ``sent``, the
    places matched either side, and how far each run's first set-point is from the nearest
    of ``plan``): what a failed comparison needs to be understood."""
    runs: list[str] = []
    i = first
    while i < len(places):
        if places[i] is not None:
            i += 1
            continue
        j = i
        while j < len(places) and places[j] is None:
            j += 1
        nearest = min(float(np.abs(sent[i][0] - p).max()) for p, _ in plan)
        runs.append(f"[{i}, {j}) after place {places[i - 1]} before {places[j] if j < len(places) else None}"
                    f" (nearest {nearest:.4f} rad)")
        i = j
    return f"{len(sent)} sent, first matched {first}; unmatched runs: " + "; ".join(runs)


def gait_steps(played: Played) -> int:
    return round(played.result.elapsed / PERIOD)


def test_a_gait_plays_on_the_simulation_and_ends_standing_in_the_stance(reports):
    trot = reports["sim"].trot
    assert trot.status == GoalStatus.STATUS_SUCCEEDED, trot.result.error_string
    assert trot.result.gait == GAIT and trot.result.frequency == FREQUENCY
    assert trot.result.elapsed == pytest.approx(DURATION)
    assert trot.fallen is False
    stages = [f.stage for f in trot.feedback]
    assert "playing" in stages and stages.index("playing") > stages.index("starting")
    elapsed = [f.elapsed for f in trot.feedback if f.stage == "playing"]
    assert elapsed == sorted(elapsed) and 0.0 < elapsed[-1] <= DURATION
    model = load_model(ROBOT)
    held = model.joints.to_array(trot.final)
    assert np.abs(held - model.home_positions()).max() < 0.05  # in the stance (the servos' sag aside)


def test_the_set_points_sent_are_the_same_on_the_simulation_and_on_the_emulated_bus(reports):
    """Recorded from joint_trajectory on both: nearly every set-point the bus was sent from the
    gait's first on (the gait, then the return to the stance) is one the simulation was sent, in
    the same order, nearly all of them sent to both; and the simulation's are the gait's own
    (GaitPlayer: what humanoid gaits measures) at their elapsed time."""
    sim, hw = reports["sim"].trot, reports["hw"].trot
    assert hw.status == GoalStatus.STATUS_SUCCEEDED, hw.result.error_string
    assert sim.changed == []  # a set-point sent again is sent the same
    steps = gait_steps(sim)
    assert gait_steps(hw) == steps == round(DURATION / PERIOD)
    # The gait's set-points in the gait's order. On the bus, at real time, a controller starved
    # for longer than its lead pauses the gait (the robot holds the last set-point sent, and the
    # rest follows later by that much), a trajectory that reached the robot too late is refused
    # (its set-points were sent, not followed), and a robot that did not take what was sent is
    # led in again from where it stands (loop.setpoint_window): each of the bus's set-points is
    # matched to the simulation's (lockstep: never paused), its place in the gait being the first
    # equal set-point at or after the previous one's (the pace repeats postures), the lead-ins
    # (set-points of no gait) left out.
    sim_sent = [sim.setpoints[k] for k in sorted(sim.setpoints)]
    hw_sent = [hw.setpoints[k] for k in sorted(hw.setpoints)]
    places = places_in(hw_sent, sim_sent)
    hw_plan = [(i, place) for i, place in enumerate(places) if place is not None]
    first = hw_plan[0][0]  # the lead-in from where the robot stood before it: no gait's (47 in a loaded run)
    assert len(hw_plan) >= 0.9 * (len(hw_sent) - first), \
        "more than a tenth of the bus's set-points from the gait's first on are no gait's in order: " \
        + unmatched_runs(places, hw_sent, sim_sent, first)
    assert hw_plan[0][1] <= 5  # a controller behind its readings at the start plays the gait late, from its start
    np.testing.assert_array_equal(sim_sent[hw_plan[-1][1]][0], sim_sent[-1][0])  # the last sent: the stance
    assert len({place for _, place in hw_plan}) >= 0.9 * (steps + 100)  # the gait and its return to the stance
    for i, place in hw_plan:
        if 0 < i < len(places) - 1 and places[i - 1] == place - 1 and places[i + 1] == place + 1:
            # within a run of consecutive set-points (beside a lead-in or a pause the velocity is the join's)
            np.testing.assert_array_equal(hw_sent[i][1], sim_sent[place][1], err_msg=f"velocity at set-point {place}")
    common = sorted(sim.setpoints)
    reference = load_gait(load_model(ROBOT), GAIT, PERIOD, FREQUENCY)
    for k in sorted(k for k in common if k <= steps):
        np.testing.assert_array_equal(sim.setpoints[k][0], reference.setpoint(k), err_msg=f"gait set-point {k}")


def test_the_best_gait_of_a_search_plays_through_play_gait(reports):
    import json

    best = json.loads((reports["search"] / "search.json").read_text())["best"]["parameters"]
    searched = reports["sim"].searched
    assert searched.status == GoalStatus.STATUS_SUCCEEDED, searched.result.error_string
    assert searched.result.gait.startswith(f"cpg {best['structure']} (best of")
    assert searched.result.frequency == pytest.approx(best["frequency"])
    assert searched.result.elapsed == pytest.approx(1.5)
    reference = load_gait(load_model(ROBOT), str(reports["search"]), PERIOD)
    sent = sorted(k for k in searched.setpoints if k <= gait_steps(searched))
    assert len(sent) >= 0.9 * gait_steps(searched)
    for k in sent:
        np.testing.assert_array_equal(searched.setpoints[k][0], reference.setpoint(k), err_msg=f"set-point {k}")


def test_a_cancel_returns_to_the_stance_from_where_the_gait_is(reports):
    canceled = reports["sim"].canceled
    assert canceled.status == GoalStatus.STATUS_CANCELED
    assert canceled.result.error_code == PlayGait.Result.CANCELED
    assert 0.5 <= canceled.result.elapsed < 2.0  # stopped within the command lead of the cancel, not at 20 s
    assert canceled.fallen is False
    model = load_model(ROBOT)
    assert np.abs(model.joints.to_array(canceled.final) - model.home_positions()).max() < 0.05
    last = max(canceled.setpoints)
    np.testing.assert_allclose(canceled.setpoints[last][0], model.home_positions(), atol=1e-9)
    assert canceled.changed  # the set-points sent ahead of the cancel were replaced by the return
    assert "stopping" in [f.stage for f in canceled.feedback]


def test_bad_goals_are_refused_with_the_reason_and_one_gait_plays_at_a_time(reports):
    """The bad goals are sent one after the other, and nothing is sent on joint_trajectory from
    the first to SETTLE s of robot time after the last refusal. The second goal is sent while
    the pace canceled above plays: the refusal needs no state of the robot, so it comes while
    the canceller holds the simulation, and the cancel's timing is untouched."""
    refused = {name: (p.status, p.result.error_code, p.result.error_string)
               for name, p in reports["sim"].refused.items()}
    invalid = PlayGait.Result.INVALID_GOAL
    assert refused["unknown gait"][:2] == (GoalStatus.STATUS_ABORTED, invalid)
    assert "unknown gait 'tolt'" in refused["unknown gait"][2] and "trot" in refused["unknown gait"][2]
    assert refused["no duration"][:2] == (GoalStatus.STATUS_ABORTED, invalid)
    assert "duration must be a finite number of seconds > 0" in refused["no duration"][2]
    assert refused["too fast"][:2] == (GoalStatus.STATUS_ABORTED, invalid)
    assert "pace at 2 Hz drives" in refused["too fast"][2] and "beyond its limit" in refused["too fast"][2]
    assert refused["beyond the range"][:2] == (GoalStatus.STATUS_ABORTED, invalid)
    assert "3 Hz is outside 0.5-2 Hz" in refused["beyond the range"][2]
    assert reports["sim"].sent_refused == []  # nothing sent, up to SETTLE s after the last refusal
    busy = reports["sim"].busy
    assert (busy.status, busy.result.error_code) == (GoalStatus.STATUS_ABORTED, PlayGait.Result.CANNOT_START)
    assert "a gait is playing (pace)" in busy.result.error_string


def test_humanoid_play_gait_prints_progress_and_the_result_and_ctrl_c_cancels(reports):
    """The command on a running simulation (the module's, after the goals above): progress on
    stderr, the result as JSON; Ctrl-C cancels the goal (the robot returns to its stance) and
    the command says so."""
    import json

    done = reports["sim"].command
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["gait"], report["status"], report["elapsed_s"]) == (f"trot ({TROT_FILE})", "succeeded", 2.0)
    assert report["fell"] is False and report["distance_m"] > 0.02, report  # it goes forward (ground truth)
    # the odometry against the ground truth over the goal: it went the robot's way (an odometry that
    # stood still would be off by the whole distance). Measured over 2 s of this trot in lockstep,
    # four goals in a row: 54-61 mm moved, the odometry 8-24 mm off (15-44 %), and as far off in
    # heading as the robot turned by slipping (3.2-5.2 deg; the stance feet's odometry cannot see it).
    # How far it slips depends on the stance the goal starts from: 16 goals from one stance, quiet
    # and beside two CPU hogs, turned -0.6..4.7 deg, each with the opposite heading error within
    # 0.4 deg. So the heading is checked against the turn made: off by at most the turn the
    # odometry missed, not a turn of its own (it once made up 12 deg after this module's goals,
    # counting the lower swinging foot of the trot as standing: docs/walking.md, Odometry).
    assert report["odometry_error_m"] < 0.7 * report["distance_m"], report
    assert abs(report["odometry_heading_error_deg"]) <= abs(report["turn_deg"]) + 3.0, report
    stages = [line.split(":")[0] for line in done.stderr.splitlines()]
    assert {"starting", "playing", "stopping"} <= set(stages), done.stderr

    returncode, stdout, stderr = reports["sim"].interrupted
    assert returncode == 1, stderr
    assert "canceling: back to the stance" in stderr
    assert "pace at 1 Hz:" in stdout and "canceled" in stdout
