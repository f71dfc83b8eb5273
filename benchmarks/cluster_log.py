"""One ``__consumer_offsets`` partition of the benchmark cluster written as a Kafka 2.x leader
writes it: v2 batches of offset commits, segments rolled at ``offsets.topic.segment.bytes``, an
offset index and a time index per segment.

Batches: one uncompressed v2 batch per commit request, no producer id, as the group coordinator
of 2.1+ appends them (``GroupMetadataManager.storeOffsets``); records and values exactly as
``benchmarks/generate.py`` ``default_batches`` builds them (OffsetCommitValue v3, v1 when the
client set a retention time; expiration tombstones with a null value).

Indexes (2.3.0 ``LogSegment.append``, ``onBecomeInactiveSegment``, ``close``): before a batch is
appended, if more than ``log.index.interval.bytes`` (4096) bytes were appended since the last
entry, the offset index gets (batch's last offset - base offset, the batch's position) and the
time index ``maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar)``; when the segment is
rolled or the broker shuts down cleanly the time index gets that entry once more (it is appended
only if its timestamp is larger than the last entry's) and both are trimmed to their entries.
``offsetOfMaxTimestampSoFar`` is the first record of the batch that raised the maximum: the
coordinator writes with CreateTime, every record of a commit has the same timestamp, and
``LogValidator`` keeps the first record with a strictly larger one. Followers index at their own
fetch boundaries; here every replica has the leader's files (see ``benchmarks/cluster.py``).
"""

from __future__ import annotations

import os
import random
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from crc32c import crc32c

from benchmarks.cluster_groups import Group
from benchmarks.generate import (
    _METADATA,
    _SMALL_VARINTS,
    BATCH_CRC,
    BATCH_HEAD,
    BATCH_REST,
    RETENTION_MS,
    VALUE_V1_HEAD,
    VALUE_V1_TAIL,
    VALUE_V3_HEAD,
    VALUE_V3_TAIL,
)

#: ``log.index.interval.bytes`` default.
INDEX_INTERVAL_BYTES = 4096
#: ``.index`` entry (relativeOffset, position) and ``.timeindex`` entry (timestamp, relativeOffset).
OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")
#: The v2 batch header: everything before the first record.
BATCH_OVERHEAD = BATCH_HEAD.size + BATCH_CRC.size + BATCH_REST.size
#: A commit request commits one member's assignment: at most this many partitions.
MAX_COMMIT_PARTITIONS = 20
#: The share of commit requests that are offset expirations (tombstones) or v1 values.
TOMBSTONE_SHARE = 0.03
VALUE_V1_SHARE = 0.08
_TOMBSTONE_TAIL = b"\x01\x00"  # value length varint(-1), no headers


def _varint(n: int) -> bytes:
    return _SMALL_VARINTS[n]


def commit_batch(
    base_offset: int,
    timestamp: int,
    leader_epoch: int,
    keys: Sequence[bytes],
    committed: Sequence[int] | None,
    metadata: bytes = b"",
    value_version: int = 3,
) -> bytes:
    """One commit request as a v2 batch. ``keys`` are length-prefixed keys (varint length +
    OffsetCommitKey bytes); ``committed`` the offsets, or None for expiration tombstones."""
    records: list[bytes] = []
    if committed is None:
        for delta, key in enumerate(keys):
            d = _varint(delta)
            records.append(_varint(4 + len(d) + len(key)) + b"\x00\x00" + d + key + _TOMBSTONE_TAIL)
    else:
        if value_version == 1:
            tail = metadata + VALUE_V1_TAIL.pack(timestamp, timestamp + RETENTION_MS)
            head, first = VALUE_V1_HEAD, 1
        else:
            tail = metadata + VALUE_V3_TAIL.pack(timestamp)
            head, first = VALUE_V3_HEAD, 3
        size = len(tail) + head.size
        value_size = _varint(size)
        fixed = 3 + len(value_size) + size  # attributes, timestampDelta, headers + value
        for delta, (key, offset) in enumerate(zip(keys, committed, strict=True)):
            d = _varint(delta)
            value = (
                head.pack(1, offset, len(metadata))
                if first == 1
                else head.pack(3, offset, leader_epoch, len(metadata))
            )
            records.append(
                b"".join(
                    (_varint(fixed + len(d) + len(key)), b"\x00\x00", d, key, value_size, value)
                )
                + tail
                + b"\x00"
            )
    body = b"".join(records)
    count = len(keys)
    rest = BATCH_REST.pack(0, count - 1, timestamp, timestamp, -1, -1, -1, count)
    crc = crc32c(body, crc32c(rest))
    return b"".join(
        (
            BATCH_HEAD.pack(base_offset, BATCH_OVERHEAD - 12 + len(body), leader_epoch, 2),
            BATCH_CRC.pack(crc),
            rest,
            body,
        )
    )


# -- who commits ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Commit:
    """A commit request: ``size`` consecutive keys of group ``group`` from key ``first``."""

    group: int
    first: int
    size: int
    tombstone: bool


