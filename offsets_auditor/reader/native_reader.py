"""The C reader (``offsets_auditor._native.Reader``) driven over a segment's windows.

The C parser takes runs of whole entries and writes their columns; for a compressed entry it
stops and this module decompresses the payload with ``records.compression`` (the one
implementation of Kafka's codecs) and hands the bytes back. An entry the C parser does not take
is left to the caller (``reader.segment``), whose reference decoders report what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from offsets_auditor import _native
from offsets_auditor.errors import DecodeError
from offsets_auditor.reader.columns import (
    BatchColumns,
    Chunk,
    RecordColumns,
    columns_from_buffers,
)
from offsets_auditor.reader.options import Limits
from offsets_auditor.records.compression import decompress

#: take()/take_compressed() statuses (``_native.c``).
STOP: Final = 0
FULL: Final = 1
COMPRESSED: Final = 2
SPLIT: Final = 3
DONE: Final = 4


def new_string_table() -> _native.StringTable:
    return _native.StringTable()


class NativeChunkBuilder:
    """Chunks of columns from the C reader. ``strings`` is the segment's string table."""

    def __init__(
        self,
        strings: _native.StringTable,
        limits: Limits,
        simd_width: int = 0,
        *,
        digests: bool = True,
        names: bool = True,
    ) -> None:
        self.strings = strings
        self.limits = limits
        self._reader = _native.Reader(strings, limits.max_chunk_records, simd_width, digests, names)
        self._buffers: list[bytes | memoryview] = []
        self._window: bytes | None = None
        self._window_index = -1

    @property
    def pending(self) -> bool:
        return bool(self._reader.pending_batches)

    def start(self, ordinal: int, record: int) -> None:
        self._reader.start(ordinal, record)

    def ordinals(self) -> tuple[int, int]:
        ordinal, record = self._reader.ordinals()
        return int(ordinal), int(record)

    def _buffer_of(self, window: bytes) -> int:
        """The index of ``window`` among the chunk's buffers (added when new)."""
        if self._window is not window:
            self._buffers.append(window)
            self._window = window
            self._window_index = len(self._buffers) - 1
        return self._window_index

    def take(
        self, window: bytes, rel: int, position: int, max_entry_bytes: int
    ) -> tuple[int, list[Chunk]]:
        """Take the entries the C reader can from ``window[rel:]`` (``window[rel]`` is at file
        ``position``). Returns the bytes taken and the chunks finished meanwhile."""
        chunks: list[Chunk] = []
        start = rel
        while True:
            buffer = self._buffer_of(window)
            next_rel, status = self._reader.take(
                window, rel, len(window), position + rel - start, buffer, max_entry_bytes
            )
            rel = next_rel
            if status == STOP:
                return rel - start, chunks
            if status in (FULL, SPLIT):
                chunks.extend(self.flush())
                continue
            if status == COMPRESSED:
                if not self._take_compressed(window, rel, chunks):
                    return rel - start, chunks
                rel += 12 + int.from_bytes(window[rel + 8 : rel + 12], "big", signed=True)
                continue
            raise AssertionError(f"unexpected take() status {status}")  # pragma: no cover

    def _take_compressed(self, window: bytes, rel: int, chunks: list[Chunk]) -> bool:
        """The waiting compressed entry at ``window[rel]``, decompressed and taken; False when
        it is the reference decoders' (its payload does not decompress, or its records do not
        parse)."""
        start, end, codec, magic = self._reader.payload()
        payload = memoryview(window)[rel + start : rel + end]
        try:
            data = decompress(codec, payload, magic=magic, limit=self.limits.decompress_limit)
        except DecodeError:
            return False
        while True:
            self._buffers.append(data)
            status = self._reader.take_compressed(data, len(self._buffers) - 1)
            if status == DONE:
                return True
            if status == STOP:
                self._buffers.pop()
                return False
            if status == FULL:
                self._buffers.pop()
            chunks.extend(self.flush())

    def flush(self) -> Iterator[Chunk]:
        """The chunk built so far, if any."""
        first_record, n_records, record_columns, n_batches, batch_columns = self._reader.flush()
        buffers = tuple(self._buffers)
        self._buffers = []
        self._window = None
        if not n_batches:
            return iter(())
        return iter(
            (
                Chunk(
                    records=columns_from_buffers(RecordColumns, record_columns, n_records),
                    batches=columns_from_buffers(BatchColumns, batch_columns, n_batches),
                    buffers=buffers,
                    first_record=first_record,
                    strings=self.strings,
                ),
            )
        )
