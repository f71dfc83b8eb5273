"""Run the log cleaner over one partition, pass after pass, as the broker would.

Each pass is Kafka's ``Cleaner.clean``: build the offset map from the first dirty offset
(``buildOffsetMap``), then rewrite every segment below the map's end through the retention
filter (``cleanSegments``/``cleanInto``), then move the checkpoint to the map's end. The
rewritten log is kept as bitmaps of surviving records and batches over the original segments,
so later passes see what earlier ones left, at one bit per record.

Sources: 0.9.0.1, 0.10.0.1, 2.3.0 and 2.5.0 ``core/src/main/scala/kafka/log/LogCleaner.scala``
and ``LogCleanerManager.scala``; 2.3.0 ``clients/.../record/MemoryRecords.java`` (``filterTo``).
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets_auditor.cleaner import behaviour, fast, lanes
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.log_state import LogGroup, LogState
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.partition_scan import AbortedTxn, PartitionScan
from offsets_auditor.cleaner.selection import Selection, select
from offsets_auditor.cleaner.txn_metadata import CleanedTransactionMetadata
from offsets_auditor.records.compression import Codec
from offsets_auditor.records.control import decode_control
from offsets_auditor.records.model import Batch
from offsets_auditor.versions import KafkaVersion

INT_MAX = 2**31 - 1
RECORD_BATCH_OVERHEAD = 61
MAX_PASSES = 100_000


@dataclass(frozen=True, slots=True)
class CleanerFailure:
    """An exception the cleaner throws for this partition, in Kafka's words. Up to 2.0.x it
    kills the cleaner thread (``kills_thread``); from 2.1.0 the partition is marked
    uncleanable instead."""

    message: str
    pass_number: int
    kills_thread: bool


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

    def __init__(self, scan: PartitionScan, config: CleanerConfig, now_ms: int) -> None:
        self.scan = scan
        self.config = config
        self.version: KafkaVersion = config.kafka_version
        self.now_ms = now_ms
        self.state = LogState.of(scan)
        self.map = OffsetMap(config.memory_per_thread, config.load_factor)
        self.name = scan.partition.name

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
        era = behaviour.map_era(self.version)
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
        if era == behaviour.MapEra.PARTIAL:
            full = self._map_partial(dirty, start, upper)
            end = self.map.latest_offset + 1
        else:
            mapped = self._map_whole_segments(era, dirty, start, number)
            if isinstance(mapped, CleanerFailure):
                return mapped
            end, full = mapped
        horizon = self._delete_horizon(start)
        counters = lanes.PassCounters()
        self._clean(end, upper, horizon, counters)
        result = PassResult(
            number=number,
            start_offset=start,
            upper_bound=upper,
            end_offset=end,
            segments=len(dirty),
            map_entries=self.map.size,
            map_full=full,
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
        return result

    # --- building the offset map ---------------------------------------------------------

    def _map_whole_segments(
        self, era: behaviour.MapEra, dirty: list[LogGroup], start: int, number: int
    ) -> tuple[int, bool] | CleanerFailure:
        """0.9.0.x and 0.10.0.x: ``buildOffsetMap`` returns the last offset of the last fully
        mapped segment; ``endOffset`` is that + 1."""
        if not dirty or dirty[0].base_offset != start:
            base = dirty[0].base_offset if dirty else start
            return CleanerFailure(
                f"requirement failed: Last clean offset is {start} but segment base offset is"
                f" {base} for log {self.name}.",
                number,
                behaviour.exception_kills_thread(self.version),
            )
        progress = lanes.MapProgress(dirty[0].base_offset)
        max_desired = self.map.max_desired
        for group in dirty:
            for index in group.members:
                seg = self.state.segments[index]
                if era == behaviour.MapEra.SEGMENT_SPAN:
                    span = seg.next_offset - seg.base_offset
                    if span > max_desired:
                        return CleanerFailure(
                            f"requirement failed: {span} messages in segment {self.name}/{seg.file}"
                            f" but offset map can fit only {max_desired}. You can increase"
                            " log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads",
                            number,
                            True,
                        )
                    if self.map.size + span > max_desired:
                        return progress.last + 1, True
                    lane = lanes.map_lane(self.map, self.state, fast.MODE_SEGMENT_SPAN, progress)
                    for _, first_record, batch in self.state.batches(index, lane):
                        for k, record in enumerate(batch.records):
                            if not self.state.alive[first_record + k]:
                                continue
                            if record.key is not None:
                                self.map.put(record.key, record.offset)
                            progress.last = record.offset
                else:
                    last = self._map_segment_until_full(index)
                    if last is None:
                        if progress.last <= start:
                            return CleanerFailure(
                                f"requirement failed: Unable to build the offset map for segment"
                                f" {self.name}/{seg.file}. You can increase"
                                " log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads",
                                number,
                                True,
                            )
                        return progress.last + 1, True
                    progress.last = max(progress.last, last)
        return progress.last + 1, False

    def _map_segment_until_full(self, index: int) -> int | None:
        """0.10.0.x ``buildOffsetMapForSegment``: the last offset read, or None when the map
        filled up inside this segment."""
        progress = lanes.MapProgress(self.state.segments[index].base_offset)
        lane = lanes.map_lane(self.map, self.state, fast.MODE_FIRST_SEGMENT, progress)
        for _, first_record, batch in self.state.batches(index, lane):
            if progress.full:
                return None
            for k, record in enumerate(batch.records):
                if not self.state.alive[first_record + k]:
                    continue
                if record.key is not None:
                    if self.map.size < self.map.max_desired:
                        self.map.put(record.key, record.offset)
                    else:
                        return None
                progress.last = record.offset
        return None if progress.full else progress.last

    def _map_partial(self, dirty: list[LogGroup], start: int, upper: int) -> bool:
        """0.10.1+ ``buildOffsetMap``: returns whether the map filled up."""
        txn = CleanedTransactionMetadata(enabled=behaviour.reads_transactions(self.version))
        txn.add_aborted(self._aborted_in(start, upper))
        fast_forward = behaviour.fast_forwards_segment_gaps(self.version)
        members = [i for g in dirty for i in g.members]
        progress = lanes.MapProgress(-1)
        lane = lanes.map_lane(self.map, self.state, fast.MODE_PARTIAL, progress, start, txn)
        for position, index in enumerate(members):
            next_start = (
                self.state.segments[members[position + 1]].base_offset
                if position + 1 < len(members)
                else upper
            )
            for _, first_record, batch in self.state.batches(index, lane):
                if progress.full:
                    return True
                header = batch.header
                if header.last_offset < start:
                    continue
                if header.is_control:
                    txn.on_control_batch(header, _control_type(batch))
                elif not txn.on_batch(header):
                    for k, record in enumerate(batch.records):
                        if not self.state.alive[first_record + k]:
                            continue
                        if record.key is not None and record.offset >= start:
                            if self.map.size < self.map.max_desired:
                                self.map.put(record.key, record.offset)
                            else:
                                return True
                if header.last_offset >= start:
                    self.map.update_latest_offset(header.last_offset)
            if progress.full:
                return True
            if fast_forward:
                self.map.update_latest_offset(next_start - 1)
        return False

    # --- cleaning ------------------------------------------------------------------------

    def _delete_horizon(self, first_dirty: int) -> int:
        """``deleteHorizonMs``: the last clean segment's modification time (0.10.1.x: largest
        timestamp) minus ``delete.retention.ms``; 0 when nothing is clean yet."""
        clean = self.state.log_segments(0, first_dirty)
        if not clean:
            return 0
        last = clean[-1]
        if behaviour.horizon_uses_largest_timestamp(self.version):
            reference = max(self.state.segments[i].largest_timestamp for i in last.members)
        else:
            reference = last.mtime_ms
        return reference - self.config.delete_retention_ms

    def _clean(self, end: int, upper: int, horizon: int, counters: lanes.PassCounters) -> None:
        groups = self._group_segments(self.state.log_segments(0, end), upper)
        txn = CleanedTransactionMetadata(enabled=behaviour.reads_transactions(self.version))
        last_records = self.scan.transactions.last_records
        shallow = behaviour.stats_count_shallow_entries(self.version)
        legacy_rules = behaviour.map_era(self.version) != behaviour.MapEra.PARTIAL
        # retainDeletes is decided per physical segment as it is now (a group merged by an
        # earlier clean carries its last member's modification time)
        mtime_of = {i: g.mtime_ms for g in self.state.groups for i in g.members}
        members_all = [i for g in groups for i in g.members]
        for position, index in enumerate(members_all):
            seg = self.state.segments[index]
            upper_for_txns = (
                self.state.segments[members_all[position + 1]].base_offset
                if position + 1 < len(members_all)
                else self.map.latest_offset + 1
            )
            txn.add_aborted(self._aborted_in(seg.base_offset, upper_for_txns))
            retain_deletes = mtime_of[index] > horizon
            lane = lanes.clean_lane(
                self.map, self.state, txn, (shallow, legacy_rules, retain_deletes), counters
            )
            size = 0
            for b, first_record, batch in self.state.batches(index, lane):
                size += self._clean_batch(
                    b,
                    first_record,
                    batch,
                    retain_deletes,
                    txn,
                    last_records,
                    shallow,
                    legacy_rules,
                    counters,
                )
            self.state.sizes[index] = size + counters.lane_kept_bytes
            counters.lane_kept_bytes = 0
        self.state.groups = self._regroup(groups, end)

    def _clean_batch(
        self,
        b: int,
        first_record: int,
        batch: Batch,
        retain_deletes: bool,
        txn: CleanedTransactionMetadata,
        last_records: dict[int, tuple[int | None, int]],
        shallow: bool,
        legacy_rules: bool,
        counters: lanes.PassCounters,
    ) -> int:
        """Filter one batch; returns its size after cleaning (0 when dropped)."""
        header = batch.header
        alive = self.state.alive
        live = [k for k in range(len(batch.records)) if alive[first_record + k]]
        current_size = self._current_batch_size(batch, live)
        counters.start_bytes += current_size
        discard = False
        retain_empty = False
        if header.magic == 2 and not legacy_rules:
            if header.is_control:
                discard = txn.on_control_batch(header, _control_type(batch)) and not retain_deletes
            else:
                discard = txn.on_batch(header)
            if header.producer_id >= 0:
                last = last_records.get(header.producer_id)
                if last is not None:
                    data_offset, epoch = last
                    if data_offset is not None:
                        retain_empty = header.last_offset == data_offset
                    else:
                        retain_empty = header.is_control and header.producer_epoch == epoch
            if discard and not retain_empty:
                self._drop_batch(b, first_record, live, header.is_control, counters, aborted=True)
                return 0
        if shallow:
            counters.start_records += 1 if live else 0
        else:
            counters.start_records += len(live)
        kept = []
        for k in live:
            record = batch.records[k]
            keep = (not discard) and self._retain(
                record.offset, record.key, record.value, retain_deletes, legacy_rules, counters
            )
            if keep:
                kept.append(k)
                if record.value is None and not header.is_control:
                    counters.tombstones_kept += 1
            else:
                alive[first_record + k] = 0
                if discard:
                    counters.aborted_dropped += 1
        if kept:
            counters.end_records += 1 if shallow else len(kept)
            if len(kept) == len(live) and (header.codec == Codec.NONE or not shallow):
                size = current_size
            else:
                size = self._retained_size(batch, kept, current_size, live)
                counters.bytes_exact = (
                    counters.bytes_exact and header.codec == Codec.NONE and header.magic < 2
                )
            counters.end_bytes += size
            return size
        if retain_empty:
            self.state.batch_empty[b] = 1
            counters.end_bytes += RECORD_BATCH_OVERHEAD
            return RECORD_BATCH_OVERHEAD
        self.state.batch_alive[b] = 0
        if header.is_control:
            counters.markers_dropped += 1
        return 0

    def _drop_batch(
        self,
        b: int,
        first_record: int,
        live: list[int],
        control: bool,
        counters: lanes.PassCounters,
        *,
        aborted: bool,
    ) -> None:
        for k in live:
            self.state.alive[first_record + k] = 0
        self.state.batch_alive[b] = 0
        if control:
            counters.markers_dropped += 1
        elif aborted:
            counters.aborted_dropped += len(live)

    def _retain(
        self,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        retain_deletes: bool,
        legacy_rules: bool,
        counters: lanes.PassCounters,
    ) -> bool:
        if legacy_rules:  # 0.9.0.x / 0.10.0.x shouldRetainMessage
            if key is None:
                counters.invalid_dropped += 1
                return False
            found = self.map.get(key)
            if found >= 0 and offset < found:
                return False
            if value is None and not retain_deletes:
                counters.tombstones_dropped += 1
                return False
            return True
        if offset > self.map.latest_offset:  # pastLatestOffset
            return True
        if key is None:
            counters.invalid_dropped += 1
            return False
        if offset < self.map.get(key):
            return False
        if value is None and not retain_deletes:
            counters.tombstones_dropped += 1
            return False
        return True

    def _current_batch_size(self, batch: Batch, live: list[int]) -> int:
        if len(live) == len(batch.records):
            return batch.header.size
        if not live:
            return RECORD_BATCH_OVERHEAD if batch.header.magic == 2 else 0
        return self._retained_size(batch, live, batch.header.size, list(range(len(batch.records))))

    @staticmethod
    def _retained_size(batch: Batch, kept: list[int], size: int, live: list[int]) -> int:
        """Bytes of the batch rewritten with only ``kept`` records. Exact for uncompressed
        legacy messages; proportional to record payload sizes otherwise (an estimate)."""
        header = batch.header
        if header.magic < 2 and header.codec == Codec.NONE:
            return size if kept else 0

        def weight(k: int) -> int:
            r = batch.records[k]
            return 8 + len(r.key or b"") + len(r.value or b"")

        total = sum(weight(k) for k in live) or 1
        overhead = RECORD_BATCH_OVERHEAD if header.magic == 2 else 34
        return overhead + (size - overhead) * sum(weight(k) for k in kept) // total

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


def _control_type(batch: Batch) -> str | None:
    if not batch.records:
        return None
    record = batch.records[0]
    try:
        return decode_control(record.key, record.value).type
    except Exception:
        return "unknown"
