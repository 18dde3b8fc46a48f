"""The launch files, checked without ros2 launch (which pip-installed ROS 2 lacks).

What they start comes from one description, ``humanoid_bringup.graphs``, which the
``humanoid`` command runs in the system tests; a launch file only maps its arguments
onto it and adds what needs a full ROS install (robot_state_publisher, RViz). So the
tests check (1) each launch file, parsed with ``ast`` (``launch`` cannot be imported
here): it builds its nodes from the graph function, passes each argument it declares
to a parameter that function has, and starts no other node of ours; and (2) the node
specs as ``launch_ros`` would get them (:func:`~humanoid_bringup.launch_parameters.launch_node`):
each executable is a console script its package installs that runs the spec's module,
with the parameter files and parameters the ``humanoid`` command uses.
"""

import ast
import contextlib
import importlib.metadata
import inspect
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from humanoid_bringup.graphs import real_nodes, sim_nodes
from humanoid_bringup.launch_parameters import GRAPH_SWITCHES, launch_node
from humanoid_description.package_share import package_share_directory
from humanoid_description.robots import ROBOTS, robot_files
from humanoid_description.runtime_files import HW_NODE_PARAMETERS, SIM_NODE_PARAMETERS

LAUNCH = package_share_directory("humanoid_bringup") / "launch"
OURS = {"humanoid_sim", "humanoid_hw", "humanoid_control"}


def parse(name: str) -> ast.Module:
    path = LAUNCH / name
    return ast.parse(path.read_text(), filename=str(path))


def calls(tree: ast.Module, function: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == function]


def constants(tree: ast.Module) -> dict[str, object]:
    """Module-level NAME = literal assignments (the launch files keep lists of robots there)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            with contextlib.suppress(ValueError):  # not a literal: not a constant we need
                found[node.targets[0].id] = ast.literal_eval(node.value)
    return found


def keyword(call: ast.Call, name: str, known: dict[str, object] | None = None):
    """A call's keyword argument as a Python value (literals and module constants), else the node."""
    for kw in call.keywords:
        if kw.arg == name:
            if isinstance(kw.value, ast.Name) and known and kw.value.id in known:
                return known[kw.value.id]
            return ast.literal_eval(kw.value) if isinstance(kw.value, ast.Constant | ast.List) else kw.value
    return None


def declared_arguments(tree: ast.Module) -> dict[str, ast.Call]:
    """Arguments declared by name, and the graph switches declared in one loop over
    ``GRAPH_SWITCHES`` (``DeclareLaunchArgument(name, ...) for name, text in ...``)."""
    declared = {}
    for call in calls(tree, "DeclareLaunchArgument"):
        if isinstance(call.args[0], ast.Constant):
            declared[call.args[0].value] = call
        else:
            assert switch_loop(tree, call), ast.unparse(call)
            declared.update(dict.fromkeys(GRAPH_SWITCHES, call))
    return declared


def switch_loop(tree: ast.Module, call: ast.Call) -> bool:
    """Whether ``call`` is the element of a comprehension over ``GRAPH_SWITCHES.items()``."""
    return any(n.elt is call and ast.unparse(n.generators[0].iter) == "GRAPH_SWITCHES.items()"
               for n in ast.walk(tree) if isinstance(n, ast.GeneratorExp | ast.ListComp))


def passed_switches(call: ast.Call) -> set[str]:
    """The graph switches a graph call gets as ``**graph_switches(argument)``."""
    for kw in call.keywords:
        if kw.arg is None and ast.unparse(kw.value) == "graph_switches(argument)":
            return set(GRAPH_SWITCHES)
    return set()


def console_scripts(package: str) -> set[str]:
    """Executables a package installs as ros2-run nodes (lib/<package>/<name>)."""
    prefix = package_share_directory(package).parents[1]
    return {p.name for p in (prefix / "lib" / package).glob("*")}


def run_dependencies() -> set[str]:
    xml = ET.parse(package_share_directory("humanoid_bringup") / "package.xml").getroot()
    return {e.text for e in xml.iter("exec_depend")}


