"""Each room (a subpackage of one of our packages, and a package's own top-level modules) has
a public face: its ``__init__`` lists what other rooms use (``__all__``, imported on first use
through lazy_loader), every name it lists resolves, and nothing outside the room reaches past
the face into the module behind a listed name. Inside a room (for a package: anywhere in the
package), modules import each other directly."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in ROOT.glob("humanoid_*") if (p / "package.xml").is_file() and (p / p.name).is_dir())
SUBPACKAGES = sorted(f"{package}.{folder.name}" for package in PACKAGES
                     for folder in (ROOT / package / package).iterdir() if (folder / "__init__.py").is_file())
#: A package is the room of its top-level modules; one whose modules other packages use has a face.
FACED_PACKAGES = sorted(package for package in PACKAGES
                        if "__all__" in (ROOT / package / package / "__init__.py").read_text())
ROOMS = [*SUBPACKAGES, *PACKAGES]


def sources() -> list[Path]:
    skip = {"build", "install", "log", ".venv"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def inside(path: Path, room: str) -> bool:
    """Whether ``path`` is a module of ``room`` (of its package, for a package room)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    names = room.split(".")
    return len(parts) > len(names) and parts[0] == names[0] and parts[1:1 + len(names)] == tuple(names)


def test_there_are_rooms():
    assert {"humanoid_core.loop", "humanoid_core.motion", "humanoid_control.ros"} <= set(SUBPACKAGES)
    assert {"humanoid_description", "humanoid_sim", "humanoid_core"} <= set(FACED_PACKAGES)


@pytest.mark.parametrize("room", [*SUBPACKAGES, *FACED_PACKAGES])
def test_each_room_lists_its_face_and_every_name_resolves(room):
    face = importlib.import_module(room)
    assert getattr(face, "__all__", None), f"{room} lists no public face (__all__)"
    missing = [name for name in face.__all__ if not hasattr(face, name)]
    assert missing == [], f"{room}'s face lists names its modules do not define"


def defined_once(room: str) -> set[str]:
    """Public names exactly one module of ``room`` defines at its top level: those a face can
    carry (a name two modules define, such as each node's ``NODE_NAME``, or a module's own name,
    such as ``describe``, is imported from its module)."""
    folder = ROOT / room.split(".")[0] / Path(*room.split("."))
    count: dict[str, int] = {}
    for path in (folder.glob("*.py") if room in PACKAGES else folder.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            names = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    names += [e.id for e in (target.elts if isinstance(target, ast.Tuple) else [target])
                              if isinstance(e, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            for name in names:
                count[name] = count.get(name, 0) + 1
    modules = {path.stem for path in folder.glob("*.py")} | {path.parent.name for path in folder.glob("*/__init__.py")}
    return {name for name, n in count.items() if n == 1 and not name.startswith("_") and name not in modules}


def test_no_import_reaches_past_a_face():
    """``from humanoid_x.room.module import Name`` outside the room, for a Name the room's
    face lists (or could: one module of the room defines it), is written
    ``from humanoid_x.room import Name``, the face listing it."""
    faces = {room: set(getattr(importlib.import_module(room), "__all__", ())) | defined_once(room)
             for room in ROOMS}
    past = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            parts = node.module.split(".")
            room = ".".join(parts[:2]) if ".".join(parts[:2]) in SUBPACKAGES else parts[0]
            module_file = ROOT / parts[0] / Path(*parts).with_suffix(".py")
            if room == parts[0] and not (len(parts) == 2 and module_file.is_file()):
                continue  # a package room holds its top-level modules only
            if room in faces and not inside(path, room) and node.module != room:
                listed = [alias.name for alias in node.names if alias.name in faces[room]]
                if listed:
                    past.append(f"{path.relative_to(ROOT)}:{node.lineno}: {', '.join(listed)} from {node.module}")
    assert past == [], ("import these through their room (`from humanoid_x.room import Name`), the name listed "
                        "in the room's __init__ (lazy_loader.attach's submod_attrs)")
