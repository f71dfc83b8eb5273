"""What a broker re-reads at its next start: segments whose index it rebuilds, and, after an
unclean shutdown (no ``.kafka_cleanshutdown``), every segment from the one holding the recovery
point onward (0.9.0.1 ``Log.recoverLog``; 2.3.0 ``Log.recoverLog``; 3.x ``LogLoader``).
"""

from __future__ import annotations

from dataclasses import dataclass

from offsets_auditor.logdir.layout import CheckpointFileName, DirState
from offsets_auditor.logdir.model import LogDir, Segment
from offsets_auditor.startup.indexes import (
    NOT_REBUILT,
    IndexKind,
    Verdict,
    index_verdicts,
    recovery_points,
)
from offsets_auditor.versions import KafkaVersion

# --- Recovery after an unclean shutdown ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SegmentRecovery:
    """One ``LogSegment.recover`` pass over ``file`` (a ``.log``, relative to the log dir):
    ``reason`` is ``corrupt-index``/``missing-index`` (at load) or ``unflushed`` (recoverLog)."""

    file: str
    base_offset: int
    bytes: int
    reason: str


@dataclass(frozen=True, slots=True)
class PartitionRecoveryPlan:
    partition: str
    recovery_point: int
    recovery_point_source: str
    recoveries: tuple[SegmentRecovery, ...]

    @property
    def bytes_to_read(self) -> int:
        return sum(r.bytes for r in self.recoveries)


def unflushed_segments(segments: tuple[Segment, ...], recovery_point: int) -> tuple[Segment, ...]:
    """``logSegments(recoveryPoint, Long.MaxValue)``: from the segment holding the recovery point
    (``floorKey``) onward, or all of them when none starts at or below it (0.9.0.1/2.3.0
    ``Log.logSegments``; 3.9.0-rc3 ``LogSegments.values``). The active segment is always in."""
    floor = [s for s in segments if s.base_offset <= recovery_point]
    start = floor[-1].base_offset if floor else None
    return tuple(s for s in segments if start is None or s.base_offset >= start)


def recovery_plan(logdir: LogDir, version: KafkaVersion) -> list[PartitionRecoveryPlan]:
    """Per partition dir, every segment the next start re-reads, in order, and the bytes.

    Load-time rebuilds (corrupt or missing index, any shutdown) come first, then, when there is
    no ``.kafka_cleanshutdown``, ``recoverLog`` re-reads every segment from the one holding the
    recovery point onward (not for ``-delete`` dirs: 2.3.0 ``Log.loadSegments``) - so a segment can
    be read twice. A recovery that finds an invalid batch truncates there and deletes the later
    segments, so the unflushed bytes are an upper bound. Producer-state rebuilding (0.11+) also
    reads from the latest snapshot; that is not counted here.

    A running broker (``logdir.liveness``) has no marker: it is planned as after a clean
    shutdown (:func:`offsets_auditor.startup.checks.if_crashed` gives the other case).
    """
    points, source = recovery_points(logdir)
    verdicts = index_verdicts(logdir, version)
    unclean = not logdir.clean_shutdown.present and not logdir.liveness.running
    rebuilt = {
        (v.partition, v.base_offset)
        for v in verdicts
        if v.verdict is Verdict.CORRUPT
        or (
            v.verdict is Verdict.MISSING
            and v.kind is IndexKind.OFFSET
            and NOT_REBUILT not in v.reason
        )
    }
    missing = {
        (v.partition, v.base_offset)
        for v in verdicts
        if v.verdict is Verdict.MISSING and v.kind is IndexKind.OFFSET
    }
    plans: list[PartitionRecoveryPlan] = []
    for part in logdir.partitions:
        key = (part.topic, part.partition)
        point = points.get(key, 0)
        recoveries = [
            SegmentRecovery(
                f"{part.name}/{seg.log.name}",
                seg.base_offset,
                seg.log.size,
                "missing-index" if (part.name, seg.base_offset) in missing else "corrupt-index",
            )
            for seg in part.segments
            if (part.name, seg.base_offset) in rebuilt
        ]
        if unclean and part.state is not DirState.DELETE:
            recoveries.extend(
                SegmentRecovery(
                    f"{part.name}/{seg.log.name}", seg.base_offset, seg.log.size, "unflushed"
                )
                for seg in unflushed_segments(part.segments, point)
            )
        where = (
            source
            if key in points or source != CheckpointFileName.RECOVERY_POINT
            else ("absent from recovery-point-offset-checkpoint: 0")
        )
        plans.append(PartitionRecoveryPlan(part.name, point, where, tuple(recoveries)))
    return plans
