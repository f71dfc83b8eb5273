"""What the cleaner emulation needs from one segment, gathered in one read of its columns.

Everything here depends on the segment alone (no order between segments), so segments can be
read in any order or in parallel and the results folded in offset order afterwards
(``cleaner.partition_scan``):

- :class:`SegmentStats`: what the broker keeps per segment in memory (``LogSegment``'s
  ``largestTimestamp``, ``nextOffset``; the first batch's timestamp for ``max.compaction.lag.ms``).
- :class:`WriterShares`: who wrote the segment: per consumer group, records, its byte share of
  each batch, first and last commit time.
- :class:`ProducerBatch` events: the batches with a producer id (transactions), in order, for
  the producer state the cleaner consults.
- :class:`CleanerColumns`: per record and per batch, the few columns the passes of the cleaner
  read (key digest, offset, tombstone, weight; batch sizes, flags).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from offsets_auditor import _folds, _native
from offsets_auditor.cleaner.damage import CleanerDamage, stops_the_cleaner
from offsets_auditor.errors import ControlKeyError, DecodeError
from offsets_auditor.reader.columns import (
    DIGEST_DTYPE,
    Chunk,
    DigestArray,
    KeyStatus,
    ValueStatus,
)
from offsets_auditor.reader.tables import GrowingColumns, Interner, decoded_texts
from offsets_auditor.records.control import control_key_problem
from offsets_auditor.schemas import UnknownValue, decode_key, decode_value

#: ``batch_control_type`` of a control batch with no record, and of one whose first record does
#: not decode (``_control_type`` in Kafka's terms: None, "unknown").
#: Outside the int16 range of a control type id, so that every id (-1 included) stays itself.
NO_CONTROL_RECORD: Final = -(1 << 16)
UNDECODABLE_CONTROL: Final = 1 << 16


@dataclass(frozen=True, slots=True)
class SegmentStats:
    """``next_offset`` is the last offset in the file + 1, or the base offset when the file
    holds no record; ``largest_timestamp`` the largest record timestamp (-1 for v0 data);
    ``first_batch_timestamp`` the first batch's timestamp (for ``max.compaction.lag.ms``)."""

    records: int
    batches: int
    last_offset: int
    largest_timestamp: int
    first_batch_timestamp: int


@dataclass(frozen=True, slots=True)
class ProducerBatch:
    """A v2 batch with a producer id, as the producer state manager replays it. ``controls``
    are the type ids of its control records that decode."""

    producer_id: int
    producer_epoch: int
    base_offset: int
    last_offset: int
    transactional: bool
    control: bool
    controls: tuple[int, ...] = ()
    max_timestamp: int = -1


@dataclass(frozen=True, slots=True, eq=False)
class WriterShares:
    """Per group id (the key's raw group bytes, decoded like ``bytes.decode("utf-8",
    "replace")``), in order of first appearance in the segment: records, the byte shares as
    exact parts, and the first and last commit timestamps (-1 when unknown). ``shares``: for
    each count of records in a batch (ascending), the sum of the sizes of such batches over
    each group's records in them (a record's share of its batch is the batch's size over its
    records), in ``groups``' order. The numbers are int64 arrays (the partition's fold adds
    them up with numpy)."""

    groups: tuple[str, ...]
    records: npt.NDArray[np.int64]
    shares: tuple[tuple[int, npt.NDArray[np.int64]], ...]
    first_timestamp: npt.NDArray[np.int64]
    last_timestamp: npt.NDArray[np.int64]

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WriterShares):
            return NotImplemented
        return (
            self.groups == other.groups
            and all(
                np.array_equal(getattr(self, name), getattr(other, name))
                for name in ("records", "first_timestamp", "last_timestamp")
            )
            and [(c, s.tolist()) for c, s in self.shares]
            == [(c, s.tolist()) for c, s in other.shares]
        )


