"""Reading bags back: rosbags (a reader none of us wrote) for the bag's metadata and the
message definitions stored in the bag itself, so a bag is readable where its types are not
installed (our own interfaces included); the ``mcap`` library for the messages, one chunk
at a time. A bag is opened once per reading (rosbags parses its ``metadata.yaml`` then, a
second or more of CPU for a recording's 20 KB under load) and its chunks are read in one pass
(:meth:`Bag.preload`, which counts every topic's messages on the way).

A bag can be damaged after it was written (bytes overwritten on a failing disk, a bad
copy). A chunk that cannot be read does not end the reading: its messages are skipped,
the others are read, and :meth:`Bag.damage` says which chunks and how many messages of
each topic could not be read, so that nothing drawn from the bag passes for all of it.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import yaml
from mcap.data_stream import ReadDataStream
from mcap.reader import make_reader
from mcap.records import Chunk, ChunkIndex, Message
from mcap.stream_reader import breakup_chunk
from rosbags.interfaces import Connection
from rosbags.interfaces.typing import Typesdict
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.rosbag2.reader import DirectoryReader
from rosbags.rosbag2.storage_mcap import McapReader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

#: (log time ns, topic, CDR bytes) of one message as stored (topic None: a chunk's mark).
RawMessage = tuple[int, str | None, bytes]
#: The ``custom_data`` key of the recorded robot's namespace (the recorder's).
NAMESPACE_KEY = "namespace"
#: The topic by which a bag without that key shows the robot's namespace (``ros2 bag record``'s).
_ROBOT_TOPIC = "/joint_states"


def robot_interface_name(topic: str, namespace: str) -> str | None:
    """``topic`` (a full name) as the robot in ``namespace`` names it, from the root
    (``/a/joint_states`` in ``/a``: ``/joint_states``); None for a topic outside the namespace."""
    if namespace in ("", "/"):
        return topic
    return topic[len(namespace):] if topic.startswith(f"{namespace}/") else None


def recorded_namespace(custom: Mapping[str, str], topics: Iterable[str]) -> str:
    """The namespace of the robot a bag recorded: the recorder's (in the bag's ``custom``
    data), else, for a bag of another recorder, the one namespace whose ``joint_states`` it
    holds (root when none or several)."""
    recorded = custom.get(NAMESPACE_KEY)
    if recorded:
        return recorded
    topics = set(topics)
    if _ROBOT_TOPIC in topics:
        return "/"
    found = [t.removesuffix(_ROBOT_TOPIC) for t in topics if t.endswith(_ROBOT_TOPIC)]
    return found[0] if len(found) == 1 else "/"


def custom_data(bag: Path) -> dict[str, str]:
    """The ``custom_data`` of a bag's ``metadata.yaml`` (empty when it has none or no metadata),
    for what does not open the bag (a repair, a benchmark); an open :class:`Bag` has its own."""
    try:
        return {str(k): str(v) for k, v in (_information(bag).get("custom_data") or {}).items()}
    except (OSError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return {}


def _information(bag: Path) -> dict:
    return yaml.safe_load((Path(bag) / "metadata.yaml").read_text())["rosbag2_bagfile_information"]


@dataclass(frozen=True)
class _McapFile:
    """One MCAP file of a bag: its summary's channels (id -> topic as shown) and chunks in log time order."""

    path: Path
    channels: dict[int, str]
    chunks: list[ChunkIndex]


