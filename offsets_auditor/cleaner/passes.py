"""Run the log cleaner over one partition, pass after pass, as the broker would.

Each pass is Kafka's ``Cleaner.clean``: build the offset map from the first dirty offset
(``buildOffsetMap``), then rewrite every segment below the map's end through the retention
filter (``cleanSegments``/``cleanInto``), then move the checkpoint to the map's end. The
rewritten log is kept as survivor flags over the original segments' records and batches
(``LogState``), so later passes see what earlier ones left.

The rules run over each segment's columns (``PartitionScan.columns``): the per-record rules
with numpy, the transaction bookkeeping batch by batch for the batches it concerns
(transactional and control batches, and those of producers). The building of the map is in
:mod:`offsets_auditor.cleaner.map_building`, the retention filter in
:mod:`offsets_auditor.cleaner.retention`.

Sources: 0.9.0.1, 0.10.0.1, 2.3.0 and 2.5.0 ``core/src/main/scala/kafka/log/LogCleaner.scala``
and ``LogCleanerManager.scala``; 2.3.0 ``clients/.../record/MemoryRecords.java`` (``filterTo``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from offsets_auditor.cleaner.arrays import Arrays, FileArrays, in_memory
from offsets_auditor.cleaner.behaviour import CleanerBehaviour, MapEra
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.cores import ONE_CORE, Cores, balanced_runs
from offsets_auditor.cleaner.damage import CleanerDamage, exception_at, read_buffers
from offsets_auditor.cleaner.log_state import LogGroup, LogState
from offsets_auditor.cleaner.map_building import (
    MapFailure,
    MapStop,
    map_partial,
    map_whole_segments,
)
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.partition_scan import AbortedTxn, PartitionScan
from offsets_auditor.cleaner.retention import PassCounters, clean_window, merged_counters
from offsets_auditor.cleaner.selection import Selection, select
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata
from offsets_auditor.constants import INT_MAX

MAX_PASSES = 100_000


@dataclass(frozen=True, slots=True)
class CleanerFailure:
    """An exception the cleaner throws for this partition, in Kafka's words. Up to 2.0.x it
    kills the cleaner thread (``kills_thread``); from 2.1.0 the partition is marked
    uncleanable instead."""

    message: str
    pass_number: int
    kills_thread: bool
    #: the damaged bytes it failed on, if that is why
    damage: CleanerDamage | None = None


@dataclass(frozen=True, slots=True)
class PassResult:
    """One cleaning of the partition.

    ``start_offset``/``end_offset``: the dirty section this pass covers, ``[start, end)``;
    ``end_offset`` becomes the checkpoint and the next pass's start. ``upper_bound`` is the end
    of the range the broker logs in "Building offset map ... in offset range [start, upper)".
    ``start_records``/``end_records`` are what the broker logs as "Start size"/"End size"
    (messages); bytes likewise (``bytes_exact`` is False when re-compressed or re-encoded
    batches had to be estimated).
    """

    number: int
    start_offset: int
    upper_bound: int
    end_offset: int
    segments: int
    map_entries: int
    map_full: bool
    utilization: float
    start_records: int
    start_bytes: int
    end_records: int
    end_bytes: int
    bytes_exact: bool
    tombstones_kept: int
    tombstones_dropped: int
    aborted_dropped: int
    markers_dropped: int
    invalid_dropped: int
    delete_horizon_ms: int
    log_lines: tuple[str, ...]


class PartitionCleaner:
    """Emulates the cleaner's passes over one partition for one broker config."""

    def __init__(
        self,
        scan: PartitionScan,
        config: CleanerConfig,
        now_ms: int,
        arrays: Arrays = in_memory,
        cores: Cores = ONE_CORE,
    ) -> None:
        """``cores``: where a pass's retention filter runs, segments apart
        (``cleaner.cores``), when the survivor flags are shared mappings (``arrays`` a
        ``FileArrays``); else here."""
        self.scan = scan
        self.cores = cores if isinstance(arrays, FileArrays) else ONE_CORE
        self.config = config
        self.behaviour: CleanerBehaviour = config.behaviour
        self.now_ms = now_ms
        self.state = LogState.of(scan, arrays)
        self.map = OffsetMap(scan.distinct_keys, config.memory_per_thread, config.load_factor)
        self.name = scan.partition.name
        #: the facts whose other value would have changed a pass so far, of those the
        #: passes watch (``audit.shared_emulations.WATCHED``)
        self.facts_that_mattered: set[str] = set()

    # --- the pass loop -------------------------------------------------------------------

    def run(
        self, first_dirty: int, *, max_passes: int = MAX_PASSES
    ) -> tuple[list[PassResult], list[Selection], CleanerFailure | None]:
        """Clean until the partition is no longer eligible (caught up, or its dirty ratio
        dropped to the threshold), or the cleaner fails on it. Returns the passes, the
        selection seen before each pass plus the one that ended the loop (so one more than
        passes), and the failure if any (it happens at the last selection)."""
        passes: list[PassResult] = []
        selections: list[Selection] = []
        while True:
            selection = select(self.state, first_dirty, self.config, self.now_ms)
            selections.append(selection)
            if not selection.eligible or len(passes) >= max_passes:
                return passes, selections, None
            outcome = self.one_pass(len(passes) + 1, selection)
            if isinstance(outcome, CleanerFailure):
                return passes, selections, outcome
            passes.append(outcome)
            if outcome.end_offset <= first_dirty:  # no progress: stop rather than loop forever
                selections.append(select(self.state, outcome.end_offset, self.config, self.now_ms))
                return passes, selections, None
            first_dirty = outcome.end_offset

    def one_pass(self, number: int, selection: Selection) -> PassResult | CleanerFailure:
        start = selection.first_dirty
        # the map's bound is the base of the segment holding the first uncleanable offset
        # (LogToClean.firstUncleanableOffset via calculateCleanableBytes, 0.10.1+)
        upper = selection.uncleanable_segment_base
        dirty = self.state.log_segments(start, upper)
        lines = [
            f"Building offset map for log {self.name} for {len(dirty)} segments in offset range"
            f" [{start}, {upper})."
        ]
        self.map.clear()
        members = [i for g in dirty for i in g.members]
        if self.behaviour.map_era == MapEra.PARTIAL:
            txn = CleanedTransactionMetadata(enabled=self.behaviour.reads_transactions)
            txn.add_aborted(self._aborted_in(start, upper))
            partial = map_partial(self.state, self.map, members, start, upper, txn, self.behaviour)
            if partial.gap_fast_forwarded:
                self.facts_that_mattered.add("fast_forwards_segment_gaps")
            stop = partial.stop
            end = self.map.latest_offset + 1
        else:
            mapped = map_whole_segments(
                self.state, self.map, members, start, self.behaviour.map_era
            )
            if isinstance(mapped, MapFailure):
                return CleanerFailure(
                    mapped.message(self.name),
                    number,
                    mapped.always_kills or self.behaviour.exception_kills_thread,
                )
            end, stop = mapped
        # the damage the map's reads get to, then the damage the rewrite of [0, end) reads
        in_map = self._damaged_in_map(members, stop)
        if in_map is not None:
            return self._failure_at(in_map, number, in_map=True)
        below = self._damaged_below(end)
        if below is not None:
            return self._failure_at(below, number, in_map=False)
        horizon = self._delete_horizon(start)
        counters = self._clean(end, upper, horizon)
        return PassResult(
            number=number,
            start_offset=start,
            upper_bound=upper,
            end_offset=end,
            segments=len(dirty),
            map_entries=self.map.size,
            map_full=stop is not None,
            utilization=self.map.utilization,
            start_records=counters.start_records,
            start_bytes=counters.start_bytes,
            end_records=counters.end_records,
            end_bytes=counters.end_bytes,
            bytes_exact=counters.bytes_exact,
            tombstones_kept=counters.tombstones_kept,
            tombstones_dropped=counters.tombstones_dropped,
            aborted_dropped=counters.aborted_dropped,
            markers_dropped=counters.markers_dropped,
            invalid_dropped=counters.invalid_dropped,
            delete_horizon_ms=horizon,
            log_lines=(
                *lines,
                f"Buffer utilization: {100 * self.map.utilization:.1f}%",
                f"Start size: {counters.start_bytes / 1048576:,.1f} MB"
                f" ({counters.start_records:,} messages)",
                f"End size: {counters.end_bytes / 1048576:,.1f} MB"
                f" ({counters.end_records:,} messages)",
            ),
        )

    # --- damaged segments --------------------------------------------------------------

    def _damaged_in_map(self, members: list[int], stop: MapStop | None) -> int | None:
        """The first dirty segment whose damage the map's reads get to."""
        segments = self.scan.segments
        for position, index in enumerate(members):
            damage = segments[index].damage
            if damage is not None and (
                stop is None or stop.read_past(position, damage.entries_before)
            ):
                return index
        return None

    def _damaged_below(self, end: int) -> int | None:
        """The first damaged segment the rewrite of ``[0, end)`` reads (whole segments)."""
        for group in self.state.log_segments(0, end):
            for index in group.members:
                if self.scan.segments[index].damage is not None:
                    return index
        return None

    def _failure_at(self, index: int, number: int, *, in_map: bool) -> CleanerFailure:
        segment = self.scan.segments[index]
        assert segment.damage is not None
        # the 0.9 map asks each dirty segment its nextOffset() first (cleaner.damage)
        searched = in_map and self.behaviour.map_era == MapEra.SEGMENT_SPAN
        return CleanerFailure(
            exception_at(
                segment.damage,
                str(segment.path),
                read_buffers(self.config),
                self.behaviour,
                next_offset_search=segment.index_last_position if searched else None,
            ),
            number,
            self.behaviour.exception_kills_thread,
            damage=segment.damage,
        )

    # --- cleaning ------------------------------------------------------------------------

    def _delete_horizon(self, first_dirty: int) -> int:
        """``deleteHorizonMs``: the last clean segment's modification time (0.10.1.x: largest
        timestamp) minus ``delete.retention.ms``; 0 when nothing is clean yet."""
        clean = self.state.log_segments(0, first_dirty)
        if not clean:
            return 0
        last = clean[-1]
        if self.behaviour.horizon_uses_largest_timestamp:
            reference = max(self.state.segments[i].largest_timestamp for i in last.members)
        else:
            reference = last.mtime_ms
        return reference - self.config.delete_retention_ms

    def _clean(self, end: int, upper: int, horizon: int) -> PassCounters:
        groups = self._group_segments(self.state.log_segments(0, end), upper)
        # retainDeletes is decided per physical segment as it is now (a group merged by an
        # earlier clean carries its last member's modification time)
        mtime_of = {i: g.mtime_ms for g in self.state.groups for i in g.members}
        members = [i for g in groups for i in g.members]

        def clean(run: range) -> tuple[list[int], PassCounters]:
            return self._clean_members(members, run, mtime_of, horizon)

        apart = self.cores.count > 1 and self._segments_apart
        runs = balanced_runs(
            [self.state.segments[i].records for i in members], self.cores.count if apart else 1
        )
        cleaned = self.cores.each(clean, runs) if len(runs) > 1 else [clean(r) for r in runs]
        for run, (sizes, _) in zip(runs, cleaned, strict=True):
            for position, size in zip(run, sizes, strict=True):
                self.state.sizes[members[position]] = size
        self.state.groups = self._regroup(groups, end)
        return merged_counters([counters for _, counters in cleaned])

    def _clean_members(
        self, members: list[int], run: range, mtime_of: dict[int, int], horizon: int
    ) -> tuple[list[int], PassCounters]:
        """The retention filter over ``members[run]`` (segments in offset order, the map
        built): their sizes afterwards and what the filter counted. The transaction
        bookkeeping starts empty at the run's first segment, as it does at a pass's start."""
        txn = CleanedTransactionMetadata(enabled=self.behaviour.reads_transactions)
        counters = PassCounters()
        sizes = []
        for position in run:
            index = members[position]
            seg = self.state.segments[index]
            upper_for_txns = (
                self.state.segments[members[position + 1]].base_offset
                if position + 1 < len(members)
                else self.map.latest_offset + 1
            )
            txn.add_aborted(self._aborted_in(seg.base_offset, upper_for_txns))
            sizes.append(
                sum(
                    clean_window(
                        live,
                        self.map,
                        txn,
                        self.scan.transactions.last_records,
                        retain_deletes=mtime_of[index] > horizon,
                        behaviour=self.behaviour,
                        counters=counters,
                    )
                    for live in self.state.windows(index)
                )
            )
        return sizes, counters

    @cached_property
    def _segments_apart(self) -> bool:
        """Whether segments can be filtered apart (``cleaner.cores``, 2): no aborted
        transaction, no transactional or control batch in the partition."""
        return not self.scan.transactions.aborted and not any(
            np.any(c.batch_control) or np.any(c.batch_transactional) for c in self.scan.columns
        )

    # --- segments and transactions -------------------------------------------------------

    def _group_segments(self, groups: list[LogGroup], upper: int) -> list[LogGroup]:
        """``groupSegmentsBySize``: merge consecutive segments while the total stays within
        ``segment.bytes`` and the offset span within an int."""
        result: list[LogGroup] = []
        remaining = list(groups)
        while remaining:
            head = remaining.pop(0)
            current = LogGroup(list(head.members), head.base_offset, head.mtime_ms)
            size = self.state.group_size(head)
            while remaining:
                nxt = remaining[0]
                next_size = self.state.group_size(nxt)
                last_offset = (remaining[1].base_offset - 1) if len(remaining) > 1 else upper - 1
                if size + next_size > self.config.segment_bytes:
                    break
                if last_offset - current.base_offset > INT_MAX:
                    break
                remaining.pop(0)
                current.members.extend(nxt.members)
                current.mtime_ms = nxt.mtime_ms
                size += next_size
            result.append(current)
        return result

    def _regroup(self, cleaned: list[LogGroup], end: int) -> list[LogGroup]:
        """The log after the swap: the cleaned groups, then the segments at or above ``end``."""
        return [*cleaned, *(g for g in self.state.groups if g.base_offset >= end)]

    def _aborted_in(self, start: int, upper: int) -> list[AbortedTxn]:
        """``Log.collectAbortedTransactions(start, upper)``: aborted transactions overlapping
        ``[start, upper)``."""
        return [
            t
            for t in self.scan.transactions.aborted
            if t.last_offset >= start and t.first_offset < upper
        ]