@dataclass(frozen=True, slots=True)
class CleanerColumns:
    """The columns of one segment that the cleaner's passes read, records in file order.

    Records: ``offset``, ``key`` (the id of the record's key among the segment's keys, in
    first-seen order of their MD5 digests, ``SegmentFacts.key_digests``; -1 for none), ``keyed``,
    ``tombstone`` (null value), ``weight`` (``8 + key bytes + value bytes``: the share of a
    batch a record is given when a rewritten batch's size is estimated), ``batch`` (index into
    the batch columns). Batches: ``size``, ``magic``, ``codec``, ``control``,
    ``transactional``, ``producer_id``, ``producer_epoch``, ``last_offset``, ``control_type``
    (of the first record: a type id, ``NO_CONTROL_RECORD`` or ``UNDECODABLE_CONTROL``),
    ``first_record``, ``records``."""

    offset: npt.NDArray[np.int64]
    key: npt.NDArray[np.int32]
    keyed: npt.NDArray[np.bool_]
    tombstone: npt.NDArray[np.bool_]
    weight: npt.NDArray[np.int32]
    batch: npt.NDArray[np.int32]
    batch_size: npt.NDArray[np.int64]
    batch_magic: npt.NDArray[np.int8]
    batch_codec: npt.NDArray[np.int8]
    batch_control: npt.NDArray[np.bool_]
    batch_transactional: npt.NDArray[np.bool_]
    batch_producer_id: npt.NDArray[np.int64]
    batch_producer_epoch: npt.NDArray[np.int16]
    batch_last_offset: npt.NDArray[np.int64]
    batch_control_type: npt.NDArray[np.int32]
    batch_first_record: npt.NDArray[np.int64]
    batch_records: npt.NDArray[np.int32]

    @property
    def records(self) -> int:
        return len(self.offset)

    @property
    def batches(self) -> int:
        return len(self.batch_size)

    @property
    def nbytes(self) -> int:
        return sum(int(getattr(self, name).nbytes) for name in COLUMN_DTYPES)


@dataclass(frozen=True, slots=True)
class SegmentFacts:
    """Everything :func:`segment_facts` learns from one segment."""

    stats: SegmentStats
    writers: WriterShares
    producer_batches: tuple[ProducerBatch, ...]
    columns: CleanerColumns
    #: the MD5 digest of each of the segment's keys (``CleanerColumns.key``), in first-seen
    #: order, a record without key counted as the zero digest where it first occurs: the
    #: partition's key ids are these interned segment after segment (``partition_scan``), as
    #: if every record's digest had been, in order
    key_digests: DigestArray
    errors: tuple[DecodeError, ...]
    #: the first error the cleaner's reads of this segment fail on
    damage: CleanerDamage | None = None
    #: where the segment's offset index's last entry points (read apart: see ``reading``)
    index_last_position: int | None = None


def commit_timestamp_of(key: bytes | None, value: bytes | None) -> int:
    """The ``commitTimestamp`` of an offset commit's value (the schemas' OffsetCommitValue, any
    version), or -1 (no value, another record, bytes that do not decode). Used for v0 messages,
    which carry no record timestamp, where the reader left the value to the schemas."""
    if key is None or value is None:
        return -1
    try:
        record_key = decode_key(key)
        if record_key.key_type != "offset_commit":
            return -1
        decoded = decode_value(record_key, value)
    except DecodeError:
        return -1
    if isinstance(decoded, UnknownValue):
        return -1
    timestamp = decoded.fields.get("commit_timestamp")
    return timestamp if isinstance(timestamp, int) else -1


class ColumnSink(Protocol):
    """Where a segment's cleaner columns go as its chunks are read: ``add`` each chunk's, in
    order; ``result`` the segment's."""

    def add(self, part: CleanerColumns) -> None: ...

    def result(self) -> CleanerColumns: ...


@dataclass
class ColumnsInMemory:
    """The chunks' columns kept, then joined: memory in proportion to the segment."""

    parts: list[CleanerColumns] = field(default_factory=list)

    def add(self, part: CleanerColumns) -> None:
        self.parts.append(part)

    def result(self) -> CleanerColumns:
        return join_columns(self.parts)


def segment_facts(
    items: Iterable[Chunk | DecodeError],
    base_offset: int,
    file: str | None = None,
    columns: ColumnSink | None = None,
) -> SegmentFacts:
    """Read the chunks (and problems) of one segment whose base offset is ``base_offset``
    (``file``: how errors name it); its cleaner columns go to ``columns`` (by default kept in
    memory). Everything else kept grows with the segment's groups and transactions, not its
    records."""
    builder = _FactsBuilder(file, columns if columns is not None else ColumnsInMemory())
    for item in items:
        if isinstance(item, DecodeError):
            builder.error(item)
        else:
            builder.add(item)
    return builder.result(base_offset)


