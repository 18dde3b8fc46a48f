"""A lockstep simulation never waits for ever for a participant that went away: the robot
interface's front in-process over real DDS (its loop in a thread, on the paced ideal driver,
behind a lockstep gate), participants in a DDS participant of their own (another context, as
another process would be).

What users rely on: a participant whose node is closed (or crashes, or is killed) without its
leave reaching the simulator is not waited for any more, and the simulator's log names it; a
participant that leaves, a container's members, an expected participant still starting and one
that comes back work as before; a leave is not lost while the front is busy (answers pile up).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
import rclpy
from builtin_interfaces.msg import Time
from node_teardown import SpinningThread, destroy_whole
from paced_driver import PacedIdealDriver
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rosout_log import RosoutLog
from sensor_msgs.msg import JointState

from humanoid_control.ros import (
    LOCKSTEP_QOS,
    LOCKSTEP_TOPIC,
    NODE_LOOK_PERIOD,
    LockstepParticipant,
    LoopThread,
    RobotInterface,
    SharedParticipant,
    poll_until,
    seconds,
)
from humanoid_core.loop import InterfaceParameters, LockstepGate
from humanoid_description import RobotModel
from humanoid_interfaces.msg import LockstepReady

#: Numbers the fronts' node names: rcl routes a node's log lines to /rosout by its logger name.
FRONTS = itertools.count()
#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0
#: States the simulation must go through to be seen running.
RUNNING = 10
#: s of waiting after which the gate names the participants it waits for (short: the tests
#: wait for that report).
REPORT_AFTER = 0.5


class States:
    """The distinct stamps of joint_states (a waiting simulation sends its state again)."""

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.changed = threading.Condition()

    def __call__(self, msg: JointState) -> None:
        stamp = seconds(msg.header.stamp)
        with self.changed:
            if not self.stamps or stamp > self.stamps[-1]:
                self.stamps.append(stamp)
                self.changed.notify_all()

    def count(self) -> int:
        with self.changed:
            return len(self.stamps)

    def reached(self, count: int) -> bool:
        """Whether ``count`` distinct stamps came within PATIENCE."""
        with self.changed:
            return self.changed.wait_for(lambda: len(self.stamps) >= count, PATIENCE)

    def reached_time(self, stamp: float) -> bool:
        """Whether a state stamped ``stamp`` or later came within PATIENCE."""
        with self.changed:
            return self.changed.wait_for(lambda: bool(self.stamps) and self.stamps[-1] >= stamp, PATIENCE)

    def latest(self) -> float | None:
        with self.changed:
            return self.stamps[-1] if self.stamps else None


@dataclass
class Simulation:
    front: rclpy.node.Node
    gate: LockstepGate
    states: States
    reports: list[str]
    context: Context  # the participants' own
    start_front: threading.Event  # the front spins once set
    log: RosoutLog  # the front's log lines
    spun: dict = field(default_factory=dict)  # node -> the thread spinning its executor

    def node(self, name: str):
        """A participant's node, spun by an executor of its own, as a participant of its own
        process is (its closing stops only its own turns)."""
        made = rclpy.create_node(name, context=self.context)
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(made)
        self.spun[made] = SpinningThread(executor, name=f"{name} spinning").start()
        return made

    def destroy(self, node) -> None:
        """The node closed (no leave sent): its writer of answers goes away with it, after its
        executor's turns ended and the executor shut down (SpinningThread.stop)."""
        self.spun.pop(node).stop(PATIENCE)
        node.destroy_node()

    def destroy_all(self) -> None:
        for node in list(self.spun):
            self.destroy(node)

    def participants(self) -> tuple[str, ...]:
        return self.gate.status().participants

    def reported(self, name: str, since: int = 0) -> bool:
        """Whether the gate named ``name`` among those it waited for (in a report from the
        ``since``-th on)."""
        return any(name in text.split(" for ", 1)[1].split(" to answer", 1)[0].split(", ")
                   for text in self.reports[since:])

    def knows_node(self, name: str) -> None:
        """Once the front's graph lists node ``name`` with a writer of answers, the simulation
        run on for a look period: the front, which looks at the graph that often while a
        participant whose node it has not seen answers, has seen it. (A participant's node the
        graph learns only after DDS matched its writer: on a loaded machine, after it closed.)"""
        poll_until(lambda: name in {w.node_name for w in self.front.get_publishers_info_by_topic(
            f"/{LOCKSTEP_TOPIC}")}, f"the graph listing {name}'s writer of answers", PATIENCE)
        listed = self.states.latest() or 0.0  # robot time, paced no faster than the wall clock
        assert self.states.reached_time(listed + 2 * NODE_LOOK_PERIOD), \
            f"{name} known: the simulation stayed at t = {self.states.latest()} s"

    def runs_on(self, what: str) -> None:
        if not self.states.reached(self.states.count() + RUNNING):  # what the gate saw, to tell why
            status = self.gate.status()
            raise AssertionError(f"{what}: the simulation stayed at t = {self.states.latest()} s; the gate's "
                                 f"participants {status.participants}, waiting for {status.waiting_for}, its last "
                                 f"reports {self.reports[-3:]}")


