"""The gait controller stops on a fall: a gait under way ends ``FELL`` once ``fall_state`` says
the robot fell, nothing more is sent, and a gait on a robot that lies is refused ``FELL``.

The Bioloid quadruped has no IMU and tips over only in the balance monitor's extreme cases
(its CoM far outside the support of four ball feet), so the fall estimate is given here as the
balance monitor publishes it (same topic, QoS and message): the node under test, the gait
controller, runs in the simulation graph as users run it (no balance monitor, which would
publish its own estimate).
"""

from __future__ import annotations

import threading

import pytest
from trajectory_msgs.msg import JointTrajectory

from conftest import MODULE_CLIENT
from humanoid_control.ros import FALL_STATE_QOS, seconds, to_time
from humanoid_core.loop import TRAJECTORY_DELAY
from humanoid_interfaces.action import PlayGait
from humanoid_interfaces.msg import FallState
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: Wall seconds from the fall's message to the gait's result.
RESULT_WITHIN = 20.0
#: Wall seconds the test waits for the simulation to reach a robot time.
PATIENCE = 120.0

#: Robot seconds the fall's message may take to reach the controller: sent while the
#: simulation is held at a state every node has answered, it is on its way before the next
#: state goes out, but the controller's executor may take that state's joint_states first
#: (seen: one state later in one run of two), and a loaded machine delays the delivery.
TRANSPORT = 0.05

#: In lockstep with the test's client: the simulation cannot run on while the message travels
#: faster than the controller answers, however loaded the machine is.
LOCKSTEP = True
# default nodes off because the test publishes the fall estimate in the balance monitor's place
# (same topic, QoS and message): a monitor beside it would publish its own estimate on it; the
# fall manager, which stops the gait on its own readings (test_fall_manager_sim.py), likewise
GRAPH = sim_nodes("bioloid_quadruped", balance_monitor=False, fall_manager=False, lockstep=True,
                  participants=(MODULE_CLIENT,))


@pytest.fixture(scope="module")
def quadruped(module_graph):
    return module_graph


def fall_state(client, fallen: bool, stamp: float | None = None) -> FallState:
    """A fall estimate stamped ``stamp`` (default: the client's clock, which follows /clock and
    may still be a state behind the joint_states the simulation is held at)."""
    msg = FallState(fallen=fallen, posture=FallState.UNKNOWN if fallen else FallState.UPRIGHT, tilt=float("nan"),
                    source="support")
    msg.header.stamp = to_time(client.now() if stamp is None else stamp)
    return msg


def test_a_fall_ends_the_gait_with_fell_and_nothing_more_is_sent(quadruped):
    client = quadruped
    publisher = client.node.create_publisher(FallState, "fall_state", FALL_STATE_QOS)
    lock, trajectories = threading.Lock(), []

    def on_trajectory(msg: JointTrajectory) -> None:
        with lock:
            trajectories.append(seconds(msg.header.stamp) - TRAJECTORY_DELAY)

    client.node.create_subscription(JointTrajectory, "joint_trajectory", on_trajectory, 100)
    publisher.publish(fall_state(client, False))
    started: list[PlayGait.Feedback] = []
    handle = client.send_gait("trot", 0.5, 30.0, feedback=started.append)
    with client.lockstep.paused_at(client.now() + 2.0, PATIENCE) as held:
        assert started and trajectories, "the gait did not start"
        fall = fall_state(client, True, held)
        publisher.publish(fall)
    result = client.wait_result(handle, RESULT_WITHIN, "play_gait result after the fall").result
    assert result.error_code == PlayGait.Result.FELL, result.error_string
    assert "fell" in result.error_string
    client.wait_until(seconds(fall.header.stamp) + 2.0, timeout=PATIENCE)
    with lock:  # a trajectory answers a reading
        late = [t for t in trajectories if t > seconds(fall.header.stamp) + TRANSPORT]
    assert not late, f"joint_trajectory sent after the fall (readings at {late[:5]})"

    refused = client.wait_result(client.send_gait("trot", 0.5, 2.0), 60.0, "play_gait result").result
    assert refused.error_code == PlayGait.Result.FELL, refused.error_string
