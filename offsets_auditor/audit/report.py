"""The audit as one JSON document: the shape ``offsets-auditor audit --json`` prints and the
Spark job publishes."""

from __future__ import annotations

from typing import Any

from offsets_auditor.audit.broker_history import BrokerHistory
from offsets_auditor.audit.history_report import (
    broker_cleaner_log,
    broker_coordinator_loads,
    cleanings_json,
    partition_cleaner_log,
)
from offsets_auditor.audit.load_calibration import PartitionSize, units
from offsets_auditor.audit.partition import BrokerAudit, PartitionAudit
from offsets_auditor.audit.report_types import LoadEstimateJson
from offsets_auditor.broker_logs.load_models import MIN_LOAD_MS
from offsets_auditor.cleaner.behaviour import not_emulated
from offsets_auditor.cleaner.capacity import max_desired_map_size
from offsets_auditor.cleaner.headroom import Headroom
from offsets_auditor.cleaner.passes import PassResult
from offsets_auditor.findings import exit_status
from offsets_auditor.startup.checks import index_json
from offsets_auditor.version_detection import Detection
from offsets_auditor.versions import KafkaVersion

#: Assumed coordinator load rate when nothing better is known (bytes/s).
DEFAULT_LOAD_BYTES_PER_SECOND = 50 * 1024 * 1024


def report_json(
    audits: list[BrokerAudit],
    load_rate: float = DEFAULT_LOAD_BYTES_PER_SECOND,
    load_basis: str | None = None,
    detection: Detection | None = None,
    emulated: list[str] | None = None,
    *,
    with_groups: bool = True,
) -> dict[str, Any]:
    """The audit document (without ``groups`` when not ``with_groups``: for a reader that
    takes them elsewhere, or not at all). ``load_rate`` (bytes/s, ``load_basis`` saying where
    it comes from) is the assumed load rate, used where the broker's own load times fit no
    model (``audit.broker_history``). ``detection`` is how the version was found
    (``kafka_version``: ``used``, ``basis``, ``given``, ``range``, ``evidence``,
    ``set_aside``, and ``emulated``: the versions the cleaner was emulated at)."""
    findings = [f for a in audits for f in a.findings]
    used = str(audits[0].config.kafka_version) if audits else None
    version: dict[str, Any] = (
        detection.to_json()
        if detection is not None
        else {"used": used, "basis": "given", "given": used, "range": [used, used],
              "evidence": [], "set_aside": []}
    )  # fmt: skip
    version["emulated"] = emulated or [used]
    # the versions the verdicts speak for: the one given, or the range detected
    low, high = version["range"] if version["given"] is None else (used, used)
    version["not_emulated"] = (
        []
        if low is None or high is None
        else [
            {"fact": f.name, "since": f.since, "until": f.until, "why": f.why}
            for f in not_emulated(KafkaVersion.parse(low), KafkaVersion.parse(high))
        ]
    )
    groups = (
        {
            "groups": [
                {"broker_id": a.log_dir.broker_id, **g.to_json()} for a in audits for g in a.groups
            ]
        }
        if with_groups
        else {}
    )
    return {
        "kafka_version": version,
        "brokers": [broker_json(a) for a in audits],
        "partitions": [
            partition_json(p, load_rate, load_basis, a.history)
            for a in audits
            for p in a.partitions
        ],
        **groups,
        "indexes": [
            {"broker_id": a.log_dir.broker_id, **index_json(index)}
            for a in audits
            for index in a.indexes
        ],
        "cleanings": [
            row for a in audits for row in cleanings_json(a.history, a.log_dir.broker_id)
        ],
        "findings": [f.to_dict() for f in findings],
        "exit_status": exit_status(findings),
    }


def headroom_json(h: Headroom | None) -> dict[str, Any] | None:
    """The recommendation with a day's growth, rounded, and the heap it costs
    (``cleaner.headroom``)."""
    if h is None:
        return None
    return {
        "log.cleaner.dedupe.buffer.size": h.dedupe_buffer_size,
        "entries": h.entries,
        "heap_bytes": h.heap_bytes,
        "possible": h.possible,
        "arithmetic": h.arithmetic,
    }