def answering(node, participant) -> None:
    """``participant`` answers each joint_states ``node`` receives."""
    node.create_subscription(JointState, "joint_states", lambda msg: participant.answered(msg.header.stamp), 50)


@pytest.fixture
def simulation() -> Iterator[Simulation]:
    """A simulated robot in lockstep (expecting no participant unless a test says so before
    the front spins): its front, gate, states, and nodes for participants."""
    model = RobotModel("bioloid")
    rclpy.init()
    front = rclpy.create_node(f"robot_interface_under_test_{next(FRONTS)}")  # a logger of its own (rosout_log)
    observer = rclpy.create_node("observer")
    params = InterfaceParameters(control_rate=100.0, publish_rate=50.0)
    loop = LoopThread(front, PacedIdealDriver(model.joints), model, params)
    reports: list[str] = []
    gate = LockstepGate(timeout=REPORT_AFTER, report=reports.append)
    loop.host.loop.gate = gate
    interface = RobotInterface(front, loop.client, model, params, clock_is_ros_time=False)
    states = States()
    observer.create_subscription(JointState, "joint_states", states, 50)
    front_executor = MultiThreadedExecutor()
    front_executor.add_node(front)
    front_executor.add_node(observer)
    start_front = threading.Event()

    def spin_front() -> None:
        start_front.wait()
        front_executor.spin()

    context = Context()
    rclpy.init(context=context)
    front_spinner = threading.Thread(target=spin_front, daemon=True)
    sim = Simulation(front, gate, states, reports, context, start_front, RosoutLog(observer, front.get_logger().name))
    loop.start()
    try:
        assert interface.start(timeout=PATIENCE) is not None
        front_spinner.start()
        yield sim
    finally:
        start_front.set()
        sim.destroy_all()
        interface.stop()
        loop.stop()
        front_executor.shutdown()
        front_spinner.join(timeout=10.0)
        destroy_whole(front)
        observer.destroy_node()
        rclpy.try_shutdown(context=context)
        rclpy.try_shutdown()


def went_away(simulation: Simulation, name: str) -> bool:
    """Whether the simulator's log named ``name`` as gone without leaving."""
    return simulation.log.find(f"lockstep participant {name} went away without leaving: not waited for any more") \
        is not None


def test_a_participant_whose_node_closed_without_leaving_is_not_waited_for_and_is_named(simulation):
    simulation.start_front.set()
    quitter = simulation.node("quitter")
    answering(quitter, LockstepParticipant(quitter))
    poll_until(lambda: "quitter" in simulation.participants(), "the quitter to join", PATIENCE)
    simulation.runs_on("with the quitter answering")

    simulation.destroy(quitter)
    simulation.runs_on("after the quitter's node closed without leaving")
    assert "quitter" not in simulation.participants()
    poll_until(lambda: went_away(simulation, "quitter"), "the simulator's log naming the participant that went away",
               PATIENCE)


