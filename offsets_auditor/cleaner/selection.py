"""Which partition the cleaner picks and how far it may clean it: the numbers
``grabFilthiestLog`` (0.9) / ``grabFilthiestCompactedLog`` (0.10.1+) compute
(``LogCleanerManager.scala`` 0.9.0.1, 2.3.0; ``LogToClean``, ``calculateCleanableBytes``).
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets_auditor.cleaner.behaviour import MapEra
from offsets_auditor.cleaner.config import LONG_MAX, CleanerConfig
from offsets_auditor.cleaner.log_state import LogState
from offsets_auditor.cleaner.partition_scan import PartitionScan


def first_dirty_offset(scan: PartitionScan, checkpoint: int | None, log_start: int) -> int:
    """The checkpoint, or the log start when there is none or it lies below the log start
    (``LogCleanerManager.cleanableOffsets``, "Resetting first dirty offset")."""
    if checkpoint is None or checkpoint < log_start:
        return log_start
    return checkpoint


@dataclass(frozen=True, slots=True)
class Selection:
    """The numbers ``grabFilthiestCompactedLog`` / ``grabFilthiestLog`` look at."""

    first_dirty: int
    first_uncleanable: int
    uncleanable_segment_base: int
    clean_bytes: int
    cleanable_bytes: int
    ratio: float
    need_compaction_now: bool
    eligible: bool
    blocked_by: str | None


def reads_clock(config: CleanerConfig) -> bool:
    """Whether ``select`` at ``config`` depends on the time of the audit: a compaction lag the
    broker's version honours (an open transaction's age is the other use of the clock)."""
    behaviour = config.behaviour
    return (behaviour.has_min_compaction_lag and config.min_compaction_lag_ms > 0) or (
        behaviour.has_max_compaction_lag and config.max_compaction_lag_ms < LONG_MAX
    )


def select(state: LogState, first_dirty: int, config: CleanerConfig, now_ms: int) -> Selection:
    behaviour = config.behaviour
    segments = state.segments
    active_base = state.groups[-1].base_offset
    bounds = [active_base]
    blocked_by = "active segment"
    lso = state.scan.transactions.first_unstable_offset()
    if behaviour.reads_transactions and lso is not None and lso < active_base:
        bounds.append(lso)
        blocked_by = "open transaction"
    if behaviour.has_min_compaction_lag and config.min_compaction_lag_ms > 0:
        for group in state.log_segments(first_dirty, active_base):
            largest = max(segments[i].largest_timestamp for i in group.members)
            if largest > now_ms - config.min_compaction_lag_ms:
                if group.base_offset < min(bounds):
                    blocked_by = "min.compaction.lag.ms"
                bounds.append(group.base_offset)
                break
    first_uncleanable = min(bounds)
    if behaviour.map_era != MapEra.PARTIAL:
        first_uncleanable = active_base
    clean = sum(state.group_size(g) for g in state.log_segments(-1, first_dirty))
    if behaviour.map_era == MapEra.PARTIAL:
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
    if behaviour.has_max_compaction_lag and config.max_compaction_lag_ms < LONG_MAX:
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