def broker_json(a: BrokerAudit) -> dict[str, Any]:
    c = a.config
    running = a.log_dir.liveness.running
    return {
        "broker_id": a.log_dir.broker_id,
        "cluster_id": a.log_dir.cluster_id,
        "log_dir": str(a.log_dir.path),
        # whether the broker stopped cleanly; None while it runs (it has no marker then)
        "clean_shutdown": None if running else a.log_dir.clean_shutdown.present,
        "broker_state": a.log_dir.liveness.to_json(),
        "recovery": a.recovery,
        "cleaner": {
            "enabled": c.enabled,
            "threads": c.threads,
            "dedupe_buffer_size": c.dedupe_buffer_size,
            "load_factor": c.load_factor,
            "memory_per_thread": c.memory_per_thread,
            "capacity": max_desired_map_size(c.memory_per_thread, c.load_factor),
            "min_cleanable_ratio": c.min_cleanable_ratio,
            "threads_that_die": a.thread_deaths,
        },
        "recommendation": None
        if a.recommendation is None
        else {
            "log.cleaner.dedupe.buffer.size": a.recommendation.dedupe_buffer_size,
            "entries_needed": a.recommendation.entries,
            "possible": a.recommendation.possible,
            "arithmetic": a.recommendation.arithmetic,
            "with_headroom": headroom_json(a.headroom),
        },
        "offsets_topic": None if a.topic is None else a.topic.to_json(),
        "cleaner_log": broker_cleaner_log(a.history),
        "coordinator_loads": broker_coordinator_loads(a.history),
    }


def partition_json(
    p: PartitionAudit,
    load_rate: float,
    load_basis: str | None = None,
    history: BrokerHistory | None = None,
) -> dict[str, Any]:
    e = p.emulated
    scan = e.scan
    passes = p.passes
    return {
        "broker_id": p.broker_id,
        "log_dir": p.log_dir,
        "partition": e.partition.partition,
        "name": p.name,
        "size_bytes": scan.size_bytes,
        "segment_count": len(scan.segments),
        "records": scan.records,
        "log_end_offset": scan.log_end_offset,
        "cleaner_checkpoint": e.checkpoint,
        "never_compacted": p.never_compacted,
        "dirty_ratio": dirty_ratio(p),
        "first_dirty_offset": e.first_dirty,
        "first_uncleanable_offset": e.initial.first_uncleanable,
        "uncleanable_because": e.initial.blocked_by,
        "clean_bytes": e.initial.clean_bytes,
        "cleanable_bytes": e.initial.cleanable_bytes,
        "needed_entries": e.needed_entries,
        "cleaner": {
            "outcome": p.outcome.value,
            "reason": p.reason,
            "capacity": p.capacity,
            "passes": len(passes),
            "pass_end_offsets": [x.end_offset for x in passes],
            "retained_records": passes[-1].end_records if passes else None,
            "retained_bytes": passes[-1].end_bytes if passes else None,
            "retained_bytes_exact": all(x.bytes_exact for x in passes) if passes else None,
            "message": e.failure.message if e.failure else None,
            "pass_details": [pass_json(x) for x in passes],
            "alternatives": [a.to_json() for a in p.alternatives],
        },
        "recommendation": None
        if p.advice is None
        else {
            "log.cleaner.dedupe.buffer.size": p.advice.dedupe_buffer_size,
            "entries_needed": p.advice.entries,
            "possible": p.advice.possible,
            "arithmetic": p.advice.arithmetic,
            "with_headroom": headroom_json(p.headroom),
        },
        "load_estimate": load_estimate(p, load_rate, load_basis, history),
        "space": {
            "active_segment_bytes": scan.segments[-1].size,
            "floor_bytes": e.size_after_cleaning,
            "reclaimable_bytes": reclaimable_bytes(p),
        },
        "top_writers": top_writers(p),
        "cleaner_log": partition_cleaner_log(history, p.name),
    }


def dirty_ratio(p: PartitionAudit) -> float:
    """The dirty ratio the cleaner first sees (``cleaner.selection``: the cleanable bytes over
    the clean and cleanable ones), rounded to 6 places."""
    return round(p.emulated.initial.ratio, 6)


