"""The reference reader: Kafka's formats decoded in Python, turned into the same columns as the
C reader.

Entries are decoded by ``records.legacy`` / ``records.default`` (one decoder per format, the
reference for the C parser), keys and values classified by ``reader.classify``, control records
by ``records.control``. Key and value bytes are copied into one buffer per chunk, so the
columns' ``key_start``/``value_start`` point there.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Final

from offsets_auditor.errors import CorruptError, DecodeError
from offsets_auditor.reader import classify
from offsets_auditor.reader.columns import (
    ZERO_DIGEST,
    BatchColumns,
    Chunk,
    KeyStatus,
    RecordColumns,
    StringTable,
    ValueStatus,
    columns_from_lists,
)
from offsets_auditor.records.control import decode_control
from offsets_auditor.records.default import decode_batch
from offsets_auditor.records.legacy import MAGIC_OFFSET, decode_legacy_entry
from offsets_auditor.records.model import Batch, Record

_N_RECORD_COLUMNS = len(RecordColumns.DTYPES)
_N_BATCH_COLUMNS = len(BatchColumns.DTYPES)


_LONG_MIN: Final = -(2**63)
_LONG_MAX: Final = 2**63 - 1


def decode_entry(view: memoryview, rel: int, position: int, decompress_limit: int) -> Batch:
    """The whole entry at ``view[rel]`` decoded by the reference decoders (raises
    ``DecodeError`` located relative to ``view``). The caller checked its framing."""
    magic = view[rel + MAGIC_OFFSET]
    if magic == 2:
        batch = decode_batch(view, rel, position=position, decompress_limit=decompress_limit)
    else:
        batch = decode_legacy_entry(view, rel, position=position, decompress_limit=decompress_limit)
    _check_longs(batch, rel)
    return batch


def _check_longs(batch: Batch, rel: int) -> None:
    """Offsets and timestamps computed from deltas must be Java longs (the broker's arithmetic
    would wrap around; such bytes were not written by a broker)."""
    header = batch.header
    values = [("lastOffsetDelta", header.last_offset)]
    values += [("offsetDelta", r.offset) for r in batch.records]
    values += [("timestampDelta", r.timestamp) for r in batch.records]
    for name, value in values:
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise CorruptError(
                f"{name} gives {value}, outside the range of a long", field=name, position=rel
            )


@dataclass
class PythonChunkBuilder:
    """Collects decoded entries into chunks of at most ``max_records`` records."""

    strings: StringTable
    max_records: int
    first_record: int = 0
    #: False: the digest column stays zero (no MD5: readers that never look at it)
    digests: bool = True
    _records: list[list[object]] = field(default_factory=list)
    _batches: list[list[object]] = field(default_factory=list)
    _buffer: bytearray = field(default_factory=bytearray)
    _finished: list[Chunk] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._reset(self.first_record)

    def _reset(self, first_record: int) -> None:
        self.first_record = first_record
        self._records = [[] for _ in range(_N_RECORD_COLUMNS)]
        self._batches = [[] for _ in range(_N_BATCH_COLUMNS)]
        self._buffer = bytearray()

    @property
    def pending_records(self) -> int:
        return len(self._records[1])

    @property
    def pending_batches(self) -> int:
        return len(self._batches[0])

    def add(self, batch: Batch, ordinal: int) -> None:
        """Append one decoded entry (entry number ``ordinal`` of its segment).

        Chunking rule (the C reader follows the same): an entry that would take the chunk past
        ``max_records`` records, or a chunk already holding ``max_records`` entries, starts a new
        chunk; an entry with more than ``max_records`` records is split over as many chunks as
        it needs, its row repeated with ``continued`` set."""
        records = batch.records
        count = len(records)
        if self.pending_batches >= self.max_records or (
            self.pending_records and self.pending_records + count > self.max_records
        ):
            self._finish()
        first = self.first_record + self.pending_records
        done = 0
        while True:
            part = records[done : done + self.max_records]
            self._add_batch_row(batch, ordinal, first, count, continued=done > 0)
            row = self.pending_batches - 1
            for record in part:
                self._add_record(batch, record, row)
            done += len(part)
            if done >= count:
                return
            self._finish()

    def _add_batch_row(
        self, batch: Batch, ordinal: int, first: int, count: int, *, continued: bool
    ) -> None:
        h = batch.header
        values = (
            h.position,
            h.size,
            h.magic,
            h.codec,
            h.timestamp_type,
            h.base_offset,
            h.last_offset,
            h.max_timestamp,
            h.crc,
            int(h.is_transactional),
            int(h.is_control),
            h.producer_id,
            h.producer_epoch,
            h.base_sequence,
            h.partition_leader_epoch,
            -1 if h.record_count is None else h.record_count,
            0 if h.delete_horizon_ms is None else h.delete_horizon_ms,
            int(h.delete_horizon_ms is not None),
            ordinal,
            first,
            count,
            int(continued),
        )
        for column, value in zip(self._batches, values, strict=True):
            column.append(value)

    def _bytes(self, data: bytes | None) -> tuple[int, int]:
        if data is None:
            return 0, -1
        start = len(self._buffer)
        self._buffer += data
        return start, len(data)

    def _add_record(self, batch: Batch, record: Record, row: int) -> None:
        key, value = record.key, record.value
        key_start, key_size = self._bytes(key)
        value_start, value_size = self._bytes(value)
        control = bool(batch.header.is_control)
        k = _classify_key(key, value, control, self.strings)
        v = _classify_value(value, key, k.status == KeyStatus.OK and k.topic >= 0, value_start)
        c_type, c_epoch = k.control
        values = (
            row,
            record.offset,
            record.timestamp,
            record.magic,
            key_size,
            value_size,
            0,
            key_start,
            value_start,
            ZERO_DIGEST
            if key is None or not self.digests
            else hashlib.md5(key, usedforsecurity=False).digest(),
            -1 if control else classify.key_type(key),
            k.status,
            k.group,
            k.topic,
            k.partition,
            classify.key_type(value),
            v.status,
            v.offset,
            v.leader_epoch,
            v.commit_timestamp,
            v.expire_timestamp,
            v.metadata_start,
            v.metadata_size,
            c_type,
            c_epoch,
        )
        for column, item in zip(self._records, values, strict=True):
            column.append(item)

    def _finish(self) -> None:
        if not self.pending_batches:
            return
        pending = self.pending_records
        self._finished.append(
            Chunk(
                records=columns_from_lists(RecordColumns, self._records),
                batches=columns_from_lists(BatchColumns, self._batches),
                buffers=(bytes(self._buffer),),
                first_record=self.first_record,
                strings=self.strings,
            )
        )
        self._reset(self.first_record + pending)

    def flush(self) -> list[Chunk]:
        """The chunks finished so far, including the one being built."""
        self._finish()
        finished, self._finished = self._finished, []
        return finished


@dataclass(frozen=True, slots=True)
class _Key:
    status: KeyStatus
    group: int = -1
    topic: int = -1
    partition: int = -1
    control: tuple[int, int] = (-1, 0)


@dataclass(frozen=True, slots=True)
class _Value:
    status: ValueStatus
    offset: int = 0
    leader_epoch: int = -1
    commit_timestamp: int = 0
    expire_timestamp: int = -1
    metadata_start: int = 0
    metadata_size: int = 0


def _classify_key(
    key: bytes | None, value: bytes | None, control: bool, strings: StringTable
) -> _Key:
    if control:
        try:
            decoded = decode_control(key, value)
        except DecodeError:
            return _Key(KeyStatus.DEFERRED)
        epoch = decoded.coordinator_epoch
        return _Key(KeyStatus.CONTROL, control=(decoded.type_id, 0 if epoch is None else epoch))
    if key is None:
        return _Key(KeyStatus.NULL)
    span = classify.group_span(key)
    group = -1 if span is None else strings.intern(key[span.start : span.start + span.length])
    commit = classify.offset_commit_key(key)
    if commit is not None:
        topic = commit.topic
        return _Key(
            KeyStatus.OK,
            group,
            strings.intern(key[topic.start : topic.start + topic.length]),
            commit.partition,
        )
    if classify.group_metadata_key(key) is not None:
        return _Key(KeyStatus.OK, group)
    return _Key(KeyStatus.DEFERRED, group)


def _classify_value(
    value: bytes | None, key: bytes | None, offset_commit: bool, value_start: int
) -> _Value:
    if value is None:
        return _Value(ValueStatus.NULL)
    if not offset_commit:
        return _Value(ValueStatus.DEFERRED)
    fields = classify.offset_commit_value(value)
    if fields is None:
        return _Value(ValueStatus.DEFERRED)
    return _Value(
        ValueStatus.OK,
        fields.offset,
        fields.leader_epoch,
        fields.commit_timestamp,
        fields.expire_timestamp,
        value_start + fields.metadata.start,
        fields.metadata.length,
    )
