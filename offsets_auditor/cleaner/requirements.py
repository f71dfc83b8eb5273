"""How much offset map a partition needs: the input to the dedupe-buffer recommendation."""

from __future__ import annotations

import numpy as np

from offsets_auditor import _native
from offsets_auditor.cleaner.behaviour import MapEra
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.partition_scan import PartitionScan
from offsets_auditor.cleaner.windows import windows


def needed_entries(scan: PartitionScan, config: CleanerConfig, first_dirty: int, upper: int) -> int:
    """Map entries one thread needs to clean ``[first_dirty, upper)`` in one go.

    - 0.9.0.x: each dirty segment is mapped whole only if the distinct keys mapped so far plus
      its offset span fit (``map.size + segmentSize <= maxDesiredMapSize``), and a segment whose
      span alone does not fit kills the thread; so the need is the largest such sum.
    - 0.10.0+: the distinct keys of the dirty section, plus one when a keyed record follows the
      last new key (a full map stops at the next keyed record, even a duplicate).
    """
    dirty = [
        index
        for index, seg in enumerate(scan.segments)
        if seg.next_offset > first_dirty and seg.base_offset < upper
    ]
    before, last_was_new = distinct_keys(scan, dirty, first_dirty, upper)
    if config.behaviour.map_era == MapEra.SEGMENT_SPAN:
        return max(
            (
                keys + scan.segments[index].next_offset - scan.segments[index].base_offset
                for keys, index in zip(before[:-1], dirty, strict=True)
            ),
            default=0,
        )
    total = before[-1]
    if not total:
        return 0
    return total + (0 if last_was_new else 1)


def distinct_keys(
    scan: PartitionScan, segments: list[int], low: int, high: int
) -> tuple[list[int], bool]:
    """The distinct keys of the records with ``low <= offset < high`` of the non-control
    batches of ``segments`` (indexes into ``scan.segments``): how many there are before each
    segment (and, last, in all), and whether the last such record's key was new."""
    seen = np.zeros(scan.distinct_keys, dtype=np.bool_)
    before: list[int] = []
    total = 0
    last_was_new = False
    for index in segments:
        before.append(total)
        for window in windows(scan.columns[index], scan.key_ids[index]):
            cols, ids = window.columns, window.key_ids
            counted = (
                cols.keyed
                & ~cols.batch_control[cols.batch]
                & (cols.offset >= low)
                & (cols.offset < high)
            )
            keys = np.ascontiguousarray(ids[counted])
            if not len(keys):
                continue
            _, total, last_was_new = _native.map_put(keys, None, seen, None, total, 1 << 62)
    before.append(total)
    return before, last_was_new
