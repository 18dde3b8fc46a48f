"""The launch files, checked without ros2 launch (which pip-installed ROS 2 lacks).

Each file is parsed as Python: it must compile, define generate_launch_description,
declare the arguments users rely on, start executables that the named packages really
install (or that are declared run dependencies), and point at parameter files that
exist for every robot it offers.
"""

import ast
import contextlib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from humanoid_description.package_share import package_share_directory
from humanoid_description.robots import ROBOTS

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
    return {ast.literal_eval(c.args[0]): c for c in calls(tree, "DeclareLaunchArgument")}


def console_scripts(package: str) -> set[str]:
    """Executables a package installs as ros2-run nodes (lib/<package>/<name>)."""
    prefix = package_share_directory(package).parents[1]
    return {p.name for p in (prefix / "lib" / package).glob("*")}


def run_dependencies() -> set[str]:
    xml = ET.parse(package_share_directory("humanoid_bringup") / "package.xml").getroot()
    return {e.text for e in xml.iter("exec_depend")}


@pytest.mark.parametrize(("name", "arguments", "robots"), [
    ("sim.launch.py", {"robot", "gui", "rviz", "use_sim_time", "real_time_factor", "control_rate", "publish_rate",
                       "physics_rate"}, set(ROBOTS)),
    ("real.launch.py", {"robot", "port", "baud", "control_rate", "publish_rate", "rviz"}, {"bioloid"}),
])
def test_launch_file_declares_arguments_and_starts_real_nodes(name, arguments, robots):
    tree = parse(name)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description" for n in tree.body)
    declared = declared_arguments(tree)
    assert arguments <= set(declared), arguments - set(declared)
    assert set(keyword(declared["robot"], "choices", constants(tree))) == robots
    assert all(keyword(call, "description") for call in declared.values())  # every argument explained
    nodes = [(keyword(c, "package"), keyword(c, "executable")) for c in calls(tree, "Node")]
    assert nodes, "the launch file starts no node"
    for package, executable in nodes:
        if package in OURS:
            assert executable in console_scripts(package), f"{package} installs no executable {executable}"
        else:
            assert package in run_dependencies(), f"{package} is not an exec_depend of humanoid_bringup"


@pytest.mark.parametrize(("name", "package", "robots"), [
    ("sim.launch.py", "humanoid_sim", ROBOTS), ("real.launch.py", "humanoid_hw", ("bioloid",))])
def test_parameter_files_exist_for_every_robot_offered(name, package, robots):
    assert '"config", f"{robot}.yaml"' in (LAUNCH / name).read_text()
    for robot in robots:
        assert (package_share_directory(package) / "config" / f"{robot}.yaml").is_file()
        xacro = package_share_directory("humanoid_description") / "xacro" / robot / f"{robot}.urdf.xacro"
        assert xacro.is_file()


def test_record_launch_records_the_interface_in_mcap():
    tree = parse("record.launch.py")
    topics = constants(tree)["TOPICS"]
    assert {"/joint_states", "/joint_commands", "/joint_trajectory", "/diagnostics"} <= set(topics)
    assert '"--storage", "mcap"' in (LAUNCH / "record.launch.py").read_text()


def test_rviz_config_shows_the_robot_model():
    text = (package_share_directory("humanoid_bringup") / "rviz" / "humanoid.rviz").read_text()
    assert "rviz_default_plugins/RobotModel" in text and "/robot_description" in text
    assert Path(LAUNCH / "sim.launch.py").read_text().count("humanoid.rviz") == 1
