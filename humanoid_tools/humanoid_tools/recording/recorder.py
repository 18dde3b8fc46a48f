"""The recorder: a ROS node that writes chosen topics into a rosbag2 bag, losing nothing.

- **Discovery**: every ``discovery_period`` it looks for publishers of the wanted topics
  and subscribes as soon as one appears (nodes that start later are recorded from their
  first message). A wanted topic nobody publishes ``unknown_topic_grace`` seconds after
  the start is reported once (a typo, or a node that is not running) and recording
  goes on.
- **QoS matched to the publishers**, as ``ros2 bag record`` does: reliable unless a
  publisher is best effort, transient local when every publisher is (the latched
  ``robot_description``), a deep history (``queue_depth``); the publishers' offered
  profiles go into the bag.
- **Off the callback thread**: callbacks only count and queue the serialized message
  (``raw``: nothing is deserialized); a writer thread writes. On SIGINT/SIGTERM or at
  the end of ``duration`` the subscriptions are drained before the bag is closed.
- **Time stamps**: each message's log time is when DDS received it, but never earlier
  than the previous message's on the same topic. A reliable topic's message that is
  lost and sent again arrives after its successors yet is delivered before them;
  readers and ``ros2 bag play`` order a bag by log time, and the bag must keep the order
  the messages were published in.
- **The robot's state in one message**: a driver of this stack publishes each state as
  ``robot_state`` (:mod:`humanoid_control.ros.robot_state`), which carries ``joint_states``,
  the IMU, the feet, the ground truth and ``fallen``. When a ``robot_state`` publisher is
  there, those topics are recorded from it: one subscription instead of one per topic (and
  the driver then publishes the standard topics only to others who subscribe to them). The
  bag holds them as the standard topics, with the same messages and stamps; each part's log
  time is its ``robot_state`` message's. ``robot_state`` itself is not written.
- **Counts**: messages received and written per topic are printed at the end and stored
  in the bag's ``custom_data`` (``received_messages``, ``written_messages``: JSON).
- **Failures**: a write that fails (disk full) stops writing (the messages still
  arrive and are counted as received, not written), keeps what was sealed, and says how
  to repair the bag (``humanoid record --reindex DIR``); exit status 1.
"""

from __future__ import annotations

import json
import queue
import shutil
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import TextIO

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import WriterError

from humanoid_control.ros import DEFAULT_TOPICS, RobotState, robot_state
from humanoid_tools.recording.bag_writer import SEAL_PERIOD, BagWriter
from humanoid_tools.recording.message_types import MessageType, UnknownMessageTypeError, message_type
from humanoid_tools.recording.reading import NAMESPACE_KEY, robot_interface_name
from humanoid_tools.recording.reindex import recoverable_counts

# rclpy is imported where it is used: the `humanoid` command builds its parser from
# this package and must start fast.

#: Bag files a directory may hold for ``--overwrite`` to remove it (nothing else is removed).
BAG_FILE_SUFFIXES = (".mcap", ".db3", ".yaml", ".tmp")
#: Looks for new publishers between two looks at the recorded topics' publishers (their QoS).
LATE_PUBLISHER_LOOKS = 10
#: s between the writer thread's batches (well under the seal period and the drain's quiet time).
WRITE_BATCH = 0.02
DRAIN_QUIET = 0.1  # s without a new message ends the final drain ...
DRAIN_LIMIT = 2.0  # ... which takes at most this long (a publisher may never pause)


class RecordingError(Exception):
    """The recording cannot start or did not complete; the message says why."""


@dataclass(frozen=True)
class RecorderParameters:
    """The recorder's parameters (ROS parameters of the recorder node, same names)."""

    output: str = ""  # bag directory to create (must not exist unless overwrite)
    topics: tuple[str, ...] = DEFAULT_TOPICS  # topics to record
    duration: float = 0.0  # wall-clock seconds to record; 0: until SIGINT/SIGTERM
    overwrite: bool = False  # replace an existing bag directory (only if it holds nothing but a bag)
    discovery_period: float = 0.1  # s between looks for new publishers
    unknown_topic_grace: float = 3.0  # s after the start before a topic nobody publishes is reported
    queue_depth: int = 1000  # history depth of each subscription
    seal_period: float = SEAL_PERIOD  # s: the bag file is completed up to at most this long ago
    lockstep: bool = False  # answer a lockstep simulation after each joint_states taken (nothing dropped)


