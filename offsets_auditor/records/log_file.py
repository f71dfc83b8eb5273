"""Walk the entries of a ``.log`` segment, whatever their magic, with bounded memory.

Framing and stop rules follow Kafka's readers (3.8.0 ``FileLogInputStream.nextBatch``;
0.9.0.1 ``FileMessageSet.iterator``):

- 17 bytes or fewer left (``HEADER_SIZE_UP_TO_MAGIC``): the end. Leftover bytes are a
  ``TruncatedError`` at the position where they start.
- A declared size below 14 (``RECORD_OVERHEAD_V0``): Kafka 3.x throws ``CorruptRecordException``
  ("Found record size %d smaller than minimum record overhead (14)"), 0.9 stops silently. Either
  way nothing after it can be framed; we report it (noting a zero-filled, preallocated tail) and
  stop.
- An entry that runs past the end of the file: a partial write, the normal tail of an active
  segment after ``kill -9``. Reported as ``TruncatedError`` at the entry's position (the first
  byte that is not part of a whole entry), then the end.
- A whole entry that fails to decode (bad CRC, bad magic, malformed records): reported, and the
  walk goes on at the next entry, as ``DumpLogSegments`` does (``isvalid: false``).

The walk yields each decoded :class:`Batch` or the :class:`DecodeError` describing an entry or
tail it could not decode, with ``file`` and the byte ``position`` in the file set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from offsets_auditor.errors import CorruptError, DecodeError, TruncatedError
from offsets_auditor.records.default import decode_batch
from offsets_auditor.records.legacy import LOG_OVERHEAD, MAGIC_OFFSET, decode_legacy_entry
from offsets_auditor.records.model import Batch

HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0

#: How much of a file is read at once.
DEFAULT_WINDOW_BYTES = 8 * 1024 * 1024
#: Largest entry decoded. Kafka's own limit is the topic's max.message.bytes (1 MiB default).
DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024
#: Largest decompressed payload of one compressed entry.
DEFAULT_DECOMPRESS_LIMIT = 256 * 1024 * 1024


#: A fast lane takes ``(window, start, end, file_position_of_start)``, consumes whole entries of
#: ``window[start:end]`` it can account for without the Python decoder, and returns the window
#: position of the first entry it did not take plus its totals for what it took (see
#: ``offsets_auditor.fastlane``). It must never report problems: anything unusual is left to
#: the Python decoder.
FastLane = Callable[[memoryview, int, int, int], tuple[int, Mapping[str, Any]]]


class ByteSource(Protocol):
    """Random read access to a file's bytes (``offsets_auditor.fs.ReadOnlyFile`` is one)."""

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


def read_batches(
    source: ByteSource,
    *,
    file: str | None = None,
    start: int = 0,
    window_bytes: int = DEFAULT_WINDOW_BYTES,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    decompress_limit: int = DEFAULT_DECOMPRESS_LIMIT,
    fast_lane: FastLane | None = None,
    on_fast_lane: Callable[[Mapping[str, Any]], None] | None = None,
) -> Iterator[Batch | DecodeError]:
    """Every entry of ``source`` from byte ``start``: decoded batches and located errors.

    With ``fast_lane``, runs of entries it accepts are not yielded; its totals go to
    ``on_fast_lane`` instead (the summary and the audit use this; ``dump`` does not).
    """
    size = source.size
    window = b""
    window_start = 0
    pos = start
    refused_at = -1
    while True:
        remaining = size - pos
        if remaining <= HEADER_SIZE_UP_TO_MAGIC:
            if remaining > 0:
                yield TruncatedError(
                    f"{remaining} bytes at the end are too few for an entry header",
                    field="log_overhead",
                    position=pos,
                    file=file,
                )
            return
        if pos + HEADER_SIZE_UP_TO_MAGIC > window_start + len(window) or pos < window_start:
            window_start, window = (
                pos,
                source.read_at(pos, max(window_bytes, HEADER_SIZE_UP_TO_MAGIC)),
            )
        rel = pos - window_start
        _, length = LOG_OVERHEAD.unpack_from(window, rel)
        entry_size = 12 + length
        if length < MIN_ENTRY_SIZE:
            yield _undersized(source, pos, length, file)
            return
        if entry_size > remaining:
            yield TruncatedError(
                f"entry of {entry_size} bytes runs {entry_size - remaining} bytes past the end of"
                f" the file ({size} bytes): a partial write; the valid data ends here",
                field="size",
                position=pos,
                file=file,
            )
            return
        if entry_size > max_batch_bytes:
            yield CorruptError(
                f"entry of {entry_size} bytes is larger than the {max_batch_bytes}-byte limit;"
                " skipped (raise --max-batch-bytes if the topic's max.message.bytes is larger)",
                field="size",
                position=pos,
                file=file,
            )
            pos += entry_size
            continue
        if rel + entry_size > len(window):
            window_start, window = pos, source.read_at(pos, max(window_bytes, entry_size))
            rel = 0
        view = memoryview(window)
        if fast_lane is not None and pos != refused_at:
            next_rel, totals = fast_lane(view, rel, len(window), pos)
            if next_rel != rel:
                assert on_fast_lane is not None
                on_fast_lane(totals)
                pos += next_rel - rel
                continue
            refused_at = pos
        magic = view[rel + MAGIC_OFFSET]
        try:
            if magic == 2:
                yield decode_batch(view, rel, position=pos, decompress_limit=decompress_limit)
            elif magic in (0, 1):
                yield decode_legacy_entry(
                    view, rel, position=pos, decompress_limit=decompress_limit
                )
            else:
                yield CorruptError(
                    f"Invalid magic found in record: {magic}",
                    field="magic",
                    position=pos + MAGIC_OFFSET,
                    file=file,
                )
        except DecodeError as error:
            yield error.located(file=file, base=pos - rel)
        pos += entry_size


def _undersized(source: ByteSource, pos: int, length: int, file: str | None) -> DecodeError:
    tail = source.size - pos
    zero_tail = _all_zero(source, pos)
    what = (
        f"; the {tail} bytes from here to the end are all zero (a preallocated or zero-filled tail)"
        if zero_tail
        else f"; {tail} bytes to the end of the file cannot be framed"
    )
    return CorruptError(
        f"Found record size {length} smaller than minimum record overhead ({MIN_ENTRY_SIZE}){what}",
        field="size",
        position=pos,
        file=file,
    )


def _all_zero(source: ByteSource, pos: int, chunk: int = DEFAULT_WINDOW_BYTES) -> bool:
    while pos < source.size:
        data = source.read_at(pos, chunk)
        if not data:
            break
        if data.count(0) != len(data):
            return False
        pos += len(data)
    return True
