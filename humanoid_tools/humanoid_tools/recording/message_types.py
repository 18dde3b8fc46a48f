"""Message types of recorded topics: the Python class to subscribe with, and the
definition text and type hash to store in the bag.

rosbag2 stores, with each topic, the full text of its message definition (the type's
``.msg`` file followed by those of every type it uses, each after a line of ``=`` and
``MSG: pkg/Name``: the ``ros2msg`` encoding Foxglove and ``rosbags`` parse) so that a
bag can be read where the types are not installed. Here, as in rosbag2, the text comes
from the interface files installed in the ament index (``share/<pkg>/msg/*.msg``),
comments included. Action topics (``<action>/_action/feedback``) carry types that have
no file of their own (``Pkg_FeedbackMessage``: a goal id and the action's feedback
part); their definition is assembled from the ``.action`` file the way rosidl builds
the type. The type hash (RIHS01) is the one rosidl generated beside the file (the same
the publisher announces).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from rosbags.interfaces import Nodetype
from rosbags.typesys import get_types_from_msg

SEPARATOR = "=" * 80
#: Parts of a ``.action`` file, in file order, and the types rosidl derives from them.
ACTION_PARTS = ("Goal", "Result", "Feedback")
FEEDBACK_MESSAGE = "FeedbackMessage"


class UnknownMessageTypeError(LookupError):
    """A type that is not installed here (no Python class or no interface file)."""


@dataclass(frozen=True)
class MessageType:
    """What recording one topic type needs."""

    name: str  # pkg/msg/Name or pkg/action/Name_FeedbackMessage
    python_class: type
    definition: str  # ros2msg text: the type's own definition, then its dependencies
    type_hash: str  # RIHS01_...


def message_type(name: str) -> MessageType:
    """Class, definition and hash of an installed message type; UnknownMessageTypeError if the
    type (or one it uses) is not installed."""
    return MessageType(name, python_class(name), definition_text(name), type_hash(name))


def python_class(name: str) -> type:
    """The rclpy message class of ``pkg/msg/Name`` or ``pkg/action/Action_FeedbackMessage``."""
    package, kind, base, part = _split(name)
    try:
        module = importlib.import_module(f"{package}.{kind}")
        if part is None:
            return getattr(module, base)
        return getattr(getattr(module, base).Impl, part)
    except (ImportError, AttributeError):
        raise UnknownMessageTypeError(f"message type {name} is not installed (no Python module {package}.{kind} "
                                 f"with {base})") from None


def definition_text(name: str) -> str:
    """The full ``ros2msg`` definition: the type's text, then each type it depends on."""
    own = _own_text(name)
    sections, seen = [], {name}
    pending = list(_dependencies(name, own))
    while pending:
        dependency = pending.pop(0)
        if dependency in seen:
            continue
        seen.add(dependency)
        text = _own_text(dependency)
        sections.append(f"{SEPARATOR}\nMSG: {_section_name(dependency)}\n{text}")
        pending.extend(_dependencies(dependency, text))
    return "\n".join([own.rstrip("\n"), *[s.rstrip("\n") for s in sections]]) + "\n"


def type_hash(name: str) -> str:
    """The RIHS01 hash rosidl generated for the type (in ``<Type>.json`` beside its file)."""
    package, kind, base, _part = _split(name)
    path = _share(package) / kind / f"{base}.json"
    try:
        hashes = json.loads(path.read_text())["type_hashes"]
    except (OSError, ValueError, KeyError):
        raise UnknownMessageTypeError(f"no type hash for {name} (missing or unreadable {path})") from None
    for entry in hashes:
        if entry["type_name"] == name:
            return entry["hash_string"]
    raise UnknownMessageTypeError(f"no type hash for {name} in {path}")


# -- the ament index ----------------------------------------------------------------------------
def _split(name: str) -> tuple[str, str, str, str | None]:
    """``pkg/msg/Name`` -> (pkg, msg, Name, None); ``pkg/action/Act_Feedback`` -> (pkg, action,
    Act, Feedback)."""
    parts = name.split("/")
    if len(parts) != 3 or parts[1] not in ("msg", "action") or not all(parts):
        raise UnknownMessageTypeError(f"not a message type name: {name!r} (expected pkg/msg/Name)")
    package, kind, base = parts
    if kind == "msg":
        return package, kind, base, None
    action, _, part = base.rpartition("_")
    if not action or part not in (*ACTION_PARTS, FEEDBACK_MESSAGE):
        raise UnknownMessageTypeError(f"not an action message type: {name!r} (expected pkg/action/Name_Feedback...)")
    return package, kind, action, part


def _share(package: str) -> Path:
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, ValueError):
        raise UnknownMessageTypeError(f"interface package {package} is not installed (not in the ament "
                                      f"index)") from None


@cache
def _own_text(name: str) -> str:
    """The definition of one type alone (no dependencies), as its interface file has it."""
    package, _kind, base, part = _split(name)
    if part is None:
        return _read(_share(package) / "msg" / f"{base}.msg")
    if part == FEEDBACK_MESSAGE:  # as rosidl builds it: the goal id, then the feedback part
        return f"unique_identifier_msgs/UUID goal_id\n{package}/action/{base}_Feedback feedback\n"
    sections = _read(_share(package) / "action" / f"{base}.action").split("\n---\n")
    if len(sections) != len(ACTION_PARTS):
        raise UnknownMessageTypeError(f"{package}/action/{base}.action does not have 3 parts separated by ---")
    return sections[ACTION_PARTS.index(part)]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        raise UnknownMessageTypeError(f"interface file {path} is missing") from None


def _dependencies(name: str, text: str) -> list[str]:
    """Types the fields of ``text`` use, in field order (parsed by rosbags)."""
    try:
        _constants, fields = get_types_from_msg(text, name)[name]
    except Exception as error:  # rosbags raises its own parse errors
        raise UnknownMessageTypeError(f"cannot parse the definition of {name}: {error}") from None
    found: list[str] = []
    for _field, (kind, detail) in fields:
        while kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            kind, detail = detail[0]
        if kind == Nodetype.NAME and detail not in found:
            found.append(detail)
    return found


def _section_name(name: str) -> str:
    """How rosbag2's ros2msg encoding names a dependency section: ``pkg/Name`` for messages."""
    package, kind, base = name.split("/")
    return f"{package}/{base}" if kind == "msg" else name