@dataclass
class Summary:
    """What a recording received and wrote, per topic."""

    path: Path
    types: dict[str, str] = field(default_factory=dict)
    received: Counter = field(default_factory=Counter)
    written: dict[str, int] = field(default_factory=dict)
    never_published: list[str] = field(default_factory=list)
    error: str | None = None
    #: the recorder's namespace, the recorded robot's (its topics are under it: :class:`~humanoid_tools.recording.Bag`
    #: reads them back without it)
    namespace: str = "/"

    @property
    def complete(self) -> bool:
        return self.error is None and all(self.written.get(t, 0) == n for t, n in self.received.items())

    def custom_data(self) -> dict[str, str]:
        return {"received_messages": json.dumps(dict(sorted(self.received.items()))),
                "written_messages": json.dumps(dict(sorted(self.written.items()))),
                NAMESPACE_KEY: self.namespace}

    def table(self) -> str:
        topics = sorted(set(self.types) | set(self.received))
        width = max([len(t) for t in topics] + [5])
        lines = [f"{'topic':{width}}  {'received':>9}  {'written':>9}  type"]
        for topic in topics:
            lines.append(f"{topic:{width}}  {self.received.get(topic, 0):9d}  {self.written.get(topic, 0):9d}  "
                         f"{self.types.get(topic, '?')}")
        total_received, total_written = sum(self.received.values()), sum(self.written.values())
        lines.append(f"{'all topics':{width}}  {total_received:9d}  {total_written:9d}")
        if self.never_published:
            lines.append(f"not published during the recording: {', '.join(self.never_published)}")
        return "\n".join(lines)


def prepare_output(path: Path, overwrite: bool) -> None:
    """Refuse an existing ``path`` unless ``overwrite``; then remove it only if it holds a bag
    and nothing else (never a directory of other files given by mistake)."""
    if not path.exists() and not path.is_symlink():
        if not path.parent.is_dir():
            raise RecordingError(f"cannot create the bag {path}: {path.parent} is not a directory")
        return
    if not overwrite:
        raise RecordingError(f"{path} exists already: choose another output directory, or give --overwrite "
                             f"to replace the bag in it")
    if not path.is_dir() or path.is_symlink():
        raise RecordingError(f"{path} exists and is not a bag directory: not replacing it")
    foreign = [p.name for p in path.iterdir() if not (p.is_file() and p.name.endswith(BAG_FILE_SUFFIXES))]
    if foreign:
        raise RecordingError(f"{path} holds more than a bag ({', '.join(sorted(foreign)[:5])}): not replacing it")
    shutil.rmtree(path)


# -- QoS ----------------------------------------------------------------------------------
def subscription_qos(publisher_profiles: Sequence, depth: int):
    """The subscription QoS that matches every publisher (as ros2 bag record chooses it)."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    reliable = all(p.reliability == ReliabilityPolicy.RELIABLE for p in publisher_profiles)
    latched = all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in publisher_profiles)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def compatible(publisher_profile, subscription_profile) -> bool:
    """Whether a publisher's messages reach a subscription with this QoS."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    if (subscription_profile.reliability == ReliabilityPolicy.RELIABLE
            and publisher_profile.reliability != ReliabilityPolicy.RELIABLE):
        return False
    return not (subscription_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                and publisher_profile.durability != DurabilityPolicy.TRANSIENT_LOCAL)


def bag_qos(profile) -> Qos:
    """An rclpy QoS profile (as a publisher offers it) in rosbags' terms."""
    def duration(value) -> QosTime:
        sec, nsec = divmod(int(value.nanoseconds), 1_000_000_000)
        return QosTime(sec, nsec)

    def member(enum, policy):
        return enum.__members__.get(policy.name, enum.UNKNOWN)

    return Qos(member(QosHistory, profile.history), int(profile.depth), member(QosReliability, profile.reliability),
               member(QosDurability, profile.durability), duration(profile.deadline), duration(profile.lifespan),
               member(QosLiveliness, profile.liveliness), duration(profile.liveliness_lease_duration),
               bool(profile.avoid_ros_namespace_conventions))


def header_stamp(data: bytes):
    """The header stamp of a serialized message that begins with a std_msgs/Header (CDR:
    a 4-byte encapsulation, then the stamp's seconds and nanoseconds)."""
    from builtin_interfaces.msg import Time

    byteorder = "little" if data[1] == 1 else "big"
    return Time(sec=int.from_bytes(data[4:8], byteorder, signed=True), nanosec=int.from_bytes(data[8:12], byteorder))


