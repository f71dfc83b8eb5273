"""How much offset map a partition needs: the input to the dedupe-buffer recommendation."""

from __future__ import annotations

from offsets_auditor.cleaner import behaviour
from offsets_auditor.cleaner.capacity import BYTES_PER_ENTRY, slots
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.partition_scan import PartitionScan, distinct_keys


def needed_entries(scan: PartitionScan, config: CleanerConfig, first_dirty: int, upper: int) -> int:
    """Map entries one thread needs to clean ``[first_dirty, upper)`` in one go.

    - 0.9.0.x: each dirty segment is mapped whole only if the distinct keys mapped so far plus
      its offset span fit (``map.size + segmentSize <= maxDesiredMapSize``), and a segment whose
      span alone does not fit kills the thread; so the need is the largest such sum.
    - 0.10.0+: the distinct keys of the dirty section, plus one when a keyed record follows the
      last new key (a full map stops at the next keyed record, even a duplicate).
    """
    era = behaviour.map_era(config.kafka_version)
    dirty = [
        seg for seg in scan.segments if seg.next_offset > first_dirty and seg.base_offset < upper
    ]
    # counted within the memory of the offset map being advised on (see distinct_keys)
    limit = slots(config.memory_per_thread) * BYTES_PER_ENTRY
    before, last_was_new = distinct_keys(scan.partition, dirty, first_dirty, upper, limit)
    if era == behaviour.MapEra.SEGMENT_SPAN:
        return max(
            (
                keys + seg.next_offset - seg.base_offset
                for keys, seg in zip(before[:-1], dirty, strict=True)
            ),
            default=0,
        )
    total = before[-1]
    if not total:
        return 0
    return total + (0 if last_was_new else 1)
