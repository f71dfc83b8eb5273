"""What the broker's next start will do to a log dir: index files it calls corrupt and
rebuilds, segments it re-reads after an unclean shutdown, leftover files it deletes or
completes. Covers every partition dir, not only the offsets topic: an unclean shutdown breaks
them all. The per-version rules live in ``offsets_auditor.startup.indexes``.

Whether a broker is running on the log dir (``LogDir.liveness``, its ``.lock`` held) decides
what a missing ``.kafka_cleanshutdown`` means. The broker deletes the marker once its logs are
loaded and writes it at a clean shutdown (2.3.0 ``LogManager.loadLogs`` and ``shutdown``), so
a running broker never has one: that is a ``broker-running`` info finding, with the next
start's work after a clean shutdown and if it crashed now, not an ``unclean-shutdown``. A
stopped one without the marker stopped uncleanly; where it cannot be told, the finding says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir.liveness import BrokerState, Liveness
from offsets_auditor.logdir.model import LeftoverKind, LogDir
from offsets_auditor.startup.indexes import IndexVerdict, Verdict, index_verdicts
from offsets_auditor.startup.recovery import PartitionRecoveryPlan, recovery_plan
from offsets_auditor.versions import KafkaVersion


def startup_report(
    logdir: LogDir, version: KafkaVersion
) -> tuple[list[IndexVerdict], dict[str, Any], list[Finding]]:
    """The audit's index verdicts, its ``recovery`` summary and the findings."""
    verdicts = index_verdicts(logdir, version)
    plans = recovery_plan(logdir, version)
    findings = [
        index_finding(v)
        for v in verdicts
        if v.verdict in (Verdict.CORRUPT, Verdict.FATAL, Verdict.MISSING)
    ]
    findings.extend(leftover_findings(logdir))
    recovery = recovery_json(logdir, plans)
    if logdir.liveness.running:
        crashed = recovery_json(logdir, recovery_plan(if_crashed(logdir), version))
        recovery["if_crashed"] = {
            "segments_to_recover": crashed["segments_to_recover"],
            "bytes_to_read": crashed["bytes_to_read"],
            "depends_on_version": [],
        }
    findings.extend(shutdown_findings(logdir, recovery))
    return verdicts, recovery, findings


def shutdown_findings(logdir: LogDir, recovery: dict[str, Any]) -> list[Finding]:
    """``broker-running`` for a running broker, ``unclean-shutdown`` for one without the
    marker, from the ``recovery`` summary (its numbers, and where they depend on the version)."""
    if logdir.liveness.running:
        return [running_finding(logdir, recovery)]
    if not logdir.clean_shutdown.present:
        return [unclean_finding(logdir, recovery)]
    return []


def rereads(totals: dict[str, Any]) -> str:
    """ "N segments, B bytes", and each version's numbers where they depend on it."""
    text = f"{totals['segments_to_recover']:,} segments, {totals['bytes_to_read']:,} bytes"
    depends = totals.get("depends_on_version") or []
    if not depends:
        return text
    return (
        f"at least {text} (what every version of the detected range does; how many more"
        " depends on the version: "
        + "; ".join(
            f"Kafka {_span(d['kafka_versions'])}: {d['segments_to_recover']:,} segments,"
            f" {d['bytes_to_read']:,} bytes"
            for d in depends
        )
        + ")"
    )


def _span(versions: list[str]) -> str:
    first, last = versions
    return first if first == last else f"{first} to {last}"


def if_crashed(logdir: LogDir) -> LogDir:
    """``logdir`` as the broker running on it would leave it if it died now (``kill -9``):
    no marker, its active segments' index files preallocated as they are."""
    return replace(logdir, liveness=Liveness(BrokerState.STOPPED, "if it crashed now"))


def running_finding(logdir: LogDir, recovery: dict[str, Any]) -> Finding:
    crashed = recovery["if_crashed"]
    return Finding(
        kind=FindingKind.BROKER_RUNNING,
        severity=Severity.INFO,
        detail=f"{logdir.liveness.evidence}. A running broker has no .kafka_cleanshutdown marker"
        " (it deletes it once its logs are loaded and writes it at a clean shutdown) and its"
        " active segments' index files are preallocated: neither is damage. Its next start"
        f" after a clean shutdown re-reads {rereads(recovery)}; if it crashed now (kill -9, an"
        f" OOM kill, a power loss), {rereads(crashed)}, before it serves them",
    )


def unclean_finding(logdir: LogDir, recovery: dict[str, Any]) -> Finding:
    liveness = logdir.liveness
    if liveness.state is BrokerState.STOPPED:
        why = f"no .kafka_cleanshutdown marker, and {liveness.evidence}; it stopped uncleanly"
    else:
        why = (
            "no .kafka_cleanshutdown marker: the broker stopped uncleanly, or it is running"
            f" ({liveness.evidence})"
        )
    return Finding(
        kind=FindingKind.UNCLEAN_SHUTDOWN,
        severity=Severity.WARNING,
        detail=f"{why}; its next start re-reads {rereads(recovery)}, before it serves them",
    )


def index_json(v: IndexVerdict) -> dict[str, Any]:
    """An index verdict as the audit's JSON report lists it."""
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
    kind = {
        Verdict.CORRUPT: FindingKind.CORRUPT_INDEX,
        Verdict.FATAL: FindingKind.INDEX_LOAD_FAILURE,
    }.get(v.verdict, FindingKind.MISSING_INDEX)
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
            kind=FindingKind.LEFTOVER_FILE,
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
        "if_crashed": None,
        "partitions": len(plans),
        "segments_to_recover": sum(len(p.recoveries) for p in plans),
        "bytes_to_read": sum(p.bytes_to_read for p in plans),
        "depends_on_version": [],
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