def _replaced(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class _SegmentWriters:
    """The writes of one segment so far, per string id of the segment's table (its chunks
    share it): records, first appearance, first and last known commit time, and per count of
    records in a batch the sum of those batches' sizes (a record's share of a batch is the
    batch's size over its records: kept exact as these parts). Each chunk is folded in one
    pass over its records (``_folds.writer_rows``, ``_folds.writers_add``)."""

    def __init__(self) -> None:
        self.table = GrowingColumns(
            {
                "records": (np.int64, 0),
                "first_seen": (np.int64, -1),
                "first_timestamp": (np.int64, np.iinfo(np.int64).max),
                "last_timestamp": (np.int64, -1),
            }
        )
        #: records per batch -> its row of ``sums`` (-1: none yet)
        self.row_of_count = np.full(0, -1, dtype=np.int32)
        self.rows = 0
        #: per count row, per string id: the sum of the sizes of its records' batches
        self.sums = np.zeros((0, 0), dtype=np.int64)
        self.seen = 0

    def add(
        self,
        groups: npt.NDArray[np.int32],
        batch: npt.NDArray[np.int32],
        control: npt.NDArray[np.int8],
        counts: npt.NDArray[np.int32],
        sizes: npt.NDArray[np.int64],
        timestamps: npt.NDArray[np.int64],
    ) -> None:
        """One chunk's records, in order: group string id (-1: writes nothing), batch row; its
        batches' control flag, record count and size; each record's commit time (-1:
        unknown). A record writes when it has a group and its batch is no control batch."""
        top = int(groups.max(initial=-1))
        if top < 0:
            return
        t = self.table
        t.reserve(top + 1)
        most = int(counts.max(initial=0)) + 1
        if len(self.row_of_count) < most:
            row_of_count = np.full(most, -1, dtype=np.int32)
            row_of_count[: len(self.row_of_count)] = self.row_of_count
            self.row_of_count = row_of_count
        self.rows, used = _folds.writer_rows(
            groups, batch, control, counts, self.row_of_count, self.rows
        )
        if self.sums.shape != (self.rows, t.capacity):
            grown = np.zeros((self.rows, t.capacity), dtype=np.int64)
            grown[: self.sums.shape[0], : self.sums.shape[1]] = self.sums
            self.sums = grown
        self.seen = _folds.writers_add(
            groups,
            batch,
            np.frombuffer(used, dtype=np.int32),
            sizes,
            timestamps,
            self.seen,
            t["records"],
            t["first_seen"],
            t["first_timestamp"],
            t["last_timestamp"],
            self.sums,
        )

    def result(self, strings: Any) -> WriterShares:
        """Per group in order of first appearance (string ids whose names decode alike are one
        group)."""
        t = self.table
        ids = np.flatnonzero(t["first_seen"] >= 0)
        ids = ids[np.argsort(t["first_seen"][ids], kind="stable")]
        names = decoded_texts(strings, ids, _replaced)
        interner = Interner()
        group = interner.ids(names)
        n = len(interner)

        def merged(column: npt.NDArray[np.int64], how: Any, fill: int) -> npt.NDArray[np.int64]:
            out = np.full(n, fill, dtype=np.int64)
            how.at(out, group, column)
            return out

        known = t["last_timestamp"][ids] >= 0
        lasts = merged(t["last_timestamp"][ids], np.maximum, -1)
        firsts = merged(
            np.where(known, t["first_timestamp"][ids], np.iinfo(np.int64).max),
            np.minimum,
            np.iinfo(np.int64).max,
        )
        return WriterShares(
            tuple(interner.names),
            merged(t["records"][ids], np.add, 0),
            tuple(
                (count, merged(self.sums[int(self.row_of_count[count])][ids], np.add, 0))
                for count in np.flatnonzero(self.row_of_count >= 0).tolist()
            ),
            np.where(lasts >= 0, firsts, -1),
            lasts,
        )


@dataclass
class _FactsBuilder:
    file: str | None
    columns: ColumnSink
    errors: list[DecodeError] = field(default_factory=list)
    records: int = 0
    batches: int = 0
    last_offset: int | None = None
    largest_timestamp: int = -1
    #: the first batch timestamp >= 0, else the last one seen (None: none seen)
    first_timestamp: int | None = None
    producer_batches: list[ProducerBatch] = field(default_factory=list)
    writers: _SegmentWriters = field(default_factory=_SegmentWriters)
    strings: Any = None
    damage: CleanerDamage | None = None
    #: the segment's keys by digest (what ``CleanerColumns.key`` numbers)
    keys: _native.KeyTable = field(default_factory=_native.KeyTable)

    def error(self, error: DecodeError, entries_before: int | None = None) -> None:
        self.errors.append(error)
        if self.damage is None and stops_the_cleaner(error):
            before = self.batches if entries_before is None else entries_before
            self.damage = CleanerDamage(error, before)

    def add(self, chunk: Chunk) -> None:
        b = chunk.batches
        starts = b.continued == 0
        self._control_keys(chunk, starts)
        self.records += len(chunk.records)
        self.batches += int(np.count_nonzero(starts))
        self._stats(chunk, starts)
        self._producers(chunk, starts)
        self._writers(chunk)
        self.columns.add(_cleaner_columns(chunk, self.keys))

    def _control_keys(self, chunk: Chunk, starts: npt.NDArray[np.bool_]) -> None:
        """A control batch whose first record's key Kafka's ``ControlRecordType.parse``
        throws on: the cleaner reads it (``onControlBatchRead``) and fails there."""
        r, b = chunk.records, chunk.batches
        rows = np.flatnonzero(starts & (b.control != 0) & (b.records > 0))
        if not len(rows):
            return
        first = first_records(chunk, rows)
        odd = r.key_status[first] != KeyStatus.CONTROL
        for row, record in zip(rows[odd].tolist(), first[odd].tolist(), strict=True):
            problem = control_key_problem(chunk.key_bytes(record))
            if problem is not None:
                entries_before = self.batches + int(np.count_nonzero(starts[:row]))
                self.error(
                    ControlKeyError(
                        problem, field="control.key", position=int(b.position[row]), file=self.file
                    ),
                    entries_before,
                )

    def _stats(self, chunk: Chunk, starts: npt.NDArray[np.bool_]) -> None:
        """``_scan_batch``: per batch, the last offset and the largest timestamp (the batch
        header's for v2; for a legacy entry its last record's offset and its records' largest
        timestamp), and the first batch timestamp."""
        r, b = chunk.records, chunk.batches
        v2 = b.magic == 2
        candidates = []
        if np.any(v2):
            candidates.append(int(b.last_offset[v2].max()))
            self.largest_timestamp = max(self.largest_timestamp, int(b.max_timestamp[v2].max()))
        legacy_rows = ~v2[r.batch]
        if np.any(legacy_rows):
            self.largest_timestamp = max(
                self.largest_timestamp, int(r.timestamp[legacy_rows].max())
            )
            # a legacy entry's last record, where this chunk holds it
            ends = b.first_record + b.records - chunk.first_record
            whole = ~v2 & (b.records > 0) & (ends <= len(r))
            if np.any(whole):
                candidates.append(int(r.offset[ends[whole] - 1].max()))
        if candidates:
            last = max(candidates)
            self.last_offset = last if self.last_offset is None else max(self.last_offset, last)
        # first batch timestamp: of each starting batch with records, the header's max timestamp
        # (v2) or its first record's timestamp (legacy)
        rows = np.flatnonzero(starts & (b.records > 0))
        if len(rows):
            first_row = first_records(chunk, rows)
            values = np.where(v2[rows], b.max_timestamp[rows], r.timestamp[first_row])
            if self.first_timestamp is None or self.first_timestamp < 0:  # none >= 0 yet
                known = np.flatnonzero(values >= 0)
                self.first_timestamp = int(values[known[0] if len(known) else -1])

    def _producers(self, chunk: Chunk, starts: npt.NDArray[np.bool_]) -> None:
        r, b = chunk.records, chunk.batches
        rows = np.flatnonzero(starts & (b.magic == 2) & (b.producer_id >= 0)).tolist()
        for row in rows:
            controls: tuple[int, ...] = ()
            if b.control[row]:
                mine = (r.batch == row) & (r.key_status == KeyStatus.CONTROL)
                controls = tuple(r.control_type[mine].tolist())
            self.producer_batches.append(
                ProducerBatch(
                    int(b.producer_id[row]),
                    int(b.producer_epoch[row]),
                    int(b.base_offset[row]),
                    int(b.last_offset[row]),
                    bool(b.transactional[row]),
                    bool(b.control[row]),
                    controls,
                    int(b.max_timestamp[row]),
                )
            )

    def _writers(self, chunk: Chunk) -> None:
        """Per record of a non-control batch whose key starts with a group id: the group, the
        batch's size and record count (the share), and the commit time."""
        r, b = chunk.records, chunk.batches
        timestamps = r.timestamp
        missing = np.flatnonzero((timestamps < 0) & (r.group >= 0))
        if len(missing):  # v0 records: the commit time from the value
            timestamps = timestamps.copy()
            status = r.value_status[missing]
            committed = missing[status == ValueStatus.OK]
            timestamps[committed] = r.commit_timestamp[committed]
            # a tombstone has none; other values of offset-commit keys are read from their bytes
            others = missing[
                (status == ValueStatus.DEFERRED) & np.isin(r.key_type[missing], (0, 1))
            ]
            for row in others.tolist():
                timestamps[row] = commit_timestamp_of(chunk.key_bytes(row), chunk.value_bytes(row))
        self.strings = chunk.strings
        self.writers.add(r.group, r.batch, b.control, b.records, b.size, timestamps)

    def result(self, base_offset: int) -> SegmentFacts:
        last = self.last_offset if self.last_offset is not None else base_offset - 1
        stats = SegmentStats(
            records=self.records,
            batches=self.batches,
            last_offset=max(last, base_offset - 1),
            largest_timestamp=self.largest_timestamp,
            first_batch_timestamp=-1 if self.first_timestamp is None else self.first_timestamp,
        )
        return SegmentFacts(
            stats=stats,
            writers=self.writers.result(self.strings),
            producer_batches=tuple(self.producer_batches),
            columns=self.columns.result(),
            key_digests=np.frombuffer(self.keys.digests(), dtype=DIGEST_DTYPE),
            errors=tuple(self.errors),
            damage=self.damage,
        )


def _cleaner_columns(chunk: Chunk, keys: _native.KeyTable) -> CleanerColumns:
    """The cleaner's columns of one chunk: batch indices are the segment's entry ordinals,
    ``batch_first_record`` the segment's record ordinals (records of a segment's chunks, one
    after the other, are numbered by those), key ids those of ``keys``, the segment's."""
    r, b = chunk.records, chunk.batches
    starts = b.continued == 0
    batch_index = b.ordinal[r.batch]
    control_type = _first_control_types(chunk)
    keyed = r.key_size >= 0
    weight = 8 + np.maximum(r.key_size, 0) + np.maximum(r.value_size, 0)
    key = np.empty(len(r), dtype=np.int32)
    keys.ids(np.ascontiguousarray(r.digest), key)  # every digest, a missing key's zero too
    key[~keyed] = -1
    return CleanerColumns(
        offset=r.offset,
        key=key,
        keyed=keyed,
        tombstone=r.value_size < 0,
        weight=weight,
        batch=batch_index.astype(np.int32),
        batch_size=b.size[starts],
        batch_magic=b.magic[starts],
        batch_codec=b.codec[starts],
        batch_control=b.control[starts] != 0,
        batch_transactional=b.transactional[starts] != 0,
        batch_producer_id=b.producer_id[starts],
        batch_producer_epoch=b.producer_epoch[starts],
        batch_last_offset=b.last_offset[starts],
        batch_control_type=control_type[starts],
        batch_first_record=b.first_record[starts],
        batch_records=b.records[starts],
    )


def _first_control_types(chunk: Chunk) -> npt.NDArray[np.int32]:
    """Per batch row: the type of its first control record (``_control_type``)."""
    r, b = chunk.records, chunk.batches
    types = np.full(len(b), NO_CONTROL_RECORD, dtype=np.int32)
    has_records = (b.records > 0) & (b.continued == 0)
    rows = np.flatnonzero(has_records)
    if len(rows):
        first = first_records(chunk, rows)
        decoded = r.key_status[first] == KeyStatus.CONTROL
        types[rows] = np.where(decoded, r.control_type[first].astype(np.int32), UNDECODABLE_CONTROL)
    return types


def first_records(chunk: Chunk, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.int64]:
    """The row of the first record of each of the batch ``rows``: batches that start in this
    chunk and hold records (their records are numbered from the batch's ``first_record``, the
    chunk's from its own)."""
    return chunk.batches.first_record[rows] - chunk.first_record


def join_columns(parts: list[CleanerColumns]) -> CleanerColumns:
    """The columns of consecutive chunks as one segment's."""
    if len(parts) == 1:
        return parts[0]
    arrays: dict[str, Any] = {
        name: np.concatenate([getattr(p, name) for p in parts])
        if parts
        else np.zeros(0, dtype=dtype)
        for name, dtype in COLUMN_DTYPES.items()
    }
    return CleanerColumns(**arrays)


#: Each column's dtype.
COLUMN_DTYPES: Final[dict[str, Any]] = {
    "offset": np.int64,
    "key": np.int32,
    "keyed": np.bool_,
    "tombstone": np.bool_,
    "weight": np.int32,
    "batch": np.int32,
    "batch_size": np.int64,
    "batch_magic": np.int8,
    "batch_codec": np.int8,
    "batch_control": np.bool_,
    "batch_transactional": np.bool_,
    "batch_producer_id": np.int64,
    "batch_producer_epoch": np.int16,
    "batch_last_offset": np.int64,
    "batch_control_type": np.int32,
    "batch_first_record": np.int64,
    "batch_records": np.int32,
}
