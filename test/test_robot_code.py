"""A robot's code lives with the robot: the shared rooms name no robot and no robot's format.

The computations every robot shares (``humanoid_core``) and the posing tool know robots only
as the names they are given: no string constant of theirs (docstrings aside) names a robot
or a format a robot declares, and none imports a robot's package (``humanoid_robot_*``). A
robot's formats reach them through the registry (:mod:`humanoid_core.motion.formats`),
registered by the package its ``robot.yaml`` names. Sources are read with ``ast``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
from pathlib import Path

import pytest

from humanoid_core import MOTION_FORMATS
from humanoid_core.motion import motion_format, registered_formats
from humanoid_description import ROBOTS, load_config

ROOT = Path(__file__).resolve().parents[1]
#: The shared rooms: every module of the core, and the posing tool (which saves any robot's poses).
SHARED = sorted(p for p in (ROOT / "humanoid_core" / "humanoid_core").rglob("*.py") if "__pycache__" not in p.parts)
SHARED.append(ROOT / "humanoid_tools" / "humanoid_tools" / "posing.py")
ROBOT_PACKAGE_PREFIX = "humanoid_robot_"
DECLARED_FORMATS = sorted({name for robot in ROBOTS for name in load_config(robot).motion_formats.values()})


def _docstrings(tree: ast.AST) -> set[ast.AST]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(first.value)
    return found


def robot_specific(path: Path) -> list[str]:
    """Where ``path`` names a robot or a robot's format in a string, or imports a robot's package."""
    names = [*ROBOTS, *DECLARED_FORMATS]
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, names)) + r")(?![A-Za-z0-9_])")
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = _docstrings(tree)
    problems = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in docstrings:
            found = pattern.search(node.value)
            if found:
                problems.append(f"{where}: names {found.group(1)!r} in {node.value[:60]!r}")
        modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                   else [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        problems += [f"{where}: imports {m}" for m in modules if m.startswith(ROBOT_PACKAGE_PREFIX)]
    return problems


@pytest.mark.parametrize("path", SHARED, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shared_module_names_no_robot_and_imports_no_robot_package(path):
    problems = robot_specific(path)
    assert not problems, "\n".join(problems)


def test_the_check_sees_a_robot_constant_a_format_branch_and_a_robot_import(tmp_path):
    module = tmp_path / "module.py"
    module.write_text('"""hoap2 in a docstring is fine."""\nimport humanoid_robot_hoap2.csv_motion\n'
                      f'ROBOT = "{ROBOTS[0]}"\n'
                      f'def save(name):\n    return name == "{DECLARED_FORMATS[0]}"\n')
    problems = robot_specific(module)
    assert [p.split(": ", 1)[1].split(" in ")[0] for p in problems] == [
        "imports humanoid_robot_hoap2.csv_motion", f"names {ROBOTS[0]!r}", f"names {DECLARED_FORMATS[0]!r}"]


@pytest.mark.parametrize("robot", ROBOTS)
def test_each_robot_s_declared_formats_resolve_through_the_registry_from_its_package(robot):
    config = load_config(robot)
    if config.motion_formats:
        assert config.package, f"{robot} declares formats {config.motion_formats} but no package to bring them"
    registered_by = {e.name: e.dist.name.replace("-", "_") for e in importlib.metadata.entry_points(
        group=MOTION_FORMATS)}
    for suffix, name in config.motion_formats.items():
        chosen = motion_format(name, robot)
        assert chosen.name == name and chosen is registered_formats()[name]
        assert registered_by[name] == config.package, f"{robot}'s {suffix} format {name}"
        assert not chosen.yaml, f"{name}: a robot's format is known by its suffix"
    if config.package:
        assert importlib.metadata.distribution(config.package)
