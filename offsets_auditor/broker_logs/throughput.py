"""Does the cleaner keep up? Its measured pace against the commit rate the segments show.

The model, in the broker's own numbers:

- every cleaning maps the dirty section it consumes, ``[start, end)`` (its lines say where;
  :func:`offsets_auditor.broker_logs.reality.real_passes`), and then rewrites the log up to
  ``end`` ("X MB of log processed in T seconds": the clean section again each time). So the
  dirty bytes a thread consumes per second it spends cleaning is the offsets its cleanings
  consumed, times the bytes an offset takes in the uncleaned segments, over the seconds they
  took (from "Beginning cleaning" to the banner, to the millisecond), measured with whatever
  ``log.cleaner.io.max.bytes.per.second`` throttle and disk the broker has. (The banner's
  "Indexed X MB" says the same to 0.1 MB: too coarse for a cleaning of a few segments; it is
  the fallback when the segments are not known);
- the threads alive can consume that many times their number per second at most;
- the group coordinator appends commits at the rate the segments' own timestamps show:
  per partition, the bytes of the segments the cleaner has not cleaned yet (from its first
  dirty offset on: as written, not yet compacted) over the time their records span, summed
  over the partitions.

It keeps up when the commits arrive slower than the threads can consume them; otherwise the
dirty sections, and so every coordinator load, grow for as long as the load lasts. Cleanings
that end with an exception do not count (they consume nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from offsets_auditor.broker_logs.history import CleanerRun, CleaningEnd
from offsets_auditor.broker_logs.reality import real_passes
from offsets_auditor.cleaner.partition_scan import PartitionScan
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.versions import KafkaVersion

MB = 1 << 20


@dataclass(frozen=True, slots=True)
class SegmentWrite:
    """One segment's bytes and the time its records span (epoch ms, the records' own
    timestamps)."""

    partition: str
    bytes: int
    first_ms: int
    last_ms: int
    #: the offsets it spans (next offset - base offset)
    offsets: int = 0


def bytes_per_offset(writes: Sequence[SegmentWrite]) -> dict[str, float]:
    """What an offset takes in each partition's uncleaned segments, on average."""
    totals: dict[str, tuple[int, int]] = {}
    for w in writes:
        size, offsets = totals.get(w.partition, (0, 0))
        totals[w.partition] = (size + w.bytes, offsets + w.offsets)
    return {p: size / offsets for p, (size, offsets) in totals.items() if offsets > 0}


