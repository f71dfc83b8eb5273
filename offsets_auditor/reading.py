"""How the commands read segments: which record reader, with which limits, through which files.

Chosen once at the edge (the command line) and passed down; nothing below reads an environment
variable or picks a reader on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from offsets_auditor import fs
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir import PartitionDir, Segment
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.segment import DEFAULT_LIMITS, Backend, Limits, read_segment


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The record reader (``native``: C parser, ``python``: reference decoders) and limits."""

    backend: Backend = Backend.NATIVE
    limits: Limits = DEFAULT_LIMITS

    def segment(self, partition: PartitionDir, segment: Segment) -> Iterator[Chunk | DecodeError]:
        """The chunks and problems of one segment of ``partition``, read-only. A file that
        cannot be opened is one ``DecodeError`` (field ``file``)."""
        label = f"{partition.name}/{segment.log.name}"
        try:
            source = fs.ReadOnlyFile(partition.path / segment.log.name)
        except OSError as error:
            yield DecodeError(f"cannot open: {error.strerror}", field="file", file=label)
            return
        with source:
            yield from read_segment(source, file=label, backend=self.backend, limits=self.limits)


DEFAULT_READ: ReadOptions = ReadOptions()
