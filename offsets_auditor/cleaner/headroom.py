"""The dedupe buffer an operator would set: the minimum (``capacity.buffer_for``) plus room for
a day's growth at the commit rate the segments show, rounded, and what it costs in heap.

- **Commit rate**: offsets are given one per record written, and compaction keeps them, so
  the offsets between the first and the last segment's last writes, over the time between
  them, are the records written per second (the segments' largest record timestamps; their
  modification times for v0 data, which has none).
- **Growth**: a day of commits at that rate, with as many new map entries per record as the
  dirty section has now (distinct keys per offset), and at most as many as it needs now (the
  keys, group x topic x partition, doubling in a day): the records repeat the keys that
  exist, so a dirty section written in seconds (a test's, a burst's) would otherwise count a
  day of repeats as new keys.
- **Rounded**: up to a power of two MiB (at least the broker's minimum, more than 1 MiB a
  thread).
- **Heap**: every cleaner thread allocates its offset map on the broker's heap when the
  cleaner starts (``LogCleaner.startup`` -> ``new CleanerThread`` -> ``new SkimpyOffsetMap(memory
  = min(dedupeBufferSize / numThreads, Int.MaxValue))``, whose ``bytes =
  ByteBuffer.allocate(memory)`` is a heap buffer), with a read and a write buffer of
  ``log.cleaner.io.buffer.size / numThreads / 2`` each (``Cleaner.readBuffer``,
  ``writeBuffer``). Sources: A:0.9.0.1 and A:2.3.0
  ``core/src/main/scala/kafka/log/LogCleaner.scala``, ``OffsetMap.scala``. The heap
  (``KAFKA_HEAP_OPTS``; ``kafka-server-start.sh`` defaults to ``-Xmx1G``) must hold it beside
  everything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from offsets_auditor.cleaner.capacity import MIN_MEMORY_PER_THREAD, buffer_for
from offsets_auditor.constants import INT_MAX

#: How far ahead the headroom looks: a day of commits.
GROWTH_SECONDS: Final = 86_400
MIB: Final = 1 << 20
#: ``kafka-server-start.sh``'s heap when ``KAFKA_HEAP_OPTS`` is not set.
DEFAULT_HEAP_BYTES: Final = 1 << 30


@dataclass(frozen=True, slots=True)
class CommitRate:
    """Records written per second, and what that was measured over."""

    per_second: float
    basis: str


#: The shortest span of segment modification times taken for a commit rate: a broker rolls a
#: segment when it fills (``segment.bytes``) or ages (``segment.ms``), minutes to days apart;
#: copying a log dir (``cp`` without ``-p``) spreads them over the seconds the copy took.
MIN_MTIME_SPAN_SECONDS: Final = 60.0


def commit_rate(segments: Sequence[tuple[int, int, int, int]]) -> CommitRate | None:
    """The commit rate ``segments`` show: ``(base offset, next offset, largest timestamp,
    mtime)`` each, in offset order. None when it cannot be told (fewer than two segments
    with a time, or no time between them). Modification times are a segment's last write on
    the broker, but a copy's time of copying: a span of them under
    :data:`MIN_MTIME_SPAN_SECONDS` is taken for a copy, not for a rate."""
    timed = [
        (next_offset, ts if ts >= 0 else mtime, "record timestamps" if ts >= 0 else "mtimes")
        for base, next_offset, ts, mtime in segments
        if next_offset > base and (ts >= 0 or mtime > 0)
    ]
    if len(timed) < 2:
        return None
    (first_offset, first_ms, kind), (last_offset, last_ms, _) = timed[0], timed[-1]
    seconds = (last_ms - first_ms) / 1000
    if seconds <= 0 or last_offset <= first_offset:
        return None
    if kind == "mtimes" and seconds < MIN_MTIME_SPAN_SECONDS:
        return None
    records = last_offset - first_offset
    return CommitRate(
        records / seconds,
        f"{records:,} records in {seconds:,.0f} s between the last writes of the first and"
        f" last segments ({kind})",
    )


@dataclass(frozen=True, slots=True)
class Headroom:
    """The recommended buffer with room for growth: ``dedupe_buffer_size`` (rounded),
    ``heap_bytes`` what the cleaner then takes from the broker's heap, ``arithmetic`` how."""

    entries: int
    dedupe_buffer_size: int
    heap_bytes: int
    possible: bool
    arithmetic: str


def with_headroom(
    needed_entries: int,
    dirty_offsets: int,
    rate: CommitRate | None,
    threads: int,
    load_factor: float,
    io_buffer_size: int,
) -> Headroom:
    """The buffer for ``needed_entries`` plus a day's growth at ``rate`` (the dirty section's
    ``needed_entries`` distinct keys over ``dirty_offsets`` offsets: its new keys per record),
    rounded up to a power of two MiB, and the heap it costs."""
    steps = []
    growth = 0
    if rate is not None and dirty_offsets > 0:
        per_record = min(needed_entries / dirty_offsets, 1.0)
        day = int(rate.per_second * GROWTH_SECONDS * per_record + 0.5)
        growth = min(day, needed_entries)
        steps.append(
            f"a day at {rate.per_second:,.2f} commits/s ({rate.basis}) x {per_record:.2f} new"
            f" keys per record (the dirty section's) = {day:,} more entries"
            + (f", at most the {needed_entries:,} there are now" if growth < day else "")
        )
    else:
        steps.append("no commit rate in the segments' times: no growth added")
    entries = needed_entries + growth
    advice = buffer_for(entries, threads, load_factor)
    per_thread = _power_of_two_mib(max(advice.memory_per_thread, MIN_MEMORY_PER_THREAD))
    per_thread = min(per_thread, INT_MAX)
    possible = advice.possible
    total = per_thread * threads
    steps.append(f"{entries:,} entries need {advice.dedupe_buffer_size:,} B")
    steps.append(
        f"rounded up to {per_thread // MIB:,} MiB per thread x {threads} = {total:,} B"
        if per_thread % MIB == 0
        else f"capped at {per_thread:,} B per thread (Int.MaxValue) x {threads} = {total:,} B"
    )
    heap = total + io_buffer_size
    steps.append(
        f"heap: {total:,} B of offset map(s), allocated when the cleaner starts, +"
        f" {io_buffer_size:,} B of read and write buffers = {heap:,} B"
        + (
            ", half or more of kafka-server-start.sh's default heap (-Xmx1G): raise it"
            " (KAFKA_HEAP_OPTS)"
            if heap >= DEFAULT_HEAP_BYTES // 2
            else ""
        )
    )
    return Headroom(entries, total, heap, possible, "; ".join(steps))


def _power_of_two_mib(n: int) -> int:
    size = MIB
    while size < n:
        size *= 2
    return size