def writes_of(scan: PartitionScan, first_dirty: int) -> list[SegmentWrite]:
    """The segments of ``scan`` from ``first_dirty`` on, as written (none is cleaned yet).
    A segment whose records carry no timestamp (message format v0, 0.9.x) is left out: its
    file's modification time is the broker's only in the broker's own log dir, not in a copy
    (git, a plain ``cp``), and says nothing of when its first record was written."""
    out = []
    for segment in scan.segments:
        if segment.next_offset <= first_dirty or segment.size == 0:
            continue
        last = segment.largest_timestamp
        if last <= 0:
            continue
        first = segment.first_batch_timestamp if segment.first_batch_timestamp > 0 else last
        out.append(
            SegmentWrite(
                scan.partition.name,
                segment.size,
                min(first, last),
                last,
                segment.next_offset - segment.base_offset,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class CommitRate:
    bytes_per_second: float
    bytes: float
    start_ms: int
    end_ms: int


def commit_rate(writes: Sequence[SegmentWrite], window_ms: int | None = None) -> CommitRate | None:
    """Bytes appended per second: each partition's uncleaned bytes over the time they span
    (its records since its checkpoint, as written), summed over the partitions; with
    ``window_ms``, only what was written in the last ``window_ms`` before the newest record
    (each segment's bytes spread evenly over its own span)."""
    if not writes:
        return None
    end = max(w.last_ms for w in writes)
    floor = None if window_ms is None else end - window_ms
    by_partition: dict[str, list[SegmentWrite]] = {}
    for w in writes:
        by_partition.setdefault(w.partition, []).append(w)
    rate = total = 0.0
    start = end
    for ws in by_partition.values():
        first = min(w.first_ms for w in ws)
        if floor is not None:
            first = max(first, floor)
        last = max(w.last_ms for w in ws)
        if last <= first:
            continue
        written = 0.0
        for w in ws:
            span = w.last_ms - w.first_ms
            if span <= 0:
                written += w.bytes if w.last_ms >= first else 0
                continue
            overlap = min(w.last_ms, last) - max(w.first_ms, first)
            if overlap > 0:
                written += w.bytes * overlap / span
        rate += written * 1000 / (last - first)
        total += written
        start = min(start, first)
    if total == 0:
        return None
    return CommitRate(rate, total, start, end)


@dataclass(frozen=True, slots=True)
class CleanerPace:
    """What the cleaner did in one run: its completed cleanings, the dirty bytes they
    consumed, the MB they rewrote (banner), the seconds they took, the threads alive at the
    end, and the share of the run the threads spent cleaning."""

    cleanings: int
    consumed_bytes: float
    processed_mb: float
    busy_seconds: float
    run_seconds: float
    threads: int
    alive: int
    #: seconds spent in every cleaning, failed and unfinished ones too
    occupied_seconds: float = 0.0
    #: how ``consumed_bytes`` was measured
    basis: str = ""

    @property
    def consumed_bytes_per_second(self) -> float:
        """Dirty bytes one thread consumes per second of cleaning."""
        return self.consumed_bytes / self.busy_seconds if self.busy_seconds > 0 else 0.0

    @property
    def processed_bytes_per_second(self) -> float:
        """Kafka's own "MB/sec": bytes rewritten per second of cleaning."""
        return self.processed_mb * MB / self.busy_seconds if self.busy_seconds > 0 else 0.0

    @property
    def busy_fraction(self) -> float:
        if self.run_seconds <= 0 or self.threads == 0:
            return 0.0
        return min(self.occupied_seconds / (self.run_seconds * self.threads), 1.0)


def cleaner_pace(
    run: CleanerRun,
    version: KafkaVersion,
    *,
    offset_bytes: Mapping[str, float] | None = None,
    checkpoints: Mapping[str, int] | None = None,
) -> CleanerPace | None:
    """The pace of ``run`` (``None`` without a completed cleaning). ``offset_bytes``: what an
    offset takes per partition (:func:`bytes_per_offset` of the uncleaned segments); a
    partition without it, or a cleaning whose end the log does not tell, counts its banner's
    "Indexed" MB instead. ``checkpoints``: the cleaner-offset-checkpoint read
    after the run (where each partition's last cleaning ended, for 0.10.2-2.5)."""
    done = [
        c
        for c in run.cleanings
        if c.end is CleaningEnd.COMPLETED and c.stats is not None and c.elapsed_seconds
    ]
    if not done:
        return None
    consumed = 0.0
    exact = 0
    for partition in {c.partition for c in done}:
        mine = [c for c in run.cleanings if c.partition == partition]
        per_offset = (offset_bytes or {}).get(partition)
        passes = real_passes(mine, version, (checkpoints or {}).get(partition))
        for cleaning, real in zip(mine, passes, strict=True):
            if cleaning not in done or cleaning.stats is None:
                continue
            if per_offset is not None and real.start is not None and real.end is not None:
                consumed += (real.end - real.start) * per_offset
                exact += 1
            else:
                consumed += (cleaning.stats.indexed_mb or 0.0) * MB
    basis = (
        f"{exact} of {len(done)} by the offsets they consumed x the bytes an offset takes in"
        " the partition's uncleaned segments, the rest by their banners' Indexed MB (to 0.1 MB)"
    )
    occupied = sum(c.elapsed_seconds or 0.0 for c in run.cleanings)
    starts = [t.started_at for t in run.threads if t.started_at is not None]
    first = run.started_at or (min(starts) if starts else done[0].begun_at)
    ended = [c.ended_at for c in run.cleanings if c.ended_at is not None]
    last = run.shut_down_at or (max(ended) if ended else done[-1].begun_at)
    length = (last - first).total_seconds()
    return CleanerPace(
        cleanings=len(done),
        consumed_bytes=consumed,
        processed_mb=sum(c.stats.mb_read for c in done if c.stats is not None),
        busy_seconds=sum(c.elapsed_seconds or 0.0 for c in done),
        run_seconds=max(length, occupied / max(len(run.threads), 1)),
        threads=max(len(run.threads), 1),
        alive=len([t for t in run.threads if t.died is None]),
        occupied_seconds=occupied,
        basis=basis,
    )


@dataclass(frozen=True, slots=True)
class KeepingUp:
    keeps_up: bool
    commit: CommitRate
    pace: CleanerPace
    capacity_bytes_per_second: float
    detail: str


def keeping_up(pace: CleanerPace, commit: CommitRate, left_out: int = 0) -> KeepingUp:
    """1. No thread alive: nothing is consumed, the cleaner falls behind any commit at all.
    2. Otherwise it keeps up when the commit rate is below what the alive threads consume.
    ``left_out``: partitions marked uncleanable, whose growth ``commit`` leaves out (the
    cleaner never takes them)."""
    capacity = pace.consumed_bytes_per_second * pace.alive
    keeps = capacity > commit.bytes_per_second
    verb = "keeps up with" if keeps else "falls behind"
    detail = (
        f"the cleaner {verb} the commits: __consumer_offsets grew by"
        f" {commit.bytes_per_second / 1024:,.1f} KiB/s (its uncleaned segments, over"
        f" {(commit.end_ms - commit.start_ms) / 1000:,.0f} s"
        + (f"; {left_out} partition(s) marked uncleanable left out" if left_out else "")
        + f") while its {pace.alive} live"
        f" thread(s) consume at most {capacity / 1024:,.1f} KiB/s of dirty data"
        f" ({pace.cleanings} cleanings consumed {pace.consumed_bytes / 1024:,.0f} KiB of dirty"
        f" data ({pace.basis}) and rewrote {pace.processed_mb:,.1f} MB in"
        f" {pace.busy_seconds:,.1f} s of cleaning; busy {100 * pace.busy_fraction:.0f}% of"
        " the time)"
    )
    return KeepingUp(keeps, commit, pace, capacity, detail)


def falling_behind_findings(
    result: KeepingUp | None, run: CleanerRun | None = None
) -> list[Finding]:
    """``cleaner-falling-behind`` when the cleaner does not keep up, at the start of the run
    measured (its "Starting the log cleaner" line; the run's first cleaning when the log begins
    inside it)."""
    if result is None or result.keeps_up:
        return []
    place = None
    if run is not None:
        place = run.place or (run.cleanings[0].place if run.cleanings else None)
    return [
        Finding(
            kind=FindingKind.CLEANER_FALLING_BEHIND,
            severity=Severity.WARNING,
            detail=result.detail,
            file=place.file if place is not None else None,
            position=place.position if place is not None else None,
        )
    ]


def all_writes(scans: Iterable[tuple[PartitionScan, int]]) -> list[SegmentWrite]:
    """:func:`writes_of` over (scan, first dirty offset) pairs."""
    return [w for scan, first_dirty in scans for w in writes_of(scan, first_dirty)]
