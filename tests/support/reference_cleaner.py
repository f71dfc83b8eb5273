"""TEST ORACLE: the per-record log cleaner emulation as it was until commit ``aa82d94``.

This is not product code. It is the pure-Python reference path of ``offsets_auditor/cleaner``
at ``aa82d94`` (``passes.py``, ``log_state.py``, ``partition_scan.py``, ``selection.py``,
``txn_metadata.py``, ``offset_map.py``, ``requirements.py``, ``behaviour.py`` and the part of
``audit.emulate_partition`` that drives them), kept so that the columnar implementation that
replaced it (``segment_facts``, ``map_building``, ``retention`` ...) can be checked against it on
any partition (``tests/cleaner/test_cleaner_oracle.py``). It walks every record of every batch,
one by one, exactly as the old code did; it is slow on purpose and must stay simple and
recognisable: fix it only where it differs from ``aa82d94``'s Python path.

What changed from ``aa82d94``, and why:

- Only the Python paths are kept: the C lanes (``fast.py``, ``lanes.py``,
  ``_cleaner_speedups``), the ``OffsetMap`` spill into a dict and the split ``KeySet`` are gone.
  The offset map is what the old pure-Python ``OffsetMap`` was: a dict of
  ``hashlib.md5(key).digest()`` -> offset, with the broker's ``maxDesiredMapSize`` capacity
  enforced by the passes (not by ``put``).
- The version rules of the old ``behaviour.py`` are copied here (module-level functions on a
  ``KafkaVersion``), so a slip in today's ``CleanerBehaviour`` table shows up as a difference.
- Segments are read with today's public reader (``offsets_auditor.reader.segment.read_segment``,
  the Python reference decoders by default) and rebuilt into the old per-batch ``Batch`` objects:
  each chunk's batch headers (``decode.batch_headers``) and its records
  (``decode.RowDecoder.decoded``, i.e. ``DecodedRecord.record``) grouped by the batch's file
  position. ``decode.decode_segment`` alone cannot be used: it yields records, so a batch with
  no record (an emptied v2 batch, an empty control batch) would vanish, and the old emulation
  counted, mapped and cleaned those.
- The decoded batches of a segment are cached for the life of one emulation (the old code read
  the file again for every pass; the bytes do not change, so neither do the batches).
- Per-group writers (``GroupWrites``) are not computed: they are no part of the cleaner's
  results.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.errors import DecodeError
from offsets_auditor.logdir import fs
from offsets_auditor.logdir.model import LogDir, PartitionDir, offsets_partitions, read_log_dir
from offsets_auditor.reader.decode import RowDecoder, batch_headers
from offsets_auditor.reader.options import Backend
from offsets_auditor.reader.segment import read_segment
from offsets_auditor.records.compression import Codec
from offsets_auditor.records.control import decode_control
from offsets_auditor.records.model import Batch, BatchHeader, Record
from offsets_auditor.versions import KafkaVersion

OFFSETS_TOPIC = "__consumer_offsets"
INT_MAX = 2**31 - 1
RECORD_BATCH_OVERHEAD = 61
MAX_PASSES = 100_000
BYTES_PER_ENTRY = 24  # 16-byte MD5 + 8-byte offset (SkimpyOffsetMap)


# --- behaviour.py (aa82d94): the version rules ---------------------------------------------------


class MapEra(StrEnum):
    """How ``Cleaner.buildOffsetMap`` fills the offset map."""

    SEGMENT_SPAN = "0.9"
    FIRST_SEGMENT = "0.10.0"
    PARTIAL = "0.10.1"


def map_era(version: KafkaVersion) -> MapEra:
    if version.at_least("0.10.1"):
        return MapEra.PARTIAL
    if version.at_least("0.10.0"):
        return MapEra.FIRST_SEGMENT
    return MapEra.SEGMENT_SPAN


def exception_kills_thread(version: KafkaVersion) -> bool:
    return not version.at_least("2.1.0")


def reads_transactions(version: KafkaVersion) -> bool:
    return version.at_least("0.11.0")


def fast_forwards_segment_gaps(version: KafkaVersion) -> bool:
    return version.at_least("2.4.1")


def horizon_uses_largest_timestamp(version: KafkaVersion) -> bool:
    return version.at_least("0.10.1") and not version.at_least("0.10.2")


def has_max_compaction_lag(version: KafkaVersion) -> bool:
    return version.at_least("2.3.0")


def has_min_compaction_lag(version: KafkaVersion) -> bool:
    return version.at_least("0.10.1")


def log_start_from_checkpoint(version: KafkaVersion) -> bool:
    return version.at_least("3.0.0")


def stats_count_shallow_entries(version: KafkaVersion) -> bool:
    return not version.at_least("0.11.0")


# --- reading (fast.walk at aa82d94, over today's reader) -----------------------------------------


def read_batches(path: Path, label: str, backend: Backend = Backend.PYTHON) -> list[Batch]:
    """The decodable batches of the segment at ``path``, in file order, each with all of its
    records (problems are skipped, as the cleaner's walk did)."""
    headers: list[BatchHeader] = []
    records: list[list[Record]] = []
    rows = RowDecoder(label)
    with fs.ReadOnlyFile(path) as source:
        for item in read_segment(source, file=label, backend=backend):
            if isinstance(item, DecodeError):
                continue
            row_to_batch = []
            for header in batch_headers(item):
                # an entry with more records than a chunk holds continues in the next chunk
                if not (headers and headers[-1].position == header.position):
                    headers.append(header)
                    records.append([])
                row_to_batch.append(len(headers) - 1)
            batch_of = item.records.batch.tolist()
            for row, decoded in zip(batch_of, rows.decoded(item), strict=True):
                records[row_to_batch[row]].append(decoded.record)
    return [Batch(h, tuple(r)) for h, r in zip(headers, records, strict=True)]


# --- partition_scan.py (aa82d94) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SegmentInfo:
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
    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class TransactionState:
    ongoing: dict[int, int] = field(default_factory=dict)
    aborted: list[AbortedTxn] = field(default_factory=list)
    committed: int = 0
    last_records: dict[int, tuple[int | None, int]] = field(default_factory=dict)

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing.values()) if self.ongoing else None