def test_a_held_client_is_not_left_waiting_for_a_participant_that_went_away(simulation):
    """A client that holds the simulation and runs it to given times waits, at each, for the
    other participants' answers (``run_to``); one of them closes without leaving: the front
    sends its leave on its behalf, and the client's next run_to is not left waiting for it."""
    simulation.gate.answer("held_client", float("-inf"))  # expected from the start, as users name it
    simulation.start_front.set()
    client_node, quitter = simulation.node("held_client"), simulation.node("quitter")
    held = LockstepParticipant(client_node, start_held=True)
    answering(client_node, held)
    answering(quitter, LockstepParticipant(quitter))
    poll_until(lambda: "quitter" in simulation.participants(), "the quitter to join", PATIENCE)
    at = held.run_to(0.2, PATIENCE)  # the quitter answered every state up to there
    simulation.destroy(quitter)
    poll_until(lambda: went_away(simulation, "quitter"), "the simulator naming the node that closed", PATIENCE)
    assert held.run_to(at + 0.2, PATIENCE) >= at + 0.2
    assert "quitter" not in simulation.participants()
    held.leave()


def test_a_participant_that_left_goes_on_unwaited_and_one_that_answers_after_being_dropped_joins_again(
        simulation):
    simulation.start_front.set()
    leaver, stayer = simulation.node("leaver"), simulation.node("stayer")
    leaving = LockstepParticipant(leaver)
    answering(leaver, leaving)
    answering(stayer, LockstepParticipant(stayer))
    poll_until(lambda: {"leaver", "stayer"} <= set(simulation.participants()), "both to join", PATIENCE)
    simulation.runs_on("with both answering")

    leaving.leave()  # its node lives on, receiving the states it no longer answers
    poll_until(lambda: "leaver" not in simulation.participants(), "the leaver to be let go", PATIENCE)
    simulation.runs_on("after the leave")
    simulation.destroy(stayer)  # a writer goes away: the one that left is not named for it
    simulation.runs_on("after the stayer's node closed")
    simulation.log.taken_up_to_now(simulation.front, PATIENCE)
    assert not went_away(simulation, "leaver")

    back = simulation.node("stayer")  # the same participant, started again
    coming_back = LockstepParticipant(back)
    answering(back, coming_back)
    poll_until(lambda: "stayer" in simulation.participants(), "the stayer to join again", PATIENCE)
    simulation.runs_on("with the stayer answering again")
    coming_back.take_hold()  # answers no more: the simulation waits for it as for any participant
    waiting_from = len(simulation.reports)
    poll_until(lambda: simulation.reported("stayer", waiting_from), "the simulation to wait for the stayer again",
               PATIENCE)
    coming_back.leave()
    simulation.runs_on("after the stayer left")


def test_a_containers_members_answer_as_one_and_its_closing_without_leaving_is_not_waited_for(simulation):
    simulation.start_front.set()
    container = simulation.node("container")
    shared = SharedParticipant(container)
    first, second = shared.member("first"), shared.member("second")
    answering(container, first)
    answering(container, second)
    poll_until(lambda: "container" in simulation.participants(), "the container to join", PATIENCE)
    simulation.runs_on("with both members answering")
    second.leave()  # one member leaves: the other answers for the container
    simulation.runs_on("after a member left")
    assert "container" in simulation.participants()

    simulation.destroy(container)
    simulation.runs_on("after the container closed without leaving")
    assert "container" not in simulation.participants()
    poll_until(lambda: went_away(simulation, "container"), "the simulator naming the container", PATIENCE)


