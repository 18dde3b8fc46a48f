"""A client of the shared robot interface, as any controller would use it.

Used by the demo, the benchmarks, the experiments, the trajectory generator and the
system tests of every package: it talks to the robot only through its topics, action
and services, so it cannot tell the simulator from the hardware. Spins its own node in a background thread; every wait
is event-driven with a timeout.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import rclpy
from action_msgs.msg import GoalStatus
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, Vector3
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from humanoid_control.ros import robot_state, topics
from humanoid_control.ros.action_client import ActionClient
from humanoid_control.ros.action_result import (
    ASK_AGAIN_AFTER,
    ASK_AGAIN_TIMES,
    ResultWaiter,
    first_answer,
    wait_until_answering,
)
from humanoid_control.ros.lockstep import LockstepParticipant
from humanoid_control.ros.matched_publisher import heard_by_all
from humanoid_control.ros.node_main import destroy_whole
from humanoid_control.ros.ros_time import seconds, to_duration, to_time
from humanoid_control.ros.state_feed import StateFeed
from humanoid_interfaces.action import FollowJointTrajectory, PlayGait, PlayMotion
from humanoid_interfaces.msg import JointTolerance
from humanoid_interfaces.srv import (
    ApplyPush,
    CheckSelfCollision,
    CheckTrajectorySelfCollision,
    ResetSimulation,
    StepSimulation,
)

if TYPE_CHECKING:
    from humanoid_core.motion import Playback

T = TypeVar("T")

#: s: one turn of the client's executor; an action client is made between two.
CLIENT_TURN = 0.05

#: joint_states messages queued for this client before the oldest is dropped.
JOINT_STATES_DEPTH = 1000
#: Lockstep: robot seconds the held simulation is run further while a goal's result has not
#: come (:meth:`RobotClient.held_result`).
LOCKSTEP_LOOK = 0.05
#: Lockstep: wall seconds a goal's result is waited for at a held state before the simulation
#: goes on a look; generous, or a busy machine's runs would differ.
LOCKSTEP_RESULT_WAIT = 30.0


class RobotClientError(RuntimeError):
    """The robot did not answer in time, or answered with an error."""


def poll_until(condition: Callable[[], T], what: str, timeout: float = 30.0, interval: float = 0.05) -> T:
    """Poll ``condition`` until it returns something truthy (which is returned); after
    ``timeout`` seconds raise :class:`RobotClientError` naming ``what``. For conditions no
    message signals (a diagnostics entry changing, a register of an emulated servo)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise RobotClientError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)
    return value


def wait_until_heard(node: Node, publisher, timeout: float) -> None:
    """Until ``publisher`` (of ``node``) is matched with every subscription the graph shows on
    its topic (:func:`~humanoid_control.ros.matched_publisher.heard_by_all`); after ``timeout``
    s raise :class:`RobotClientError`. Publish a command only then: sent earlier, right after
    the robot came up, it could be lost without an error on either side."""
    poll_until(lambda: heard_by_all(node, publisher),
               f"every subscription of {publisher.topic_name} matched with {node.get_name()}'s publisher", timeout,
               interval=0.002)


def action_graph_view(node: Node, action: str) -> str:
    """What ``node`` sees of an action's server in the graph: servers of its three services,
    publishers of its two topics and the nodes hosting them. A server that is running but
    listed only in part is discovery still under way; one listed whole that is not ready, a
    client not matched; one listed more than once, another node (or a node left running)
    serving the same name."""
    full = node.resolve_service_name(action)
    services = ", ".join(f"{kind} {node.count_services(f'{full}/_action/{kind}')}"
                         for kind in ("send_goal", "cancel_goal", "get_result"))
    topics_ = ", ".join(f"{kind} {node.count_publishers(f'{full}/_action/{kind}')}" for kind in ("feedback", "status"))
    hosts = Counter(f"{info.node_namespace.rstrip('/')}/{info.node_name}"
                    for info in node.get_publishers_info_by_topic(f"{full}/_action/status"))
    named = ", ".join(f"{host} ({count}x)" if count > 1 else host for host, count in sorted(hosts.items()))
    return f"the graph lists for {full}: servers of {services}; publishers of {topics_}; hosted by {named or 'no node'}"


