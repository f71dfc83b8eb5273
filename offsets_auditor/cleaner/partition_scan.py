"""One read of a partition: what the cleaner needs to know about each segment before it picks
the partition, the producer/transaction state that bounds cleaning, and the columns its passes
read.

The broker keeps this state in memory (segment ``largestTimestamp``, ``nextOffset``, the
producer state manager, the transaction index); from disk we rebuild it from each segment's
:class:`~offsets_auditor.cleaner.segment_facts.SegmentFacts` (order-free, one per segment),
folded here in offset order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from offsets_auditor import _native
from offsets_auditor.cleaner.arrays import Arrays, in_memory
from offsets_auditor.cleaner.damage import CleanerDamage
from offsets_auditor.cleaner.segment_facts import (
    CleanerColumns,
    ProducerBatch,
    SegmentFacts,
    segment_facts,
)
from offsets_auditor.cleaner.windows import WINDOW_RECORDS
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir.model import PartitionDir, Segment
from offsets_auditor.reader.reading import SegmentReader, segment_label
from offsets_auditor.reader.tables import GrowingColumns, Interner

#: Control record type ids (``ControlRecordType``).
ABORT = 0
COMMIT = 1


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """One live segment as the cleaner sees it. ``next_offset`` is ``LogSegment.nextOffset()``:
    the last offset in the file + 1, or the base offset when the file holds no record.
    ``largest_timestamp`` is the largest record timestamp (``-1`` for v0 data), as the broker's
    time index tracks it; ``first_batch_timestamp`` feeds ``max.compaction.lag.ms``."""

    base_offset: int
    next_offset: int
    size: int
    mtime_ms: int
    largest_timestamp: int
    first_batch_timestamp: int
    records: int
    batches: int
    file: str
    path: Path
    #: the first error the cleaner's reads of this segment fail on
    damage: CleanerDamage | None = None
    #: where its offset index's last entry points, when known
    index_last_position: int | None = None


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction (the ``.txnindex`` entry the broker keeps for it)."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class TransactionState:
    """Transactions as the log's producer state manager knows them after reading the log.
    ``ongoing`` maps producer id -> first offset of its open transaction; ``ongoing_since`` to
    the largest timestamp of that transaction's first batch (when it was written, give or take
    the batch's own span; -1 when unknown)."""

    ongoing: dict[int, int] = field(default_factory=dict)
    ongoing_since: dict[int, int] = field(default_factory=dict)
    aborted: list[AbortedTxn] = field(default_factory=list)
    committed: int = 0
    #: producer id -> (last data offset or None, last producer epoch): "last records of
    #: active producers", whose batch the cleaner keeps as an empty batch.
    last_records: dict[int, tuple[int | None, int]] = field(default_factory=dict)

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing.values()) if self.ongoing else None

    def open_for_ms(self, producer_id: int, now_ms: int) -> int | None:
        """How long ``producer_id``'s open transaction has been open at ``now_ms`` (None when
        its first batch has no timestamp)."""
        since = self.ongoing_since.get(producer_id, -1)
        return None if since < 0 else max(now_ms - since, 0)

    def oldest_open_for_ms(self, now_ms: int) -> int | None:
        """How long the transaction holding the last stable offset back has been open."""
        if not self.ongoing:
            return None
        pid = min(self.ongoing, key=lambda p: self.ongoing[p])
        return self.open_for_ms(pid, now_ms)

    def replay(self, batch: ProducerBatch) -> None:
        """One batch with a producer id, as ``ProducerStateManager`` applies it."""
        pid = batch.producer_id
        if batch.control:
            for control in batch.controls:
                first = self.ongoing.pop(pid, None)
                self.ongoing_since.pop(pid, None)
                if control == ABORT and first is not None:
                    self.aborted.append(AbortedTxn(pid, first, batch.last_offset))
                elif control == COMMIT:
                    self.committed += 1
            previous = self.last_records.get(pid, (None, -1))
            self.last_records[pid] = (previous[0], batch.producer_epoch)
            return
        if batch.transactional and pid not in self.ongoing:
            self.ongoing[pid] = batch.base_offset
            self.ongoing_since[pid] = batch.max_timestamp
        self.last_records[pid] = (batch.last_offset, batch.producer_epoch)