class Bag:
    """An open bag: its topics and their messages, deserialized. A robot's topics are named as
    the robot names them, from the root (``/joint_states``), whatever namespace it was recorded
    in (:attr:`namespace`: ``/a/joint_states`` is read as ``/joint_states``); topics outside it
    (``/tf``) keep their names."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._reader = Reader(self.path)
        self._reader.open()
        try:
            self._open()
        except BaseException:
            self._reader.close()
            raise

    def _open(self) -> None:
        """What the bag holds, from rosbags' reading of its metadata and each MCAP file's summary
        (a bag that cannot be read is refused here, before any message is)."""
        self._store = get_typestore(Stores.EMPTY)
        self._store.register(_definitions(self._reader.connections))
        storage = self._reader.storage
        #: the bag's ``custom_data`` (the recorder's namespace and counts), from rosbags' one parse
        self.custom_data = {str(k): str(v) for k, v in (storage.metadata.custom or {}).items()}
        stored = [c.topic for c in self._reader.connections]
        #: the recorded robot's namespace (``/``: none)
        self.namespace = recorded_namespace(self.custom_data, stored)
        #: stored topic name -> the name the bag's users see
        self._shown = {topic: robot_interface_name(topic, self.namespace) or topic for topic in stored}
        #: topic -> message type name
        self.types = {self._shown[c.topic]: c.msgtype for c in self._reader.connections}
        #: topic -> messages the bag's index lists
        self.indexed: dict[str, int] = {}
        for connection in self._reader.connections:
            topic = self._shown[connection.topic]
            self.indexed[topic] = self.indexed.get(topic, 0) + connection.msgcount
        files = _mcap_files(storage)
        self._files = None if files is None else [self._summary(file) for file in files]
        #: chunk -> why it cannot be read (its messages are skipped)
        self.unreadable_chunks: dict[tuple[str, int], str] = {}
        #: topic -> messages in readable chunks whose bytes are not a message of the topic's type
        self.undecodable: Counter[str] = Counter()
        self._preloaded: frozenset[str] = frozenset()
        self._sequence: list[tuple[str, int, Any]] = []  # the preloaded topics' messages, as read
        self._counts: dict[str, int] | None = None if self._files is not None else dict(self.indexed)

    @property
    def counts(self) -> dict[str, int]:
        """topic -> messages that can be read: counted by :meth:`preload`'s pass, or by a pass of
        its own when asked first (a bag's other storages: its index's counts)."""
        if self._counts is None:
            census: Counter[str] = Counter()
            for _message in self._raw(set(), census):
                pass
            self._counts = {topic: census[topic] for topic in self.types}
        return self._counts

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> Bag:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def read_counts(self) -> dict[str, int]:
        """topic -> messages read (so far: a topic's undecodable messages are known once read)."""
        return {topic: self.counts.get(topic, 0) - self.undecodable[topic] for topic in self.types}

    def damage(self) -> list[str]:
        """What could not be read, one line per damaged chunk and per topic short of messages
        (empty for an intact bag)."""
        read_counts = self.read_counts()  # first: the census (on first use) finds the damaged chunks
        lines = list(self.unreadable_chunks.values())
        for topic in sorted(self.indexed):
            read = read_counts.get(topic, 0)
            if read < self.indexed[topic]:
                undecodable = f", {self.undecodable[topic]} of them not decodable" if self.undecodable[topic] else ""
                lines.append(f"{topic}: {read} of its {self.indexed[topic]} messages read{undecodable}")
        return lines

    def preload(self, topics: Iterable[str]) -> None:
        """Read ``topics`` in one pass and keep their messages, counting every topic's on the
        way (:attr:`counts`): what reads many topics one after another (:meth:`all`,
        :meth:`messages` of preloaded topics) then reads each chunk once, not once per topic
        and once more for the counts."""
        wanted = frozenset(set(topics) & set(self.types))
        census: Counter[str] | None = Counter() if self._counts is None else None
        for topic in wanted:  # counted anew: a few messages read before (a bag's identity) are read again
            self.undecodable.pop(topic, None)
        self._sequence, self._preloaded = list(self._read(wanted, census)), wanted
        if census is not None:
            self._counts = {topic: census[topic] for topic in self.types}

    def messages(self, topics: Iterable[str]) -> Iterator[tuple[str, int, Any]]:
        """(topic, log time ns, message) of ``topics``, in log time order; messages of damaged
        chunks and bytes that do not decode are skipped (and counted, :meth:`damage`)."""
        wanted = set(topics) & set(self.types)
        if wanted and wanted <= self._preloaded:
            return (entry for entry in self._sequence if entry[0] in wanted)
        return self._read(wanted)

    def _read(self, wanted: Iterable[str], census: Counter[str] | None = None) -> Iterator[tuple[str, int, Any]]:
        wanted = set(wanted)
        if not wanted and census is None:
            return
        for topic, stamp, raw in self._raw(wanted, census):
            try:
                message = self._store.deserialize_cdr(raw, self.types[topic])
            except Exception:  # damaged bytes fail in any way the decoder can
                self.undecodable[topic] += 1
                continue
            yield topic, stamp, message

    def all(self, topic: str) -> list[tuple[int, Any]]:
        """Every (log time ns, message) of one topic."""
        return [(stamp, msg) for _topic, stamp, msg in self.messages([topic])]

    def _raw(self, topics: set[str], census: Counter[str] | None = None) -> Iterator[tuple[str, int, bytes]]:
        """The stored messages of ``topics`` in log time order; with a ``census``, every chunk is
        read and each topic's messages counted into it (an MCAP bag's)."""
        if self._files is None:
            connections = [c for c in self._reader.connections if self._shown[c.topic] in topics]
            for connection, stamp, raw in self._reader.messages(connections=connections):
                yield self._shown[connection.topic], stamp, raw
            return
        read = set(self.types) if census is not None else topics
        with contextlib.ExitStack() as files:
            for stamp, topic, raw in heapq.merge(*self._chunk_sources(files, read), key=lambda m: m[0]):
                if topic is None:
                    continue
                if census is not None:
                    census[topic] += 1
                if topic in topics:
                    yield topic, stamp, raw

    def _summary(self, file: Path) -> _McapFile:
        """One MCAP file's channels and chunk index, read once."""
        with file.open("rb") as stream:
            try:
                summary = make_reader(stream).get_summary()
            except Exception as error:  # a damaged summary fails in any way the parser can
                raise ReaderError(f"{file}: its summary cannot be read ({type(error).__name__}: {error})") from None
        if summary is None:
            raise ReaderError(f"{file} has no summary: repair the bag with humanoid record --reindex")
        channels = {i: self._shown.get(c.topic, c.topic) for i, c in summary.channels.items()}
        chunks = sorted(summary.chunk_indexes, key=lambda c: (c.message_start_time, c.chunk_start_offset))
        return _McapFile(file, channels, chunks)

    def _chunk_sources(self, files: contextlib.ExitStack, topics: set[str]) -> list[Iterator[RawMessage]]:
        """One iterator per chunk holding messages of ``topics``: a mark at the chunk's first
        log time (topic None), then its messages in log time order, read only when the merge
        reaches that mark, so one chunk at a time is in memory as rosbags' own reader does."""
        sources = []
        for mcap in self._files or []:
            stream = files.enter_context(mcap.path.open("rb"))
            for number, index in enumerate(mcap.chunks, start=1):
                if any(mcap.channels.get(i) in topics for i in index.message_index_offsets):
                    place = f"{mcap.path.name}: chunk {number} of {len(mcap.chunks)}"
                    sources.append(self._chunk_source(stream, index, place, mcap.channels, topics))
        return sources

    def _chunk_source(self, stream: BinaryIO, index: ChunkIndex, place: str, channels: dict[int, str],
                      topics: set[str]) -> Iterator[RawMessage]:
        yield index.message_start_time, None, b""
        key = (stream.name, index.chunk_start_offset)
        if key in self.unreadable_chunks:
            return
        try:
            messages = _chunk_messages(stream, index, channels, topics)
        except Exception as error:  # damaged bytes fail in any way the parser can
            self.unreadable_chunks[key] = (f"{place} (bytes {index.chunk_start_offset}-"
                                           f"{index.chunk_start_offset + index.chunk_length}) cannot be read "
                                           f"({type(error).__name__}: {error})")
            return
        yield from messages


def _definitions(connections: Sequence[Connection]) -> Typesdict:
    """Every message type of the bag's connections, from the definitions stored in it, for one
    registration (each registration generates and compiles the store's code anew)."""
    types: Typesdict = {}
    for connection in {c.msgtype: c for c in connections}.values():
        types.update(_parsed(connection.msgdef.data, connection.msgtype))
    return types


@functools.lru_cache(maxsize=256)
def _parsed(definition: str, msgtype: str) -> Typesdict:
    """One stored definition parsed (rosbags' parser takes tens of ms a type; bags compared, or
    read one after another, store the same definitions)."""
    return get_types_from_msg(definition, msgtype)


def _mcap_files(storage: object) -> list[Path] | None:
    """The bag's MCAP files, in order, as rosbags opened them (a bag folder's reader holds one
    storage per file); None for another storage (read by rosbags alone)."""
    files = storage.storages if isinstance(storage, DirectoryReader) else [storage]
    if not files or not all(isinstance(file, McapReader) for file in files):
        return None
    return [Path(file.path) for file in files]


def _chunk_messages(stream: BinaryIO, index: ChunkIndex, channels: dict[int, str],
                    topics: set[str]) -> list[RawMessage]:
    """The messages of ``topics`` in one chunk, in log time order; any exception when the
    chunk is damaged (its records do not parse, or name a channel the file does not have)."""
    stream.seek(index.chunk_start_offset + 1 + 8)  # past the record's opcode and length
    chunk = Chunk.read(ReadDataStream(stream))
    messages = []
    for record in breakup_chunk(chunk, validate_crc=True):
        if isinstance(record, Message):
            topic = channels[record.channel_id]
            if topic in topics:
                messages.append((record.log_time, topic, record.data))
    messages.sort(key=lambda m: m[0])
    return messages