@dataclass(frozen=True, slots=True)
class PartitionScan:
    partition: PartitionDir
    segments: tuple[SegmentInfo, ...]
    transactions: TransactionState
    records: int
    log_end_offset: int
    #: segment index -> its decoded batches (see the module docstring)
    batches: dict[int, list[Batch]]


@dataclass(slots=True)
class _SegmentStats:
    last: int
    largest: int = -1
    first_ts: int = -1
    records: int = 0
    batches: int = 0


def scan_partition(partition: PartitionDir, backend: Backend = Backend.PYTHON) -> PartitionScan:
    """Read every segment of ``partition`` once."""
    infos: list[SegmentInfo] = []
    txns = TransactionState()
    cache: dict[int, list[Batch]] = {}
    total = 0
    for index, segment in enumerate(partition.segments):
        stats = _SegmentStats(last=segment.base_offset - 1)
        path = partition.path / segment.log.name
        batches = read_batches(path, f"{partition.name}/{segment.log.name}", backend)
        cache[index] = batches
        for batch in batches:
            _scan_batch(batch, stats, txns)
        total += stats.records
        last = stats.last
        infos.append(
            SegmentInfo(
                base_offset=segment.base_offset,
                next_offset=last + 1 if last >= segment.base_offset else segment.base_offset,
                size=segment.log.size,
                mtime_ms=segment.log.mtime_ms,
                largest_timestamp=stats.largest,
                first_batch_timestamp=stats.first_ts,
                records=stats.records,
                batches=stats.batches,
                file=segment.log.name,
                path=path,
            )
        )
    log_end = infos[-1].next_offset if infos else 0
    return PartitionScan(partition, tuple(infos), txns, total, log_end, cache)


