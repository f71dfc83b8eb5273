"""Read one ``.log`` segment into columns, in bounded windows, whatever its magic.

Framing and stop rules follow Kafka's readers (3.8.0 ``FileLogInputStream.nextBatch``; 0.9.0.1
``FileMessageSet.iterator``), and live only here:

- 17 bytes or fewer left (``HEADER_SIZE_UP_TO_MAGIC``): the end. Leftover bytes are a
  ``TruncatedError`` at the position where they start.
- A declared size below 14 (``RECORD_OVERHEAD_V0``): Kafka 3.x throws ``CorruptRecordException``
  ("Found record size %d smaller than minimum record overhead (14)"), 0.9 stops silently. Either
  way nothing after it can be framed; we report it (noting a zero-filled, preallocated tail) and
  stop.
- An entry that runs past the end of the file: a partial write, the normal tail of an active
  segment after ``kill -9``. Reported as ``TruncatedError`` at the entry's position, then the end.
  Kafka's readers stop there alike (2.3.0 ``FileLogInputStream.nextBatch`` returns null: no
  more batches), whatever the bytes are; but when the header's own fields say it is no entry
  Kafka wrote (its offset outside the segment, its magic no message format), the error says so
  (``Framing.not_an_entry``): those bytes are damage, not a write in flight.
- An entry larger than ``max_batch_bytes``: reported and skipped.
- A whole entry whose stored CRC does not match: reported (``ChecksumError``) and read all the
  same, in a chunk of its own: Kafka's cleaner and coordinator load never check CRCs, and
  ``DumpLogSegments`` prints it with ``isvalid: false``.
- A whole entry that fails to decode (bad magic, malformed records, a payload that does not
  decompress): reported, and the walk goes on at the next entry.

Whole entries are decoded by the chosen reader (:class:`Backend`): ``native`` hands each window
to the C parser (``reader.native_reader``), which takes every entry it can and leaves the rest
(anything it does not recognise as valid) to the reference decoders, which report exactly what
is wrong; ``python`` decodes everything with the reference decoders. Both give the same columns.

:func:`read_segment` yields :class:`~offsets_auditor.reader.columns.Chunk`\\ s and located
:class:`~offsets_auditor.errors.DecodeError`\\ s in file order.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from pathlib import PurePath
from typing import Final, Protocol

from offsets_auditor import _native
from offsets_auditor.errors import (
    CorruptError,
    DecodeError,
    Framing,
    OverLimitError,
    TruncatedError,
)
from offsets_auditor.reader import native_reader
from offsets_auditor.reader.columns import Chunk
from offsets_auditor.reader.options import DEFAULT_LIMITS, Backend, Limits
from offsets_auditor.reader.python_reader import PythonChunkBuilder, decode_entry
from offsets_auditor.records.legacy import LOG_OVERHEAD, MAGIC_OFFSET

HEADER_SIZE_UP_TO_MAGIC: Final = MAGIC_OFFSET + 1  # 17
MIN_ENTRY_SIZE: Final = 14  # LegacyRecord.RECORD_OVERHEAD_V0


class ByteSource(Protocol):
    """Random read access to a file's bytes (``offsets_auditor.logdir.fs.ReadOnlyFile`` is one)."""

    @property
    def size(self) -> int: ...

    def read_at(self, position: int, length: int) -> bytes: ...


