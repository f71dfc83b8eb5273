"""How much offset map a partition needs: the input to the dedupe-buffer recommendation."""

from __future__ import annotations

from offsets_auditor.cleaner import behaviour
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.partition_scan import PartitionScan, segment_batches


def needed_entries(scan: PartitionScan, config: CleanerConfig, first_dirty: int, upper: int) -> int:
    """Map entries one thread needs to clean ``[first_dirty, upper)`` in one go.

    - 0.9.0.x: each dirty segment is mapped whole only if the distinct keys mapped so far plus
      its offset span fit (``map.size + segmentSize <= maxDesiredMapSize``), and a segment whose
      span alone does not fit kills the thread; so the need is the largest such sum.
    - 0.10.0+: the distinct keys of the dirty section, plus one when a keyed record follows the
      last new key (a full map stops at the next keyed record, even a duplicate).
    """
    era = behaviour.map_era(config.kafka_version)
    keys = OffsetMap(2**62, 1.0)
    need = 0
    last_was_new = False
    for seg in scan.segments:
        if seg.next_offset <= first_dirty or seg.base_offset >= upper:
            continue
        if era == behaviour.MapEra.SEGMENT_SPAN:
            need = max(need, keys.size + seg.next_offset - seg.base_offset)
        for batch in segment_batches(scan.partition, seg):
            if batch.header.is_control:
                continue
            for record in batch.records:
                if record.key is None or not first_dirty <= record.offset < upper:
                    continue
                before = keys.size
                keys.put(record.key, record.offset)
                last_was_new = keys.size > before
    if era == behaviour.MapEra.SEGMENT_SPAN:
        return need
    if not keys.size:
        return 0
    return keys.size + (0 if last_was_new else 1)
