"""The launch files, checked without ros2 launch (which pip-installed ROS 2 lacks).

What they start comes from one description, ``humanoid_bringup.graphs``, which the
``humanoid`` command runs in the system tests; a launch file only maps its arguments
onto it and adds what needs a full ROS install (robot_state_publisher, RViz). So the
tests check (1) each launch file, parsed with ``ast`` (``launch`` cannot be imported
here): it builds its nodes from the graph function, passes each argument it declares
to a parameter that function has, decides on the optional tools before it builds
anything, and starts every process through :func:`~humanoid_bringup.launch_parameters.launch_actions`;
(2) the node specs as ``launch_ros`` would get them (:func:`~humanoid_bringup.launch_parameters.launch_node`):
each executable is a console script its package installs that runs the spec's module,
with the parameter files and parameters the ``humanoid`` command uses, respawned
unless it is the driver, behind the tether prefix; (3) that prefix for real: a program
started through it dies with its launcher killed outright; (4) a missing optional
package is found before anything starts, ``ros2`` missing refuses the recording, and
the real graph runs without ``humanoid_sim``.
"""

import ast
import contextlib
import importlib.metadata
import inspect
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from humanoid_bringup.graphs import real_nodes, sim_nodes
from humanoid_bringup.launch_parameters import (
    GRAPH_SWITCHES,
    FullInstallTools,
    MissingPackageError,
    driver_exited,
    full_install_tools,
    installed,
    launch_node,
    recording_failed,
    ros2_bag_record,
    tethered,
    tool_nodes,
)
from humanoid_control.nodes.specs import CONTAINER_MODULE, hosted_names
from humanoid_control.ros.robot_client import poll_until
from humanoid_control.ros.topics import DEFAULT_TOPICS
from humanoid_core.processes.node_graph import RESTART_POLICY, OnExit
from humanoid_core.processes.process_lifetime import is_running
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


def test_record_launch_records_the_interface_in_mcap_and_fails_without_ros2():
    tree = parse("record.launch.py")
    # the same topics as humanoid record (one list), hidden action topics included
    (command,) = calls(tree, "ros2_bag_record")
    assert ast.unparse(command.args[1]) == "DEFAULT_TOPICS"
    assert {"/joint_states", "/joint_commands", "/joint_trajectory", "/diagnostics", "/balance_state",
            "/self_collision_state", "/follow_joint_trajectory/_action/feedback"} <= set(DEFAULT_TOPICS)
    assert ros2_bag_record("bag", DEFAULT_TOPICS, which=lambda _: "/opt/ros/bin/ros2") == [
        "ros2", "bag", "record", "--storage", "mcap", "--include-hidden-topics", "--output", "bag",
        "--topics", *DEFAULT_TOPICS]
    # no ros2: refused before anything starts (the launch fails), naming the pip-only way
    with pytest.raises(MissingPackageError, match="humanoid record"):
        ros2_bag_record("bag", DEFAULT_TOPICS, which=lambda _: None)
    # built at launch time (not at import), tethered, and a recording that fails fails the launch
    (opaque,) = calls(tree, "OpaqueFunction")
    assert ast.unparse(opaque) == "OpaqueFunction(function=record)"
    (process,) = calls(tree, "ExecuteProcess")
    assert any(kw.arg is None and ast.unparse(kw.value) == "tethered()" for kw in process.keywords)
    (handler,) = calls(tree, "OnProcessExit")
    assert "recording_failed(event.returncode)" in ast.unparse(handler)
    recording_failed(0)
    with pytest.raises(RuntimeError, match="status 1"):
        recording_failed(1)


