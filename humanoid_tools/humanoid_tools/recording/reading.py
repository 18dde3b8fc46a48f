"""Reading bags back with rosbags (a reader none of us wrote): messages deserialized with the
definitions stored in the bag itself, so a bag is readable where its types are not
installed (our own interfaces included)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore


def custom_data(bag: Path) -> dict[str, str]:
    """The ``custom_data`` of a bag's ``metadata.yaml`` (empty when it has none or no metadata)."""
    try:
        info = yaml.safe_load((Path(bag) / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
        return {str(k): str(v) for k, v in (info.get("custom_data") or {}).items()}
    except (OSError, TypeError, KeyError, yaml.YAMLError):
        return {}


class Bag:
    """An open bag: its topics and their messages, deserialized."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._reader = Reader(self.path)
        self._reader.open()
        self._store = get_typestore(Stores.EMPTY)
        for connection in self._reader.connections:
            self._store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
        #: topic -> message type name
        self.types = {c.topic: c.msgtype for c in self._reader.connections}
        #: topic -> number of messages
        self.counts: dict[str, int] = {}
        for connection in self._reader.connections:
            self.counts[connection.topic] = self.counts.get(connection.topic, 0) + connection.msgcount

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> Bag:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def messages(self, topics: Iterable[str]) -> Iterator[tuple[str, int, Any]]:
        """(topic, log time ns, message) of ``topics``, in log time order."""
        wanted = set(topics)
        connections = [c for c in self._reader.connections if c.topic in wanted]
        if not connections:
            return
        for connection, stamp, raw in self._reader.messages(connections=connections):
            yield connection.topic, stamp, self._store.deserialize_cdr(raw, connection.msgtype)

    def all(self, topic: str) -> list[tuple[int, Any]]:
        """Every (log time ns, message) of one topic."""
        return [(stamp, msg) for _topic, stamp, msg in self.messages([topic])]