def make_trajectory(joint_names: Sequence[str], times: Sequence[float], positions: Sequence[Sequence[float]],
                    velocities: Sequence[Sequence[float]] | None = None,
                    accelerations: Sequence[Sequence[float]] | None = None,
                    start: float | None = None) -> JointTrajectory:
    """A JointTrajectory message; ``start`` (robot clock seconds) sets header.stamp."""
    msg = JointTrajectory()
    msg.joint_names = list(joint_names)
    if start is not None:
        msg.header.stamp = to_time(start)
    for i, (t, p) in enumerate(zip(times, positions, strict=True)):
        point = JointTrajectoryPoint(positions=np.asarray(p, dtype=float).tolist(),
                                     time_from_start=to_duration(float(t)))
        if velocities is not None:
            point.velocities = np.asarray(velocities[i], dtype=float).tolist()
        if accelerations is not None:
            point.accelerations = np.asarray(accelerations[i], dtype=float).tolist()
        msg.points.append(point)
    return msg


def playback_trajectory(playback: Playback) -> JointTrajectory:
    """A planned motion's dense samples as a JointTrajectory that starts on arrival."""
    samples = playback.trajectory
    return make_trajectory(samples.joint_names, samples.times, samples.positions,
                           samples.velocities, samples.accelerations)


@dataclass
class GoalOutcome:
    """What a follow_joint_trajectory goal ended with."""

    status: int  # action_msgs/GoalStatus
    error_code: int
    error_string: str
    feedback: list = field(default_factory=list)

    @classmethod
    def of(cls, response, feedback: list | None) -> GoalOutcome:
        """The outcome told by a GetResult ``response``, with the goal's ``feedback``."""
        return cls(response.status, response.result.error_code, response.result.error_string,
                   feedback if feedback is not None else [])

    @property
    def succeeded(self) -> bool:
        return self.status == GoalStatus.STATUS_SUCCEEDED

    @property
    def start_time(self) -> float | None:
        """Robot time at which the trajectory started (it starts when the goal arrives, or at
        its header stamp): feedback stamp minus its time from start, taken from the first
        feedback sent after the start (None without one)."""
        for message in self.feedback:
            elapsed = seconds(message.desired.time_from_start)
            if elapsed > 0.0:
                return seconds(message.header.stamp) - elapsed
        return None


#: action_msgs/GoalStatus codes by name, for errors.
STATUS_NAMES = {getattr(GoalStatus, name): name.removeprefix("STATUS_") for name in dir(GoalStatus)
                if name.startswith("STATUS_")}