def _scan_batch(batch: Batch, stats: _SegmentStats, txns: TransactionState) -> None:
    header = batch.header
    stats.batches += 1
    stats.records += len(batch.records)
    if stats.first_ts < 0 and batch.records:
        stats.first_ts = header.max_timestamp if header.magic == 2 else batch.records[0].timestamp
    if header.magic == 2:
        stats.largest = max(stats.largest, header.max_timestamp)
        stats.last = max(stats.last, header.last_offset)
    elif batch.records:
        stats.largest = max(stats.largest, max(r.timestamp for r in batch.records))
        stats.last = max(stats.last, batch.records[-1].offset)
    _track_transactions(batch, txns)


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


def distinct_keys(
    scan: PartitionScan, segments: list[int], low: int, high: int
) -> tuple[list[int], bool]:
    """The distinct keys of the records with ``low <= offset < high`` of the non-control
    batches of ``segments``: how many there are before each segment (and, last, in all), and
    whether the last such record's key was new (one unbounded set: the old Python path)."""
    digests: set[bytes] = set()
    before: list[int] = []
    last_was_new = False
    for index in segments:
        before.append(len(digests))
        for batch in scan.batches[index]:
            if batch.header.is_control:
                continue
            for record in batch.records:
                if record.key is None or not low <= record.offset < high:
                    continue
                digest = OffsetMap.digest(record.key)
                last_was_new = digest not in digests
                digests.add(digest)
    before.append(len(digests))
    return before, last_was_new


# --- offset_map.py (aa82d94, the dict path) ------------------------------------------------------


class OffsetMap:
    """Digest -> latest offset, with the broker's capacity limits."""

    def __init__(self, memory_per_thread: int, load_factor: float) -> None:
        self.slots = memory_per_thread // BYTES_PER_ENTRY
        self.max_desired = int(self.slots * load_factor)
        self._offsets: dict[bytes, int] = {}
        self._latest = -1

    @staticmethod
    def digest(key: bytes) -> bytes:
        return hashlib.md5(key, usedforsecurity=False).digest()

    @property
    def size(self) -> int:
        return len(self._offsets)

    @property
    def latest_offset(self) -> int:
        return self._latest

    @property
    def utilization(self) -> float:
        return self.size / self.slots if self.slots else 0.0

    def put(self, key: bytes, offset: int) -> None:
        self._offsets[self.digest(key)] = offset
        self._latest = offset

    def get(self, key: bytes) -> int:
        return self._offsets.get(self.digest(key), -1)

    def update_latest_offset(self, offset: int) -> None:
        self._latest = offset

    def clear(self) -> None:
        self._offsets.clear()
        self._latest = -1


# --- log_state.py (aa82d94) ----------------------------------------------------------------------


@dataclass
class LogGroup:
    """A physical segment of the current log: original segments merged by earlier cleans."""

    members: list[int]
    base_offset: int
    mtime_ms: int


@dataclass
class LogState:
    """The partition as earlier passes left it (one byte per record / batch ordinal)."""

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
        """Kafka's ``Log.logSegments(from, to)``."""
        floor = None
        for group in self.groups:
            if group.base_offset <= start:
                floor = group.base_offset
        low = floor if floor is not None else -(2**63)
        return [g for g in self.groups if low <= g.base_offset < end]

    def batches(self, index: int) -> Iterator[tuple[int, int, Batch]]:
        """(batch ordinal, first record ordinal, batch) for the live batches of original
        segment ``index``."""
        b, r = self.batch_start[index], self.record_start[index]
        for batch in self.scan.batches[index]:
            if self.batch_alive[b]:
                yield b, r, batch
            b += 1
            r += len(batch.records)


