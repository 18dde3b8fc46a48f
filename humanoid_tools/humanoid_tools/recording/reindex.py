"""``humanoid record --reindex DIR``: make a bag readable again after its recorder was
killed or its disk filled up.

Such a bag has a MCAP file without its summary (the index at the end) and no
``metadata.yaml``, which readers (rosbags, ``ros2 bag``) need. Its data section is intact
up to the last chunk the recorder sealed. This reads that section record by record with
the ``mcap`` library's stream reader (stopping at the first incomplete record), and
writes every message it holds into a fresh bag with the recording's bag writer, so the
repaired bag has the same topics, types, definitions, QoS profiles and timestamps,
a complete summary and a new ``metadata.yaml``. A complete bag goes through the same path
(its ``metadata.yaml`` is then regenerated); custom data of an existing ``metadata.yaml``
is kept. The repaired bag replaces the old one only once it is fully written.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mcap.records import Channel, DataEnd, Footer, Message, Schema
from mcap.stream_reader import StreamReader
from rosbags.rosbag2.metadata import parse_qos
from rosbags.typesys import get_types_from_msg, get_typestore
from rosbags.typesys.stores import Stores

from humanoid_tools.recording.bag_writer import BagWriter
from humanoid_tools.recording.reading import custom_data


class ReindexError(Exception):
    """The directory holds no bag that can be repaired; the message says why."""


@dataclass
class ReindexReport:
    path: Path
    messages: dict[str, int] = field(default_factory=dict)
    truncated: list[str] = field(default_factory=list)  # files that ended early, with where

    def text(self) -> str:
        total = sum(self.messages.values())
        lines = [f"{self.path}: {total} messages on {len(self.messages)} topics"]
        lines += [f"  {topic}: {count}" for topic, count in sorted(self.messages.items())]
        lines += [f"  {note}" for note in self.truncated]
        return "\n".join(lines)


def reindex(path: Path) -> ReindexReport:
    """Rewrite the bag in ``path`` from its MCAP data; returns what it holds now. The new bag
    is written beside it (a hidden folder in the same place) and replaces it only once
    complete: a full disk leaves the bag as it was (:class:`ReindexError` says so)."""
    path = Path(path)
    files = sorted(path.glob("*.mcap")) if path.is_dir() else []
    if not files:
        raise ReindexError(f"{path} holds no MCAP file (.mcap): not a bag written with MCAP storage")
    custom = custom_data(path)
    try:
        work = Path(tempfile.mkdtemp(prefix=f".{path.name}.reindex-", dir=path.parent))
    except OSError as error:
        raise ReindexError(f"cannot write beside {path}: {error.strerror or error}; the bag is left as it was") \
            from None
    report = ReindexReport(path)
    try:
        _rewrite(files, work / path.name, custom, report)
    except BaseException as error:
        shutil.rmtree(work, ignore_errors=True)
        if not isinstance(error, OSError):
            raise
        needed = sum(file.stat().st_size for file in files)
        raise ReindexError(f"cannot write the repaired copy of {path} ({error.strerror or error}; it needs about "
                           f"{needed / 1e6:.1f} MB free beside the bag): the bag is left as it was") from None
    _swap(path, work)
    return report


def recoverable_counts(path: Path) -> dict[str, int]:
    """Messages per topic that :func:`reindex` keeps of the bag in ``path``: those of the
    complete records on disk (a recorder whose writing failed reports these as written:
    a chunk whose seal failed may still have reached the disk whole)."""
    report, counts = ReindexReport(Path(path)), Counter()
    for file in sorted(Path(path).glob("*.mcap")):
        for _schema, channel, _message in _messages(file, report):
            counts[channel.topic] += 1
    return dict(counts)


def _rewrite(files: list[Path], bag: Path, custom: dict[str, str], report: ReindexReport) -> None:
    """Write every message the MCAP ``files`` hold into a new bag at ``bag``."""
    writer = BagWriter(bag)
    connections: dict[tuple[str, str], object] = {}
    for file in files:
        for schema, channel, message in _messages(file, report):
            key = (channel.topic, schema.name)
            if key not in connections:
                connections[key] = writer.add_topic(
                    channel.topic, schema.name, schema.data.decode(), _type_hash(schema),
                    parse_qos(channel.metadata.get("offered_qos_profiles", "")))
            writer.write(connections[key], message.log_time, message.data)
    report.messages = writer.counts()
    custom["reindexed"] = json.dumps({"messages": report.messages, "truncated": report.truncated})
    writer.close(custom)


def _swap(path: Path, work: Path) -> None:
    """Put the complete new bag (``work/<name>``) in place of the old one, which goes last."""
    old = work / "old"
    path.rename(old)
    try:
        (work / path.name).rename(path)
    except BaseException:
        old.rename(path)
        raise
    shutil.rmtree(work)


def _messages(file: Path, report: ReindexReport) -> Iterator[tuple[Schema, Channel, Message]]:
    """Messages of one MCAP file with their channel and schema, up to the first bad record."""
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    with file.open("rb") as stream:
        records = StreamReader(stream).records
        while True:
            try:
                record = next(records)
            except StopIteration:
                return
            except Exception as error:  # a record cut short: the end of what was written
                report.truncated.append(f"{file.name} ends early at byte {stream.tell()} "
                                        f"({type(error).__name__}): kept what came before")
                return
            if isinstance(record, Schema):
                schemas[record.id] = record
            elif isinstance(record, Channel):
                channels[record.id] = record
            elif isinstance(record, Message) and record.channel_id in channels:
                channel = channels[record.channel_id]
                if channel.schema_id in schemas:
                    yield schemas[channel.schema_id], channel, record
            elif isinstance(record, DataEnd | Footer):
                return


def _type_hash(schema: Schema) -> str:
    """The RIHS01 hash of a type, from the full definition stored in the bag."""
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(schema.data.decode(), schema.name))
    return store.hash_rihs01(schema.name)