class RobotClient:
    """Topics, action and services of one robot (and of the simulator, when there is one)."""

    def __init__(self, name: str = "humanoid_client", namespace: str = "", lockstep: bool = False,
                 standard_topics: bool = False) -> None:
        """``lockstep``: this client is a participant of a lockstep simulation: it answers each
        joint_states as it takes it, and holds the simulation at its first state until
        ``lockstep.go()`` or ``lockstep.paused_at(t)`` (the simulation then runs to t and
        waits there while the client acts). The robot's state comes from ``robot_state`` (one
        message per state: joint_states, the simulator's ground truth and fall flag); with
        ``standard_topics`` from ``joint_states``, ``clock``, ``fallen`` and
        ``ground_truth/base_pose`` instead, as a controller that knows only those would."""
        self._own_context = not rclpy.ok()
        if self._own_context:
            rclpy.init()
        self.node = Node(name, namespace=namespace)
        self._lock = threading.Lock()
        self._joint_state: JointState | None = None
        self._joint_event = threading.Event()
        self._recording: list[JointState] | None = None
        self._clock: float | None = None
        self._fallen: bool | None = None
        self._base_pose: PoseStamped | None = None
        self._diagnostics: DiagnosticArray | None = None
        self._feed: StateFeed | None = None  # robot_state's (not with standard_topics)
        self._service_clients: dict[str, object] = {}
        # a deep queue: a recording client must not lose readings while a simulation runs
        # faster than real time and this process is slow to take them (10 s at 100 Hz)
        if standard_topics:
            self.node.create_subscription(Clock, topics.CLOCK, self._on_clock,
                                          QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
        else:
            # the feed the container's nodes take their states from: states waiting behind a busy
            # client are taken at once, so an answer (a service's, an action's) does not wait
            # behind each of them in the executor's queue
            self._feed = StateFeed(self.node, JOINT_STATES_DEPTH)
        for topic, msg_type, handle, depth in (
                (robot_state.JOINT_STATES, JointState, self._on_joint_state, JOINT_STATES_DEPTH),
                (robot_state.FALLEN, Bool, self._on_fallen, 10),
                (robot_state.BASE_POSE, PoseStamped, self._on_pose, 10)):
            self.take_readings(topic, msg_type, handle, depth)
        self.node.create_subscription(DiagnosticArray, topics.DIAGNOSTICS, self._on_diagnostics, 10)
        self.lockstep = LockstepParticipant(self.node, start_held=True) if lockstep else None
        self.commands = self.node.create_publisher(JointState, topics.JOINT_COMMANDS, 10)
        self.trajectories = self.node.create_publisher(JointTrajectory, topics.JOINT_TRAJECTORY, 10)
        self._heard: set = set()  # publishers matched with every subscription once (send)
        self._turn = threading.Lock()  # held through each turn of the executor
        # callers waiting to act between two turns: the spinning thread lets them in first
        # (a lock is not fair: re-taken at once, it kept a caller out for seconds)
        self._gate = threading.Condition()
        self._waiting = 0
        self._turn_end = Future()  # completed to end the executor's current turn early
        self._action_clients: dict[tuple[type, str], ActionClient] = {}
        self._answered: set[int] = set()  # action clients whose server has answered them
        self.action = self.action_client(FollowJointTrajectory, topics.FOLLOW_JOINT_TRAJECTORY)
        #: The trajectory generator's play_motion action.
        self.motions = self.action_client(PlayMotion, topics.PLAY_MOTION)
        #: The gait controller's play_gait action (robots with gaits).
        self.gaits = self.action_client(PlayGait, topics.PLAY_GAIT)
        self._executor = EventsExecutor(context=self.node.context)  # the graph's nodes' executor (node_main)
        self._executor.add_node(self.node)
        self._closing = threading.Event()
        self._turns, self._turn_began = 0, time.monotonic()  # for spinning_report
        self._heard_at: float | None = None  # monotonic time of the last joint_states taken
        self._thread = threading.Thread(target=self._spin, name="robot-client", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self.node.context.ok() and not self._closing.is_set():
            with self._gate:  # a turn's end is made where close() and callers look for it
                self._gate.wait_for(lambda: self._waiting == 0)
                if self._closing.is_set():
                    return
                self._turn_end = Future()
            try:
                with self._turn:  # one turn (not spin_once: humanoid_control.ros.node_main.spin_while)
                    self._turns += 1
                    self._turn_began = time.monotonic()
                    self._executor.spin_until_future_complete(self._turn_end, timeout_sec=CLIENT_TURN)
            except Exception:  # shutting down while spinning
                if not rclpy.ok() or self._closing.is_set():
                    return
                raise

    def action_client(self, action_type: type, name: str) -> ActionClient:
        """This node's client of action ``name``, made once and kept (destroying an action
        client while the node spins is not safe in rclpy). It is made between two turns of
        the executor: rclpy's ActionClient registers itself with the node before it has
        finished its constructor, and an executor turn in between dies on the half-built
        client (seen: the client then stopped taking any message)."""
        key = (action_type, name)
        with self.between_turns():
            if key not in self._action_clients:
                self._action_clients[key] = ActionClient(self.node, action_type, name)
            return self._action_clients[key]

    def leave_lockstep(self) -> None:
        """The simulation goes on without this client (which then no longer slows it, and can
        no longer hold it); between two turns of the executor."""
        if self.lockstep is not None:
            with self.between_turns():
                self.lockstep.leave()

    @contextmanager
    def between_turns(self) -> Iterator[None]:
        """Hold the executor between two of its turns, ahead of the spinning thread: there a
        caller destroys a subscription it made on :attr:`node` (destroyed under a turn, rclpy
        raises in the spinning thread, which then dies). The turn is ended for the caller:
        rclpy's EventsExecutor ends one at its timeout only once no message is waiting, never
        while they keep coming faster than this client takes them."""
        with self._gate:
            self._waiting += 1
        self._end_turn()
        try:
            with self._turn:
                yield
        finally:
            with self._gate:
                self._waiting -= 1
                self._gate.notify_all()

    def _end_turn(self) -> None:
        """End the executor's current turn now (after the callback it is running, if any)."""
        with self._gate:
            turn_end = self._turn_end
        if not turn_end.done():
            turn_end.set_result(None)

    def close(self) -> None:
        """Stop spinning, then destroy the node whole, its action clients with it (destroying it
        under a spinning executor makes the executor raise). A context already shut down (rclpy's handler of SIGINT or
        SIGTERM) can send nothing: the simulation then sees this client's node go."""
        if self.node.context.ok():
            self.leave_lockstep()
        self._closing.set()
        self._end_turn()
        self._thread.join(timeout=5.0)
        self._executor.shutdown(timeout_sec=1.0)
        destroy_whole(self.node)
        if self._own_context:
            rclpy.try_shutdown()

    def __enter__(self) -> RobotClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- subscriptions --------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        self._heard_at = time.monotonic()
        with self._lock:
            self._joint_state = msg
            if self._recording is not None:
                self._recording.append(msg)
        self._joint_event.set()
        if self.lockstep is not None:
            self.lockstep.answered(msg.header.stamp)

    def _on_clock(self, msg: Clock) -> None:
        self._clock = seconds(msg.clock)

    def _on_fallen(self, msg: Bool) -> None:
        self._fallen = msg.data

    def _on_pose(self, msg: PoseStamped) -> None:
        self._base_pose = msg

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        self._diagnostics = msg

    def wait_for_joint_states(self, timeout: float = 30.0) -> JointState:
        """The next joint_states message (the first one when none was received yet)."""
        self._joint_event.clear()
        if not self._joint_event.wait(timeout):
            raise RobotClientError(f"no joint_states within {timeout:g} s: is the robot node running?")
        assert self._joint_state is not None
        return self._joint_state

    def send_command(self, msg: JointState, timeout: float = 30.0) -> None:
        """Publish streaming set-points on joint_commands (:meth:`send`)."""
        self.send(self.commands, msg, timeout)

    def send_trajectory(self, msg: JointTrajectory, timeout: float = 30.0) -> None:
        """Publish a trajectory on joint_trajectory (:meth:`send`)."""
        self.send(self.trajectories, msg, timeout)

    def send(self, publisher, msg, timeout: float = 30.0) -> None:
        """Publish ``msg``, the first time once ``publisher`` is heard by every subscription
        (:func:`wait_until_heard`, up to ``timeout`` s)."""
        if publisher not in self._heard:
            wait_until_heard(self.node, publisher, timeout)
            self._heard.add(publisher)
        publisher.publish(msg)

    def wait_for_subscriber(self, topic: str, node_name: str, timeout: float = 30.0) -> None:
        """Until node ``node_name`` subscribes to ``topic`` (a recorder, an observer): discovery
        matches endpoints one by one, so a node that is up may not take a topic yet."""
        topic = topic if topic.startswith("/") else f"/{topic}"

        def subscribed() -> bool:
            return any(info.node_name == node_name for info in self.node.get_subscriptions_info_by_topic(topic))

        poll_until(subscribed, f"{node_name} subscribed to {topic}", timeout)

    @property
    def joint_state(self) -> JointState | None:
        return self._joint_state

    def take_readings(self, topic: str, msg_type: type, callback: Callable[[Any], None],
                      depth: int = JOINT_STATES_DEPTH) -> None:
        """Call ``callback`` with each reading on ``topic``, one of the robot's per-state topics
        (``joint_states``, the feet's wrench and contact, the IMU, ``fallen``): from the robot's
        state message when this client takes it, where a state's readings come before its
        ``joint_states``, so a client held at a state
        (:meth:`~humanoid_control.ros.lockstep.LockstepParticipant.run_to`) has that state's
        readings and no later ones; else (``standard_topics``) from the topic, with a queue of
        ``depth`` (the states' queue is the feed's, JOINT_STATES_DEPTH)."""
        if self._feed is not None:
            self._feed.subscribe(topic, callback, self.node.get_name(), JOINT_STATES_DEPTH)
        else:
            self.node.create_subscription(msg_type, topic, callback, depth)

    def positions(self) -> dict[str, float]:
        """Latest measured positions by joint name."""
        msg = self._joint_state or self.wait_for_joint_states()
        return dict(zip(msg.name, msg.position, strict=True))

    def current_positions(self, timeout: float = 30.0) -> dict[str, float]:
        """Measured positions no older than the robot clock now (:meth:`now`).

        ``positions()`` is the latest joint_states this client has processed, which lags the
        robot while messages queue up (a simulation running faster than real time can be
        half a second ahead of it); this waits until the readings have caught up with the
        clock, so that what a controller does next starts from where the robot is. Only a
        client that hears the simulator's ``/clock`` (``standard_topics``) knows the robot
        clock apart from its readings: otherwise :meth:`now` is the latest reading taken,
        and a client behind the robot (a loaded machine, a command sharing its process) gets
        that reading. A reading the robot published after the call is the first one a
        subscription made after it takes (how the posing tests measure)."""
        now = self.now()
        deadline = time.monotonic() + timeout
        while (msg := self._joint_state) is None or seconds(msg.header.stamp) < now:
            if time.monotonic() > deadline:
                raise RobotClientError(f"no joint_states of robot time {now:.3f} s within {timeout:g} s")
            self._joint_event.clear()
            self._joint_event.wait(0.1)
        return dict(zip(msg.name, msg.position, strict=True))

    def now(self) -> float:
        """Robot time: the simulator's clock (``standard_topics``), or the latest joint state's stamp."""
        if self._clock is not None:
            return self._clock
        msg = self._joint_state or self.wait_for_joint_states()
        return seconds(msg.header.stamp)

    @property
    def carried(self) -> frozenset[str]:
        """The standard topics (relative names) the latest ``robot_state`` carried: what the
        robot measures (a part it lacks is absent). Empty with ``standard_topics``."""
        return self._feed.carried if self._feed is not None else frozenset()

    @property
    def fallen(self) -> bool | None:
        return self._fallen

    @property
    def base_pose(self) -> PoseStamped | None:
        return self._base_pose

    def wait_for_base_pose(self, timeout: float = 60.0) -> PoseStamped:
        """The latest ground_truth/base_pose (the simulator's), waiting for the first one."""
        return poll_until(lambda: self._base_pose, "ground_truth/base_pose (is the simulator running?)", timeout)

    def ground_truth_if_any(self, discovery: float, timeout: float) -> PoseStamped | None:
        """The latest ground_truth/base_pose when something publishes it (a simulator), None
        when nothing does within ``discovery`` seconds (a real robot); a publisher found is
        waited for up to ``timeout`` seconds (a busy machine delivers its first pose late)."""
        try:
            poll_until(lambda: self.node.count_publishers("ground_truth/base_pose"), "", discovery)
        except RobotClientError:
            return None
        return self.wait_for_base_pose(timeout)

    @property
    def diagnostics(self) -> DiagnosticArray | None:
        return self._diagnostics

    def start_recording(self) -> None:
        with self._lock:
            self._recording = []

    def stop_recording(self) -> list[JointState]:
        with self._lock:
            recorded, self._recording = self._recording or [], None
        return recorded

    def wait_for_state(self, condition: Callable[[JointState], bool], what: str, robot_seconds: float = 10.0,
                       timeout: float = 60.0) -> JointState:
        """The first joint_states message from now on that satisfies ``condition``.

        Raises :class:`RobotClientError` naming ``what`` (and the last positions seen) when
        the robot's clock advanced ``robot_seconds`` first: the robot did not get there in
        the time its own clock allows, however loaded the machine; or after ``timeout``
        wall seconds without the condition (the robot is not running)."""
        deadline = time.monotonic() + timeout
        start: float | None = None
        last: JointState | None = None
        while True:
            self._joint_event.clear()
            msg = self._joint_state
            if msg is not None and msg is not last:
                last = msg
                if condition(msg):
                    return msg
                stamp = seconds(msg.header.stamp)
                start = stamp if start is None else start
                if stamp - start > robot_seconds:
                    raise RobotClientError(f"{what}: not within {robot_seconds:g} s of robot time; last positions "
                                           f"{dict(zip(msg.name, (round(v, 4) for v in msg.position), strict=True))}")
            if time.monotonic() > deadline:
                raise RobotClientError(f"{what}: not within {timeout:g} s")
            self._joint_event.wait(0.1)

    def record(self, robot_seconds: float, timeout: float = 60.0) -> list[JointState]:
        """Every joint_states message of the next ``robot_seconds`` of robot time."""
        self.start_recording()
        try:
            self.wait_until(self.now() + robot_seconds, timeout)
        finally:
            recorded = self.stop_recording()
        return recorded

    def wait_until(self, robot_time: float, timeout: float = 60.0) -> None:
        """Block until the robot clock reaches ``robot_time``."""
        deadline = time.monotonic() + timeout
        while self.now() < robot_time:
            if time.monotonic() > deadline:
                raise RobotClientError(f"robot time did not reach {robot_time:.3f} s within {timeout:g} s")
            self._joint_event.clear()
            self._joint_event.wait(0.1)

    # -- commands -------------------------------------------------------------------
    def wait_for_server(self, timeout: float = 30.0) -> None:
        """The follow_joint_trajectory server is up and answers this client."""
        self._server_ready(self.action, "follow_joint_trajectory", timeout)

    def _server_ready(self, action_client, name: str, timeout: float, hint: str = "") -> None:
        """The action server is up and, before this client's first goal to it, has matched
        this client (it answered; see action_result)."""
        if not action_client.wait_for_server(timeout_sec=timeout):
            raise RobotClientError(f"no {name} server within {timeout:g} s{hint}; "
                                   f"{action_graph_view(self.node, name)}")
        if id(action_client) in self._answered:
            return
        if not wait_until_answering(action_client, timeout):
            raise RobotClientError(f"the {name} server does not answer within {timeout:g} s")
        self._answered.add(id(action_client))

    def send_goal(self, trajectory: JointTrajectory, path_tolerance: Mapping[str, float] | None = None,
                  goal_tolerance: Mapping[str, float] | None = None, goal_time_tolerance: float = 0.0,
                  feedback: list | None = None, timeout: float = 30.0):
        """Send a goal and return its (accepted) goal handle."""
        self.wait_for_server(timeout)
        goal = FollowJointTrajectory.Goal(trajectory=trajectory, goal_time_tolerance=to_duration(goal_time_tolerance))
        goal.path_tolerance = [JointTolerance(name=n, position=v) for n, v in (path_tolerance or {}).items()]
        goal.goal_tolerance = [JointTolerance(name=n, position=v) for n, v in (goal_tolerance or {}).items()]
        callback = None if feedback is None else (lambda msg: feedback.append(msg.feedback))
        handle = self.wait_future(self.action.send_goal_async(goal, feedback_callback=callback), timeout,
                                  "goal response")
        if not handle.accepted:
            raise RobotClientError("the goal was rejected by the action server")
        return handle

    def result(self, handle, timeout: float = 120.0, feedback: list | None = None) -> GoalOutcome:
        return GoalOutcome.of(self.wait_result(handle, timeout, "trajectory result"), feedback)

    def send_goal_held(self, trajectory: JointTrajectory, feedback: list, timeout: float = 30.0, **tolerances):
        """Lockstep, the simulation held by this client: send a goal and keep holding until it
        is in force (the interface's first feedback, or its result), so that it starts at the
        held state in every run: accepted is not yet started, and a simulation let go
        meanwhile would start it later by however long the acceptance took."""
        handle = self.send_goal(trajectory, feedback=feedback, timeout=timeout, **tolerances)
        result = handle.get_result_async()
        poll_until(lambda: feedback or result.done(), "the goal in force (its first feedback)", timeout,
                   interval=0.001)
        return handle

    def held_result(self, handle, feedback: list | None = None, timeout: float = 300.0,
                    look: float = LOCKSTEP_LOOK, wait: float = LOCKSTEP_RESULT_WAIT) -> GoalOutcome:
        """Lockstep, the simulation held at or past a goal's end: its result. The interface
        sends it from the cycle that ends the goal, so it comes without another cycle (late
        only on a busy machine): waited for ``wait`` wall seconds at each held state, the
        simulation run ``look`` robot seconds further while it has not come."""
        assert self.lockstep is not None, "held_result is for a lockstep client"
        waiter = ResultWaiter(handle)
        deadline = time.monotonic() + timeout
        while not waiter.wait(wait):
            held = self.lockstep.held_at
            if held is None or time.monotonic() > deadline:
                raise RobotClientError(f"no trajectory result within {timeout:g} s")
            self.lockstep.run_to(held + look, max(0.0, deadline - time.monotonic()))
        return GoalOutcome.of(waiter.response, feedback)

    def follow(self, trajectory: JointTrajectory, timeout: float = 120.0, **tolerances) -> GoalOutcome:
        """Execute a trajectory through the action and wait for its result; ``timeout`` bounds
        each wait: for the server, its acceptance, the result."""
        feedback: list = []
        handle = self.send_goal(trajectory, feedback=feedback, timeout=timeout, **tolerances)
        return self.result(handle, timeout, feedback)

    def cancel(self, handle, timeout: float = 10.0) -> None:
        self.wait_future(handle.cancel_goal_async(), timeout, "cancel response")

    # -- motions (trajectory generator) ----------------------------------------------------
    def send_motion(self, goal: PlayMotion.Goal, feedback=None, timeout: float = 30.0):
        """Send a play_motion goal; ``feedback`` is called with each PlayMotion.Feedback."""
        self._server_ready(self.motions, "play_motion", timeout, " (is the trajectory generator up?)")
        callback = None if feedback is None else (lambda msg: feedback(msg.feedback))
        handle = self.wait_future(self.motions.send_goal_async(goal, feedback_callback=callback), timeout,
                                  "play_motion goal response")
        if not handle.accepted:
            raise RobotClientError("the play_motion goal was rejected")
        return handle

    def play_motion(self, name: str = "", path: str = "", speed: float = 1.0, timeout: float = 300.0):
        """Play a motion by library name or file path; returns the action's result response
        (``.status`` and ``.result``: error code and string, duration, time scale)."""
        handle = self.send_motion(PlayMotion.Goal(motion_name=name, motion_file=path, speed_factor=speed))
        return self.wait_result(handle, timeout, "play_motion result")

    # -- gaits (gait controller) ------------------------------------------------------------
    def wait_for_gait_controller(self, timeout: float = 30.0) -> None:
        """The play_gait server is up and answers this client."""
        self._server_ready(self.gaits, "play_gait", timeout, " (is the gait controller up?)")

    def send_gait(self, gait: str, frequency: float = 0.0, duration: float = 1.0, feedback=None,
                  timeout: float = 30.0):
        """Send a play_gait goal; ``feedback`` is called with each PlayGait.Feedback."""
        self.wait_for_gait_controller(timeout)
        callback = None if feedback is None else (lambda msg: feedback(msg.feedback))
        goal = PlayGait.Goal(gait=gait, frequency=float(frequency), duration=float(duration))
        handle = self.wait_future(self.gaits.send_goal_async(goal, feedback_callback=callback), timeout,
                                  "play_gait goal response")
        if not handle.accepted:
            raise RobotClientError("the play_gait goal was rejected")
        return handle

    def play_gait(self, gait: str, frequency: float = 0.0, duration: float = 1.0, timeout: float = 300.0):
        """Play a gait by name or file path; returns the action's result response (``.status``
        and ``.result``: error code and string, what was played, elapsed, start time)."""
        handle = self.send_gait(gait, frequency, duration)
        return self.wait_result(handle, timeout, "play_gait result")

    # -- simulator services -----------------------------------------------------------
    def reset(self, positions: Mapping[str, float] | None = None, lying: str = "", timeout: float = 30.0) -> str:
        """Reset the simulated robot standing in ``positions`` (others: home), or ``lying`` on
        its back, belly, left or right side."""
        request = ResetSimulation.Request(lying=lying)
        if positions:
            request.joint_state.name = list(positions)
            request.joint_state.position = [float(v) for v in positions.values()]
        response = self._call(ResetSimulation, topics.RESET, request, timeout, idempotent=True)
        if not response.success:
            raise RobotClientError(response.message)
        return response.message

    def pause(self, timeout: float = 10.0) -> None:
        self._call(Trigger, topics.PAUSE, Trigger.Request(), timeout, idempotent=True)

    def resume(self, timeout: float = 10.0) -> None:
        self._call(Trigger, topics.RESUME, Trigger.Request(), timeout, idempotent=True)

    def step(self, cycles: int, timeout: float = 60.0) -> float:
        response = self._call(StepSimulation, topics.STEP, StepSimulation.Request(cycles=cycles), timeout,
                              idempotent=cycles == 0)
        if not response.success:
            raise RobotClientError(response.message)
        return seconds(response.sim_time)

    def apply_push(self, force: Sequence[float], duration: float, link: str = "", timeout: float = 30.0):
        """Push the simulated robot (the ``apply_push`` service): ``force`` (N, world frame) at
        ``link``'s centre of mass (empty: the root link) for ``duration`` s of simulated time.
        The response: ``success`` and the simulator's ``message`` (why it refused)."""
        x, y, z = (float(f) for f in force)
        request = ApplyPush.Request(link=link, force=Vector3(x=x, y=y, z=z), duration=float(duration))
        return self._call(ApplyPush, topics.APPLY_PUSH, request, timeout)

    def simulator_time(self) -> float:
        """The simulator's clock as it answers now, read by a zero-cycle step while paused
        (:meth:`now` is the latest clock message this client has taken, which lags the
        simulator while this process is slow to take them)."""
        self.pause()
        try:
            return self.step(0)
        finally:
            self.resume()

    def check_self_collision(self, positions: Mapping[str, float], timeout: float = 30.0):
        """Ask the self-collision checker about a configuration (joints not given: as they are)."""
        request = CheckSelfCollision.Request(joint_state=JointState(name=list(positions),
                                                                    position=[float(v) for v in positions.values()]))
        return self._call(CheckSelfCollision, topics.CHECK_SELF_COLLISION, request, timeout, idempotent=True)

    def check_trajectory_self_collision(self, trajectory: JointTrajectory, start: Mapping[str, float] | None = None,
                                        timeout: float = 60.0):
        """Ask the self-collision checker about the path a trajectory would follow (from ``start``,
        by default from where the robot is)."""
        request = CheckTrajectorySelfCollision.Request(trajectory=trajectory)
        if start is not None:
            request.start = JointState(name=list(start), position=[float(v) for v in start.values()])
        return self._call(CheckTrajectorySelfCollision, topics.CHECK_TRAJECTORY_SELF_COLLISION, request, timeout,
                          idempotent=True)

    def _call(self, kind, name: str, request, timeout: float, idempotent: bool = False):
        """Call a service through a client kept for the node's life: a client made for one call
        can send its request before the server has matched it for the response, which is
        then lost (DDS matches the request and response topics separately). The first call
        of a client still can be, on a machine so busy that the server's wait for the reader
        (docs/ros_and_dds.md, "Service answers") ends first: an ``idempotent`` request (one
        that does the same when it comes twice) is then sent again after ``ASK_AGAIN_AFTER``
        s without an answer, up to ``ASK_AGAIN_TIMES`` times; the first answer counts."""
        with self._lock:
            client = self._service_clients.get(name)
            if client is None:
                client = self._service_clients[name] = self.node.create_client(kind, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise RobotClientError(f"service {name} not available within {timeout:g} s")
        answer = first_answer(lambda: client.call_async(request), timeout, ASK_AGAIN_AFTER,
                              again=ASK_AGAIN_TIMES if idempotent else 0)
        if answer is None:
            raise RobotClientError(f"no service {name} within {timeout:g} s")
        return answer.result()

    def wait_result(self, handle, timeout: float, what: str = "result"):
        """The GetResult response of an accepted goal (asked again if the answer was lost)."""
        waiter = ResultWaiter(handle)
        if not waiter.wait(timeout):
            raise RobotClientError(f"no {what} within {timeout:g} s (the goal's status as this client knows it: "
                                   f"{STATUS_NAMES.get(handle.status, handle.status)}, its result asked "
                                   f"{waiter.requests} time(s); {self.spinning_report()})")
        return waiter.response

    @staticmethod
    def wait_future(future, timeout: float, what: str = "answer"):
        """The result of an rclpy future completed by this client's spinning thread."""
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(timeout):
            raise RobotClientError(f"no {what} within {timeout:g} s")
        return future.result()

    def spinning_report(self) -> str:
        """What this client's executor did lately, for an error saying that an answer did not
        come: a client that stopped taking messages, or a graph that stopped sending them."""
        now = time.monotonic()
        heard = f"{now - self._heard_at:.2f} s ago" if self._heard_at is not None else "never"
        return (f"the client's spinning thread {'alive' if self._thread.is_alive() else 'DEAD'}, {self._turns} "
                f"turns, the last begun {now - self._turn_began:.2f} s ago; its last joint_states taken {heard}")
