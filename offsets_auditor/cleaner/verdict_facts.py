"""The :class:`~offsets_auditor.cleaner.verdict.Facts` of one partition, from the emulation's
own numbers: its passes (``PassResult``), the selections before and after them (``Selection``)
and the segments as read (``SegmentInfo``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from offsets_auditor.cleaner.capacity import buffer_for, max_desired_map_size
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.partition_scan import SegmentInfo
from offsets_auditor.cleaner.passes import PassResult
from offsets_auditor.cleaner.selection import Selection
from offsets_auditor.cleaner.verdict import Facts


def records_between(segments: Sequence[SegmentInfo], start: int, end: int) -> tuple[int, bool]:
    """Records with offsets in ``[start, end)``, and whether the count is exact: a segment cut
    by a bound is counted one record per offset when it has no offset gaps (never cleaned),
    else as at most that many."""
    total, exact = 0, True
    for seg in segments:
        if seg.next_offset <= start or seg.base_offset >= end or not seg.records:
            continue
        if seg.base_offset >= start and seg.next_offset <= end:
            total += seg.records
            continue
        low, high = max(start, seg.base_offset), min(end, seg.next_offset)
        if seg.records == seg.next_offset - seg.base_offset:
            total += high - low
        else:
            total += min(seg.records, high - low)
            exact = False
    return total, exact


def emulated_facts(
    base: Facts,
    config: CleanerConfig,
    segments: Sequence[SegmentInfo],
    initial: Selection,
    passes: Sequence[PassResult],
    selections: Sequence[Selection],
    needed_entries: int,
) -> Facts:
    """``base`` (thread deaths, failures, the first selection) completed with what the passes
    did: where they ran, where the map filled, what is left and the buffer that would do it
    in one pass. ``selections`` holds one more than ``passes``: the one that ended the loop."""
    capacity = max_desired_map_size(config.memory_per_thread, config.load_factor)
    cleaned_to = passes[-1].end_offset if passes else None
    dirty_end = passes[0].upper_bound if passes else initial.uncleanable_segment_base
    remaining, exact = (0, True)
    if cleaned_to is not None and cleaned_to < dirty_end:
        remaining, exact = records_between(segments, cleaned_to, dirty_end)
    after = selections[len(passes)] if len(selections) > len(passes) else None
    fix = None
    if needed_entries > capacity:
        advice = buffer_for(needed_entries, config.threads, config.load_factor)
        fix = advice.dedupe_buffer_size if advice.possible else None
    return replace(
        base,
        clean_bytes=initial.clean_bytes,
        dirty_start=initial.first_dirty,
        dirty_end=dirty_end,
        first_uncleanable=initial.first_uncleanable,
        cleaned_to=cleaned_to,
        map_filled_at=tuple(p.end_offset for p in passes if p.map_full),
        map_entries=passes[0].map_entries if passes else 0,
        capacity=capacity,
        remaining_records=remaining,
        remaining_exact=exact,
        ratio_after=None if after is None else after.ratio,
        eligible_after=bool(after is not None and after.eligible),
        needed_entries=needed_entries,
        fix_buffer=fix,
    )