# -- the recorder -------------------------------------------------------------------------------
_STOP = object()
#: The queue's tag of a robot_state message (split into its topics by the writer thread).
_STATE = object()


class Recorder:
    """Records ``params.topics`` of the graph ``node`` sees into a new bag at ``params.output``;
    relative names are the robot's in the node's namespace (``joint_states`` is ``/a/joint_states``
    in ``/a``), recorded under their full names."""

    def __init__(self, node, params: RecorderParameters, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 participant=None, take_state: Callable[[Callable[[RobotState], None]], None] | None = None) -> None:
        """``participant``: the lockstep participant to answer with (default: one of its own
        when ``params.lockstep``); ``take_state``: registers a callback for each whole
        ``robot_state`` message in this process (a container's feed), instead of a
        subscription made once a publisher of it is seen."""
        self.node = node
        self.params = params
        self.out, self.err = out, err
        path = Path(params.output).expanduser()
        prepare_output(path, params.overwrite)
        self.summary = Summary(path, namespace=node.get_namespace())
        self._resolved: dict[str, str] = {}  # relative name -> full name (the robot_state parts')
        self.wanted = list(dict.fromkeys(self._resolve(t) for t in params.topics))
        self._joint_states = self._resolve(robot_state.JOINT_STATES)
        self._carried_wanted = {t for t in self.wanted if self._carried(t)}
        self._subscriptions: dict[str, tuple[object, object]] = {}  # topic -> (subscription, its QoS)
        self._skipped: set[str] = set()  # topics that cannot be recorded (reported once)
        self._warned_incompatible: set[tuple[str, str]] = set()
        self._started = time.monotonic()
        self._reported_unknown = False
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._stopping = threading.Event()  # the writer's wake-up at the end (it takes batches)
        self._lock = threading.Lock()
        self._last_message = time.monotonic()
        self._last_stamp: Counter[str] = Counter()  # topic -> log time (ns) of its latest message
        #: the carried topics seen at the previous look with a publisher but no robot_state
        #: publisher yet (a topic is subscribed directly only when that holds twice in a row)
        self._direct_candidates: set[str] = set()
        #: the carried topics written from robot_state so far (writer thread, under the lock)
        self._state_topics: set[str] = set()
        self._state_offered: list[Qos] = []
        self._state_subscription = None
        self._looks = 0
        try:
            self._writer = BagWriter(path, params.seal_period)
        except (OSError, WriterError) as error:
            raise RecordingError(f"cannot create the bag {path}: {getattr(error, 'strerror', None) or error}") from None
        self._thread = threading.Thread(target=self._write_loop, name="bag-writer", daemon=True)
        self._thread.start()
        self._lockstep = participant
        if participant is None and params.lockstep:
            from humanoid_control.ros import LockstepParticipant

            self._lockstep = LockstepParticipant(node)
        if take_state is not None and any(self._carried(t) for t in self.wanted):
            from rclpy.qos import QoSProfile, ReliabilityPolicy

            from humanoid_control.ros import STREAM_HISTORY

            # what the driver offers on robot_state and its topics (humanoid_control.ros.state_publisher)
            self._state_offered = [bag_qos(QoSProfile(depth=STREAM_HISTORY, reliability=ReliabilityPolicy.RELIABLE))]
            take_state(self._on_state)
            self._state_subscription = take_state
        self._timer = node.create_timer(params.discovery_period, self.discover)
        self.discover()

    def _resolve(self, topic: str) -> str:
        """``topic``'s full name in the recorder's namespace (its remappings applied)."""
        if topic not in self._resolved:
            self._resolved[topic] = self.node.resolve_topic_name(topic)
        return self._resolved[topic]

    def _carried(self, topic: str) -> bool:
        """Whether the robot's ``robot_state`` (in the recorder's namespace) carries ``topic`` (a full name)."""
        inner = robot_interface_name(topic, self.summary.namespace)
        return inner is not None and robot_state.carries(inner)

    # -- discovery (executor thread) ------------------------------------------------------------
    def discover(self) -> None:
        self._looks += 1
        # a recorded topic's publishers are looked at again once a second (for one whose QoS the
        # subscription does not match): asking the graph for every topic at every look cost the
        # recorder as much as recording
        check_publishers = self._looks % LATE_PUBLISHER_LOOKS == 0
        types = dict(self.node.get_topic_names_and_types())
        state_topic = self._resolve(robot_state.TOPIC)
        carried = [t for t in self.wanted if t in self._carried_wanted and t not in self._subscriptions]
        if (self._state_subscription is None and carried and state_topic in types
                and self.node.get_publishers_info_by_topic(state_topic)):
            self._subscribe_state(state_topic, types[state_topic])
        candidates = set()
        for topic in self.wanted:
            if topic in self._skipped or topic not in types:
                continue
            if topic in self._subscriptions and not check_publishers:
                continue
            from_state = self._state_subscription is not None and topic in self._carried_wanted
            if from_state and topic not in self._subscriptions:
                continue  # written from robot_state: no look at its publishers (a graph query less per topic)
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers:
                continue
            if topic in self._subscriptions:
                self._check_late_publishers(topic, publishers)
            elif self._carried(topic):
                if self._state_subscription is None:  # a robot without robot_state: the topic itself
                    candidates.add(topic)
                    if topic in self._direct_candidates:
                        self._subscribe(topic, types[topic], publishers)
            else:
                self._subscribe(topic, types[topic], publishers)
        self._direct_candidates = candidates
        if not self._reported_unknown and time.monotonic() - self._started >= self.params.unknown_topic_grace:
            self._reported_unknown = True
            from_state = self._state_subscription is not None
            missing = [t for t in self.wanted if t not in self._subscriptions and t not in self._skipped
                       and not (from_state and self._carried(t))]
            if missing:
                self._warn(f"no publisher for {', '.join(missing)} yet (unknown topic, or its node is not "
                           f"running); recording the others, and these when they appear")

    def _subscribe(self, topic: str, type_names: Sequence[str], publishers: Sequence) -> None:
        if len(type_names) > 1:
            self._warn(f"{topic} is published with several types ({', '.join(type_names)}); recording "
                       f"{type_names[0]} only")
        name = type_names[0]
        try:
            kind: MessageType = message_type(name)
        except UnknownMessageTypeError as error:
            self._skipped.add(topic)
            self._warn(f"not recording {topic}: {error}")
            return
        profiles = [p.qos_profile for p in publishers if p.topic_type == name]
        qos = subscription_qos(profiles, self.params.queue_depth)
        announced = next((str(p.topic_type_hash) for p in publishers if str(p.topic_type_hash).startswith("RIHS01_")),
                         None)
        self._queue.put(("topic", topic, name, kind.definition, announced or kind.type_hash,
                         [bag_qos(p) for p in profiles]))
        subscription = self.node.create_subscription(kind.python_class, topic, partial(self._on_message, topic),
                                                     qos, raw=True)
        self._subscriptions[topic] = (subscription, qos)
        self.summary.types[topic] = name

    def _subscribe_state(self, topic: str, type_names: Sequence[str]) -> None:
        """Record the carried topics from ``robot_state`` (one raw subscription); each carried
        topic becomes a topic of the bag when a message first carries it (the writer thread)."""
        publishers = self.node.get_publishers_info_by_topic(topic)
        qos = subscription_qos([p.qos_profile for p in publishers], self.params.queue_depth)
        self._state_offered = [bag_qos(p.qos_profile) for p in publishers]
        self._state_subscription = self.node.create_subscription(
            message_type(type_names[0]).python_class, topic, self._on_state, qos, raw=True)

    def _check_late_publishers(self, topic: str, publishers: Sequence) -> None:
        _subscription, qos = self._subscriptions[topic]
        for publisher in publishers:
            key = (topic, f"{publisher.node_namespace}/{publisher.node_name}")
            if key not in self._warned_incompatible and not compatible(publisher.qos_profile, qos):
                self._warned_incompatible.add(key)
                self._warn(f"{key[1]} publishes {topic} with a QoS the recording's subscription (chosen for the "
                           f"earlier publishers) does not match: its messages are not recorded")

    # -- messages (executor thread) ------------------------------------------------------------
    def _on_message(self, topic: str, data: bytes) -> None:
        stamp = max(time.time_ns(), self._last_stamp[topic])
        self._last_stamp[topic] = stamp
        with self._lock:
            self.summary.received[topic] += 1
            self._last_message = time.monotonic()
        self._queue.put((topic, stamp, data))
        if self._lockstep is not None and topic == self._joint_states:
            self._lockstep.answered(header_stamp(data))

    def _on_state(self, message: bytes | RobotState) -> None:
        """A robot_state message (serialized, or from a container's feed): split in the writer
        thread (nothing deserialized or serialized here)."""
        stamp = max(time.time_ns(), self._last_stamp[_STATE])
        self._last_stamp[_STATE] = stamp
        with self._lock:
            self._last_message = time.monotonic()
        self._queue.put((_STATE, stamp, message))
        if self._lockstep is not None:
            self._lockstep.answered(header_stamp(message) if isinstance(message, bytes) else message.header.stamp)

    def _split_state(self, stamp: int, message: bytes | RobotState, connections: dict) -> None:
        """Write the parts of one robot_state message as their topics (writer thread)."""
        from rclpy.serialization import deserialize_message, serialize_message

        wanted = set(self.wanted)
        if isinstance(message, bytes):
            message = deserialize_message(message, RobotState)
        for relative, part in robot_state.parts(message):
            topic = self._resolve(relative)
            if topic not in wanted:
                continue
            if topic not in connections:
                kind = message_type(robot_state.type_name(part))
                connections[topic] = self._writer.add_topic(topic, kind.name, kind.definition, kind.type_hash,
                                                            self._state_offered)
                with self._lock:
                    self.summary.types[topic] = kind.name
                    self._state_topics.add(topic)
            with self._lock:
                self.summary.received[topic] += 1
            self._writer.write(connections[topic], stamp, serialize_message(part))

    # -- writing (writer thread) -----------------------------------------------------------------
    def _write_loop(self) -> None:
        """Write what came, in batches :data:`WRITE_BATCH` apart: the callbacks' puts then wake
        no thread (a put that wakes a waiting thread cost the executor's thread as much as the
        callback's own work)."""
        connections: dict = {}
        while True:
            self._stopping.wait(WRITE_BATCH)
            batch = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    self._write(batch, connections)
                    return
                batch.append(item)
            self._write(batch, connections)

    def _write(self, batch: list, connections: dict) -> None:
        """Write the queued items, then seal the bag when due; a failed write stops writing."""
        if self.summary.error is not None:
            return
        try:
            for item in batch:
                if item[0] == "topic":
                    _tag, topic, name, definition, type_hash, offered = item
                    connections[topic] = self._writer.add_topic(topic, name, definition, type_hash, offered)
                elif item[0] is _STATE:
                    self._split_state(item[1], item[2], connections)
                else:
                    topic, stamp, data = item
                    self._writer.write(connections[topic], stamp, data)
            self._writer.seal_if_due()
        except OSError as error:
            self.summary.error = (f"writing {self.summary.path} failed: {error.strerror or error}; "
                                  f"stopped writing (the messages still received are counted, not "
                                  f"written). What was written is kept: once there is room, run "
                                  f"`humanoid record --reindex {self.summary.path}` to make it readable")
            self._warn(self.summary.error)

    # -- the end -----------------------------------------------------------------------------------
    def drain(self, spin_once) -> None:
        """Take what the subscriptions still hold (call after the last message was sent)."""
        deadline = time.monotonic() + DRAIN_LIMIT
        while time.monotonic() < deadline:
            spin_once(DRAIN_QUIET / 2)
            with self._lock:
                quiet = time.monotonic() - self._last_message >= DRAIN_QUIET
            if quiet:
                return

    def finish(self) -> Summary:
        """Stop writing, close the bag (summary, metadata.yaml with the counts) and report."""
        self._timer.cancel()
        self._queue.put(_STOP)
        self._stopping.set()
        self._thread.join()
        summary = self.summary
        summary.written = self._writer.counts() if summary.error is None else recoverable_counts(summary.path)
        summary.never_published = [t for t in self.wanted if t not in self._subscriptions and t not in self._skipped
                                   and t not in self._state_topics]
        if summary.error is None:
            try:
                self._writer.close(summary.custom_data())
            except OSError as error:
                summary.error = (f"closing {summary.path} failed: {error.strerror or error}; run "
                                 f"`humanoid record --reindex {summary.path}` once there is room")
        print(summary.table(), file=self.out, flush=True)
        lost = {t: n - summary.written.get(t, 0) for t, n in summary.received.items() if summary.written.get(t, 0) < n}
        if lost:
            self._warn("received but not written: " + ", ".join(f"{t} {n}" for t, n in sorted(lost.items())))
        if summary.error is not None:
            self._warn(summary.error)
        else:
            print(f"bag written: {summary.path}", file=self.out, flush=True)
        return summary

    def _warn(self, text: str) -> None:
        print(f"humanoid record: warning: {text}", file=self.err, flush=True)


