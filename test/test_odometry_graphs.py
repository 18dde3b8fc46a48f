"""The odometry in the graphs and its /tf type (issue 39 item 1), without starting anything.

- Both graphs host the odometry node (``--no-odometry`` leaves it out); only the simulation's
  relays a ground truth: on the real robot ``ground_truth`` stays off, there is none.
- ``/tf``'s type: where no ROS installation provides tf2_msgs, the stack builds a stand-in
  (``tf2_msgs_standin``: TFMessage only, the standard field list). Its type hash must be the
  standard definition's, computed here independently by rosbags from its own tf2_msgs
  definition, so that a system tf2_msgs replaces it without a difference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from humanoid_bringup import real_nodes
from humanoid_control.nodes import ODOMETRY
from humanoid_sim import sim_nodes


def _odometry(nodes):
    for spec in nodes:
        if spec.name == ODOMETRY:
            return dict(spec.parameters)
        if ODOMETRY in spec.hosted:
            return {k.split(".", 1)[1]: v for k, v in spec.parameters.items() if k.startswith(f"{ODOMETRY}.")}
    return None


@pytest.mark.parametrize("robot", ["hoap2", "bioloid", "bioloid_quadruped"])
def test_the_real_graph_has_odometry_without_ground_truth(robot):
    parameters = _odometry(real_nodes(robot, port="/dev/null"))
    assert parameters is not None
    assert parameters["ground_truth"] is False
    assert _odometry(real_nodes(robot, port="/dev/null", odometry=False)) is None


@pytest.mark.parametrize("robot", ["hoap2", "bioloid_quadruped"])
def test_the_simulation_graph_relays_its_ground_truth(robot):
    parameters = _odometry(sim_nodes(robot))
    assert parameters is not None and parameters["ground_truth"] is True
    assert _odometry(sim_nodes(robot, odometry=False)) is None


def test_the_tf_message_type_hash_is_the_standard_one():
    from ament_index_python.packages import get_package_share_directory
    from rosbags.typesys import Stores, get_typestore

    described = json.loads((Path(get_package_share_directory("tf2_msgs")) / "msg" / "TFMessage.json").read_text())
    ours = described["type_hashes"][0]
    assert ours["type_name"] == "tf2_msgs/msg/TFMessage"
    assert ours["hash_string"] == get_typestore(Stores.LATEST).hash_rihs01("tf2_msgs/msg/TFMessage")