# --- selection.py (aa82d94) ----------------------------------------------------------------------


def first_dirty_offset(checkpoint: int | None, log_start: int) -> int:
    if checkpoint is None or checkpoint < log_start:
        return log_start
    return checkpoint


@dataclass(frozen=True, slots=True)
class Selection:
    first_dirty: int
    first_uncleanable: int
    uncleanable_segment_base: int
    clean_bytes: int
    cleanable_bytes: int
    ratio: float
    need_compaction_now: bool
    eligible: bool
    blocked_by: str | None


def select(state: LogState, first_dirty: int, config: CleanerConfig, now_ms: int) -> Selection:
    version = config.kafka_version
    segments = state.segments
    active_base = state.groups[-1].base_offset
    bounds = [active_base]
    blocked_by = "active segment"
    lso = state.scan.transactions.first_unstable_offset()
    if reads_transactions(version) and lso is not None and lso < active_base:
        bounds.append(lso)
        blocked_by = "open transaction"
    if has_min_compaction_lag(version) and config.min_compaction_lag_ms > 0:
        for group in state.log_segments(first_dirty, active_base):
            largest = max(segments[i].largest_timestamp for i in group.members)
            if largest > now_ms - config.min_compaction_lag_ms:
                if group.base_offset < min(bounds):
                    blocked_by = "min.compaction.lag.ms"
                bounds.append(group.base_offset)
                break
    first_uncleanable = min(bounds)
    if map_era(version) != MapEra.PARTIAL:
        first_uncleanable = active_base
    clean = sum(state.group_size(g) for g in state.log_segments(-1, first_dirty))
    if map_era(version) == MapEra.PARTIAL:
        later = state.log_segments(first_uncleanable, active_base)
        uncleanable_base = later[0].base_offset if later else active_base
    else:
        uncleanable_base = active_base
    cleanable = sum(
        state.group_size(g)
        for g in state.log_segments(first_dirty, max(first_dirty, uncleanable_base))
    )
    total = clean + cleanable
    ratio = cleanable / total if total else 0.0
    need_now = False
    if has_max_compaction_lag(version) and config.max_compaction_lag_ms < 2**63 - 1:
        firsts = [
            segments[i].first_batch_timestamp
            for g in state.log_segments(first_dirty, active_base)
            for i in g.members
            if segments[i].first_batch_timestamp > 0
        ]
        need_now = bool(firsts) and min(firsts) < now_ms - max(config.max_compaction_lag_ms, 0)
    eligible = total > 0 and (ratio > config.min_cleanable_ratio or (need_now and cleanable > 0))
    return Selection(
        first_dirty=first_dirty,
        first_uncleanable=first_uncleanable,
        uncleanable_segment_base=uncleanable_base,
        clean_bytes=clean,
        cleanable_bytes=cleanable,
        ratio=ratio,
        need_compaction_now=need_now,
        eligible=eligible,
        blocked_by=blocked_by,
    )


# --- txn_metadata.py (aa82d94) -------------------------------------------------------------------


@dataclass
class _AbortedTransactionMetadata:
    txn: AbortedTxn
    last_observed_batch_offset: int | None = None