@dataclass(slots=True)
class GroupWrites:
    """What one group wrote into a partition: records, bytes (its share of each batch) and
    the first/last record timestamps (-1 when the format has none)."""

    records: int = 0
    bytes: float = 0.0
    first_timestamp: int = -1
    last_timestamp: int = -1

    def commit_rate(self) -> float | None:
        """Records per second between the first and last timestamp, when both are known."""
        if self.first_timestamp < 0 or self.last_timestamp <= self.first_timestamp:
            return None
        return self.records / ((self.last_timestamp - self.first_timestamp) / 1000)


@dataclass(frozen=True, slots=True, eq=False)
class PartitionWriters:
    """Who wrote a partition, per group in order of first appearance (``names``): records,
    bytes (its share of each batch, summed exactly, then rounded once) and the first/last
    record timestamps (-1 when the format has none), as columns: a partition of 200,000 groups
    makes no object per group, only for the few a report names (:meth:`top`)."""

    names: tuple[str, ...] = ()
    records: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    bytes: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    first_timestamp: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    last_timestamp: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.names)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionWriters):
            return NotImplemented
        return self.names == other.names and all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in ("records", "bytes", "first_timestamp", "last_timestamp")
        )

    def writes(self, i: int) -> GroupWrites:
        return GroupWrites(
            int(self.records[i]),
            float(self.bytes[i]),
            int(self.first_timestamp[i]),
            int(self.last_timestamp[i]),
        )

    def total_bytes(self) -> float:
        """The bytes of every group, added in order as Python's ``sum`` adds them."""
        return float(sum(self.bytes.tolist()))

    def top(self, limit: int) -> list[tuple[str, GroupWrites]]:
        """The ``limit`` groups writing most bytes, most first (ties: first to appear first)."""
        ranked = np.argsort(-self.bytes, kind="stable")[:limit].tolist()
        return [(self.names[i], self.writes(i)) for i in ranked]


@dataclass(frozen=True, slots=True)
class PartitionScan:
    """A partition read once. ``columns[i]``/``key_ids[i]`` are segment ``i``'s cleaner
    columns and the dense id of each record's key digest (-1: null key) among the partition's
    ``distinct_keys``."""

    partition: PartitionDir
    segments: tuple[SegmentInfo, ...]
    transactions: TransactionState
    errors: tuple[DecodeError, ...]
    records: int
    log_end_offset: int
    writers: PartitionWriters = field(default_factory=PartitionWriters)
    columns: tuple[CleanerColumns, ...] = ()
    key_ids: tuple[npt.NDArray[np.int32], ...] = ()
    distinct_keys: int = 0

    @property
    def active(self) -> SegmentInfo:
        return self.segments[-1]

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)


def scan_partition(partition: PartitionDir, read: SegmentReader) -> PartitionScan:
    """Read every segment of ``partition`` once (with ``read``) and fold what each holds."""
    return fold_partition(
        partition,
        (
            (
                segment,
                segment_facts(
                    read(partition, segment),
                    segment.base_offset,
                    segment_label(partition, segment),
                ),
            )
            for segment in partition.segments
        ),
    )


def fold_partition(
    partition: PartitionDir,
    facts: Iterable[tuple[Segment, SegmentFacts]],
    arrays: Arrays = in_memory,
) -> PartitionScan:
    """The partition from its segments' facts, given in offset order (the key ids in arrays
    made by ``arrays``)."""
    infos: list[SegmentInfo] = []
    errors: list[DecodeError] = []
    txns = TransactionState()
    writers = _WriterTotals()
    keys = _native.KeyTable()
    columns: list[CleanerColumns] = []
    key_ids: list[npt.NDArray[np.int32]] = []
    total = 0
    for segment, fact in facts:
        stats = fact.stats
        infos.append(
            SegmentInfo(
                base_offset=segment.base_offset,
                next_offset=stats.last_offset + 1
                if stats.last_offset >= segment.base_offset
                else segment.base_offset,
                size=segment.log.size,
                mtime_ms=segment.log.mtime_ms,
                largest_timestamp=stats.largest_timestamp,
                first_batch_timestamp=stats.first_batch_timestamp,
                records=stats.records,
                batches=stats.batches,
                file=segment.log.name,
                path=partition.path / segment.log.name,
                damage=fact.damage,
                index_last_position=fact.index_last_position,
            )
        )
        errors.extend(fact.errors)
        for batch in fact.producer_batches:
            txns.replay(batch)
        writers.add(fact)
        columns.append(fact.columns)
        key_ids.append(_key_ids(keys, fact, arrays))
        total += stats.records
    if infos and infos[-1].damage is not None and infos[-1].damage.error.framing is not None:
        # the tail of the active segment: a running broker's cleaner reads up to the size of
        # what was appended (FileRecords.sizeInBytes, not the file's), and after a crash log
        # recovery truncates a partial tail before the cleaner starts
        infos[-1] = replace(infos[-1], damage=None)
    log_end = infos[-1].next_offset if infos else 0
    return PartitionScan(
        partition,
        tuple(infos),
        txns,
        tuple(errors),
        total,
        log_end,
        writers.result(),
        tuple(columns),
        tuple(key_ids),
        len(keys),
    )


