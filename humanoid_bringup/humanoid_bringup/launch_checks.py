"""Checks of a launch file built on the stack's graphs, without ``launch`` (which pip-installed
ROS 2 lacks): for the tests of the packages that ship one (this package's ``real.launch.py``,
the simulation's ``sim.launch.py``), so that each is held to the same checks.

(1) :func:`check_launch_file`: the file, parsed with ``ast``, builds its nodes from the graph
function, passes each argument it declares to a parameter that function has, decides on the
optional tools before it builds anything, and starts every process through
:func:`~humanoid_bringup.launch_parameters.launch_actions`; (2) :func:`check_launchable`: the
node specs as ``launch_ros`` would get them (:func:`~humanoid_bringup.launch_parameters.launch_node`):
each executable is a console script its package installs that runs the spec's module, with
the parameter files and parameters the ``humanoid`` command uses, respawned unless it is the
driver, behind the tether prefix.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import inspect
from collections.abc import Callable, Collection
from pathlib import Path

from humanoid_bringup.launch_parameters import GRAPH_SWITCHES, launch_node, tethered
from humanoid_control.nodes import CONTAINER_MODULE
from humanoid_control.nodes.specs import hosted_names
from humanoid_core.processes import RESTART_POLICY, OnExit
from humanoid_description import package_share_directory


def parse(path: Path) -> ast.Module:
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


def check_launch_file(path: Path, arguments: set[str], runtime_file: str, graph: Callable) -> None:
    """The launch file at ``path`` declares ``arguments`` (at least), offers the robots of
    ``runtime_file`` and starts the graph ``graph`` builds, as the ``humanoid`` command does."""
    name = path.name
    tree = parse(path)
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
    # robot_state_publisher owns robot_description where it is installed, the driver elsewhere
    assert ast.unparse(keyword(call, "publish_robot_description")) == "not tools.state_publisher"
    (tools,) = calls(tree, "full_install_tools")  # decided before any node is built
    assert tools.lineno < call.lineno
    (actions,) = calls(tree, "launch_actions")  # every process through it: tethered, respawned, ended by the driver
    assert ast.unparse(actions.args[0]) == "graph" and ast.unparse(actions.args[1]).startswith("tool_nodes(tools")
    used = {c.args[0].value for c in calls(tree, "argument") + calls(tree, "LaunchConfiguration")
            if isinstance(c.args[0], ast.Constant)} | passed_switches(call)
    assert used == set(declared), f"unused: {set(declared) - used}; undeclared: {used - set(declared)}"
    assert not calls(tree, "Node") and not calls(tree, "ExecuteProcess")  # nothing started around it


def check_launchable(graph: Callable, robot: str, ours: Collection[str]) -> None:
    """Every node of ``graph(robot)`` as launch gets it: a console script of one of ``ours``
    running the module the command runs, with the same parameter files and values."""
    for spec in graph(robot, publish_robot_description=False):
        node = launch_node(spec)
        package, executable = node["package"], node["executable"]
        assert package in ours
        assert executable in console_scripts(package), f"{package} installs no executable {executable}"
        (target,) = [e.value for e in importlib.metadata.distribution(package.replace("_", "-")).entry_points
                     if e.group == "console_scripts" and e.name == executable]
        assert target == f"{spec.module}:main"  # ros2 launch runs the module the humanoid command runs
        assert node["name"] == spec.name
        *files, parameters = node["parameters"]
        assert files == [str(path) for path in spec.parameter_files] and all(Path(f).is_file() for f in files)
        assert parameters == dict(spec.parameters)
        if spec.module == CONTAINER_MODULE:  # each node it hosts is given its robot
            assert hosted_names(spec) and all(parameters[f"{name}.robot"] == robot for name in hosted_names(spec))
        else:
            assert parameters["robot"] == robot
        tether = tethered(node=True)
        assert node["prefix"] == tether["prefix"] and node["additional_env"] == tether["additional_env"]
        assert node["prefix"].endswith("humanoid_core.processes.run_tethered --exec-node")  # quiet while loading
        if spec.on_exit is OnExit.END_GRAPH:  # the driver: its exit shuts the launch down (launch_actions)
            assert spec == graph(robot, publish_robot_description=False)[0] and "respawn" not in node
        else:  # observers and controllers come back as under humanoid sim (launch has no back-off)
            assert (node["respawn"], node["respawn_delay"], node["respawn_max_retries"]) == \
                (True, RESTART_POLICY.first_delay, RESTART_POLICY.max_restarts)


def check_driver_leaves_description(graph: Callable, robot: str) -> None:
    """Under launch the driver leaves robot_description to robot_state_publisher; without, it
    publishes it itself."""
    driver, *_ = graph(robot, publish_robot_description=False)
    assert launch_node(driver)["parameters"][-1]["publish_robot_description"] is False
    driver, *_ = graph(robot)
    assert "publish_robot_description" not in driver.parameters  # humanoid sim/real: the node publishes it