@dataclass
class CleanedTransactionMetadata:
    enabled: bool = True
    _ongoing_committed: set[int] = field(default_factory=set)
    _ongoing_aborted: dict[int, _AbortedTransactionMetadata] = field(default_factory=dict)
    _aborted: list[tuple[int, int, AbortedTxn]] = field(default_factory=list)
    _seen: set[AbortedTxn] = field(default_factory=set)

    def add_aborted(self, txns: list[AbortedTxn]) -> None:
        for txn in txns:
            if txn not in self._seen:
                self._seen.add(txn)
                heapq.heappush(self._aborted, (txn.first_offset, id(txn), txn))

    def _consume_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            _, _, txn = heapq.heappop(self._aborted)
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTransactionMetadata(txn))

    def on_control_batch(self, header: BatchHeader, control_type: str | None) -> bool:
        """``onControlBatchRead``: True if the control batch may be discarded."""
        if not self.enabled:
            return False
        self._consume_up_to(header.last_offset)
        if control_type is None:
            return True  # an empty control batch was already cleaned
        pid = header.producer_id
        if control_type == "abort":
            meta = self._ongoing_aborted.pop(pid, None)
            return not (meta is not None and meta.last_observed_batch_offset is not None)
        if control_type == "commit":
            if pid in self._ongoing_committed:
                self._ongoing_committed.discard(pid)
                return False
            return True
        return False

    def on_batch(self, header: BatchHeader) -> bool:
        """``onBatchRead``: True if the batch belongs to an aborted transaction."""
        if not self.enabled:
            return False
        self._consume_up_to(header.last_offset)
        if header.is_transactional:
            meta = self._ongoing_aborted.get(header.producer_id)
            if meta is not None:
                meta.last_observed_batch_offset = header.last_offset
                return True
            self._ongoing_committed.add(header.producer_id)
        return False


# --- passes.py (aa82d94, the Python loops) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CleanerFailure:
    message: str
    pass_number: int
    kills_thread: bool


@dataclass(frozen=True, slots=True)
class PassResult:
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


@dataclass(slots=True)
class MapProgress:
    """The offset of the last live record read while building the map."""

    last: int