def _key_ids(keys: _native.KeyTable, fact: SegmentFacts, arrays: Arrays) -> npt.NDArray[np.int32]:
    """Each record's key id in the partition (-1: no key): the segment's keys interned in their
    first-seen order (``SegmentFacts.key_digests``), then each record's segment key id mapped
    to it, a window at a time."""
    columns = fact.columns
    partition_id = np.empty(len(fact.key_digests) + 1, dtype=np.int32)
    keys.ids(np.ascontiguousarray(fact.key_digests), partition_id[:-1])
    partition_id[-1] = -1  # what a record without key (segment key id -1) maps to
    ids = arrays(columns.records, np.int32, -1)
    for start in range(0, columns.records, WINDOW_RECORDS):
        window = slice(start, start + WINDOW_RECORDS)
        ids[window] = partition_id[columns.key[window]]
    return ids


class _WriterTotals:
    """Per group, over the segments in order: records, exact byte-share parts, times (a table
    by group id, the groups interned in order of first appearance)."""

    def __init__(self) -> None:
        self.groups = Interner()
        self.table = GrowingColumns(
            {
                "records": (np.int64, 0),
                "first_timestamp": (np.int64, -1),
                "last_timestamp": (np.int64, -1),
            }
        )
        #: records per batch -> per group id, the sum of the sizes of its records' batches
        self.shares: dict[int, npt.NDArray[np.int64]] = {}

    def add(self, fact: SegmentFacts) -> None:
        w = fact.writers
        if not w.groups:
            return
        ids = self.groups.ids(w.groups)
        t = self.table
        t.reserve(len(self.groups))
        t["records"][ids] += w.records
        first = w.first_timestamp
        known = t["first_timestamp"][ids]
        t["first_timestamp"][ids] = np.where(
            first < 0, known, np.where(known < 0, first, np.minimum(known, first))
        )
        last = t["last_timestamp"]
        last[ids] = np.maximum(last[ids], w.last_timestamp)
        for count, sizes in w.shares:
            column = self.shares.get(count)
            if column is None or len(column) < t.capacity:
                grown = np.zeros(t.capacity, dtype=np.int64)
                if column is not None:
                    grown[: len(column)] = column
                column = self.shares[count] = grown
            column[ids] += sizes

    def result(self) -> PartitionWriters:
        """Bytes are each record's share of its batch (batch size / records in it), summed
        exactly and rounded once, so the order segments are read in does not matter: over the
        common denominator ``lcm`` of the record counts, each group's numerator is an integer,
        and its quotient is rounded correctly (as Python's ``int / int``)."""
        n = len(self.groups)
        denominator = math.lcm(*self.shares) if self.shares else 1
        numerators: Any = np.zeros(n, dtype=np.int64)
        bound = sum(int(c[:n].max(initial=0)) * (denominator // k) for k, c in self.shares.items())
        if bound >= 2**63:  # beyond int64: Python integers (numpy's object arrays)
            numerators = numerators.astype(object)
        for count, column in self.shares.items():
            numerators += column[:n].astype(numerators.dtype) * (denominator // count)
        if bound < 2**53 and denominator < 2**53:  # both exact as doubles: one rounding
            shares = numerators.astype(np.float64) / np.float64(denominator)
        else:
            shares = np.array([x / denominator for x in numerators.tolist()], dtype=np.float64)
        t = self.table
        return PartitionWriters(
            tuple(self.groups.names),
            t["records"][:n].copy(),
            shares,
            t["first_timestamp"][:n].copy(),
            t["last_timestamp"][:n].copy(),
        )
