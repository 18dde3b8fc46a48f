"""Copies of a recorded bag changed in one known way, for checks with known answers: each
message passed through a change (rosbags reads and writes them, with the definitions the bag
holds), the whole recording moved in time."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from bag_messages import bag_typestore
from rosbags.rosbag2 import Reader

from humanoid_tools.recording import BagWriter


def derived_bag(source: Path, target: Path, change: Callable[[str, Any], Any], later: int = 0,
                topics: Collection[str] | None = None) -> Path:
    """A copy of ``source`` with each message passed through ``change(topic, message)`` (None
    leaves it out), logged ``later`` seconds later; ``topics``: only their messages are read
    and copied (every topic is still declared), the others left out unread."""
    with Reader(source) as reader:
        store = bag_typestore(reader)
        writer = BagWriter(target)
        added = {c.id: writer.add_topic(c.topic, c.msgtype, c.msgdef.data, c.digest) for c in reader.connections}
        read = [c for c in reader.connections if topics is None or c.topic in topics]
        for connection, log, raw in reader.messages(connections=read):
            message = change(connection.topic, store.deserialize_cdr(raw, connection.msgtype))
            if message is not None:  # None: left out
                writer.write(added[connection.id], log + later * 1_000_000_000,
                             store.serialize_cdr(message, connection.msgtype))
        writer.close()
    return target


def shifted(message: Any, seconds: int) -> Any:
    """``message`` with every time stamp in it (headers, goal infos, nested) ``seconds`` later;
    a zero stamp stays zero (it is no time: a trajectory stamped 0 starts when it arrives)."""
    if getattr(message, "__msgtype__", None) == "builtin_interfaces/msg/Time":
        if message.sec == 0 and message.nanosec == 0:
            return message
        return dataclasses.replace(message, sec=message.sec + seconds)
    if isinstance(message, list):
        return [shifted(item, seconds) for item in message]
    if dataclasses.is_dataclass(message):
        return dataclasses.replace(message, **{f.name: shifted(getattr(message, f.name), seconds)
                                               for f in dataclasses.fields(message)})
    return message


def later_copy(source: Path, target: Path, seconds: int) -> Path:
    """The whole recording ``seconds`` later: every stamp and every log time."""
    return derived_bag(source, target, lambda _topic, message: shifted(message, seconds), later=seconds)