@dataclass
class PassCounters:
    start_records: int = 0
    start_bytes: int = 0
    end_records: int = 0
    end_bytes: int = 0
    bytes_exact: bool = True
    tombstones_kept: int = 0
    tombstones_dropped: int = 0
    aborted_dropped: int = 0
    markers_dropped: int = 0
    invalid_dropped: int = 0


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
        era = map_era(self.version)
        start = selection.first_dirty
        upper = selection.uncleanable_segment_base
        dirty = self.state.log_segments(start, upper)
        lines = [
            f"Building offset map for log {self.name} for {len(dirty)} segments in offset range"
            f" [{start}, {upper})."
        ]
        self.map.clear()
        if era == MapEra.PARTIAL:
            full = self._map_partial(dirty, start, upper)
            end = self.map.latest_offset + 1
        else:
            mapped = self._map_whole_segments(era, dirty, start, number)
            if isinstance(mapped, CleanerFailure):
                return mapped
            end, full = mapped
        horizon = self._delete_horizon(start)
        counters = PassCounters()
        self._clean(end, upper, horizon, counters)
        return PassResult(
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

    # --- building the offset map ---------------------------------------------------------

    def _map_whole_segments(
        self, era: MapEra, dirty: list[LogGroup], start: int, number: int
    ) -> tuple[int, bool] | CleanerFailure:
        """0.9.0.x and 0.10.0.x: ``buildOffsetMap`` returns the last offset of the last fully
        mapped segment; ``endOffset`` is that + 1."""
        if not dirty or dirty[0].base_offset != start:
            base = dirty[0].base_offset if dirty else start
            return CleanerFailure(
                f"requirement failed: Last clean offset is {start} but segment base offset is"
                f" {base} for log {self.name}.",
                number,
                exception_kills_thread(self.version),
            )
        progress = MapProgress(dirty[0].base_offset)
        max_desired = self.map.max_desired
        for group in dirty:
            for index in group.members:
                seg = self.state.segments[index]
                if era == MapEra.SEGMENT_SPAN:
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
                    for _, first_record, batch in self.state.batches(index):
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
        progress = MapProgress(self.state.segments[index].base_offset)
        for _, first_record, batch in self.state.batches(index):
            for k, record in enumerate(batch.records):
                if not self.state.alive[first_record + k]:
                    continue
                if record.key is not None:
                    if self.map.size < self.map.max_desired:
                        self.map.put(record.key, record.offset)
                    else:
                        return None
                progress.last = record.offset
        return progress.last

    def _map_partial(self, dirty: list[LogGroup], start: int, upper: int) -> bool:
        """0.10.1+ ``buildOffsetMap``: returns whether the map filled up."""
        txn = CleanedTransactionMetadata(enabled=reads_transactions(self.version))
        txn.add_aborted(self._aborted_in(start, upper))
        fast_forward = fast_forwards_segment_gaps(self.version)
        members = [i for g in dirty for i in g.members]
        for position, index in enumerate(members):
            next_start = (
                self.state.segments[members[position + 1]].base_offset
                if position + 1 < len(members)
                else upper
            )
            for _, first_record, batch in self.state.batches(index):
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
            if fast_forward:
                self.map.update_latest_offset(next_start - 1)
        return False

    # --- cleaning ------------------------------------------------------------------------

    def _delete_horizon(self, first_dirty: int) -> int:
        clean = self.state.log_segments(0, first_dirty)
        if not clean:
            return 0
        last = clean[-1]
        if horizon_uses_largest_timestamp(self.version):
            reference = max(self.state.segments[i].largest_timestamp for i in last.members)
        else:
            reference = last.mtime_ms
        return reference - self.config.delete_retention_ms

    def _clean(self, end: int, upper: int, horizon: int, counters: PassCounters) -> None:
        groups = self._group_segments(self.state.log_segments(0, end), upper)
        txn = CleanedTransactionMetadata(enabled=reads_transactions(self.version))
        last_records = self.scan.transactions.last_records
        shallow = stats_count_shallow_entries(self.version)
        legacy_rules = map_era(self.version) != MapEra.PARTIAL
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
            size = 0
            for b, first_record, batch in self.state.batches(index):
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
            self.state.sizes[index] = size
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
        counters: PassCounters,
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
                self._drop_batch(b, first_record, live, header.is_control, counters)
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
        self, b: int, first_record: int, live: list[int], control: bool, counters: PassCounters
    ) -> None:
        for k in live:
            self.state.alive[first_record + k] = 0
        self.state.batch_alive[b] = 0
        if control:
            counters.markers_dropped += 1
        else:
            counters.aborted_dropped += len(live)

    def _retain(
        self,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        retain_deletes: bool,
        legacy_rules: bool,
        counters: PassCounters,
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
        """``groupSegmentsBySize``."""
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
        return [*cleaned, *(g for g in self.state.groups if g.base_offset >= end)]

    def _aborted_in(self, start: int, upper: int) -> list[AbortedTxn]:
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


# --- requirements.py (aa82d94) -------------------------------------------------------------------


def needed_entries(scan: PartitionScan, config: CleanerConfig, first_dirty: int, upper: int) -> int:
    """Map entries one thread needs to clean ``[first_dirty, upper)`` in one go."""
    era = map_era(config.kafka_version)
    dirty = [
        index
        for index, seg in enumerate(scan.segments)
        if seg.next_offset > first_dirty and seg.base_offset < upper
    ]
    before, last_was_new = distinct_keys(scan, dirty, first_dirty, upper)
    if era == MapEra.SEGMENT_SPAN:
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


# --- audit.emulate_partition (aa82d94) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Emulated:
    """What the old emulation produced for one partition."""

    name: str
    checkpoint: int | None
    first_dirty: int
    initial: Selection
    passes: tuple[PassResult, ...]
    selections: tuple[Selection, ...]
    failure: CleanerFailure | None
    needed_entries: int
    size_after_cleaning: int
    #: not in the old results: how many batches the passes kept empty for an active producer
    #: (``LogState.batch_empty``), for the tests that show the synthetic partitions reach it
    retained_empty_batches: int = 0
    #: not in the old results either: the most original segments one segment of the cleaned
    #: log holds (``groupSegmentsBySize`` merged them when above 1)
    largest_group: int = 1


def emulate_partition(
    partition: PartitionDir,
    logdir: LogDir,
    config: CleanerConfig,
    now_ms: int,
    backend: Backend = Backend.PYTHON,
    scan: PartitionScan | None = None,
) -> Emulated | None:
    """Scan one offsets partition (unless ``scan`` is that scan, made earlier: scans do not
    depend on the config) and run every pass the cleaner would."""
    if scan is None:
        scan = scan_partition(partition, backend)
    if not scan.segments:
        return None
    key = (OFFSETS_TOPIC, partition.partition)
    checkpoints = logdir.cleaner_checkpoint.offsets() if logdir.cleaner_checkpoint else {}
    log_starts = logdir.log_start_checkpoint.offsets() if logdir.log_start_checkpoint else {}
    checkpoint = checkpoints.get(key)
    log_start = scan.segments[0].base_offset
    modern = log_start_from_checkpoint(config.kafka_version)
    if modern and key in log_starts:
        log_start = max(log_start, log_starts[key])
    first_dirty = first_dirty_offset(checkpoint, log_start)
    if modern and checkpoint is not None and checkpoint > scan.log_end_offset:
        first_dirty = log_start
    cleaner = PartitionCleaner(scan, config, now_ms)
    initial = select(cleaner.state, first_dirty, config, now_ms)
    if config.enabled:
        passes, selections, failure = cleaner.run(first_dirty)
    else:
        passes, selections, failure = [], [initial], None
    need = (
        needed_entries(scan, config, first_dirty, initial.first_uncleanable)
        if initial.eligible
        else 0
    )
    return Emulated(
        name=partition.name,
        checkpoint=checkpoint,
        first_dirty=first_dirty,
        initial=initial,
        passes=tuple(passes),
        selections=tuple(selections),
        failure=failure,
        needed_entries=need,
        size_after_cleaning=sum(cleaner.state.sizes),
        retained_empty_batches=sum(cleaner.state.batch_empty),
        largest_group=max(len(g.members) for g in cleaner.state.groups),
    )


def emulate_log_dir(
    path: Path,
    config: CleanerConfig,
    now_ms: int,
    backend: Backend = Backend.PYTHON,
    scans: dict[str, PartitionScan] | None = None,
) -> dict[str, Emulated]:
    """The old emulation of every ``__consumer_offsets`` partition of a log dir, by name.
    ``scans``, when given, caches the partitions' scans across calls (by partition name)."""
    logdir = read_log_dir(path, config.kafka_version)
    results = {}
    for partition in offsets_partitions(logdir):
        scan = scans.get(partition.name) if scans is not None else None
        if scan is None:
            scan = scan_partition(partition, backend)
            if scans is not None:
                scans[partition.name] = scan
        emulated = emulate_partition(partition, logdir, config, now_ms, backend, scan)
        if emulated is not None:
            results[partition.name] = emulated
    return results


# --- comparing ----------------------------------------------------------------------------------


def comparable(emulated: Any) -> dict[str, Any]:
    """The results of one partition's emulation, by field name, from this oracle's
    :class:`Emulated` or today's ``offsets_auditor.audit.partition.Emulated`` alike (same attribute
    names): ``==`` on two of these compares every field, and pytest names the one that
    differs."""
    failure = emulated.failure
    return {
        "checkpoint": emulated.checkpoint,
        "first_dirty": emulated.first_dirty,
        "initial": asdict(emulated.initial),
        "passes": [asdict(p) for p in emulated.passes],
        # the oracle predates damage-aware passes: the damaged spot a failure names is not its
        "failure": None
        if failure is None
        else {
            "message": failure.message,
            "pass_number": failure.pass_number,
            "kills_thread": failure.kills_thread,
        },
        "selections": [asdict(s) for s in emulated.selections],
        "needed_entries": emulated.needed_entries,
        "size_after_cleaning": emulated.size_after_cleaning,
    }
