"""The README's lockstep example (docs/examples/lockstep_node.py), run as users run it beside
``humanoid sim --lockstep``: the simulation waits for it from the start when it is named a
participant, runs while it answers, stands still while it is stopped (SIGSTOP: its answer
held), and goes on without it once it has left (Ctrl-C). Then, beside the same simulation, the
example without its leave (a crash after its node is destroyed, a leave lost): the simulation
runs on without it too, and the simulator's log names it. (The simulator's front is spun by
rclpy's EventsExecutor here, as in every graph; humanoid_control/test/test_lockstep_went_away.py
has the cases in-process.)"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState

from humanoid_control.ros import LOCKSTEP_QOS, LOCKSTEP_TOPIC, RobotClient, poll_until, seconds
from humanoid_core.processes import is_running
from humanoid_interfaces.msg import LockstepReady

pytestmark = pytest.mark.system

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "lockstep_node.py"
PATIENCE = 120.0
#: The simulation sends the state it waits at again every 0.25 s (wall): this many copies of
#: one stamp in a row, with nothing newer, show it standing still.
STILL = 4
#: The README's example node again under another name (NAME), without its leave.
NAME = "closing_controller"
#: The README's example node (docs/examples/lockstep_node.py) without its leave: Ctrl-C closes
#: its node and the process ends.
CLOSING_NODE = f"""
import signal, threading
import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from humanoid_interfaces.msg import LockstepReady

rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
stop = threading.Event()
signal.signal(signal.SIGINT, lambda _signum, _frame: stop.set())
node = Node("{NAME}")
ready = node.create_publisher(LockstepReady, "lockstep/ready",
                              QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
node.create_subscription(JointState, "joint_states",
                         lambda msg: ready.publish(LockstepReady(participant=node.get_name(),
                                                                 stamp=msg.header.stamp)), 10)
while not stop.is_set():
    rclpy.spin_once(node, timeout_sec=0.1)
node.destroy_node()
rclpy.try_shutdown()
"""


@contextlib.contextmanager
def started(command: list[str], log=None) -> Iterator[subprocess.Popen]:
    """A process (and its session), its output to ``log`` (a file of its own if none), stopped
    at the end if still there as a user stops it (Ctrl-C: ``humanoid sim`` then stops its nodes,
    each in a session of its own, and waits for them), killed with its session if that fails."""
    own = log is None
    log = tempfile.TemporaryFile("w+") if own else log  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    except BaseException:
        log.seek(0)
        print(f"----- output of {' '.join(command)} -----\n{log.read()[-4000:]}")
        raise
    finally:
        if is_running(process.pid):
            process.send_signal(signal.SIGCONT)  # a test that failed holding it stopped
            process.send_signal(signal.SIGINT)
            try:
                process.wait(PATIENCE)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        process.wait(PATIENCE)
        if own:
            log.close()


class Stamps:
    """The stamps of the joint_states messages the simulation sends, as they come."""

    def __init__(self, client: RobotClient) -> None:
        self.seen: list[float] = []
        client.node.create_subscription(JointState, "joint_states",
                                        lambda msg: self.seen.append(seconds(msg.header.stamp)), 100)

    def standing_still(self) -> float:
        """Wait until the simulation has sent one state STILL times in a row, nothing newer: its stamp."""
        self.seen.clear()

        def still() -> float | None:
            last = self.seen[-STILL:]
            return last[-1] if len(last) == STILL and len(set(last)) == 1 else None

        return poll_until(still, "the simulation standing still (the same state sent again and again)", PATIENCE)


def test_the_readme_shows_the_example_whole():
    assert f"```python\n{EXAMPLE.read_text()}```" in (EXAMPLE.parents[2] / "README.md").read_text()


@pytest.fixture(scope="module")
def simulation(tmp_path_factory):
    """``humanoid sim --lockstep`` waiting for ``my_controller`` (the example), the path of its
    log (read through a file description of its own: seeking the one the simulation writes
    through would move its writing to the start, over what it wrote), and an observer's client."""
    sim = ["humanoid", "sim", "--robot", "bioloid", "--lockstep", "--lockstep-participant", "my_controller"]
    path = tmp_path_factory.mktemp("lockstep_example") / "sim.log"
    with path.open("w+") as log, started(sim, log), RobotClient("lockstep_example_observer") as client:
        yield path, client


def test_the_readme_example_holds_the_simulation_while_it_holds_its_answer(simulation):
    _log, client = simulation
    stamps = Stamps(client)
    client.wait_for_joint_states(PATIENCE)
    first = stamps.standing_still()  # named up front: nothing runs before the example answers
    with started([sys.executable, str(EXAMPLE)]) as example:
        client.wait_until(first + 1.0, PATIENCE)  # it answers: the simulation runs with it

        example.send_signal(signal.SIGSTOP)  # its answer to the next state never comes
        held = stamps.standing_still()
        stamps.seen.clear()
        poll_until(lambda: len(stamps.seen) >= STILL, f"{STILL} more joint_states", PATIENCE)
        assert set(stamps.seen) == {held}  # robot time does not advance while it holds

        example.send_signal(signal.SIGCONT)
        client.wait_until(held + 1.0, PATIENCE)  # and runs on once it answers again

        example.send_signal(signal.SIGINT)  # Ctrl-C: it leaves, and exits
        assert example.wait(PATIENCE) == 0
        gone = client.now()
        client.wait_until(gone + 1.0, PATIENCE)  # the simulation goes on without it


def test_a_participant_closed_without_leaving_is_not_waited_for_and_the_log_names_it(simulation):
    log, client = simulation
    client.wait_for_joint_states(PATIENCE)
    answers: list[str] = []
    client.node.create_subscription(LockstepReady, LOCKSTEP_TOPIC, lambda msg: answers.append(msg.participant),
                                    LOCKSTEP_QOS)
    participants: list[str] = []  # as the simulator's diagnostics list them, latest last
    client.node.create_subscription(DiagnosticArray, "diagnostics", lambda msg: participants.extend(
        value.value for status in msg.status if status.name.endswith(": lockstep")
        for value in status.values if value.key == "participants"), 10)
    with started([sys.executable, "-c", CLOSING_NODE]) as closing:
        # taking part as the simulator sees it (this observer may hear a node the simulator has
        # not discovered yet: a run closed it 20 answers later, before the simulator matched it)
        poll_until(lambda: answers.count(NAME) >= 20 and participants and NAME in participants[-1].split(","),
                   "the node to take part (20 answers, and the simulator listing it)", PATIENCE)
        closing.send_signal(signal.SIGINT)
        assert closing.wait(PATIENCE) == 0

    def named() -> bool:
        return f"lockstep participant {NAME} went away without leaving: not waited for any more" in log.read_text()

    poll_until(named, "the simulator's log to name the node that went away", PATIENCE)
    # the simulation goes on without it (from the simulator's own clock: the latest state this
    # client has taken may lag it, and a simulation stopped ahead of it looked like one going on)
    client.wait_until(client.simulator_time() + 1.0, PATIENCE)
