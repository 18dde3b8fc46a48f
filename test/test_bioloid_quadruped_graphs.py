"""The Bioloid quadruped behind the same robot interface as the humanoids: the simulation
graph (``humanoid sim``) and the hardware graph on the emulated bus (``humanoid real
--emulate``) come up with every node, publish joint_states of its 16 joints, play a library
motion, and the balance monitor reports a support polygon of four feet.

What users rely on: the quadruped stands in its home pose without falling; its joint_states
list the 16 joints in the robot's order; play_motion plays its motions; balance_state says
it stands on its four ball feet with the CoM inside them.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from system_support import on_emulated_bus

from humanoid_bringup import real_nodes
from humanoid_control.ros import RobotClient, poll_until, seconds
from humanoid_description import load_model
from humanoid_hw.emulator import emulator_process
from humanoid_interfaces.msg import BalanceState
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROBOT = "bioloid_quadruped"
#: Generous limit (wall seconds) for anything awaited; every wait ends as soon as its condition holds.
PATIENCE = 120.0


class LatestBalance:
    """The balance_state messages stamped after a given robot time."""

    def __init__(self, client: RobotClient) -> None:
        self.messages: list[BalanceState] = []
        self._lock = threading.Lock()
        client.node.create_subscription(BalanceState, "balance_state", self._on_message, 100)

    def _on_message(self, msg: BalanceState) -> None:
        with self._lock:
            self.messages.append(msg)

    def after(self, robot_time: float) -> list[BalanceState]:
        with self._lock:
            return [m for m in self.messages if seconds(m.header.stamp) > robot_time]


def test_simulated_quadruped_stands_plays_a_motion_and_rests_on_four_feet(robot_graph):
    model = load_model(ROBOT)
    _graph, client = robot_graph(sim_nodes(ROBOT, real_time_factor=0.0))
    balance = LatestBalance(client)
    state = client.wait_for_joint_states()
    assert list(state.name) == list(model.joints.names)
    poll_until(lambda: client.base_pose, "a ground_truth/base_pose message", PATIENCE)
    start = client.now()
    client.wait_until(start + 2.0, timeout=PATIENCE)
    assert client.fallen is False
    held = client.current_positions()
    assert np.max(np.abs(model.joints.to_array(held) - model.home_positions())) < 0.05

    states = poll_until(lambda: len(s := balance.after(start + 1.0)) >= 20 and s, "20 balance_state", PATIENCE)
    # in the world frame from the ground truth; when that reading is older than the monitor's
    # sensor_timeout (a loaded machine delays it), from the model on flat ground (a foot's frame)
    frames = {"world"} | {foot.sole for foot in model.config.feet.values()}
    for state in states:
        assert state.header.frame_id in frames
        assert len(state.support_polygon.points) == 4 and state.stable
        assert state.stability_margin > 0.02  # the CoM well inside the four feet (describe: 39.9 mm)

    response = client.play_motion("nod", timeout=PATIENCE)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert client.fallen is False


def test_emulated_hardware_graph_serves_the_quadruped(robot_graph):
    model = load_model(ROBOT)
    with emulator_process(ROBOT, 1, 1_000_000, timing=False) as port:
        _graph, client = robot_graph(on_emulated_bus(real_nodes(ROBOT, port=port)))
        balance = LatestBalance(client)
        state = client.wait_for_joint_states(PATIENCE)
        assert list(state.name) == list(model.joints.names)
        assert np.all(np.isfinite(state.position))
        start = seconds(state.header.stamp)
        states = poll_until(lambda: len(s := balance.after(start)) >= 20 and s, "20 balance_state", PATIENCE)
        last = states[-1]
        # no IMU, no foot sensors: the model's feet on flat ground, all four level
        assert last.header.frame_id in {foot.sole for foot in model.config.feet.values()}
        assert len(last.support_polygon.points) == 4 and np.isfinite(last.stability_margin)


def test_a_gait_whose_set_points_the_robot_refuses_ends_stopped_naming_the_joint(robot_graph):
    """The gait controller streams open loop like the walk's: a robot that refuses every
    trajectory it sends (the hardware node takes none ending more than 0.05 s after its
    receipt; each the controller sends begins 0.1 s after the reading it answers) does not
    move, and the gait goal must not end SUCCESSFUL."""
    from humanoid_control.nodes import with_node_parameters
    from humanoid_hw import NODE_NAME as HW_NODE
    from humanoid_interfaces.action import PlayGait

    with emulator_process(ROBOT, 1, 1_000_000, timing=False) as port:
        nodes = with_node_parameters(on_emulated_bus(real_nodes(ROBOT, port=port)), HW_NODE,
                                     {"max_trajectory_duration": 0.05})
        _graph, client = robot_graph(nodes)
        standing = client.current_positions()
        response = client.play_gait("trot", 1.0, 1.0, timeout=PATIENCE)
        assert response.result.error_code == PlayGait.Result.STOPPED, response.result.error_string
        assert "did not reach the last set-point sent" in response.result.error_string
        now = client.current_positions()
        assert max(abs(now[name] - standing[name]) for name in standing) < 0.05  # it never moved
