"""The simulated robot standing still over time, each robot in its own simulation process."""

import numpy as np
import pytest

from humanoid_control.ros import poll_until
from humanoid_description import load_model
from humanoid_sim.sim_node_spec import sim_node_spec

pytestmark = pytest.mark.system


@pytest.mark.parametrize("robot_name", ["hoap2", "bioloid"])
def test_the_robot_stands_ten_seconds_in_its_home_pose(robot_graph, robot_name):
    _, client = robot_graph([sim_node_spec(robot_name, {"real_time_factor": 0.0})])
    start_pose = poll_until(lambda: client.base_pose, "a ground_truth/base_pose message", 60.0)
    start = client.now()
    while client.now() < start + 10.0:
        client.wait_until(client.now() + 0.5)
        assert client.fallen is False
    end_pose = client.base_pose
    assert end_pose.header.stamp != start_pose.header.stamp  # a later pose, not the first one again
    assert end_pose.pose.position.z == pytest.approx(start_pose.pose.position.z, abs=0.01)
    home = load_model(robot_name).home_positions()
    assert np.max(np.abs(np.array(client.wait_for_joint_states().position) - home)) < 0.05
