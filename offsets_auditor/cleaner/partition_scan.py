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

from offsets_auditor import fs
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir import PartitionDir, Segment
from offsets_auditor.records.control import decode_control
from offsets_auditor.records.log_file import read_batches
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
    path = partition.path / (segment.file if isinstance(segment, SegmentInfo) else segment.log.name)
    label = f"{partition.name}/{path.name}"
    with fs.ReadOnlyFile(path) as source:
        for item in read_batches(source, file=label):
            if isinstance(item, DecodeError):
                if errors is not None:
                    errors.append(item)
                continue
            yield item


def scan_partition(partition: PartitionDir) -> PartitionScan:
    """Read every segment of ``partition`` once."""
    errors: list[DecodeError] = []
    infos: list[SegmentInfo] = []
    txns = TransactionState()
    writers: dict[str, GroupWrites] = {}
    total = 0
    for segment in partition.segments:
        largest = -1
        first_ts = -1
        last = segment.base_offset - 1
        records = batches = 0
        for batch in segment_batches(partition, segment, errors):
            header = batch.header
            batches += 1
            records += len(batch.records)
            if first_ts < 0 and batch.records:
                first_ts = header.max_timestamp if header.magic == 2 else batch.records[0].timestamp
            if header.magic == 2:
                largest = max(largest, header.max_timestamp)
                last = max(last, header.last_offset)
            elif batch.records:
                largest = max(largest, max(r.timestamp for r in batch.records))
                last = max(last, batch.records[-1].offset)
            _track_transactions(batch, txns)
            if not header.is_control and batch.records:
                share = header.size / len(batch.records)
                for record in batch.records:
                    group = group_of_key(record.key)
                    if group is None:
                        continue
                    w = writers.get(group)
                    if w is None:
                        w = writers[group] = GroupWrites()
                    w.records += 1
                    w.bytes += share
                    ts = record.timestamp
                    if ts < 0:
                        ts = commit_timestamp_of(record.key, record.value)
                    if ts >= 0:
                        if w.first_timestamp < 0 or ts < w.first_timestamp:
                            w.first_timestamp = ts
                        w.last_timestamp = max(w.last_timestamp, ts)
        total += records
        infos.append(
            SegmentInfo(
                base_offset=segment.base_offset,
                next_offset=last + 1 if last >= segment.base_offset else segment.base_offset,
                size=segment.log.size,
                mtime_ms=segment.log.mtime_ms,
                largest_timestamp=largest,
                first_batch_timestamp=first_ts,
                records=records,
                batches=batches,
                file=segment.log.name,
                path=partition.path / segment.log.name,
            )
        )
    log_end = infos[-1].next_offset if infos else 0
    return PartitionScan(partition, tuple(infos), txns, tuple(errors), total, log_end, writers)


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
