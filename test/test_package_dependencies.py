"""Each package imports only what its package.xml declares.

A package's modules may import its run dependencies (``exec_depend``/``depend``); its
tests may also import its ``test_depend`` packages, and the repository's test support
(``test/*.py``: running a command in process, reading a bag with rosbags), whose own imports
then count as the test's. A package built alone on the robot
(``colcon build --packages-up-to humanoid_hw``) then has everything it and its tests
need, and no lower package reaches up into a higher one. Imports are read with ``ast``
from the source files, so every import counts, even one inside a function.
"""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in ROOT.glob("humanoid_*") if (p / "package.xml").is_file())

#: Python module -> the rosdep key a package.xml names it by (where they differ).
ROSDEP_KEY = {
    "numpy": "python3-numpy", "yaml": "python3-yaml", "scipy": "python3-scipy",
    "pybullet": "python3-pybullet", "serial": "python3-serial", "pytest": "python3-pytest",
    "matplotlib": "python3-matplotlib", "pinocchio": "pinocchio", "xacro": "xacro",
    "dynamixel_sdk": "dynamixel_sdk", "mcap": "python3-mcap", "mcap_ros2": "python3-mcap",
    "rosbags": "python3-rosbags", "viser": "python3-viser", "yourdfpy": "python3-yourdfpy", "ray": "python3-ray",
    "websockets": "python3-websockets", "lazy_loader": "python3-lazy-loader", "ruamel": "python3-ruamel.yaml",
}
#: Modules that come with a dependency declared under another name.
PROVIDED_BY = {"rclpy": {"rclpy"}, "rcl_interfaces": {"rclpy"}, "launch": {"launch"}, "coal": {"pinocchio"},
               "launch_ros": {"launch_ros"}, "ament_index_python": {"ament_index_python"},
               "setuptools": set()}


def declared(package: str, tags: tuple[str, ...]) -> set[str]:
    root = ET.parse(ROOT / package / "package.xml").getroot()
    return {element.text.strip() for tag in tags for element in root.iter(tag) if element.text}


def _optional_imports(tree: ast.AST) -> set[ast.AST]:
    """Imports inside a ``try`` that handles ImportError or ModuleNotFoundError: a package
    used when it is installed (the ``humanoid`` command's workstation tools on a robot's
    computer), whose absence the code says plainly."""
    optional: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError")
                for handler in node.handlers):
            optional.update(inner for statement in node.body for inner in ast.walk(statement))
    return optional


def imported_modules(paths: list[Path]) -> dict[str, str]:
    """Top-level module -> one place that imports it (absolute imports only, optional ones aside)."""
    found: dict[str, str] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), filename=str(path))
        optional = _optional_imports(tree)
        for node in ast.walk(tree):
            if node in optional:
                continue
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                found.setdefault(name.split(".")[0], f"{where}:{node.lineno}")
    return found


#: The repository's test support (``test/*.py`` that are not tests, on every test folder's
#: path: pytest.ini's ``pythonpath``): a package's test may use them, and then needs what they import.
SUPPORT = {p.stem: p for p in (ROOT / "test").glob("*.py") if not p.name.startswith(("test_", "conftest"))}


def undeclared(package: str, paths: list[Path], allowed: set[str]) -> list[str]:
    problems = []
    for module, where in sorted(imported_modules(paths).items()):
        if module in sys.stdlib_module_names or module == package:
            continue
        if module in SUPPORT:
            problems += [f"{where}: through {module}: {problem}"
                         for problem in undeclared(package, [SUPPORT[module]], allowed)]
            continue
        keys = PROVIDED_BY.get(module, {ROSDEP_KEY.get(module, module)})
        if keys and not keys & allowed:
            problems.append(f"{where}: imports {module} (declare {' or '.join(sorted(keys))})")
    return problems


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_modules_import_only_run_dependencies(package):
    run = declared(package, ("exec_depend", "depend"))
    problems = undeclared(package, python_files(ROOT / package / package), run)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_tests_import_only_declared_dependencies(package):
    allowed = declared(package, ("exec_depend", "depend", "test_depend"))
    problems = undeclared(package, python_files(ROOT / package / "test"), allowed)
    assert not problems, "\n".join(problems)



def test_the_core_package_declares_no_ros():
    """humanoid_core is the stack without ROS: no rclpy, no message or interface package among
    its dependencies, so the import check above keeps ROS out of its modules and tests."""
    declared_all = declared("humanoid_core", ("exec_depend", "depend", "build_depend", "test_depend"))
    ros = sorted(d for d in declared_all if d in {"rclpy", "humanoid_interfaces", "builtin_interfaces"}
                 or d.endswith(("_msgs", "_srvs", "_interfaces")))
    assert ros == [], f"humanoid_core declares ROS packages: {ros}"
    assert "humanoid_core" in PACKAGES

def test_the_check_lets_an_optional_import_through_and_no_other(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("try:\n    import humanoid_tools\nexcept ModuleNotFoundError:\n    pass\n"
                      "try:\n    import humanoid_sim\nexcept ValueError:\n    pass\n")
    assert undeclared("humanoid_bringup", [module], {"humanoid_control"}) == [
        f"{module}:6: imports humanoid_sim (declare humanoid_sim)"]


def test_the_check_follows_a_test_support_module_to_what_it_imports(tmp_path):
    """A package test using the repository's test support (cli_entry runs the ``humanoid``
    command, from humanoid_bringup) needs that support's imports declared too."""
    module = tmp_path / "test_module.py"
    module.write_text("from cli_entry import entry_point\n")
    assert undeclared("humanoid_tools", [module], {"humanoid_bringup"}) == []
    (problem,) = undeclared("humanoid_tools", [module], {"humanoid_control"})
    assert problem.startswith(f"{module}:1: through cli_entry: ") and "imports humanoid_bringup" in problem


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The check itself: a module importing a package it does not declare is reported."""
    module = tmp_path / "module.py"
    module.write_text("def f():\n    from humanoid_bringup.graphs import sim_nodes\n")
    assert undeclared("humanoid_sim", [module], {"humanoid_control"}) == [
        f"{module}:2: imports humanoid_bringup (declare humanoid_bringup)"]