def test_a_missing_optional_package_is_said_before_anything_starts():
    warnings = []
    with pytest.raises(MissingPackageError, match="rviz2 is not installed"):
        full_install_tools(True, warnings.append, is_installed=lambda _: False)
    assert full_install_tools(False, warnings.append, is_installed=lambda _: False) == FullInstallTools(False, False)
    assert len(warnings) == 1 and "robot_state_publisher is not installed" in warnings[0]
    assert "driver node publishes robot_description" in warnings[0]
    assert full_install_tools(True, warnings.append, is_installed=lambda _: True) == FullInstallTools(True, True)
    assert len(warnings) == 1
    # the ament index decides, as launch_ros looks: ours are there, the pip install has no state publisher
    assert installed("humanoid_bringup") and not installed("robot_state_publisher")
    tools = tool_nodes(FullInstallTools(True, True), "hoap2", use_sim_time=True)
    assert [t["package"] for t in tools] == ["robot_state_publisher", "rviz2"]
    assert all(t["prefix"] == tethered()["prefix"] for t in tools)
    assert Path(tools[1]["arguments"][1]).is_file()  # the RViz configuration installed
    assert tool_nodes(FullInstallTools(False, False), "hoap2", use_sim_time=True) == []
    for package in ("robot_state_publisher", "rviz2"):
        assert package in run_dependencies()


STAND_IN = """\
#!{python}
import pathlib, signal, sys, time
def stop(signum, _frame):
    pathlib.Path({marker!r}).write_text(signal.Signals(signum).name)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
pathlib.Path({ready!r}).write_text(str(__import__("os").getpid()))
while True:
    time.sleep(0.05)
"""

LAUNCHER = """
import shlex, subprocess, sys, time
from humanoid_bringup.launch_parameters import tethered
options = tethered()  # computed in the launch process, as a launch file does
process = subprocess.Popen([*shlex.split(options["prefix"]), {program!r}], env={{**__import__("os").environ,
                           **options["additional_env"]}})
time.sleep(600)
"""


def test_a_process_behind_the_launch_prefix_dies_with_the_launch_killed_outright(tmp_path):
    """What launch does with a node's ``prefix`` (launch's Executable: ``shlex.split(prefix) +
    cmd``, no shell), with a stand-in program; the launch process is then SIGKILLed."""
    program, marker, ready = tmp_path / "stand_in", tmp_path / "stopped_by", tmp_path / "ready"
    program.write_text(STAND_IN.format(python=sys.executable, marker=str(marker), ready=str(ready)))
    program.chmod(0o755)
    launcher = subprocess.Popen([sys.executable, "-c", textwrap.dedent(LAUNCHER.format(program=str(program)))],
                                start_new_session=True)
    node = None
    try:
        node = int(poll_until(lambda: ready.exists() and ready.read_text(), "the stand-in running", 60.0))
        assert Path(f"/proc/{node}/cmdline").read_text().split("\0")[1] == str(program)  # exec'd: no wrapper left
        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait(60.0)
        poll_until(lambda: not is_running(node), "the stand-in gone with its launcher", 60.0)
        assert marker.read_text() == "SIGTERM"  # the clean-shutdown signal: a node applies its safe state
    finally:
        for pid in (launcher.pid, node):
            if pid is not None and is_running(pid):
                os.kill(pid, signal.SIGKILL)
        launcher.wait(60.0)


LOADING = """\
#!{python}
import pathlib, signal, sys, time
while not pathlib.Path({loaded!r}).exists():  # its modules loading: no handler of its own yet
    time.sleep(0.05)
def stop(signum, _frame):
    pathlib.Path({marker!r}).write_text(signal.Signals(signum).name)
    sys.exit(0)
signal.signal(signal.SIGINT, stop)
pathlib.Path({ready!r}).write_text("ready")
while True:
    time.sleep(0.05)
"""