class RecorderNode:
    """The recorder hosted in a graph's container (:mod:`humanoid_control.nodes.container`):
    its parameters are the node's, the robot's state comes from the container's
    ``robot_state`` feed, and the other topics by subscriptions as usual (those the
    container's nodes publish without leaving the process). When the container stops, the
    subscriptions are drained and the bag closed; a container restarted after a crash runs
    without it (its graph's launcher made the bag readable: humanoid_bringup.serving)."""

    RESTARTED = False
    WATCHER = True  # takes each state after the nodes that command the robot

    @staticmethod
    def prepare(output: Path) -> None:
        """Before a graph records into ``output`` (``humanoid sim/real --record``, which find this
        class by its entry point, humanoid_bringup.graphs.recorder_entry): it must be a new bag
        directory; ValueError saying why not."""
        try:
            prepare_output(output, overwrite=False)
        except RecordingError as error:
            raise ValueError(str(error)) from None

    @staticmethod
    def recover(output: Path) -> None:
        """After the recorder died: make its bag in ``output`` readable (``humanoid record
        --reindex``); ValueError or OSError when it cannot be."""
        from humanoid_tools.recording.reindex import ReindexError, reindex

        try:
            reindex(output)
        except ReindexError as error:
            raise ValueError(str(error)) from None

    def __init__(self, node, host) -> None:
        from humanoid_interfaces.msg import RobotState as StateMessage

        params = parameters_from_node(node)
        self.recorder = Recorder(node, params, participant=host.lockstep(node),
                                 take_state=lambda callback: host.subscribe_state(
                                     node, StateMessage, robot_state.TOPIC, callback, params.queue_depth))
        node.get_logger().info(f"recording {len(self.recorder.wanted)} topics into {self.recorder.summary.path}")

    def stop(self, spin_once) -> None:
        self.recorder.drain(spin_once)
        self.recorder.finish()


