"""How the commands read segments: which record reader, with which limits, through which files.

Chosen once at the edge (the command line) and passed down; nothing below reads an environment
variable or picks a reader on its own.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

from offsets_auditor.errors import DecodeError, UnreadableFileError
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.model import PartitionDir, PartitionSnapshot, Segment
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.options import DEFAULT_LIMITS, Backend, Limits
from offsets_auditor.reader.segment import read_segment

#: Reads one segment of a partition: its chunks and problems, in file order.
SegmentReader = Callable[[PartitionDir, Segment], Iterator[Chunk | DecodeError]]


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The record reader (``native``: C parser, ``python``: reference decoders) and limits."""

    backend: Backend = Backend.NATIVE
    limits: Limits = DEFAULT_LIMITS

    def segment(self, partition: PartitionDir, segment: Segment) -> Iterator[Chunk | DecodeError]:
        """The chunks and problems of one segment of ``partition``, read-only (opened by name,
        and read as listed: ``fs.open_as_listed``). A file that cannot be opened is one
        ``DecodeError`` (field ``file``)."""
        label = segment_label(partition, segment)
        listed, path = segment.log, partition.path / segment.log.name
        try:
            source = (
                fs.open_as_listed(path, listed.identity, listed.size)
                if listed.identity != (0, 0)  # not listed from a directory (tests)
                else fs.ReadOnlyFile(path, frozen=True)
            )
        except OSError as error:
            yield UnreadableFileError(f"cannot open: {error.strerror}", field="file", file=label)
            return
        with source:
            yield from self.source(source, label)

    def source(self, source: fs.ReadOnlyFile, label: str) -> Iterator[Chunk | DecodeError]:
        """The chunks and problems of an opened segment."""
        yield from read_segment(source, file=label, backend=self.backend, limits=self.limits)

    def from_snapshot(self, snapshot: PartitionSnapshot) -> SegmentReader:
        """A segment reader of ``snapshot``'s partition: through the files opened with its
        listing (what the broker renames or deletes meanwhile still reads as it was)."""

        def read(partition: PartitionDir, segment: Segment) -> Iterator[Chunk | DecodeError]:
            opened = snapshot.opened(segment)
            if opened is None:
                yield from self.segment(partition, segment)
            else:
                yield from self.source(opened, f"{partition.name}/{segment.log.name}")

        return read


DEFAULT_READ: ReadOptions = ReadOptions()


def segment_label(partition: PartitionDir, segment: Segment) -> str:
    """How errors and findings name a segment file: relative to the log dir."""
    return f"{partition.name}/{segment.log.name}"


def last_index_position(partition: PartitionDir, segment: Segment) -> int | None:
    """The file position of the last entry of the segment's offset index, as the broker takes
    it (the last whole 8 bytes: relative offset, position), or None without a readable one.
    Kafka 0.9's ``LogSegment.nextOffset`` starts its search there."""
    index = segment.index
    if index is None or index.size < _INDEX_ENTRY.size:
        return None
    try:
        with fs.ReadOnlyFile(partition.path / index.name) as source:
            end = source.size - source.size % _INDEX_ENTRY.size
            data = source.read_at(end - _INDEX_ENTRY.size, _INDEX_ENTRY.size)
    except OSError:
        return None
    if len(data) < _INDEX_ENTRY.size:
        return None
    return int(_INDEX_ENTRY.unpack(data)[1])


#: an offset index entry: relative offset, file position (``OffsetIndex``)
_INDEX_ENTRY: Final = struct.Struct(">ii")
