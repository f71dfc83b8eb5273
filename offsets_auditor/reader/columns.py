"""The columnar form of a segment's records: what both readers produce and every rule reads.

A segment is read as a sequence of :class:`Chunk`\\ s. A chunk holds at most a bounded number of
records (``MAX_CHUNK_RECORDS`` by default) as numpy columns, one row per record
(:class:`RecordColumns`), the top-level entries they came from (:class:`BatchColumns`, one row per
v2 record batch or legacy message/wrapper), and the byte buffers the records' keys and values sit
in (the read window, or a decompressed payload), so that anything not decoded into a column can
still be decoded from its bytes when a rule needs it.

Both readers (``native``: the C parser; ``python``: the reference decoders of
``offsets_auditor.records`` and ``offsets_auditor.schemas``) fill exactly these columns with
exactly these meanings; the tests compare them column by column.

What each record column holds (Kafka's names where Kafka has one):

- ``batch``: row of its entry in ``Chunk.batches``. ``offset``, ``timestamp`` (-1: none, v0),
  ``magic`` (the record's own; an inner message of a v1 wrapper may differ from the wrapper).
- ``key_size``/``value_size``: byte lengths, -1 for null (a null value is a tombstone);
  ``buffer``/``key_start``/``value_start``: where the bytes are (``Chunk.buffers[buffer]``).
- ``digest``: the MD5 of the raw key (the cleaner's ``SkimpyOffsetMap`` key), 16 zero bytes for
  a null key. Control records have one too: the cleaners before 0.10.1 map them like any other.
- ``key_type``: the key's int16 version prefix (the record type), -1 when the key is null or
  shorter than 2 bytes, and for control records.
- ``key_status`` (``KeyStatus``): ``OK`` when the key was decoded into the columns (an
  OffsetCommitKey v0/v1 or GroupMetadataKey v2 with every byte used), ``DEFERRED`` when only its
  prefix was read (decode it with ``offsets_auditor.schemas.decode_key``; it may be malformed),
  ``NULL`` (no key), ``CONTROL`` (a control record decoded into ``control_type``/
  ``coordinator_epoch``; a control record that does not decode is ``DEFERRED``).
- ``group``: for any non-null key of a non-control batch whose bytes 2-4 hold a string length
  that fits, the string id of ``key[4:4 + length]`` (every key type starts ``int16 type, string
  group``), else -1. ``topic``/``partition``: set for OffsetCommitKeys with ``key_status`` OK,
  else -1. String ids index the segment's :class:`StringTable` (raw bytes, decoded by whoever
  reads them: Java's UTF-8 rules for group ids, see ``schemas.java_utf8``).
- ``value_version``: the value's int16 prefix, -1 when null or shorter than 2 bytes.
- ``value_status`` (``ValueStatus``): ``OK`` when the value is an OffsetCommitValue v0-v3 of an
  OK OffsetCommitKey and was decoded into ``committed_offset``, ``leader_epoch`` (v3, else -1),
  ``metadata_start``/``metadata_size`` (raw bytes in the record's buffer),
  ``commit_timestamp``, ``expire_timestamp`` (v1, else -1); ``NULL`` for a tombstone;
  ``DEFERRED`` otherwise (decode with ``schemas.decode_value``).
- ``control_type``: the control record's type id (0 ABORT, 1 COMMIT, ...), -1 for data records;
  ``coordinator_epoch`` is meaningful for ABORT/COMMIT only.

Batch columns mirror ``records.model.BatchHeader`` field for field, plus ``ordinal`` (the entry's
number in its segment, counting decoded entries), ``first_record`` (segment ordinal of its first
record), ``records`` (how many records it holds in all) and ``continued`` (1 when this row
repeats an entry begun in an earlier chunk: an entry with more records than a chunk takes is
split across chunks; count entries where ``continued`` is 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Any, ClassVar, Final, Protocol

import numpy as np

#: Most records in one chunk (a soft limit: chunks end between entries, except that an entry
#: holding more records than this is split). Bounds the memory of one chunk whatever the input.
#: What the stages do per chunk besides its rows is paid per chunk: from 2**16 to 2**17, stage
#: A took 15 % less CPU on the 5 GiB hot partition, and 60 MiB more memory at its peak.
MAX_CHUNK_RECORDS: Final = 1 << 17

#: Bytes of an MD5 digest.
DIGEST_SIZE: Final = 16
DIGEST_DTYPE: Final = np.dtype(f"V{DIGEST_SIZE}")
ZERO_DIGEST: Final = bytes(DIGEST_SIZE)

#: ``numpy.typing.NDArray`` spelled out: importing ``numpy.typing`` costs ~15 ms per command
Int8Array = np.ndarray[tuple[Any, ...], np.dtype[np.int8]]
Int16Array = np.ndarray[tuple[Any, ...], np.dtype[np.int16]]
Int32Array = np.ndarray[tuple[Any, ...], np.dtype[np.int32]]
Int64Array = np.ndarray[tuple[Any, ...], np.dtype[np.int64]]
UInt32Array = np.ndarray[tuple[Any, ...], np.dtype[np.uint32]]
DigestArray = np.ndarray[tuple[Any, ...], np.dtype[np.void]]


class KeyStatus(IntEnum):
    OK = 0
    DEFERRED = 1
    NULL = 2
    CONTROL = 3


class ValueStatus(IntEnum):
    OK = 0
    DEFERRED = 1
    NULL = 2


#: Key types (the int16 prefix) of the classic coordinator's records.
OFFSET_COMMIT_KEY_TYPES: Final = (0, 1)
GROUP_METADATA_KEY_TYPE: Final = 2


class StringTable(Protocol):
    """Raw byte strings interned to dense ids in first-seen order (``_native.StringTable``)."""

    def intern(self, raw: bytes, /) -> int: ...

    def texts(self, ids: Any, /) -> list[str | None]:
        """String ``ids[i]`` (int32) decoded as well-formed UTF-8, or None where it is not."""
        ...

    def __getitem__(self, index: int, /) -> bytes: ...

    def __len__(self) -> int: ...


@dataclass(frozen=True, slots=True)
class RecordColumns:
    """One row per record (see the module docstring for each column's meaning)."""

    batch: Int32Array
    offset: Int64Array
    timestamp: Int64Array
    magic: Int8Array
    key_size: Int32Array
    value_size: Int32Array
    buffer: Int16Array
    key_start: Int64Array
    value_start: Int64Array
    digest: DigestArray
    key_type: Int16Array
    key_status: Int8Array
    group: Int32Array
    topic: Int32Array
    partition: Int32Array
    value_version: Int16Array
    value_status: Int8Array
    committed_offset: Int64Array
    leader_epoch: Int32Array
    commit_timestamp: Int64Array
    expire_timestamp: Int64Array
    metadata_start: Int64Array
    metadata_size: Int32Array
    control_type: Int16Array
    coordinator_epoch: Int32Array

    DTYPES: ClassVar[tuple[tuple[str, np.dtype[Any]], ...]]

    def __len__(self) -> int:
        return len(self.offset)


RecordColumns.DTYPES = (
    ("batch", np.dtype(np.int32)),
    ("offset", np.dtype(np.int64)),
    ("timestamp", np.dtype(np.int64)),
    ("magic", np.dtype(np.int8)),
    ("key_size", np.dtype(np.int32)),
    ("value_size", np.dtype(np.int32)),
    ("buffer", np.dtype(np.int16)),
    ("key_start", np.dtype(np.int64)),
    ("value_start", np.dtype(np.int64)),
    ("digest", DIGEST_DTYPE),
    ("key_type", np.dtype(np.int16)),
    ("key_status", np.dtype(np.int8)),
    ("group", np.dtype(np.int32)),
    ("topic", np.dtype(np.int32)),
    ("partition", np.dtype(np.int32)),
    ("value_version", np.dtype(np.int16)),
    ("value_status", np.dtype(np.int8)),
    ("committed_offset", np.dtype(np.int64)),
    ("leader_epoch", np.dtype(np.int32)),
    ("commit_timestamp", np.dtype(np.int64)),
    ("expire_timestamp", np.dtype(np.int64)),
    ("metadata_start", np.dtype(np.int64)),
    ("metadata_size", np.dtype(np.int32)),
    ("control_type", np.dtype(np.int16)),
    ("coordinator_epoch", np.dtype(np.int32)),
)


@dataclass(frozen=True, slots=True)
class BatchColumns:
    """One row per top-level entry with records in the chunk (or empty), ``BatchHeader``'s
    fields plus where its records are."""

    position: Int64Array
    size: Int64Array
    magic: Int8Array
    codec: Int8Array
    timestamp_type: Int8Array
    base_offset: Int64Array
    last_offset: Int64Array
    max_timestamp: Int64Array
    crc: UInt32Array
    transactional: Int8Array
    control: Int8Array
    producer_id: Int64Array
    producer_epoch: Int16Array
    base_sequence: Int32Array
    partition_leader_epoch: Int32Array
    record_count: Int32Array
    delete_horizon: Int64Array
    has_delete_horizon: Int8Array
    ordinal: Int64Array
    first_record: Int64Array
    records: Int32Array
    continued: Int8Array

    DTYPES: ClassVar[tuple[tuple[str, np.dtype[Any]], ...]]

    def __len__(self) -> int:
        return len(self.position)


BatchColumns.DTYPES = (
    ("position", np.dtype(np.int64)),
    ("size", np.dtype(np.int64)),
    ("magic", np.dtype(np.int8)),
    ("codec", np.dtype(np.int8)),
    ("timestamp_type", np.dtype(np.int8)),
    ("base_offset", np.dtype(np.int64)),
    ("last_offset", np.dtype(np.int64)),
    ("max_timestamp", np.dtype(np.int64)),
    ("crc", np.dtype(np.uint32)),
    ("transactional", np.dtype(np.int8)),
    ("control", np.dtype(np.int8)),
    ("producer_id", np.dtype(np.int64)),
    ("producer_epoch", np.dtype(np.int16)),
    ("base_sequence", np.dtype(np.int32)),
    ("partition_leader_epoch", np.dtype(np.int32)),
    ("record_count", np.dtype(np.int32)),
    ("delete_horizon", np.dtype(np.int64)),
    ("has_delete_horizon", np.dtype(np.int8)),
    ("ordinal", np.dtype(np.int64)),
    ("first_record", np.dtype(np.int64)),
    ("records", np.dtype(np.int32)),
    ("continued", np.dtype(np.int8)),
)


def _check_declared(cls: type[Any]) -> None:
    declared = tuple(f.name for f in fields(cls))
    listed = tuple(name for name, _ in cls.DTYPES)
    if declared != listed:  # pragma: no cover - a programming error caught at import
        raise TypeError(f"{cls.__name__}: DTYPES {listed} do not match the fields {declared}")


_check_declared(RecordColumns)
_check_declared(BatchColumns)


def columns_from_buffers(cls: type[Any], buffers: Sequence[Any], rows: int) -> Any:
    """``cls`` (RecordColumns or BatchColumns) over one buffer per column (zero-copy)."""
    arrays = [
        np.frombuffer(buffer, dtype=dtype, count=rows)
        for buffer, (_, dtype) in zip(buffers, cls.DTYPES, strict=True)
    ]
    return cls(*arrays)


def columns_from_lists(cls: type[Any], lists: Sequence[Sequence[Any]]) -> Any:
    """``cls`` from one Python list per column (the Python reader)."""
    return cls(
        *(
            np.array(values, dtype=dtype) if dtype != DIGEST_DTYPE else _digests(values)
            for values, (_, dtype) in zip(lists, cls.DTYPES, strict=True)
        )
    )


def _digests(values: Sequence[Any]) -> DigestArray:
    return np.frombuffer(b"".join(values), dtype=DIGEST_DTYPE).copy() if values else empty_digests()


def empty_digests() -> DigestArray:
    return np.zeros(0, dtype=DIGEST_DTYPE)


def concat(cls: type[Any], parts: Sequence[Any]) -> Any:
    """Columns of ``parts`` one after the other (record ``batch`` indices are NOT rebased)."""
    return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name, _ in cls.DTYPES))


@dataclass(frozen=True, slots=True)
class Chunk:
    """Records of consecutive entries of one segment, with the buffers their bytes are in.

    ``first_record`` is the segment ordinal of the first record (records are numbered in file
    order over the segment's decoded entries). ``strings`` is the segment's string table, shared
    by its chunks."""

    records: RecordColumns
    batches: BatchColumns
    buffers: tuple[bytes | memoryview, ...]
    first_record: int
    strings: StringTable

    def key_bytes(self, row: int) -> bytes | None:
        size = int(self.records.key_size[row])
        if size < 0:
            return None
        start = int(self.records.key_start[row])
        return bytes(self.buffers[int(self.records.buffer[row])][start : start + size])

    def value_bytes(self, row: int) -> bytes | None:
        size = int(self.records.value_size[row])
        if size < 0:
            return None
        start = int(self.records.value_start[row])
        return bytes(self.buffers[int(self.records.buffer[row])][start : start + size])

    def metadata_bytes(self, row: int) -> bytes:
        start = int(self.records.metadata_start[row])
        size = int(self.records.metadata_size[row])
        return bytes(self.buffers[int(self.records.buffer[row])][start : start + size])
