"""The partition as the cleaner's earlier passes left it: which records and batches survive
(one byte per record ordinal), the current size of each original segment, and how cleaned
segments were merged into groups (``Cleaner.groupSegmentsBySize``), with Kafka's
``Log.logSegments(from, to)`` over them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from offsets_auditor.cleaner import fast, lanes
from offsets_auditor.cleaner.partition_scan import PartitionScan, SegmentInfo
from offsets_auditor.records.model import Batch


@dataclass
class LogGroup:
    """A physical segment of the current log: original segments merged by earlier cleans."""

    members: list[int]
    base_offset: int
    mtime_ms: int


@dataclass
class LogState:
    """The partition as earlier passes left it."""

    scan: PartitionScan
    record_start: list[int]
    batch_start: list[int]
    alive: bytearray
    batch_alive: bytearray
    batch_empty: bytearray
    sizes: list[int]
    groups: list[LogGroup] = field(default_factory=list)

    @classmethod
    def of(cls, scan: PartitionScan) -> LogState:
        record_start, batch_start = [], []
        records = batches = 0
        for seg in scan.segments:
            record_start.append(records)
            batch_start.append(batches)
            records += seg.records
            batches += seg.batches
        return cls(
            scan=scan,
            record_start=record_start,
            batch_start=batch_start,
            alive=bytearray(b"\x01" * records),
            batch_alive=bytearray(b"\x01" * batches),
            batch_empty=bytearray(batches),
            sizes=[s.size for s in scan.segments],
            groups=[LogGroup([i], s.base_offset, s.mtime_ms) for i, s in enumerate(scan.segments)],
        )

    @property
    def segments(self) -> tuple[SegmentInfo, ...]:
        return self.scan.segments

    def group_size(self, group: LogGroup) -> int:
        return sum(self.sizes[i] for i in group.members)

    def log_segments(self, start: int, end: int) -> list[LogGroup]:
        """Kafka's ``Log.logSegments(from, to)``: the segments from the one holding ``from``
        (``floorKey``) up to, not including, the first based at or after ``to``."""
        floor = None
        for group in self.groups:
            if group.base_offset <= start:
                floor = group.base_offset
        low = floor if floor is not None else -(2**63)
        return [g for g in self.groups if low <= g.base_offset < end]

    def batches(
        self, index: int, lane: lanes.OrdinalLane | None = None
    ) -> Iterator[tuple[int, int, Batch]]:
        """(batch ordinal, first record ordinal, batch) for the live batches of original
        segment ``index`` that ``lane`` (the C path, see ``cleaner.fast``) did not take."""
        seg = self.segments[index]
        cursor = fast.Cursor(self.batch_start[index], self.record_start[index])
        offer: fast.Lane | None = None
        if lane is not None:
            ordinal_lane = lane

            def offer(view: memoryview, start: int, end: int) -> int:
                return ordinal_lane(view, start, end, cursor)

        label = f"{self.scan.partition.name}/{seg.file}"
        for batch in fast.walk(self.scan.partition.path / seg.file, label, offer):
            b, r = cursor.batch, cursor.record
            cursor.batch += 1
            cursor.record += len(batch.records)
            if self.batch_alive[b]:
                yield b, r, batch