def reclaimable_bytes(p: PartitionAudit) -> int:
    """What cleaning frees: the partition's size less what is left after cleaning."""
    return max(p.scan.size_bytes - p.emulated.size_after_cleaning, 0)


def load_estimate(
    p: PartitionAudit,
    load_rate: float,
    load_basis: str | None = None,
    history: BrokerHistory | None = None,
) -> LoadEstimateJson:
    """What a new leader reads before it serves this partition's groups: the whole log, from
    its start to its end (``GroupMetadataManager.loadGroupsAndOffsets``). Timed by the model
    that best fits the broker's own load times when its server log holds enough of them
    (``broker_logs.load_models``), else at ``load_rate``."""
    size = p.scan.size_bytes
    after = p.emulated.size_after_cleaning
    calibration = history.loads if history is not None else None
    model = calibration.best if calibration is not None else None
    if calibration is not None and model is not None:
        sized = PartitionSize(
            p.emulated.partition.partition, size, p.scan.records, len(p.scan.writers)
        )
        return {
            "bytes": size,
            "records": p.scan.records,
            "seconds": round(model.predict_seconds(units(model, sized, size)), 3),
            "bytes_after_cleaning": after,
            "seconds_after_cleaning": round(model.predict_seconds(units(model, sized, after)), 3),
            "basis": f"{model.describe()}: the model that best fits this broker's own loads"
            f" in {calibration.source} (partition sizes as they are on disk now; after"
            " cleaning, records in proportion to bytes)",
            "model": {
                "basis": model.basis.value,
                "affine": model.affine,
                "fixed_ms": round(model.fixed_ms, 3),
                "ms_per_unit": model.ms_per_unit,
                "expected_error": round(model.expected_error, 4),
            },
        }
    measured = calibration.rate if calibration is not None else None
    if measured is not None:
        load_rate = measured.bytes_per_second
        load_basis = (
            f"{measured.basis}; too few of them take {MIN_LOAD_MS} ms or more to fit and judge a"
            " model (2 needed): the expected error is not known"
        )
    return {
        "bytes": size,
        "records": p.scan.records,
        "seconds": round(size / load_rate, 3),
        "bytes_after_cleaning": after,
        "seconds_after_cleaning": round(after / load_rate, 3),
        "basis": f"reading the whole partition at {load_rate / 1048576:,.2f} MiB/s, "
        + (load_basis or _assumed(history)),
        "model": None,
    }


def _assumed(history: BrokerHistory | None) -> str:
    calibration = history.loads if history is not None else None
    if calibration is None:
        return "assumed (give --server-log to calibrate on this broker's own load times)"
    return (
        f"assumed: {calibration.source} holds no coordinator load of a non-empty partition"
        " here to calibrate on"
    )


def top_writers(p: PartitionAudit, limit: int = 5) -> list[dict[str, Any]]:
    """The groups writing most of the partition, by bytes (their share of each batch)."""
    writers = p.scan.writers
    total = writers.total_bytes() or 1.0
    result = []
    for group, w in writers.top(limit):
        rate = w.commit_rate()
        result.append(
            {
                "group": group,
                "records": w.records,
                "bytes": int(w.bytes),
                "share": round(w.bytes / total, 4),
                "commits_per_second": None if rate is None else round(rate, 3),
            }
        )
    return result


def pass_json(x: PassResult) -> dict[str, Any]:
    return {
        "start_offset": x.start_offset,
        "end_offset": x.end_offset,
        "upper_bound": x.upper_bound,
        "segments": x.segments,
        "map_entries": x.map_entries,
        "map_full": x.map_full,
        "buffer_utilization": round(x.utilization, 6),
        "start_records": x.start_records,
        "start_bytes": x.start_bytes,
        "end_records": x.end_records,
        "end_bytes": x.end_bytes,
        "tombstones_kept": x.tombstones_kept,
        "tombstones_dropped": x.tombstones_dropped,
        "aborted_records_dropped": x.aborted_dropped,
        "markers_dropped": x.markers_dropped,
        "keyless_dropped": x.invalid_dropped,
        "delete_horizon_ms": x.delete_horizon_ms,
        "log_lines": list(x.log_lines),
    }
