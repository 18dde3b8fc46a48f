"""A recorded bag read back by rosbags (a reader this project did not write), with the message
definitions the bag itself holds: the stack's own types are in no rosbags store."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def bag_typestore(reader: Reader):
    """A rosbags type store of the definitions the open bag holds (one per connection)."""
    store = get_typestore(Stores.EMPTY)
    for connection in reader.connections:
        store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
    return store


def read_bag(path: Path, topics: Iterable[str] | None = None) -> tuple[dict, dict[str, list]]:
    """The bag's connections by topic (type, count, QoS) and its messages by topic, in the
    order logged; only ``topics``' messages are decoded when given."""
    with Reader(path) as reader:
        store = bag_typestore(reader)
        connections = {c.topic: c for c in reader.connections}
        wanted = set(connections) if topics is None else set(topics)
        messages: dict[str, list] = {topic: [] for topic in wanted}
        selected = [c for c in reader.connections if c.topic in wanted]
        for connection, _logged, raw in reader.messages(selected) if selected else ():  # none given: all
            messages[connection.topic].append(store.deserialize_cdr(raw, connection.msgtype))
    return connections, messages


def topic_messages(path: Path, topic: str) -> list:
    """Every message the bag holds on ``topic``, in the order logged."""
    return read_bag(path, [topic])[1][topic]