def test_a_ctrl_c_while_a_node_loads_leaves_no_traceback(tmp_path):
    """``ros2 launch`` passes a Ctrl-C to every process, a node still loading its modules too:
    behind the node prefix it ignores it (no KeyboardInterrupt traceback), and stops on the
    next once its own handling is in place."""
    program, loaded, ready, marker = (tmp_path / n for n in ("stand_in", "loaded", "ready", "stopped_by"))
    program.write_text(LOADING.format(python=sys.executable, loaded=str(loaded), ready=str(ready), marker=str(marker)))
    program.chmod(0o755)
    options = tethered(node=True)
    process = subprocess.Popen([*shlex.split(options["prefix"]), str(program)], stderr=subprocess.PIPE, text=True,
                               env=os.environ | options["additional_env"] | {"PYTHONUNBUFFERED": "1"})
    try:
        def running_the_program() -> bool:  # the command line is empty for a moment while the prefix execs
            arguments = Path(f"/proc/{process.pid}/cmdline").read_text().split("\0")
            return len(arguments) > 1 and arguments[1] == str(program)

        poll_until(running_the_program, "the node program running", 60.0)
        process.send_signal(signal.SIGINT)
        loaded.write_text("")
        poll_until(ready.exists, "the node past its loading", 60.0)
        assert process.poll() is None  # the Ctrl-C while loading did not kill it
        process.send_signal(signal.SIGINT)
        assert process.wait(60.0) == 0 and marker.read_text() == "SIGINT"
        assert "Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(60.0)


BLOCKED = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"humanoid_sim", "pybullet"}:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed on the robot's computer)")
sys.meta_path.insert(0, Absent())
"""


def test_the_real_graph_needs_no_simulation():
    """The robot's computer: without humanoid_sim (nor PyBullet) the real graph is built as the
    launch file builds it, and every module it runs imports."""
    check = BLOCKED + textwrap.dedent("""
        import importlib
        from humanoid_bringup.graphs import real_nodes
        from humanoid_bringup.launch_parameters import launch_node
        specs = real_nodes("bioloid", port="/dev/ttyUSB0", publish_robot_description=False)
        for spec in specs:
            launch_node(spec)
            importlib.import_module(spec.module)
        import humanoid_bringup.cli, humanoid_control.ros.topics
        try:
            import humanoid_sim
        except ModuleNotFoundError:
            print("ok", len(specs))
        """)
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["ok", str(len(real_nodes("bioloid")))]
    # the packages it needs do not depend on the simulation; humanoid_bringup only where asked
    for package in ("humanoid_interfaces", "humanoid_description", "humanoid_core", "humanoid_control", "humanoid_hw"):
        xml = ET.parse(package_share_directory(package) / "package.xml").getroot()
        assert "humanoid_sim" not in {e.text for e in xml.iter() if e.tag.endswith("depend")}, package
    bringup = ET.parse(package_share_directory("humanoid_bringup") / "package.xml").getroot()
    (simulation,) = [e for e in bringup.iter("exec_depend") if e.text == "humanoid_sim"]
    assert simulation.get("condition") == "$HUMANOID_ROBOT_ONLY != true"
    needed = {e.text for e in bringup.iter("exec_depend") if e.get("condition") is None}
    assert {"humanoid_interfaces", "humanoid_description", "humanoid_core", "humanoid_control", "humanoid_hw", "launch",
            "launch_ros"} <= needed and "python3-pybullet" not in needed


def test_the_drivers_exit_stops_the_launch_and_fails_it_unless_clean():
    """What the driver's exit handler (launch_actions) gives launch: the shutdown's reason, or
    an error (launch then stops everything and exits 1)."""
    assert driver_exited("humanoid_sim", 0) == "humanoid_sim exited with status 0: nothing holds the robot, " \
                                                "stopping the graph"
    with pytest.raises(RuntimeError, match="humanoid_hw was killed by SIGKILL: nothing holds the robot"):
        driver_exited("humanoid_hw", -signal.SIGKILL)
    with pytest.raises(RuntimeError, match="humanoid_hw exited with status 1"):
        driver_exited("humanoid_hw", 1)


def test_rviz_config_shows_the_robot_model():
    (rviz,) = tool_nodes(FullInstallTools(False, True), "hoap2", use_sim_time=False)  # what RViz is given
    config = Path(rviz["arguments"][1])
    assert config == package_share_directory("humanoid_bringup") / "rviz" / "humanoid.rviz"
    text = config.read_text()
    assert "rviz_default_plugins/RobotModel" in text and "/robot_description" in text
