"""The other known reasons a partition does not compact, or costs its coordinator dearly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.partition_scan import PartitionScan
from offsets_auditor.constants import INT_MAX
from offsets_auditor.findings import Finding, FindingKind, Severity


def offset_overflow_findings(scan: PartitionScan, config: CleanerConfig) -> list[Finding]:
    """KAFKA-5413 / KAFKA-6264: offset indexes store ``offset - baseOffset`` as an int32, so a
    segment spanning more than Int.MaxValue offsets cannot be cleaned into one segment. Before
    2.0 the cleaner thread dies on it ("largest offset in message set can not be safely
    converted to relative offset"); 2.0+ splits the segment first."""
    found = []
    fixed = config.behaviour.splits_offset_overflow
    for seg in scan.segments:
        span = seg.next_offset - 1 - seg.base_offset
        if span > INT_MAX:
            found.append(
                Finding(
                    kind=FindingKind.SEGMENT_OFFSET_OVERFLOW,
                    severity=Severity.WARNING if fixed else Severity.CRITICAL,
                    detail=f"segment {seg.file} spans {span:,} offsets, more than a relative offset"
                    " index can hold (Int.MaxValue); "
                    + (
                        "Kafka 2.0+ splits it before cleaning (KAFKA-6264)"
                        if fixed
                        else "the cleaner thread dies on it before 2.0 (KAFKA-5413/KAFKA-6264)"
                    ),
                    file=f"{scan.partition.name}/{seg.file}",
                    partition=scan.partition.name,
                )
            )
    return found


def hanging_transaction_findings(
    scan: PartitionScan, config: CleanerConfig, pinned_by_transaction: bool, now_ms: int
) -> list[Finding]:
    """An open transaction pins the last stable offset: nothing from its first offset on is
    cleaned until it commits or aborts (0.11+ ``LogCleanerManager.cleanableOffsets``), and its
    offset commits stay pending for the coordinator. On a running broker transactions are open
    all the time for a few milliseconds: one is HANGING only when it has been open longer than
    ``transaction.max.timeout.ms``, after which the transaction coordinator would have aborted
    it (its producer's ``transaction.timeout.ms`` can be no larger); the others are noted."""
    if not config.behaviour.reads_transactions:
        return []
    found = []
    young = []
    limit = config.transaction_max_timeout_ms
    for pid, first in sorted(scan.transactions.ongoing.items(), key=lambda kv: kv[1]):
        age = scan.transactions.open_for_ms(pid, now_ms)
        if age is not None and age <= limit:
            young.append((pid, first, age))
            continue
        pinned = sum(s.size for s in scan.segments if s.base_offset >= first)
        since = "at an unknown time" if age is None else f"for {_duration(age)}"
        found.append(
            Finding(
                kind=FindingKind.HANGING_TRANSACTION,
                severity=Severity.CRITICAL if pinned_by_transaction else Severity.WARNING,
                detail=f"producer {pid} has had a transaction open since offset {first} {since},"
                f" longer than transaction.max.timeout.ms ({_duration(limit)}), with no"
                f" COMMIT/ABORT marker: the cleaner stops there, pinning {pinned:,} bytes, and"
                " its offset commits stay pending (invisible to OffsetFetch); abort it"
                " (kafka-transactions.sh --abort, Kafka 3.0+)",
                partition=scan.partition.name,
            )
        )
    if young:
        pid, first, age = young[0]
        found.append(
            Finding(
                kind=FindingKind.OPEN_TRANSACTION,
                severity=Severity.INFO,
                detail=f"{len(young)} transaction(s) open, the oldest (producer {pid}, from offset"
                f" {first}) for {_duration(age)}: normal on a running broker; the cleaner stops"
                " at the oldest, and its offset commits stay pending (invisible to OffsetFetch),"
                " until it ends, which is within transaction.max.timeout.ms"
                f" ({_duration(limit)})",
                partition=scan.partition.name,
            )
        )
    return found


def _duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


class _Sized(Protocol):
    @property
    def name(self) -> str: ...

    def size_and_top_writer(self) -> tuple[int, str | None, float]: ...


def _percent(share: float) -> str:
    """A share as a percentage, with two significant digits below 1% (never a bare "0%")."""
    return f"{share:.0%}" if share >= 0.01 else f"{share * 100:.2g}%"


def skew_findings(partitions: Sequence[_Sized], factor: int = 10) -> list[Finding]:
    """A partition ``factor`` times the median size means a few groups dominate its
    coordinator (and its load time after a failover)."""
    measured = [(p.name, *p.size_and_top_writer()) for p in partitions]
    sizes = sorted(m[1] for m in measured)
    if len(sizes) < 2:
        return []
    median = sizes[len(sizes) // 2]
    found = []
    for name, size, group, share in measured:
        if size >= factor * max(median, 1) and size > 1024 * 1024:
            compared = (
                f"{size / median:,.0f}x the median offsets partition"
                if median
                else "while the median offsets partition is empty"
            )
            who = (
                f"; its top writer, group {group}, writes {_percent(share)} of it" if group else ""
            )
            found.append(
                Finding(
                    kind=FindingKind.PARTITION_SKEW,
                    severity=Severity.WARNING,
                    detail=f"{name} holds {size:,} bytes, {compared}{who}",
                    partition=name,
                )
            )
    return found