@dataclass
class Committers:
    """The groups of one partition with their keys, committed offsets and which offsets are live
    (a bit per key), so that what a coordinator would load is known exactly."""

    groups: Sequence[Group]
    rng: random.Random
    keys: list[list[bytes]] = field(init=False)
    offsets: list[list[int]] = field(init=False)
    live: list[int] = field(init=False)
    _cumulative: list[float] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = [[_varint(len(k)) + k for k in g.commit_keys()] for g in self.groups]
        self.offsets = [[self.rng.randint(0, 5_000_000) for _ in k] for k in self.keys]
        self.live = [0] * len(self.groups)
        # a skewed choice: the group of rank r commits (r + 1)^-0.8 as often (busy ones, a tail)
        ranks = list(range(len(self.groups)))
        self.rng.shuffle(ranks)
        total = 0.0
        self._cumulative = []
        for r in ranks:
            total += (r + 1) ** -0.8
            self._cumulative.append(total)

    def every_assignment(self) -> list[Commit]:
        """Each group's keys once, split into members' assignments, in a random order."""
        out = []
        for g, keys in enumerate(self.keys):
            first = 0
            while first < len(keys):
                size = min(len(keys) - first, self.rng.randint(1, MAX_COMMIT_PARTITIONS))
                out.append(Commit(g, first, size, False))
                first += size
        self.rng.shuffle(out)
        return out

    def busy(self) -> Iterator[Commit]:
        """Endless commit requests, busy groups more often; some are expirations."""
        rng, groups = self.rng, range(len(self.groups))
        while True:
            for g in rng.choices(groups, cum_weights=self._cumulative, k=1024):
                n = len(self.keys[g])
                size = min(n, rng.randint(1, MAX_COMMIT_PARTITIONS))
                yield Commit(g, rng.randrange(n - size + 1), size, rng.random() < TOMBSTONE_SHARE)

    def batch(self, commit: Commit, base_offset: int, timestamp: int, leader_epoch: int) -> bytes:
        """``commit`` as a batch at ``base_offset``: committed offsets advance, liveness kept."""
        g, first, size = commit.group, commit.first, commit.size
        keys = self.keys[g][first : first + size]
        bits = ((1 << size) - 1) << first
        if commit.tombstone:
            self.live[g] &= ~bits
            return commit_batch(base_offset, timestamp, leader_epoch, keys, None)
        offsets = self.offsets[g]
        for i in range(first, first + size):
            offsets[i] += self.rng.randint(1, 500)
        self.live[g] |= bits
        metadata = b"" if self.rng.random() < 0.85 else self.rng.choice(_METADATA).encode()
        version = 1 if self.rng.random() < VALUE_V1_SHARE else 3
        committed = offsets[first : first + size]
        return commit_batch(
            base_offset, timestamp, leader_epoch, keys, committed, metadata, version
        )

    def live_groups(self) -> int:
        return sum(1 for bits in self.live if bits)

    def live_offsets(self) -> int:
        return sum(bits.bit_count() for bits in self.live)


# -- the files -----------------------------------------------------------------------------------


@dataclass
class _Segment:
    base_offset: int
    log: BinaryIO
    size: int = 0
    since_index: int = 0
    max_timestamp: int = -1
    offset_of_max: int = -1
    offset_index: bytearray = field(default_factory=bytearray)
    time_index: bytearray = field(default_factory=bytearray)
    last_time_entry: int = -1

    def maybe_time_entry(self) -> None:
        if self.max_timestamp > self.last_time_entry:
            self.time_index += TIME_ENTRY.pack(
                self.max_timestamp, self.offset_of_max - self.base_offset
            )
            self.last_time_entry = self.max_timestamp


@dataclass(frozen=True, slots=True)
class SegmentWritten:
    base_offset: int
    size: int
    max_timestamp: int


class PartitionWriter:
    """Appends batches to a partition dir as a broker does: rolls, indexes, file names."""

    def __init__(self, path: Path, segment_bytes: int) -> None:
        self.path = path
        self.segment_bytes = segment_bytes
        self.segments: list[SegmentWritten] = []
        self.next_offset = 0
        self.records = 0
        self.batches = 0
        self._current: _Segment | None = None
        self._pending: list[bytes] = []
        path.mkdir(parents=True, exist_ok=True)

    @property
    def active_base_offset(self) -> int:
        return self._current.base_offset if self._current else self.next_offset

    def append(self, batch: bytes, base_offset: int, records: int, timestamp: int) -> None:
        segment = self._current
        if segment is None or (segment.size and segment.size + len(batch) > self.segment_bytes):
            segment = self.roll(base_offset)
        last_offset = base_offset + records - 1
        if timestamp > segment.max_timestamp:
            segment.max_timestamp, segment.offset_of_max = timestamp, base_offset
        if segment.since_index > INDEX_INTERVAL_BYTES:
            segment.offset_index += OFFSET_ENTRY.pack(
                last_offset - segment.base_offset, segment.size
            )
            segment.maybe_time_entry()
            segment.since_index = 0
        segment.since_index += len(batch)
        segment.size += len(batch)
        self._pending.append(batch)
        if len(self._pending) >= 2048:
            self._flush()
        self.next_offset = last_offset + 1
        self.records += records
        self.batches += 1

    def roll(self, base_offset: int) -> _Segment:
        """Close the current segment (if any) and start one at ``base_offset``."""
        self._close_current()
        log = (self.path / f"{base_offset:020d}.log").open("wb")
        self._current = _Segment(base_offset, log)
        self.next_offset = max(self.next_offset, base_offset)
        return self._current

    def close(self) -> None:
        self._close_current()

    def _flush(self) -> None:
        if self._current is not None and self._pending:
            self._current.log.write(b"".join(self._pending))
        self._pending.clear()

    def _close_current(self) -> None:
        segment = self._current
        if segment is None:
            return
        self._flush()
        segment.log.close()
        segment.maybe_time_entry()
        stem = self.path / f"{segment.base_offset:020d}"
        stem.with_suffix(".index").write_bytes(segment.offset_index)
        stem.with_suffix(".timeindex").write_bytes(segment.time_index)
        if segment.max_timestamp >= 0:  # the last append, as the files' modification time
            seconds = segment.max_timestamp / 1000
            for suffix in (".log", ".index", ".timeindex"):
                os.utime(stem.with_suffix(suffix), (seconds, seconds))
        self.segments.append(
            SegmentWritten(segment.base_offset, segment.size, segment.max_timestamp)
        )
        self._current = None
