"""One read of a partition: what the cleaner needs to know about each segment before it picks
the partition, and the producer/transaction state that bounds cleaning.

The broker keeps this state in memory (segment ``largestTimestamp``, ``nextOffset``, the
producer state manager, the transaction index); from disk we rebuild it by reading every
segment once.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from offsets_auditor.cleaner import fast
from offsets_auditor.cleaner.offset_map import KeySet
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir import PartitionDir, Segment
from offsets_auditor.records.control import decode_control
from offsets_auditor.records.model import Batch


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


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction (the ``.txnindex`` entry the broker keeps for it)."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class TransactionState:
    """Transactions as the log's producer state manager knows them after reading the log.
    ``ongoing`` maps producer id -> first offset of its open transaction."""

    ongoing: dict[int, int] = field(default_factory=dict)
    aborted: list[AbortedTxn] = field(default_factory=list)
    committed: int = 0
    #: producer id -> (last data offset or None, last producer epoch): "last records of
    #: active producers", whose batch the cleaner keeps as an empty batch.
    last_records: dict[int, tuple[int | None, int]] = field(default_factory=dict)

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing.values()) if self.ongoing else None


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


_KEY_PREFIX = struct.Struct(">hh")


def group_of_key(key: bytes | None) -> str | None:
    """The group id a ``__consumer_offsets`` key starts with. Every key type (0-23) begins with
    ``int16 type`` then the group id as a non-flexible ``string`` (docs/kafka-internals.md §2.2,
    §2.6), so this needs no full decode."""
    if key is None or len(key) < 4:
        return None
    _, length = _KEY_PREFIX.unpack_from(key)
    if length < 0 or 4 + length > len(key):
        return None
    return key[4 : 4 + length].decode("utf-8", "replace")


_INT16 = struct.Struct(">h")
_INT64 = struct.Struct(">q")


def commit_timestamp_of(key: bytes | None, value: bytes | None) -> int:
    """The ``commitTimestamp`` of an offset-commit value (key types 0/1, value v0-v4), or -1.
    Used for v0 messages, which carry no record timestamp (§2.3 field order)."""
    if key is None or value is None or len(key) < 2 or len(value) < 10:
        return -1
    if _INT16.unpack_from(key)[0] not in (0, 1):
        return -1
    version = _INT16.unpack_from(value)[0]
    pos = 2 + 8 + (4 if version >= 3 else 0)
    if version <= 3:
        if pos + 2 > len(value):
            return -1
        pos += 2 + max(_INT16.unpack_from(value, pos)[0], 0)
    elif version == 4:
        length, shift = 0, 0
        while pos < len(value):
            byte = value[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        pos += max(length - 1, 0)
    else:
        return -1
    return _INT64.unpack_from(value, pos)[0] if pos + 8 <= len(value) else -1


@dataclass(frozen=True, slots=True)
class PartitionScan:
    partition: PartitionDir
    segments: tuple[SegmentInfo, ...]
    transactions: TransactionState
    errors: tuple[DecodeError, ...]
    records: int
    log_end_offset: int
    writers: dict[str, GroupWrites] = field(default_factory=dict)

    @property
    def active(self) -> SegmentInfo:
        return self.segments[-1]

    @property
    def size_bytes(self) -> int:
        return sum(s.size for s in self.segments)


def segment_batches(
    partition: PartitionDir, segment: SegmentInfo | Segment, errors: list[DecodeError] | None = None
) -> Iterator[Batch]:
    """The decodable batches of one segment, in order; problems go to ``errors``."""
    path, label = _where(partition, segment)
    return fast.walk(path, label, None, errors)


def _where(partition: PartitionDir, segment: SegmentInfo | Segment) -> tuple[Path, str]:
    path = partition.path / (segment.file if isinstance(segment, SegmentInfo) else segment.log.name)
    return path, f"{partition.name}/{path.name}"


@dataclass(slots=True)
class _SegmentStats:
    """What the scan learns about one segment while reading it."""

    last: int
    largest: int = -1
    first_ts: int = -1
    records: int = 0
    batches: int = 0


class _Writers:
    """Per group writes: a dict of :class:`GroupWrites`, or the C table when it is in use (the
    C lane adds to it directly; the same additions in the same order either way)."""

    def __init__(self, accelerate: bool) -> None:
        self.table = fast.C.WriterTable() if accelerate else None
        self.writers: dict[str, GroupWrites] = {}

    def add(self, group: str, share: float, ts: int) -> None:
        if self.table is not None:
            self.table.add(group, share, ts)
            return
        w = self.writers.get(group)
        if w is None:
            w = self.writers[group] = GroupWrites()
        w.records += 1
        w.bytes += share
        if ts >= 0:
            if w.first_timestamp < 0 or ts < w.first_timestamp:
                w.first_timestamp = ts
            w.last_timestamp = max(w.last_timestamp, ts)

    def result(self) -> dict[str, GroupWrites]:
        if self.table is None:
            return self.writers
        return {g: GroupWrites(n, b, first, last) for g, n, b, first, last in self.table.items()}


def scan_partition(partition: PartitionDir) -> PartitionScan:
    """Read every segment of ``partition`` once."""
    errors: list[DecodeError] = []
    infos: list[SegmentInfo] = []
    txns = TransactionState()
    writers = _Writers(fast.enabled())
    total = 0
    for segment in partition.segments:
        stats = _SegmentStats(last=segment.base_offset - 1)
        path, label = _where(partition, segment)
        lane = _scan_lane(stats, writers.table) if writers.table is not None else None
        for batch in fast.walk(path, label, lane, errors):
            _scan_batch(batch, stats, txns, writers)
        total += stats.records
        last = stats.last
        infos.append(
            SegmentInfo(
                base_offset=segment.base_offset,
                next_offset=last + 1 if last >= segment.base_offset else segment.base_offset,
                size=segment.log.size,
                mtime_ms=segment.log.mtime_ms,
                largest_timestamp=stats.largest,
                first_batch_timestamp=stats.first_ts,
                records=stats.records,
                batches=stats.batches,
                file=segment.log.name,
                path=path,
            )
        )
    log_end = infos[-1].next_offset if infos else 0
    return PartitionScan(
        partition, tuple(infos), txns, tuple(errors), total, log_end, writers.result()
    )


def _scan_lane(stats: _SegmentStats, table: fast.C.WriterTable) -> fast.Lane:
    def lane(view: memoryview, start: int, end: int) -> int:
        next_rel, batches, records, stats.first_ts, stats.largest, stats.last = fast.C.scan_window(
            view, start, end, table, stats.first_ts, stats.largest, stats.last
        )
        stats.batches += batches
        stats.records += records
        return next_rel

    return lane


def _scan_batch(
    batch: Batch, stats: _SegmentStats, txns: TransactionState, writers: _Writers
) -> None:
    header = batch.header
    stats.batches += 1
    stats.records += len(batch.records)
    if stats.first_ts < 0 and batch.records:
        stats.first_ts = header.max_timestamp if header.magic == 2 else batch.records[0].timestamp
    if header.magic == 2:
        stats.largest = max(stats.largest, header.max_timestamp)
        stats.last = max(stats.last, header.last_offset)
    elif batch.records:
        stats.largest = max(stats.largest, max(r.timestamp for r in batch.records))
        stats.last = max(stats.last, batch.records[-1].offset)
    _track_transactions(batch, txns)
    if not header.is_control and batch.records:
        share = header.size / len(batch.records)
        for record in batch.records:
            group = group_of_key(record.key)
            if group is None:
                continue
            ts = record.timestamp
            if ts < 0:
                ts = commit_timestamp_of(record.key, record.value)
            writers.add(group, share, ts)


def distinct_keys(
    partition: PartitionDir,
    segments: list[SegmentInfo],
    low: int,
    high: int,
    limit: int = 0,
) -> tuple[list[int], bool]:
    """The distinct keys of the records with ``low <= offset < high`` of the non-control
    batches of ``segments``: how many there are before each segment (and, last, in all), and
    whether the last such record's key was new.

    With the C extension the digests are kept in at most ``limit`` bytes (0: no limit): when
    they do not fit, they are counted part by part (by digest), one sweep of the segments per
    part, so the memory stays that of the offset map being advised on."""
    parts = 1
    while True:
        counted = _count_keys(partition, segments, low, high, limit, parts)
        if counted is not None:
            return counted
        parts *= 2


def _count_keys(
    partition: PartitionDir,
    segments: list[SegmentInfo],
    low: int,
    high: int,
    limit: int,
    parts: int,
) -> tuple[list[int], bool] | None:
    before = [0] * (len(segments) + 1)
    last_was_new = False
    for part in range(parts):
        keys = KeySet(limit, parts, part)
        # number the in-range keyed records: the part holding the last one says if it was new
        sweep = [0, -1, 0]  # next number, number of the last one added, was it new
        for index, seg in enumerate(segments):
            before[index] += keys.size
            if not _add_keys(partition, seg, keys, low, high, sweep):
                return None
        before[-1] += keys.size
        if sweep[1] >= 0 and sweep[1] == sweep[0] - 1:
            last_was_new = bool(sweep[2])
    return before, last_was_new


def _add_keys(
    partition: PartitionDir,
    segment: SegmentInfo,
    keys: KeySet,
    low: int,
    high: int,
    sweep: list[int],
) -> bool:
    """One segment of a sweep; False when the part's keys did not fit."""
    path, label = _where(partition, segment)
    lane: fast.Lane | None = None
    digests = keys.c_set
    if digests is not None:

        def lane(view: memoryview, start: int, end: int) -> int:
            next_rel, sweep[0], added, new = fast.C.needed_window(
                view, start, end, digests, low, high, sweep[0]
            )
            if added >= 0:
                sweep[1], sweep[2] = added, new
            if digests.overflowed:
                raise _Overflowed
            return next_rel

    try:
        for batch in fast.walk(path, label, lane):
            if batch.header.is_control:
                continue
            for record in batch.records:
                if record.key is None or not low <= record.offset < high:
                    continue
                number = sweep[0]
                sweep[0] += 1
                new = keys.add(record.key)
                if new >= 0:
                    sweep[1], sweep[2] = number, new
            if keys.overflowed:
                return False
    except _Overflowed:
        return False
    return not keys.overflowed


class _Overflowed(Exception):
    """A sweep's part did not fit: the walk stops there."""


def _track_transactions(batch: Batch, txns: TransactionState) -> None:
    """Replay one batch into the producer state (``ProducerStateManager`` semantics)."""
    header = batch.header
    if header.magic < 2 or header.producer_id < 0:
        return
    pid = header.producer_id
    if header.is_control:
        for record in batch.records:
            try:
                control = decode_control(record.key, record.value)
            except DecodeError:
                continue
            first = txns.ongoing.pop(pid, None)
            if control.type == "abort" and first is not None:
                txns.aborted.append(AbortedTxn(pid, first, header.last_offset))
            elif control.type == "commit":
                txns.committed += 1
        previous = txns.last_records.get(pid, (None, -1))
        txns.last_records[pid] = (previous[0], header.producer_epoch)
        return
    if header.is_transactional and pid not in txns.ongoing:
        txns.ongoing[pid] = header.base_offset
    txns.last_records[pid] = (header.last_offset, header.producer_epoch)
