"""The simulation's launch file, ``sim.launch.py``, checked without ros2 launch (which
pip-installed ROS 2 lacks) as the bring-up's ``real.launch.py`` is
(humanoid_bringup/test/test_launch_files.py, the same checks: :mod:`humanoid_bringup.launch_checks`):
it maps its arguments onto the graph ``humanoid sim`` starts (:func:`humanoid_sim.graphs.sim_nodes`)
and every node of that graph is launchable as the command runs it."""

import pytest

from humanoid_bringup import check_driver_leaves_description, check_launch_file, check_launchable
from humanoid_description import SIM_NODE_PARAMETERS, package_share_directory
from humanoid_sim import sim_nodes

LAUNCH = package_share_directory("humanoid_sim") / "launch"
OURS = {"humanoid_sim", "humanoid_hw", "humanoid_control"}


@pytest.mark.parametrize(("name", "arguments", "runtime_file", "graph"), [
    ("sim.launch.py", {"robot", "gui", "rviz", "use_sim_time", "real_time_factor", "control_rate", "publish_rate",
                       "physics_rate", "count", "spacing"}, "SIM_NODE_PARAMETERS", sim_nodes),
])
def test_launch_file_starts_the_graph_the_humanoid_command_starts(name, arguments, runtime_file, graph):
    check_launch_file(LAUNCH / name, arguments, runtime_file, graph)


@pytest.mark.parametrize(("graph", "robot"), [*((sim_nodes, robot) for robot in SIM_NODE_PARAMETERS.robots())])
def test_every_node_of_the_graph_is_launchable_as_the_command_runs_it(graph, robot):
    check_launchable(graph, robot, OURS)


def test_the_driver_node_leaves_robot_description_to_the_state_publisher_under_launch():
    for graph, robot in ((sim_nodes, "hoap2"),):
        check_driver_leaves_description(graph, robot)
