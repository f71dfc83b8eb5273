"""The partition as the cleaner's earlier passes left it: which records and batches survive
(one flag per record and per batch of each original segment), the current size of each original
segment, and how cleaned segments were merged into groups (``Cleaner.groupSegmentsBySize``),
with Kafka's ``Log.logSegments(from, to)`` over them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from offsets_auditor.cleaner.arrays import Arrays, in_memory
from offsets_auditor.cleaner.partition_scan import PartitionScan, SegmentInfo
from offsets_auditor.cleaner.windows import Window, windows


@dataclass
class LogGroup:
    """A physical segment of the current log: original segments merged by earlier cleans."""

    members: list[int]
    base_offset: int
    mtime_ms: int


@dataclass(frozen=True, slots=True)
class LiveWindow:
    """A window of an original segment (``cleaner.windows``) with its views of the survivor
    flags, which the passes update in place."""

    window: Window
    alive: npt.NDArray[np.bool_]
    batch_alive: npt.NDArray[np.bool_]


@dataclass
class LogState:
    """The partition as earlier passes left it. ``alive[i]``/``batch_alive[i]``: which records
    and batches of original segment ``i`` survive (a batch may survive with no record: the
    empty batch kept for a producer's last sequence)."""

    scan: PartitionScan
    alive: list[npt.NDArray[np.bool_]]
    batch_alive: list[npt.NDArray[np.bool_]]
    sizes: list[int]
    groups: list[LogGroup] = field(default_factory=list)

    @classmethod
    def of(cls, scan: PartitionScan, arrays: Arrays = in_memory) -> LogState:
        """Before any pass: everything survives (the flags made by ``arrays``)."""
        return cls(
            scan=scan,
            alive=[arrays(c.records, np.bool_, True) for c in scan.columns],
            batch_alive=[arrays(c.batches, np.bool_, True) for c in scan.columns],
            sizes=[s.size for s in scan.segments],
            groups=[LogGroup([i], s.base_offset, s.mtime_ms) for i, s in enumerate(scan.segments)],
        )

    def windows(self, index: int) -> Iterator[LiveWindow]:
        """Original segment ``index`` in windows of whole batches, in order."""
        scan = self.scan
        for window in windows(scan.columns[index], scan.key_ids[index]):
            yield LiveWindow(
                window, self.alive[index][window.records], self.batch_alive[index][window.batches]
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