class BytesSource:
    """A :class:`ByteSource` over bytes in memory (tests, decompressed data)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    @property
    def size(self) -> int:
        return len(self._data)

    def read_at(self, position: int, length: int) -> bytes:
        return self._data[position : position + length]


def read_segment(
    source: ByteSource,
    *,
    file: str | None = None,
    backend: Backend = Backend.NATIVE,
    limits: Limits = DEFAULT_LIMITS,
    strings: _native.StringTable | None = None,
    digests: bool = True,
    names: bool = True,
) -> Iterator[Chunk | DecodeError]:
    """Every entry of ``source``: chunks of columns and located errors, in file order.
    ``strings`` is the string table the chunks' ids index (a new one by default); with
    ``digests=False`` the ``digest`` column stays zero (no MD5 is computed: for readers that
    never look at it, like ``dump``); with ``names=False`` the C reader interns no group or
    topic, leaving their columns -1 where it would have set them (for readers that only count
    key and value versions, like the summary: ``decode.RowDecoder`` then decodes such a key
    from its bytes)."""
    table = native_reader.new_string_table() if strings is None else strings
    walk = _Walk(source, file, limits, table, backend, digests, names)
    yield from walk.run()


class _Walk:
    """One pass over a segment (one instance per call: no state outside it)."""

    def __init__(
        self,
        source: ByteSource,
        file: str | None,
        limits: Limits,
        strings: _native.StringTable,
        backend: Backend,
        digests: bool,
        names: bool,
    ) -> None:
        self.source = source
        self.file = file
        self.limits = limits
        self.python = PythonChunkBuilder(strings, limits.max_chunk_records, digests=digests)
        self.native = (
            native_reader.NativeChunkBuilder(strings, limits, digests=digests, names=names)
            if backend is Backend.NATIVE
            else None
        )
        self.ordinal = 0  # the next entry's number
        self.next_record = 0  # the next record's number

    def run(self) -> Iterator[Chunk | DecodeError]:
        source, limits = self.source, self.limits
        size = source.size
        window = b""
        window_start = 0
        pos = 0
        while True:
            remaining = size - pos
            if remaining <= HEADER_SIZE_UP_TO_MAGIC:
                if remaining > 0:
                    yield from self._error(
                        TruncatedError(
                            f"{remaining} bytes at the end are too few for an entry header",
                            field="log_overhead",
                            position=pos,
                            file=self.file,
                            framing=Framing(
                                _declared_size(source, pos, remaining),
                                remaining,
                                _not_an_entry(source, pos, self.file),
                            ),
                        )
                    )
                break
            if pos + HEADER_SIZE_UP_TO_MAGIC > window_start + len(window) or pos < window_start:
                window_start = pos
                window = source.read_at(pos, max(limits.window_bytes, HEADER_SIZE_UP_TO_MAGIC))
            rel = pos - window_start
            _, length = LOG_OVERHEAD.unpack_from(window, rel)
            entry_size = 12 + length
            if length < MIN_ENTRY_SIZE:
                yield from self._error(_undersized(source, pos, length, self.file))
                break
            if entry_size > remaining:
                not_an_entry = _not_an_entry(source, pos, self.file)
                message = (
                    f"entry of {entry_size} bytes runs {entry_size - remaining} bytes past the"
                    f" end of the file ({size} bytes): a partial write; the valid data ends here"
                    if not_an_entry is None
                    else f"the {remaining:,} bytes from here to the end of the file are no entry"
                    f" Kafka wrote: {not_an_entry} (read as a header, they declare an entry of"
                    f" {entry_size} bytes, {entry_size - remaining} past the end of the file);"
                    " Kafka's readers stop here and read none of them"
                )
                yield from self._error(
                    TruncatedError(
                        message,
                        field="size",
                        position=pos,
                        file=self.file,
                        framing=Framing(entry_size, remaining, not_an_entry),
                    )
                )
                break
            if entry_size > limits.max_batch_bytes:
                yield from self._error(
                    OverLimitError(
                        f"entry of {entry_size} bytes is larger than the {limits.max_batch_bytes}"
                        "-byte limit; skipped (raise --max-batch-bytes if the topic's"
                        " max.message.bytes is larger)",
                        field="size",
                        position=pos,
                        file=self.file,
                    )
                )
                pos += entry_size
                continue
            if rel + entry_size > len(window):
                window_start = pos
                window = source.read_at(pos, max(limits.window_bytes, entry_size))
                rel = 0
            if self.native is not None:
                taken = yield from self._native_run(window, rel, pos)
                if taken:
                    pos += taken
                    continue
            yield from self._reference(window, rel, pos)
            pos += entry_size
        yield from self._flush()

    def _native_run(self, window: bytes, rel: int, pos: int) -> Generator[Chunk, None, int]:
        """Let the C reader take the entries it can from ``window[rel:]``; returns how many
        bytes it took (0: the entry at ``rel`` is the reference decoders')."""
        native = self.native
        assert native is not None
        if self.python.pending_batches:
            yield from self._flush()
        native.start(self.ordinal, self.next_record)
        taken, chunks = native.take(window, rel, pos, self.limits.max_batch_bytes)
        self.ordinal, self.next_record = native.ordinals()
        yield from chunks
        return taken

    def _reference(self, window: bytes, rel: int, pos: int) -> Iterator[Chunk | DecodeError]:
        """The entry at ``window[rel]`` by the reference decoders: into columns, or an error."""
        view = memoryview(window)
        try:
            batch = decode_entry(view, rel, pos, self.limits.decompress_limit)
        except DecodeError as error:
            yield from self._error(error.located(file=self.file, base=pos - rel))
            return
        checksum = batch.checksum_error
        if checksum is not None:  # the entry is read all the same, as the broker reads it
            yield from self._error(checksum.located(file=self.file, base=pos - rel))
        elif self.native is not None and self.native.pending:
            yield from self._flush()
        if not self.python.pending_batches:
            self.python.first_record = self.next_record
        self.python.add(batch, self.ordinal)
        self.ordinal += 1
        self.next_record += len(batch.records)
        if checksum is not None:  # in a chunk of its own, whichever reader reads the rest
            yield from self._flush()

    def _error(self, error: DecodeError) -> Iterator[Chunk | DecodeError]:
        yield from self._flush()
        yield error

    def _flush(self) -> Iterator[Chunk]:
        if self.native is not None:
            yield from self.native.flush()
        yield from self.python.flush()


def _undersized(source: ByteSource, pos: int, length: int, file: str | None) -> DecodeError:
    tail = source.size - pos
    zero = _all_zero(source, pos)
    not_an_entry = None if zero else _not_an_entry(source, pos, file)
    what = (
        f"; the {tail} bytes from here to the end are all zero (a preallocated or zero-filled tail)"
        if zero
        else f"; {tail} bytes to the end of the file cannot be framed"
        + ("" if not_an_entry is None else f" (no entry Kafka wrote: {not_an_entry})")
    )
    return CorruptError(
        f"Found record size {length} smaller than minimum record overhead ({MIN_ENTRY_SIZE}){what}",
        field="size",
        position=pos,
        file=file,
        framing=Framing(LOG_OVERHEAD.size + length, tail, not_an_entry),
    )


#: The segment file's name: its base offset, 20 digits (``Log.filenamePrefixFromOffset``).
_SEGMENT_NAME: Final = re.compile(r"(\d{20})\.log")
#: How far past its base offset a segment's entries reach: a segment is rolled before an offset
#: no longer fits the index's 4-byte relative offset (2^31 - 1; KAFKA-5413 segments went a
#: little past it, so the bound is 2^32).
_SEGMENT_SPAN: Final = 1 << 32


def _not_an_entry(source: ByteSource, pos: int, file: str | None) -> str | None:
    """Why the header at ``pos`` is not one Kafka wrote, if its fields say so, else None.

    Every entry of a segment has an offset in ``[base offset, base offset + 2^31)`` (its last
    offset for a v0/v1 wrapper, its base offset for a v2 batch: never below the segment's base
    offset, which names the file) and a magic of 0, 1 or 2. A partial write at the end of the
    active segment has both, written with the entry's first bytes; 64 random bits almost never
    do. Without the 17 header bytes, or a file name that gives the base offset, nothing is
    said."""
    header = source.read_at(pos, HEADER_SIZE_UP_TO_MAGIC)
    if len(header) < HEADER_SIZE_UP_TO_MAGIC:
        return None
    offset, _ = LOG_OVERHEAD.unpack_from(header, 0)
    magic = header[MAGIC_OFFSET]
    reasons = []
    name = _SEGMENT_NAME.fullmatch(PurePath(file).name) if file is not None else None
    if name is not None:
        base = int(name.group(1))
        if not base <= offset < base + _SEGMENT_SPAN:
            reasons.append(f"its offset {offset} is outside this segment (base offset {base})")
    if magic > 2:
        reasons.append(f"its magic {magic} is no message format (0, 1 or 2)")
    return " and ".join(reasons) or None


def _declared_size(source: ByteSource, pos: int, remaining: int) -> int | None:
    """The size the entry at ``pos`` declares (log overhead included), if its size field is
    there."""
    if remaining < LOG_OVERHEAD.size:
        return None
    return LOG_OVERHEAD.size + int(LOG_OVERHEAD.unpack(source.read_at(pos, LOG_OVERHEAD.size))[1])


def _all_zero(source: ByteSource, pos: int, chunk: int = 8 * 1024 * 1024) -> bool:
    while pos < source.size:
        data = source.read_at(pos, chunk)
        if not data:
            break
        if data.count(0) != len(data):
            return False
        pos += len(data)
    return True
