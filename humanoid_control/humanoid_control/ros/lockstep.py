"""A node's part in a lockstep simulation (:mod:`humanoid_core.loop.lockstep`).

The protocol, for any rclpy node: after handling each ``joint_states`` message (and sending
what it made the node send), publish ``humanoid_interfaces/msg/LockstepReady`` on
``lockstep/ready`` with the node's name and the message's stamp; publish one with
``leaving`` true before going away. :class:`LockstepParticipant` does that for the nodes of
this stack, with :meth:`LockstepParticipant.hold` for a node that must keep the simulation
where it is while a command it sends takes effect (a goal, until its acceptance), and
:meth:`LockstepParticipant.paused_at` for a client that acts at a given simulated time
(:meth:`LockstepParticipant.run_to` for one that acts at several, held in between).

The simulation waits for every participant's answer of the state it published last, so it
is never more than one state past a participant's last answer: a hold taken while the
simulation waits for another participant (whose goal this node is accepting) keeps it at
the next state, the same in every run. A client held at a state acts only once every other
participant has answered that state too (:meth:`LockstepParticipant.paused_at`): a command it
then sends reaches the others after their work for that state, never during it, so a goal
(held until installed) or a command to the robot takes effect at the next state in every
run; a message on another topic may be handled a state or a few later (the receiving node's
executor may take the next joint_states first).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from operator import itemgetter

from builtin_interfaces.msg import Time
from rclpy.event_handler import QoSSubscriptionMatchedInfo, SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from humanoid_control.ros import topics
from humanoid_control.ros.ros_time import seconds
from humanoid_core.loop import STAMP_TOLERANCE
from humanoid_interfaces.msg import LockstepReady

__all__ = ["LOCKSTEP_QOS", "LOCKSTEP_READER_QOS", "LOCKSTEP_TOPIC", "LockstepAnswers", "LockstepMember",
           "LockstepParticipant", "SharedParticipant", "lockstep_requested", "participant_of"]

LOCKSTEP_TOPIC = topics.LOCKSTEP_READY
#: Every answer must arrive: reliable, and deep enough for a burst of participants.
LOCKSTEP_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.VOLATILE)
#: The simulator's reader of the answers keeps all it has not taken yet: with KEEP_LAST 100, a
#: front busy for a while (the state sent again every 0.25 s, each participant answering it
#: again) lost the oldest answers beyond 100, a leave among them, which nothing sends again.
#: (History is not matched between writer and reader: the writers keep LOCKSTEP_QOS.)
LOCKSTEP_READER_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.VOLATILE)
#: s between two looks at the graph after a writer of answers went away, while the graph still
#: shows more writers than are matched (it learns of a writer's end apart from the reader).
GRAPH_RECHECK_PERIOD = 0.1
#: s after a writer went away that the graph is looked at, at most: with 5 s a loaded machine's
#: graph still listed the writer of a node destroyed when the looks ended, and the participant was
#: waited for until the end (clean-clone run 153); a look costs a graph query, 10 per second.
GRAPH_RECHECK_FOR = 60.0
#: s between two looks at the graph for the node of a participant that answers under a name no
#: writer's node was seen with yet (a custom name is looked for this often, as long as it answers).
NODE_LOOK_PERIOD = 0.25


class LockstepParticipant:
    """Answers the simulator for ``node`` (as ``name``, default the node's name)."""

    def __init__(self, node: Node, name: str | None = None, start_held: bool = False) -> None:
        """``start_held``: hold the simulation at its first state until :meth:`go` or
        :meth:`paused_at` (a client that must act at a given time, whatever it is doing
        until it gets there); such a client also follows the other participants' answers,
        for :meth:`paused_at` and :meth:`run_to`."""
        self.name = name or node.get_name()
        self._publisher = node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
        self._lock = threading.Lock()
        self._holds = 1 if start_held else 0
        self._start_hold = start_held
        self._withheld: Time | None = None  # the latest stamp answered while held
        self._pause_from: float | None = None
        self._paused = threading.Event()
        self._paused_stamp = 0.0
        self._others: dict[str, float] = {}  # a client's view: the latest stamp (s) each other participant answered
        self._others_changed = threading.Condition(self._lock)
        self._node = node
        self._left = False
        self._answers = (node.create_subscription(LockstepReady, LOCKSTEP_TOPIC, self._on_answer, LOCKSTEP_QOS)
                         if start_held else None)

    def answered(self, stamp: Time) -> None:
        """The joint_states message stamped ``stamp`` is handled (and what it caused is sent)."""
        with self._lock:
            if self._left:
                return
            if self._pause_from is not None and seconds(stamp) >= self._pause_from and not self._paused.is_set():
                self._holds += 1  # released by paused_at
                self._paused_stamp = seconds(stamp)
                self._paused.set()
            if self._holds:
                self._withheld = stamp
            else:  # under the lock: no answer goes out after a leave (it would join again)
                self._publish(stamp)

    def _on_answer(self, msg: LockstepReady) -> None:
        if msg.participant == self.name:
            return
        with self._lock:
            if msg.leaving:
                self._others.pop(msg.participant, None)
            else:
                stamp = seconds(msg.stamp)
                self._others[msg.participant] = max(stamp, self._others.get(msg.participant, stamp))
            self._others_changed.notify_all()

    def _wait_for_others(self, stamp: float, deadline: float) -> None:
        """Until every other participant seen answering has answered the state stamped
        ``stamp`` (s): its work for that state is done and sent. TimeoutError at ``deadline``
        (time.monotonic()), naming those still at work."""
        due = stamp - STAMP_TOLERANCE

        def behind() -> list[str]:
            return sorted(name for name, answered in self._others.items() if answered < due)

        with self._lock:
            while behind():
                left = deadline - time.monotonic()
                if left <= 0.0:
                    raise TimeoutError(f"held at t = {stamp:g} s, {', '.join(behind())} did not answer that state")
                self._others_changed.wait(left)

    def go(self) -> None:
        """End the hold taken at the start (``start_held``), once."""
        with self._lock:
            held, self._start_hold = self._start_hold, False
        if held:
            self.release()

    def take_hold(self) -> None:
        """Begin a hold that :meth:`release` ends (a hold that spans callbacks)."""
        with self._lock:
            self._holds += 1

    def release(self) -> None:
        """End a hold begun by :meth:`take_hold`; the latest withheld answer goes out when no hold is left."""
        with self._lock:
            if self._left:
                return
            self._holds -= 1
            if not self._holds and self._withheld is not None:
                self._publish(self._withheld)
                self._withheld = None

    @contextlib.contextmanager
    def paused_at(self, stamp: float, timeout: float) -> Iterator[float]:
        """Hold the simulation at its first state stamped ``stamp`` or later (s, robot time)
        while the block runs, every other participant having answered that state; yields the
        state's stamp. TimeoutError when no such state came, or another participant did not
        answer it, within ``timeout`` seconds (wall)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._still_in()
            self._pause_from = stamp
            self._paused.clear()
        self.go()
        try:
            if not self._paused.wait(timeout):
                raise TimeoutError(f"no joint_states at or after t = {stamp:g} s within {timeout:g} s")
            self._wait_for_others(self._paused_stamp, deadline)
            yield self._paused_stamp
        finally:
            with self._lock:
                self._pause_from = None
                paused = self._paused.is_set()
                self._paused.clear()
            if paused:
                self.release()

    def run_to(self, stamp: float, timeout: float) -> float:
        """From a hold (the start's, or the one this leaves), let the simulation run to its
        first state stamped ``stamp`` or later (s, robot time) and hold it there; returns that
        state's stamp. A client that acts at given simulated times, one after the other, stays
        held in between: each act happens at the same state in every run, after every other
        participant answered it. TimeoutError when no such state came, or another participant
        did not answer it, within ``timeout`` seconds (wall)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._still_in()
            held = seconds(self._withheld) if self._holds and self._withheld is not None else None
            already = held is not None and held >= stamp
            if not already:
                self._start_hold = False
                self._pause_from = stamp
                self._paused.clear()
        if already:
            self._wait_for_others(held, deadline)
            return held
        self.release()
        reached = self._paused.wait(timeout)
        with self._lock:
            self._pause_from = None
            self._paused.clear()
        if not reached:
            raise TimeoutError(f"no joint_states at or after t = {stamp:g} s within {timeout:g} s")
        self._wait_for_others(self._paused_stamp, deadline)
        return self._paused_stamp

    def _still_in(self) -> None:
        """(With the lock held.) A node that left cannot hold the simulation any more."""
        if self._left:
            raise RuntimeError(f"{self.name} has left the lockstep: it cannot hold the simulation any more")

    @property
    def held_at(self) -> float | None:
        """The stamp of the state the simulation is held at by this node (s), None when not held
        or before the first state."""
        with self._lock:
            return seconds(self._withheld) if self._holds and self._withheld is not None else None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the simulation where it is while the block runs: answers wait, the latest is
        sent when the last hold ends."""
        self.take_hold()
        try:
            yield
        finally:
            self.release()

    def leave(self) -> None:
        """Tell the simulator not to wait for this node any more, and stop answering and
        following the others' answers (each of which costs a client about as much as a
        participant's own work: docs/lockstep.md, "Speed"). Once only; call it between two
        turns of the node's executor (it destroys a subscription)."""
        with self._lock:
            if self._left:
                return
            self._left = True
            self._holds = 0
            self._withheld = None
            self._others.clear()
            self._others_changed.notify_all()
        self._publisher.publish(LockstepReady(participant=self.name, leaving=True))
        if self._answers is not None:
            self._node.destroy_subscription(self._answers)
            self._answers = None

    def _publish(self, stamp: Time) -> None:
        self._publisher.publish(LockstepReady(participant=self.name, stamp=stamp))


def _nanoseconds(stamp: Time) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class SharedParticipant:
    """One participant answering for several nodes of one process (a container): the state
    stamped t is answered once every member has answered t, and a member's hold holds the
    simulation for all (the members' work for a state is done when the last of them is).
    Watchers (members that send the robot nothing) are not waited for while another member
    is: their process takes every state in order in one thread, so they still handle t
    before anyone gets the state after it."""

    def __init__(self, node: Node, name: str | None = None) -> None:
        self._participant = LockstepParticipant(node, name)
        self._lock = threading.Lock()
        self._members: list[LockstepMember] = []
        self._answered = -1  # ns of the latest stamp answered

    @property
    def name(self) -> str:
        return self._participant.name

    def member(self, name: str, watcher: bool = False) -> LockstepMember:
        """A new member (a hosted node, ``name``), answering through this participant."""
        member = LockstepMember(self, name, watcher)
        with self._lock:
            self._members.append(member)
        return member

    def _member_answered(self, again: int | None = None) -> None:
        """Answer the latest state every member has answered, once; and once more each time
        a member answers that state ``again`` (its stamp in ns): the simulator sent it again
        because it had not got the answer (a subscription not yet matched when it went out
        loses it). Stamps compared as integers: this runs once per member and state."""
        with self._lock:
            waited = [member for member in self._members if not member.watcher] or self._members
            latest = [member.latest_answer for member in waited]
            if not latest or None in latest:
                return
            oldest = min(latest, key=itemgetter(0))  # (ns, stamp): the ns decide (stamps do not order)
            resent = again is not None and again == oldest[0] == self._answered
            if oldest[0] <= self._answered and not resent:
                return
            self._answered = oldest[0]
            self._participant.answered(oldest[1])

    def _member_left(self, member: LockstepMember) -> None:
        with self._lock:
            if member in self._members:
                self._members.remove(member)
            last = not self._members
        if last:
            self._participant.leave()
        else:
            self._member_answered()

    def take_hold(self) -> None:
        self._participant.take_hold()

    def release(self) -> None:
        self._participant.release()

    def leave(self) -> None:
        """Every member leaves at once (the container stops)."""
        with self._lock:
            self._members.clear()
        self._participant.leave()


class LockstepMember:
    """A node's part of a :class:`SharedParticipant`: what the node calls, as it would call its
    own :class:`LockstepParticipant` (answered, holds, leave)."""

    def __init__(self, shared: SharedParticipant, name: str, watcher: bool = False) -> None:
        self._shared = shared
        self.name = name
        self.watcher = watcher
        #: The latest stamp this member answered, in ns and as given (None before its first
        #: answer); one attribute, so another thread reads both of one answer.
        self.latest_answer: tuple[int, Time] | None = None

    def answered(self, stamp: Time) -> None:
        ns = _nanoseconds(stamp)
        again = self.latest_answer is not None and self.latest_answer[0] == ns
        self.latest_answer = (ns, stamp)
        self._shared._member_answered(ns if again else None)

    def take_hold(self) -> None:
        self._shared.take_hold()

    def release(self) -> None:
        self._shared.release()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        self.take_hold()
        try:
            yield
        finally:
            self.release()

    def leave(self) -> None:
        self._shared._member_left(self)


class LockstepAnswers:
    """The simulator's side of ``lockstep/ready``: every answer handed to ``relay(participant,
    stamp, leaving)`` in the order received, and a leave for a participant whose node went
    away without sending one (closed, crashed, killed; or its leave lost).

    A participant's name is its node's name (the protocol, README "Lockstep"; every participant
    of this stack; a container answers for its nodes under its own node's name). When a writer
    of answers goes away (the subscription's matched count falls: at once for a node closed,
    after DDS's lease, 20 s, for a process killed), a participant that answered, has not left,
    and whose node had a writer on the topic but has none any more, has left: its leave is
    relayed, the log names it, and the leave is sent on the topic on its behalf (a held client
    follows the other participants' answers and would wait for its answer). One never seen
    answering (an expected participant still starting) is kept waited for; one whose name no
    writer's node bears (a custom name, or a node the graph had not named yet) is dropped only
    when no writer is left that could be its own (every writer left is another answering
    participant's node's), else by its own leave (its writer's node is looked for every
    ``NODE_LOOK_PERIOD`` while it answers: the graph learns a writer's node after DDS matched
    the writer, often after its first answers; without looking again, the README's example
    closed without leaving was waited for for ever; one gone within that period, before any
    look, was waited for for ever until the count of writers left was looked at). An answer of a
    dropped participant joins it again (as any first answer does) once its node has a writer
    again; until then it is taken for a late one of the writer that went away, and ignored.

    rclpy's EventsExecutor does not hand a subscription callback the message's info (the
    publisher's GID: ``SystemError: null argument to internal routine``), hence names, not
    writers' GIDs."""

    def __init__(self, node: Node, relay: Callable[[str, Time, bool], None]) -> None:
        self._node = node
        self._relay = relay
        self._answering: set[str] = set()  # answered and not left
        self._writer_nodes: set[str] = set()  # every node name seen with a writer of answers
        self._dropped: set[str] = set()  # went away without leaving
        self._next_look: dict[str, float] = {}  # answering, node not seen yet: when to look again
        self._matched = 0
        self._recheck_until = 0.0
        self._subscription = node.create_subscription(
            LockstepReady, LOCKSTEP_TOPIC, self._on_ready, LOCKSTEP_READER_QOS,
            event_callbacks=SubscriptionEventCallbacks(matched=self._on_matched))
        self._topic = self._subscription.topic_name
        # the leave of a participant that went away, sent on its behalf: held clients follow
        # the other participants' answers (LockstepParticipant._others) and would wait for it
        self._leaves = node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
        self._own = (node.get_name(), node.get_namespace())
        self._recheck = node.create_timer(GRAPH_RECHECK_PERIOD, self._on_recheck)
        self._recheck.cancel()

    def _on_ready(self, msg: LockstepReady) -> None:
        name = msg.participant
        if msg.leaving and name in self._dropped:
            return  # the leave sent on its behalf (or its own, late): let go already
        if msg.leaving:
            self._answering.discard(name)
            self._dropped.discard(name)
        elif name not in self._answering:
            _listed, writers = self._look()
            if name in self._dropped:
                if name not in {info.node_name for info in writers}:
                    return  # a late answer of the writer that went away
                self._dropped.discard(name)
            self._answering.add(name)
            self._next_look[name] = time.monotonic() + NODE_LOOK_PERIOD
        elif name not in self._writer_nodes and time.monotonic() >= self._next_look.get(name, 0.0):
            # DDS matches a writer before the graph knows its node (the node's own announcement
            # tells it), and a new participant's first answers may come in between
            self._look()
            self._next_look[name] = time.monotonic() + NODE_LOOK_PERIOD
        self._relay(name, msg.stamp, msg.leaving)

    def _on_matched(self, status: QoSSubscriptionMatchedInfo) -> None:
        # an exception out of an event callback ends the process with a segfault (rclpy 9.1's
        # EventsExecutor): the node closing while writers go (every node of a graph stopped at
        # once) made the graph calls below raise, and the simulation node died on SIGINT
        with self._unless_closing():
            self._matched = status.current_count
            if status.current_count_change < 0:
                self._recheck_until = time.monotonic() + GRAPH_RECHECK_FOR
                if not self._drop_gone() and self._recheck.is_canceled():
                    self._recheck.reset()
            else:
                self._look()

    def _on_recheck(self) -> None:
        with self._unless_closing():
            if self._drop_gone() or time.monotonic() >= self._recheck_until:
                self._recheck.cancel()

    @contextlib.contextmanager
    def _unless_closing(self) -> Iterator[None]:
        """Swallow what rcl and the loop raise once the node closes (InvalidHandle, RCLError,
        RemoteError: all RuntimeErrors); the same while the node runs is logged."""
        try:
            yield
        except RuntimeError as error:
            if self._node.context.ok():
                self._node.get_logger().error(f"lockstep: the writers of answers could not be looked at: {error}")

    def _look(self) -> tuple[int, list]:
        """How many writers of answers the graph lists now, and those not this front's own (the
        leaves it sends on others' behalf); their nodes' names are remembered."""
        listed = self._node.get_publishers_info_by_topic(self._topic)
        writers = [info for info in listed if (info.node_name, info.node_namespace) != self._own]
        self._writer_nodes |= {info.node_name for info in writers}
        return len(listed), writers

    def _drop_gone(self) -> bool:
        """Relay a leave for each participant whose node's writer is gone; whether the graph
        showed as many writers as are matched (else it may not know yet of one gone, or of
        one come)."""
        listed, writers = self._look()
        nodes = {info.node_name for info in writers}
        gone = self._answering & self._writer_nodes - nodes
        settled = listed == self._matched
        unresolved = self._answering - nodes - gone
        if settled and unresolved and len(writers) <= len(self._answering & nodes):
            # every writer left is a participant's own: the ones whose node was never learned
            # (gone within a look period of their first answer) have none left either
            gone |= unresolved
        for name in sorted(gone):
            self._answering.discard(name)
            self._dropped.add(name)
            self._node.get_logger().warning(
                f"lockstep participant {name} went away without leaving: not waited for any more")
            self._relay(name, Time(), True)
            self._leaves.publish(LockstepReady(participant=name, leaving=True))
        return settled


def lockstep_requested(node: Node) -> bool:
    """The node's ``lockstep`` parameter (declared here, default false): whether it answers a
    lockstep simulation after each joint_states it handles."""
    from rcl_interfaces.msg import ParameterDescriptor

    if node.has_parameter("lockstep"):  # declared by the node with its other parameters (the recorder)
        return bool(node.get_parameter("lockstep").value)
    description = ("answer the simulator after each joint_states message (lockstep/ready): a lockstep "
                   "simulation then waits for this node at every state")
    return bool(node.declare_parameter("lockstep", False, ParameterDescriptor(description=description)).value)


def participant_of(node: Node) -> LockstepParticipant | None:
    """The node's own participant when its ``lockstep`` parameter is true; None otherwise."""
    if lockstep_requested(node):
        node.get_logger().info("lockstep participant: answers each joint_states on lockstep/ready")
        return LockstepParticipant(node)
    return None
