"""``offsets-auditor audit``: the cleaner's verdict for every ``__consumer_offsets`` partition
of one or more broker log dirs, with what to change.

Pure orchestration over the core: read the log dir (``logdir``), scan each offsets partition
(``cleaner.partition_scan``), run the cleaner emulation (``cleaner.passes``), decide outcomes
(``cleaner.verdict``), and size the dedupe buffer that would fix it (``cleaner.capacity``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offsets_auditor.cleaner import behaviour
from offsets_auditor.cleaner.capacity import BufferAdvice, buffer_for
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.offset_map import OffsetMap
from offsets_auditor.cleaner.partition_scan import PartitionScan, scan_partition
from offsets_auditor.cleaner.passes import (
    CleanerFailure,
    PartitionCleaner,
    PassResult,
    Selection,
    first_dirty_offset,
    select,
)
from offsets_auditor.cleaner.threads import Schedule, simulate
from offsets_auditor.cleaner.verdict import Facts, Outcome, outcome, severity_of
from offsets_auditor.findings import Finding, Severity, exit_status
from offsets_auditor.logdir import LogDir, offsets_partitions, read_log_dir

OFFSETS_TOPIC = "__consumer_offsets"
#: Assumed coordinator load rate when nothing better is known (bytes/s): a conservative figure
#: for a broker reading a compacted topic from page cache and replaying it into memory.
DEFAULT_LOAD_BYTES_PER_SECOND = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PartitionAudit:
    broker_id: int | None
    log_dir: str
    scan: PartitionScan
    checkpoint: int | None
    first_dirty: int
    selection: Selection
    passes: tuple[PassResult, ...]
    failure: CleanerFailure | None
    outcome: Outcome
    reason: str
    capacity: int
    needed_entries: int | None
    advice: BufferAdvice | None

    @property
    def name(self) -> str:
        return self.scan.partition.name

    @property
    def never_compacted(self) -> bool:
        """No clean has ever moved the checkpoint past the log start (an entry equal to the
        start is what a dead 0.9-2.0 thread leaves behind)."""
        start = self.scan.segments[0].base_offset if self.scan.segments else 0
        return self.checkpoint is None or self.checkpoint <= start

    def retained_records(self) -> int | None:
        return self.passes[-1].end_records if self.passes else None

    def to_json(self, load_rate: float) -> dict[str, Any]:
        scan = self.scan
        passes = self.passes
        return {
            "broker_id": self.broker_id,
            "log_dir": self.log_dir,
            "partition": scan.partition.partition,
            "name": self.name,
            "size_bytes": scan.size_bytes,
            "segment_count": len(scan.segments),
            "records": scan.records,
            "log_end_offset": scan.log_end_offset,
            "cleaner_checkpoint": self.checkpoint,
            "never_compacted": self.never_compacted,
            "dirty_ratio": round(self.selection.ratio, 6),
            "first_dirty_offset": self.first_dirty,
            "first_uncleanable_offset": self.selection.first_uncleanable,
            "uncleanable_because": self.selection.blocked_by,
            "clean_bytes": self.selection.clean_bytes,
            "cleanable_bytes": self.selection.cleanable_bytes,
            "cleaner": {
                "outcome": self.outcome.value,
                "reason": self.reason,
                "capacity": self.capacity,
                "passes": len(passes),
                "pass_end_offsets": [p.end_offset for p in passes],
                "retained_records": self.retained_records(),
                "retained_bytes": passes[-1].end_bytes if passes else None,
                "retained_bytes_exact": all(p.bytes_exact for p in passes) if passes else None,
                "message": self.failure.message if self.failure else None,
                "pass_details": [_pass_json(p) for p in passes],
            },
            "recommendation": self.recommendation(),
            "load_estimate": self.load_estimate(load_rate),
        }

    def recommendation(self) -> dict[str, Any] | None:
        if self.advice is None:
            return None
        a = self.advice
        return {
            "log.cleaner.dedupe.buffer.size": a.dedupe_buffer_size,
            "entries_needed": a.entries,
            "possible": a.possible,
            "arithmetic": a.arithmetic,
        }

    def load_estimate(self, load_rate: float) -> dict[str, Any]:
        size = self.scan.size_bytes
        after = None
        if self.passes:
            # what the log would hold once the passes ran: cleaned part + the rest
            end = self.passes[-1].end_offset
            rest = sum(s.size for s in self.scan.segments if s.base_offset >= end)
            after = self.passes[-1].end_bytes + rest
        return {
            "bytes": size,
            "records": self.scan.records,
            "seconds": round(size / load_rate, 3),
            "bytes_after_cleaning": after,
            "basis": f"reading {size:,} bytes at {load_rate / 1048576:,.1f} MiB/s"
            " (assumed; calibrate with restart-progress on this broker's logs)",
        }


def _pass_json(p: PassResult) -> dict[str, Any]:
    return {
        "start_offset": p.start_offset,
        "end_offset": p.end_offset,
        "upper_bound": p.upper_bound,
        "segments": p.segments,
        "map_entries": p.map_entries,
        "map_full": p.map_full,
        "buffer_utilization": round(p.utilization, 6),
        "start_records": p.start_records,
        "start_bytes": p.start_bytes,
        "end_records": p.end_records,
        "end_bytes": p.end_bytes,
        "tombstones_kept": p.tombstones_kept,
        "tombstones_dropped": p.tombstones_dropped,
        "aborted_records_dropped": p.aborted_dropped,
        "markers_dropped": p.markers_dropped,
        "keyless_dropped": p.invalid_dropped,
        "delete_horizon_ms": p.delete_horizon_ms,
        "log_lines": list(p.log_lines),
    }


@dataclass(frozen=True, slots=True)
class BrokerAudit:
    log_dir: LogDir
    config: CleanerConfig
    partitions: tuple[PartitionAudit, ...]
    findings: tuple[Finding, ...]
    recommendation: BufferAdvice | None


def needed_entries(scan: PartitionScan, config: CleanerConfig, first_dirty: int, upper: int) -> int:
    """Map entries one thread needs to clean the dirty section in one go: without a thread
    death (0.9.0.x: the largest dirty segment's offset span, and the distinct keys before each
    segment plus its span) or in a single pass (0.10.0+: the distinct keys, plus one when a
    keyed record follows the last new key, since a full map stops at the next keyed record)."""
    era = behaviour.map_era(config.kafka_version)
    unlimited = OffsetMap(2**62, 1.0)
    need = 0
    seen_new_last = False
    from offsets_auditor.cleaner.partition_scan import segment_batches

    for seg in scan.segments:
        if seg.next_offset <= first_dirty or seg.base_offset >= upper:
            continue
        if era == behaviour.MapEra.SEGMENT_SPAN:
            need = max(need, unlimited.size + seg.next_offset - seg.base_offset)
        for batch in segment_batches(scan.partition, seg):
            if batch.header.is_control:
                continue
            for record in batch.records:
                if record.key is None or record.offset < first_dirty or record.offset >= upper:
                    continue
                before = unlimited.size
                unlimited.put(record.key, record.offset)
                seen_new_last = unlimited.size > before
    if era == behaviour.MapEra.SEGMENT_SPAN:
        return need
    return unlimited.size + (0 if seen_new_last else 1) if unlimited.size else 0


def audit_log_dir(path: Path, config: CleanerConfig, now_ms: int) -> BrokerAudit:
    logdir = read_log_dir(path, config.kafka_version)
    findings: list[Finding] = list(logdir.findings)
    checkpoints = logdir.cleaner_checkpoint.offsets() if logdir.cleaner_checkpoint else {}
    log_starts = logdir.log_start_checkpoint.offsets() if logdir.log_start_checkpoint else {}
    capacity = OffsetMap(config.memory_per_thread, config.load_factor).max_desired
    staged = []
    for partition in offsets_partitions(logdir):
        scan = scan_partition(partition)
        for error in scan.errors:
            findings.append(
                Finding(
                    kind="truncated-tail"
                    if type(error).__name__ == "TruncatedError"
                    else "corrupt-record",
                    severity=Severity.WARNING,
                    detail=error.message,
                    file=error.file,
                    position=error.position,
                    field=error.field,
                    partition=partition.name,
                )
            )
        if not scan.segments:
            continue
        key = (OFFSETS_TOPIC, partition.partition)
        checkpoint = checkpoints.get(key)
        log_start = scan.segments[0].base_offset
        if behaviour.log_start_from_checkpoint(config.kafka_version) and key in log_starts:
            log_start = max(log_start, log_starts[key])
        first_dirty = first_dirty_offset(scan, checkpoint, log_start)
        if (
            behaviour.log_start_from_checkpoint(config.kafka_version)
            and checkpoint is not None
            and checkpoint > scan.log_end_offset
        ):
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
        staged.append(
            (partition, scan, checkpoint, first_dirty, initial, passes, selections, failure, need)
        )

    killers = [s[0].name for s in staged if s[7] is not None and s[7].kills_thread]
    executed = {s[0].name: len(s[5]) for s in staged}
    deaths = 0
    if killers and config.enabled:
        executed, deaths = simulate(
            [
                Schedule(
                    name=s[0].name,
                    order=s[0].partition,
                    ratios=tuple(sel.ratio for sel in s[6]),
                    costs=tuple(p.start_bytes + 1 for p in s[5]),
                    fails_at=len(s[5]) if s[7] is not None and s[7].kills_thread else None,
                )
                for s in staged
            ],
            config.threads,
        )
    all_dead = deaths >= config.threads
    partitions = []
    for partition, scan, checkpoint, first_dirty, initial, all_passes, _, failure, need in staged:
        passes = all_passes[: executed[partition.name]]
        cut_short = len(passes) < len(all_passes)
        facts = Facts(
            cleaner_enabled=config.enabled,
            failure_message=failure.message if failure else None,
            failure_kills_thread=bool(failure and failure.kills_thread),
            killed_elsewhere=next((k for k in killers if k != partition.name), None)
            if failure is None and cut_short and all_dead
            else None,
            passes=len(all_passes),
            eligible=initial.eligible,
            cleanable_bytes=initial.cleanable_bytes,
            ratio=initial.ratio,
            min_ratio=config.min_cleanable_ratio,
            blocked_by=initial.blocked_by,
            passes_before_blocked=len(passes),
        )
        result, reason = outcome(facts)
        advice = buffer_for(need, config.threads, config.load_factor) if need > capacity else None
        audit = PartitionAudit(
            broker_id=logdir.broker_id,
            log_dir=str(path),
            scan=scan,
            checkpoint=checkpoint,
            first_dirty=first_dirty,
            selection=initial,
            passes=tuple(passes),
            failure=failure,
            outcome=result,
            reason=reason,
            capacity=capacity,
            needed_entries=need,
            advice=advice,
        )
        partitions.append(audit)
        if result in (Outcome.THREAD_DEATH, Outcome.BLOCKED, Outcome.MULTI_PASS):
            findings.append(
                Finding(
                    kind=f"cleaner-{result.value}",
                    severity=Severity(severity_of(result)),
                    detail=reason,
                    partition=partition.name,
                )
            )
    worst = max((p.needed_entries or 0 for p in partitions), default=0)
    recommendation = (
        buffer_for(worst, config.threads, config.load_factor) if worst > capacity else None
    )
    if not config.enabled:
        findings.append(
            Finding(
                kind="cleaner-disabled",
                severity=Severity.CRITICAL,
                detail="log.cleaner.enable=false: __consumer_offsets is never compacted"
                " on this broker",
            )
        )
    partition_dirs = offsets_partitions(logdir)
    if partition_dirs and len(partition_dirs) != config.offsets_topic_partitions:
        findings.append(
            Finding(
                kind="offsets-partition-count-mismatch",
                severity=Severity.INFO,
                detail=f"{len(partition_dirs)} __consumer_offsets partition dirs here, while"
                " offsets.topic.num.partitions="
                f"{config.offsets_topic_partitions}: other brokers may"
                " hold the rest; coordinator math must use the topic's real partition count",
            )
        )
    return BrokerAudit(logdir, config, tuple(partitions), tuple(findings), recommendation)


def report_json(
    audits: list[BrokerAudit], load_rate: float = DEFAULT_LOAD_BYTES_PER_SECOND
) -> dict[str, Any]:
    findings = [f for a in audits for f in a.findings]
    return {
        "kafka_version": str(audits[0].config.kafka_version) if audits else None,
        "brokers": [
            {
                "broker_id": a.log_dir.broker_id,
                "log_dir": str(a.log_dir.path),
                "clean_shutdown": a.log_dir.clean_shutdown.present,
                "cleaner": {
                    "enabled": a.config.enabled,
                    "threads": a.config.threads,
                    "dedupe_buffer_size": a.config.dedupe_buffer_size,
                    "load_factor": a.config.load_factor,
                    "memory_per_thread": a.config.memory_per_thread,
                    "capacity": OffsetMap(
                        a.config.memory_per_thread, a.config.load_factor
                    ).max_desired,
                    "min_cleanable_ratio": a.config.min_cleanable_ratio,
                },
                "recommendation": None
                if a.recommendation is None
                else {
                    "log.cleaner.dedupe.buffer.size": a.recommendation.dedupe_buffer_size,
                    "possible": a.recommendation.possible,
                    "arithmetic": a.recommendation.arithmetic,
                },
            }
            for a in audits
        ],
        "partitions": [p.to_json(load_rate) for a in audits for p in a.partitions],
        "findings": [f.to_dict() for f in findings],
        "exit_status": exit_status(findings),
    }