# -- running it ----------------------------------------------------------------------------------
def record(params: RecorderParameters | None = None, ros_args: Sequence[str] | None = None,
           out: TextIO = sys.stdout, err: TextIO = sys.stderr, namespace: str = "/") -> Summary:
    """Record until SIGINT/SIGTERM or the end of ``params.duration``; returns the summary.
    Without ``params`` they are the node's ROS parameters (``ros_args``: ``--ros-args ...``,
    whose ``__ns`` wins over ``namespace``, the robot's to record).
    Owns its ROS context and signal handling: a stop request first drains the subscriptions,
    so that a message delivered before it is in the bag."""
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node
    from rclpy.signals import SignalHandlerOptions

    from humanoid_core.processes import stop_on_signals

    with stop_on_signals(signal.SIGINT, signal.SIGTERM) as stop:
        context = rclpy.Context()
        rclpy.init(args=list(ros_args or []), context=context, signal_handler_options=SignalHandlerOptions.NO)
        try:
            node = Node("humanoid_recorder", context=context, namespace=namespace, start_parameter_services=False)
            if params is None:
                params = parameters_from_node(node)
            executor = EventsExecutor(context=context)
            executor.add_node(node)
            recorder = Recorder(node, params, out, err)
            how_long = f"for {params.duration:g} s" if params.duration > 0 else "until interrupted"
            print(f"recording {len(recorder.wanted)} topics into {recorder.summary.path} ({how_long})",
                  file=out, flush=True)
            end = time.monotonic() + params.duration if params.duration > 0 else None
            while not stop.is_set() and (end is None or time.monotonic() < end):
                executor.spin_once(timeout_sec=0.05)
            recorder.drain(lambda timeout: executor.spin_once(timeout_sec=timeout))
            summary = recorder.finish()
            executor.shutdown()
            node.destroy_node()
            return summary
        finally:
            rclpy.try_shutdown(context=context)


def parameters_from_node(node) -> RecorderParameters:
    """The recorder's ROS parameters (declared with the dataclass defaults)."""
    from humanoid_control.ros import declare

    values = {}
    for item in fields(RecorderParameters):
        default = getattr(RecorderParameters, item.name)
        values[item.name] = declare(node, item.name, list(default) if isinstance(default, tuple) else default)
    values["topics"] = tuple(values["topics"])
    return RecorderParameters(**values)


def main(argv: Sequence[str] | None = None) -> int:
    """The recorder as a node of a graph (``humanoid sim --record``): parameters from ROS."""
    try:
        summary = record(ros_args=list(sys.argv if argv is None else argv))
    except (RecordingError, ValueError) as error:
        print(f"humanoid record: error: {error}", file=sys.stderr, flush=True)
        return 2
    return 0 if summary.complete else 1


if __name__ == "__main__":
    sys.exit(main())
