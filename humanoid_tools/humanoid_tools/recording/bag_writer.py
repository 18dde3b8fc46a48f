"""Writing rosbag2 bags: rosbags' writer (rosbag2 format 9, MCAP storage, CDR messages,
``metadata.yaml``, offered QoS profiles, message definitions and type hashes), with the
MCAP chunks completed and handed to the operating system at least every
``seal_period`` seconds.

rosbags keeps the chunk being filled in memory until it reaches 1 MiB and writes the
MCAP summary and ``metadata.yaml`` only when the bag is closed. A recorder that is
killed, or whose disk fills up, would lose several seconds of a robot's traffic with
the chunk in memory. Here each chunk is sealed once it is ``seal_period`` old or
``seal_bytes`` large, so such a bag keeps everything up to the last sealed chunk, and
:mod:`humanoid_tools.recording.reindex` makes it whole again (summary and metadata).
The sealing uses the storage's own ``close_chunk`` (rosbags 0.11, pinned); a test kills
a recorder and reads the repaired bag back, so a change there cannot go unnoticed.

Each chunk also gets its CRC-32 (rosbags writes 0: "no checksum"), so that a reader can
tell a chunk damaged on the disk from a good one (``humanoid plot`` says which it could
not read): the field is filled in once the chunk is written, at its place in the MCAP
chunk record (after the opcode, the record length and three 8-byte fields).
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter

#: rosbag2 bag format version written (the one of Jazzy and Kilted).
BAG_VERSION = 9
SEAL_PERIOD = 0.5  # s
SEAL_BYTES = 256 * 1024  # below rosbags' own 1 MiB
#: Byte offset of a chunk record's uncompressed_crc field (MCAP specification): opcode (1),
#: record length (8), message_start_time, message_end_time, uncompressed_size (8 each).
CHUNK_CRC_OFFSET = 1 + 8 + 3 * 8


class _SealingMcapStorage(McapWriter):
    """rosbags' MCAP storage, plus :meth:`seal`: complete the pending chunk now and flush it."""

    seal_bytes = SEAL_BYTES

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not (hasattr(self, "chunk") and hasattr(self, "close_chunk") and hasattr(self, "bio")):
            raise RuntimeError("this rosbags version's MCAP storage has no chunk to seal: "
                               "check humanoid_tools.recording.bag_writer against it")

    def write(self, connection: Connection, timestamp: int, data: bytes | memoryview) -> None:
        super().write(connection, timestamp, data)
        if self.chunk.bio.tell() >= self.seal_bytes:
            self.seal()

    def close_chunk(self) -> None:
        """rosbags' chunk, with the CRC-32 of its records filled in."""
        records = self.chunk.bio.getvalue()
        start = self.bio.tell()
        super().close_chunk()
        end = self.bio.tell()
        self.bio.seek(start + CHUNK_CRC_OFFSET)
        self.bio.write(struct.pack("<I", zlib.crc32(records)))
        self.bio.seek(end)

    def seal(self) -> None:
        if self.chunk.msgs:  # messages pending (a chunk of schema/channel records alone can wait)
            self.close_chunk()
        self.bio.flush()


class _Writer(Writer):
    STORAGE_PLUGINS: ClassVar = {StoragePlugin.MCAP: _SealingMcapStorage}


class BagWriter:
    """One bag being written; not thread-safe (one writer thread owns it)."""

    def __init__(self, path: Path, seal_period: float = SEAL_PERIOD) -> None:
        self.path = Path(path)
        self.seal_period = seal_period
        self._writer = _Writer(self.path, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._last_seal = time.monotonic()

    def add_topic(self, topic: str, msgtype: str, definition: str, type_hash: str,
                  offered_qos: Sequence[Qos] = ()) -> Connection:
        """A topic (a rosbag2 connection) with its type's full definition and hash."""
        return self._writer.add_connection(topic, msgtype, msgdef=definition, rihs01=type_hash,
                                           serialization_format="cdr", offered_qos_profiles=list(offered_qos))

    def write(self, connection: Connection, timestamp_ns: int, data: bytes) -> None:
        """One CDR-serialized message; OSError when the disk is full (or the file too large)."""
        self._writer.write(connection, timestamp_ns, data)

    def seal_if_due(self) -> None:
        """Complete and flush the pending chunk if it is ``seal_period`` old."""
        now = time.monotonic()
        if now - self._last_seal >= self.seal_period:
            self._last_seal = now
            self._storage().seal()

    def counts(self) -> dict[str, int]:
        """Messages accepted so far, per topic (all are in the bag once it is closed)."""
        return {c.topic: self._writer.counts[c.id] for c in self._writer.connections}

    def close(self, custom_data: Mapping[str, str] | None = None) -> None:
        """Write the MCAP summary and ``metadata.yaml`` (with ``custom_data``)."""
        for key, value in (custom_data or {}).items():
            self._writer.set_custom_data(key, value)
        self._writer.close()

    def _storage(self) -> _SealingMcapStorage:
        storage = self._writer.storage
        assert isinstance(storage, _SealingMcapStorage), "the bag is closed"
        return storage
