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
unless it is the driver, behind the tether prefix (both in
:mod:`humanoid_bringup.launch_checks`, which the simulation's tests hold ``sim.launch.py``
to as well: humanoid_sim/test/test_sim_launch_file.py); (3) that prefix for real: a program
started through it dies with its launcher killed outright; (4) a missing optional
package is found before anything starts, ``ros2`` missing refuses the recording, and
the real graph runs without ``humanoid_sim``, which this package neither imports nor declares.
"""

import ast
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from humanoid_bringup import (
    FullInstallTools,
    MissingPackageError,
    calls,
    check_driver_leaves_description,
    check_launch_file,
    check_launchable,
    driver_exited,
    full_install_tools,
    installed,
    real_nodes,
    recording_failed,
    ros2_bag_record,
    tethered,
    tool_nodes,
)
from humanoid_bringup import parse as parse_file
from humanoid_control.ros import DEFAULT_TOPICS, absolute, poll_until
from humanoid_core.processes import is_running
from humanoid_description import HW_NODE_PARAMETERS, ROBOTS, SIM_NODE_PARAMETERS, package_share_directory, robot_files

LAUNCH = package_share_directory("humanoid_bringup") / "launch"
OURS = {"humanoid_hw", "humanoid_control"}


def parse(name: str) -> ast.Module:
    return parse_file(LAUNCH / name)


def run_dependencies() -> set[str]:
    xml = ET.parse(package_share_directory("humanoid_bringup") / "package.xml").getroot()
    return {e.text for e in xml.iter("exec_depend")}


@pytest.mark.parametrize(("name", "arguments", "runtime_file", "graph"), [
    ("real.launch.py", {"robot", "port", "baud", "control_rate", "publish_rate", "rviz"}, "HW_NODE_PARAMETERS",
     real_nodes),
])
def test_launch_file_starts_the_graph_the_humanoid_command_starts(name, arguments, runtime_file, graph):
    check_launch_file(LAUNCH / name, arguments, runtime_file, graph)


@pytest.mark.parametrize(("graph", "robot"), [*((real_nodes, robot) for robot in HW_NODE_PARAMETERS.robots())])
def test_every_node_of_the_graph_is_launchable_as_the_command_runs_it(graph, robot):
    check_launchable(graph, robot, OURS)


def test_the_driver_node_leaves_robot_description_to_the_state_publisher_under_launch():
    for graph, robot in ((real_nodes, "bioloid"),):
        check_driver_leaves_description(graph, robot)


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
    assert ast.unparse(command.args[1]) == "topics"
    assert "absolute(topic, namespace) for topic in DEFAULT_TOPICS" in ast.unparse(tree)
    assert {"joint_states", "joint_commands", "joint_trajectory", "diagnostics", "balance_state",
            "self_collision_state", "follow_joint_trajectory/_action/feedback", "/tf"} <= set(DEFAULT_TOPICS)
    # the robot's topics in its namespace, /tf global
    assert {absolute(t, "/a") for t in ("joint_states", "/tf")} == {"/a/joint_states", "/tf"}
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
from humanoid_bringup import tethered
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
        from humanoid_bringup import real_nodes
        from humanoid_bringup import launch_node
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
    assert "humanoid_sim" not in {e.text for e in bringup.iter() if e.tag.endswith("depend")}  # the sim's own
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
    # the robot moves in the odometry's frame (the odometry node's odom -> base_link)
    assert "Fixed Frame: odom" in text and "rviz_default_plugins/Odometry" in text
