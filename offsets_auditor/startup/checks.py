"""What the broker's next start will do to a log dir: index files it calls corrupt and
rebuilds, segments it re-reads after an unclean shutdown, leftover files it deletes or
completes. Covers every partition dir, not only the offsets topic: an unclean shutdown breaks
them all. The per-version rules live in ``offsets_auditor.startup.indexes``.
"""

from __future__ import annotations

from typing import Any

from offsets_auditor.findings import Finding, Severity
from offsets_auditor.logdir.model import LeftoverKind, LogDir
from offsets_auditor.startup.indexes import IndexVerdict, Verdict, index_verdicts
from offsets_auditor.startup.recovery import PartitionRecoveryPlan, recovery_plan
from offsets_auditor.versions import KafkaVersion


def startup_report(
    logdir: LogDir, version: KafkaVersion
) -> tuple[list[dict[str, Any]], dict[str, Any], list[Finding]]:
    """The audit's ``indexes`` list, its ``recovery`` summary and the findings."""
    verdicts = index_verdicts(logdir, version)
    plans = recovery_plan(logdir, version)
    indexes = [index_json(v) for v in verdicts]
    findings = [
        index_finding(v)
        for v in verdicts
        if v.verdict in (Verdict.CORRUPT, Verdict.FATAL, Verdict.MISSING)
    ]
    findings.extend(leftover_findings(logdir))
    recovery = recovery_json(logdir, plans)
    if not logdir.clean_shutdown.present:
        findings.append(
            Finding(
                kind="unclean-shutdown",
                severity=Severity.WARNING,
                detail="no .kafka_cleanshutdown marker: the broker stopped uncleanly (or is"
                f" running); its next start re-reads {recovery['segments_to_recover']:,} segments,"
                f" {recovery['bytes_to_read']:,} bytes, before it serves them",
            )
        )
    return indexes, recovery, findings


def index_json(v: IndexVerdict) -> dict[str, Any]:
    return {
        "file": v.file,
        "partition": v.partition,
        "kind": v.kind.value,
        "base_offset": v.base_offset,
        "verdict": v.verdict.value,
        "reason": v.reason,
    }


def index_finding(v: IndexVerdict) -> Finding:
    severity = Severity.CRITICAL if v.verdict is Verdict.FATAL else Severity.WARNING
    kind = {Verdict.CORRUPT: "corrupt-index", Verdict.FATAL: "index-load-failure"}.get(
        v.verdict, "missing-index"
    )
    return Finding(
        kind=kind, severity=severity, detail=v.reason, file=v.file, partition=v.partition
    )


#: What each leftover kind is, on a running broker and at the next start (0.9.0.1
#: ``Log.asyncDeleteSegment``, ``Log.loadSegments``; 2.3.0
#: ``Log.removeTempFilesAndCollectSwapFiles`` and ``loadSegmentFiles``; 3.9.0-rc3
#: ``LocalLog.deleteSegmentFiles`` and ``LogLoader.removeTempFilesAndCollectSwapFiles``).
#: None is a problem: each is info.
LEFTOVER_TEXT = {
    LeftoverKind.DELETED: "a segment file renamed .deleted, waiting file.delete.delay.ms"
    " (log.segment.delete.delay.ms, 60000 by default) before the broker deletes it: normal on a"
    " running broker (a segment removed by retention or replaced by a clean); if the broker"
    " stopped first, its next start deletes it",
    LeftoverKind.CLEANED: "a log cleaner output not swapped in yet: a clean in progress on a"
    " running broker, or one a stop interrupted; the next start deletes it",
    LeftoverKind.SWAP: "a cleaned (2.x+: or split) segment being swapped in: in progress on a"
    " running broker, or a swap a stop interrupted; the next start completes it (2.x+: or drops"
    " it when a .cleaned file below it shows an unfinished split)",
    LeftoverKind.ORPHAN_INDEX: "an index file whose .log is gone: on a running broker, a segment"
    ' being deleted or swapped; the next start deletes it ("Found an orphaned index file")',
}


def leftover_findings(logdir: LogDir) -> list[Finding]:
    return [
        Finding(
            kind="leftover-file",
            severity=Severity.INFO,
            detail=LEFTOVER_TEXT[leftover.kind],
            file=f"{part.name}/{leftover.file.name}",
            partition=part.name,
        )
        for part in logdir.partitions
        for leftover in part.leftovers
    ]


def recovery_json(logdir: LogDir, plans: list[PartitionRecoveryPlan]) -> dict[str, Any]:
    return {
        "clean_shutdown": logdir.clean_shutdown.present,
        "partitions": len(plans),
        "segments_to_recover": sum(len(p.recoveries) for p in plans),
        "bytes_to_read": sum(p.bytes_to_read for p in plans),
        "by_partition": [
            {
                "partition": p.partition,
                "recovery_point": p.recovery_point,
                "segments": [
                    {"file": r.file, "bytes": r.bytes, "reason": r.reason} for r in p.recoveries
                ],
            }
            for p in plans
            if p.recoveries
        ],
    }
