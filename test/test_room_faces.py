"""Each room (a subpackage of one of our packages) has a public face: its ``__init__``
lists what other rooms use (``__all__``, imported on first use through lazy_loader), every
name it lists resolves, and nothing outside the room reaches past the face into the module
behind a listed name. Inside a room, modules import each other directly."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.name for p in ROOT.glob("humanoid_*") if (p / "package.xml").is_file() and (p / p.name).is_dir())
ROOMS = sorted(f"{package}.{folder.name}" for package in PACKAGES for folder in (ROOT / package / package).iterdir()
               if (folder / "__init__.py").is_file())


def sources() -> list[Path]:
    skip = {"build", "install", "log", ".venv"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def room_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return f"{parts[1]}.{parts[2]}" if len(parts) >= 3 and parts[0] == parts[1] else None


def test_there_are_rooms():
    assert {"humanoid_core.loop", "humanoid_core.motion", "humanoid_control.ros"} <= set(ROOMS)


@pytest.mark.parametrize("room", ROOMS)
def test_each_room_lists_its_face_and_every_name_resolves(room):
    face = importlib.import_module(room)
    assert getattr(face, "__all__", None), f"{room} lists no public face (__all__)"
    missing = [name for name in face.__all__ if not hasattr(face, name)]
    assert missing == [], f"{room}'s face lists names its modules do not define"


def defined_once(room: str) -> set[str]:
    """Public names exactly one module of ``room`` defines at its top level: those a face can
    carry (a name two modules define, such as each node's ``NODE_NAME``, is imported from its
    module)."""
    folder = ROOT / room.split(".")[0] / Path(*room.split("."))
    count: dict[str, int] = {}
    for path in folder.rglob("*.py"):
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
    return {name for name, n in count.items() if n == 1 and not name.startswith("_")}


def test_no_import_reaches_past_a_face():
    """``from humanoid_x.room.module import Name`` outside the room, for a Name the room's
    face lists (or could: one module of the room defines it), is written
    ``from humanoid_x.room import Name``, the face listing it."""
    faces = {room: set(importlib.import_module(room).__all__) | defined_once(room) for room in ROOMS}
    past = []
    for path in sources():
        here = room_of(path)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            room = ".".join(node.module.split(".")[:2])
            if room in faces and room != here and node.module != room:
                listed = [alias.name for alias in node.names if alias.name in faces[room]]
                if listed:
                    past.append(f"{path.relative_to(ROOT)}:{node.lineno}: {', '.join(listed)} from {node.module}")
    assert past == [], ("import these through their room (`from humanoid_x.room import Name`), the name listed "
                        "in the room's __init__ (lazy_loader.attach's submod_attrs)")