def test_a_participant_no_node_is_named_after_is_let_go_once_no_writer_left_can_be_its_own(simulation):
    """Answering under a name no node bears (as a node gone before the graph learned its name
    answers: seen in a clean-clone run, its node closed 76 ms after its first answer): kept
    while a writer it may own is left, let go and named once every writer left is another
    participant's."""
    simulation.start_front.set()
    stayer, custom, other = simulation.node("stayer"), simulation.node("custom_node"), simulation.node("other")
    answering(stayer, LockstepParticipant(stayer))
    answering(custom, LockstepParticipant(custom, name="custom_name"))
    answering(other, LockstepParticipant(other))
    poll_until(lambda: {"stayer", "custom_name", "other"} <= set(simulation.participants()), "all three to join",
               PATIENCE)
    simulation.runs_on("with the three answering")
    simulation.knows_node("other")  # else its writer gone could be custom_name's: it would be kept

    simulation.destroy(other)  # a writer goes: two are left, one of them may be custom_name's
    poll_until(lambda: went_away(simulation, "other"), "the simulator naming the node that closed", PATIENCE)
    simulation.runs_on("after the other node closed")
    assert "custom_name" in simulation.participants()

    simulation.destroy(custom)  # the writer left is the stayer's own: custom_name has none
    simulation.runs_on("after the node answering as custom_name closed without leaving")
    assert "custom_name" not in simulation.participants()
    poll_until(lambda: went_away(simulation, "custom_name"), "the simulator naming custom_name", PATIENCE)


def test_an_expected_participant_that_never_answered_is_still_waited_for_when_its_writer_goes(simulation):
    simulation.gate.answer("starting", float("-inf"))  # expected from the start (never answered)
    simulation.start_front.set()
    starting = simulation.node("starting")
    LockstepParticipant(starting)  # its writer: matched, then gone, never an answer
    def writers():  # but the front's own (the leaves it sends on behalf of participants gone)
        return [w for w in simulation.front.get_publishers_info_by_topic(f"/{LOCKSTEP_TOPIC}")
                if w.node_name != simulation.front.get_name()]

    poll_until(writers, "the starting node's writer", PATIENCE)
    simulation.destroy(starting)
    poll_until(lambda: not writers(), "its writer to go", PATIENCE)
    waiting_from = len(simulation.reports)
    poll_until(lambda: simulation.reported("starting", waiting_from + 1),  # two reports: the front took the event
               "the simulation to go on waiting for the expected participant", PATIENCE)
    assert "starting" in simulation.participants()
    simulation.log.taken_up_to_now(simulation.front, PATIENCE)
    assert not went_away(simulation, "starting")

    started = simulation.node("starting")
    answering(started, LockstepParticipant(started))
    simulation.runs_on("once the expected participant answered")


def test_a_leave_is_not_lost_while_the_front_is_busy_and_answers_pile_up(simulation):
    """The front does not take answers for a while (here: it does not spin yet); a leave, then
    more than 100 answers of another participant (what a waiting simulation's resends bring
    from a few participants in a few seconds), all wait for it: the leave is taken too."""
    simulation.gate.answer("leaver", float("-inf"))  # both expected from the start
    simulation.gate.answer("busy", float("-inf"))
    leaver, busy = simulation.node("leaver"), simulation.node("busy")
    writers = {name: node.create_publisher(LockstepReady, LOCKSTEP_TOPIC, LOCKSTEP_QOS)
               for name, node in (("leaver", leaver), ("busy", busy))}
    poll_until(lambda: all(w.get_subscription_count() >= 1 for w in writers.values()),
               "the front to match both writers", PATIENCE)
    writers["leaver"].publish(LockstepReady(participant="leaver", leaving=True))
    for _ in range(150):
        writers["busy"].publish(LockstepReady(participant="busy", stamp=Time()))
    for writer in writers.values():
        assert writer.wait_for_all_acked(rclpy.duration.Duration(seconds=PATIENCE))
    busy_answers = LockstepParticipant(busy)
    answering(busy, busy_answers)

    simulation.start_front.set()
    simulation.runs_on("with the leaver gone and the busy participant answering")
    assert simulation.participants() == ("busy",)
