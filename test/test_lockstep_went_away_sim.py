"""A user's lockstep node that closes without sending its leave (the README's example, its
``leave`` left out: a crash after its node is destroyed, a leave lost) beside ``humanoid sim
--lockstep`` as users run it: the simulation runs on without it, and the simulator's log
names it. (The simulator's front is spun by rclpy's EventsExecutor here, as in every graph;
humanoid_control/test/test_lockstep_went_away.py has the cases in-process.)"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest

from humanoid_control.ros import LOCKSTEP_QOS, LOCKSTEP_TOPIC, RobotClient, poll_until
from humanoid_core.processes import is_running
from humanoid_interfaces.msg import LockstepReady

pytestmark = pytest.mark.system

PATIENCE = 120.0
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
def started(command: list[str], log) -> Iterator[subprocess.Popen]:
    """A process (and its session), its output to ``log``, killed at the end if still there."""
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process
    except BaseException:
        log.seek(0)
        print(f"----- output of {' '.join(command)} -----\n{log.read()[-4000:]}")
        raise
    finally:
        if is_running(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(PATIENCE)


def test_a_participant_closed_without_leaving_is_not_waited_for_and_the_log_names_it():
    sim = ["humanoid", "sim", "--robot", "bioloid", "--lockstep"]
    with tempfile.TemporaryFile("w+") as sim_log, tempfile.TemporaryFile("w+") as node_log, \
            started(sim, sim_log), RobotClient("went_away_observer") as client:
        client.wait_for_joint_states(PATIENCE)
        answers: list[str] = []
        client.node.create_subscription(LockstepReady, LOCKSTEP_TOPIC,
                                        lambda msg: answers.append(msg.participant), LOCKSTEP_QOS)
        with started([sys.executable, "-c", CLOSING_NODE], node_log) as closing:
            poll_until(lambda: answers.count(NAME) >= 20, "the node to take part (20 answers)", PATIENCE)
            closing.send_signal(signal.SIGINT)
            assert closing.wait(PATIENCE) == 0
        gone = client.now()
        client.wait_until(gone + 1.0, PATIENCE)  # the simulation goes on without it

        def named() -> bool:
            sim_log.seek(0)
            return f"lockstep participant {NAME} went away without leaving: not waited for any more" in sim_log.read()

        poll_until(named, "the simulator's log to name the node that went away", PATIENCE)