@pytest.mark.parametrize(("name", "arguments", "runtime_file", "graph"), [
    ("sim.launch.py", {"robot", "gui", "rviz", "use_sim_time", "real_time_factor", "control_rate", "publish_rate",
                       "physics_rate"}, "SIM_NODE_PARAMETERS", sim_nodes),
    ("real.launch.py", {"robot", "port", "baud", "control_rate", "publish_rate", "rviz"}, "HW_NODE_PARAMETERS",
     real_nodes),
])
def test_launch_file_starts_the_graph_the_humanoid_command_starts(name, arguments, runtime_file, graph):
    tree = parse(name)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
    declared = declared_arguments(tree)
    assert arguments <= set(declared), arguments - set(declared)
    # the robots offered are those with the node's parameter file, from the one list of runtime files
    robots = next(n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "ROBOTS")
    assert ast.unparse(robots) == f"list({runtime_file}.robots())"
    assert ast.unparse(keyword(declared["robot"], "choices")) == "ROBOTS"
    assert all(keyword(call, "description") for call in declared.values())  # every argument explained
    # the nodes: the graph function's specs, each started through launch_node
    (call,) = calls(tree, graph.__name__)
    parameters = inspect.signature(graph).parameters
    passed = {kw.arg for kw in call.keywords if kw.arg is not None} | passed_switches(call)
    assert passed <= set(parameters), f"{name} passes {passed - set(parameters)}, which {graph.__name__} lacks"
    assert keyword(call, "publish_robot_description") is False  # robot_state_publisher owns it here
    used = {c.args[0].value for c in calls(tree, "argument") + calls(tree, "LaunchConfiguration")
            if isinstance(c.args[0], ast.Constant)} | passed_switches(call)
    assert used == set(declared), f"unused: {set(declared) - used}; undeclared: {used - set(declared)}"
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "launch_node" for n in ast.walk(tree))
    for node in calls(tree, "Node"):  # the literal nodes are the full install's own tools
        package = keyword(node, "package")
        if isinstance(package, str):
            assert package not in OURS and package in run_dependencies(), package


@pytest.mark.parametrize(("graph", "robot"), [*((sim_nodes, robot) for robot in SIM_NODE_PARAMETERS.robots()),
                                              *((real_nodes, robot) for robot in HW_NODE_PARAMETERS.robots())])
def test_every_node_of_the_graph_is_launchable_as_the_command_runs_it(graph, robot):
    for spec in graph(robot, publish_robot_description=False):
        node = launch_node(spec)
        package, executable = node["package"], node["executable"]
        assert package in OURS
        assert executable in console_scripts(package), f"{package} installs no executable {executable}"
        (target,) = [e.value for e in importlib.metadata.distribution(package.replace("_", "-")).entry_points
                     if e.group == "console_scripts" and e.name == executable]
        assert target == f"{spec.module}:main"  # ros2 launch runs the module the humanoid command runs
        assert node["name"] == spec.name
        *files, parameters = node["parameters"]
        assert files == [str(path) for path in spec.parameter_files] and all(Path(f).is_file() for f in files)
        assert parameters == dict(spec.parameters) and parameters["robot"] == robot


def test_the_driver_node_leaves_robot_description_to_the_state_publisher_under_launch():
    for graph, robot in ((sim_nodes, "hoap2"), (real_nodes, "bioloid")):
        driver, *_ = graph(robot, publish_robot_description=False)
        assert launch_node(driver)["parameters"][-1]["publish_robot_description"] is False
        driver, *_ = graph(robot)
        assert "publish_robot_description" not in driver.parameters  # humanoid sim/real: the node publishes it


@pytest.mark.parametrize(("runtime_file", "robots"),
                         [(SIM_NODE_PARAMETERS, ROBOTS), (HW_NODE_PARAMETERS, ("bioloid", "bioloid_quadruped"))])
def test_parameter_files_exist_for_every_robot_offered(runtime_file, robots):
    assert runtime_file.robots() == robots
    for robot in robots:
        assert runtime_file.path(robot).is_file()
        assert robot_files(robot).xacro.is_file()


def test_record_launch_records_the_interface_in_mcap():
    from humanoid_control.ros.topics import DEFAULT_TOPICS

    text = (LAUNCH / "record.launch.py").read_text()
    parse("record.launch.py")
    # the same topics as humanoid record (one list), hidden action topics included
    assert "from humanoid_control.ros.topics import DEFAULT_TOPICS" in text and "*DEFAULT_TOPICS" in text
    assert {"/joint_states", "/joint_commands", "/joint_trajectory", "/diagnostics", "/balance_state",
            "/self_collision_state", "/follow_joint_trajectory/_action/feedback"} <= set(DEFAULT_TOPICS)
    assert '"--storage", "mcap"' in text and '"--include-hidden-topics"' in text


def test_rviz_config_shows_the_robot_model():
    text = (package_share_directory("humanoid_bringup") / "rviz" / "humanoid.rviz").read_text()
    assert "rviz_default_plugins/RobotModel" in text and "/robot_description" in text
    assert Path(LAUNCH / "sim.launch.py").read_text().count("humanoid.rviz") == 1
