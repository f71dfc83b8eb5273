"""The published rows of one log dir's audit (``published.rows``), built from the audit's own
types: the same values as its JSON report (``audit.report``, ``audit.history_report``), where
a renamed field fails type checking, not the service reading the tables."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TypedDict

from offsets_auditor.audit.broker_history import BrokerHistory
from offsets_auditor.audit.history_report import (
    broker_cleaner_log,
    broker_coordinator_loads,
    cleanings_json,
    partition_cleaner_log,
)
from offsets_auditor.audit.partition import BrokerAudit, PartitionAudit
from offsets_auditor.audit.report import (
    dirty_ratio,
    load_estimate,
    pass_json,
    reclaimable_bytes,
    top_writers,
)
from offsets_auditor.audit.topic_evidence import TopicEvidence, kraft_json
from offsets_auditor.cleaner.capacity import BufferAdvice, max_desired_map_size
from offsets_auditor.cleaner.headroom import Headroom
from offsets_auditor.findings import exit_status
from offsets_auditor.published.rows import (
    BrokerRow,
    CleaningRow,
    FindingRow,
    IndexRow,
    PartitionRow,
    Where,
)
from offsets_auditor.startup.indexes import Verdict
from offsets_auditor.version_detection import Detection

#: index verdicts (``offsets_auditor.startup.indexes.Verdict``) of a file the broker's next
#: start finds damaged: rebuilt, or failing the load. Not ``not-checked`` (2.3.0+ checks no
#: index at load), ``missing``, ``rebuilt`` (a sound sibling of a damaged file) or ``changed``.
CORRUPT_INDEX_VERDICTS = (Verdict.CORRUPT.value, Verdict.FATAL.value)


def where(index: int, a: BrokerAudit) -> Where:
    """Where the rows of ``a``, the scan's input ``index``, come from."""
    return Where(
        input=index,
        log_dir=str(a.log_dir.path),
        broker_id=a.log_dir.broker_id,
        cluster_id=a.log_dir.cluster_id,
    )


def broker_row(place: Where, a: BrokerAudit, detection: Detection, groups: int | None) -> BrokerRow:
    """The log dir's row; ``groups``: how many groups its partitions hold (counted by the
    scan, which takes the groups apart)."""
    c = a.config
    advice = a.recommendation
    headroom = None if advice is None else a.headroom
    low, high = detection.range.to_json()
    return BrokerRow(
        **place.columns(),
        kafka_version=str(detection.used),
        kafka_version_low=low,
        kafka_version_high=high,
        kafka_version_basis=detection.basis,
        kafka_version_given=detection.given is not None,
        # whether the broker stopped cleanly; None while it runs (it has no marker then)
        clean_shutdown=None if a.log_dir.liveness.running else a.log_dir.clean_shutdown.present,
        cleaner_enabled=c.enabled,
        cleaner_threads=c.threads,
        dedupe_buffer_size=c.dedupe_buffer_size,
        load_factor=c.load_factor,
        memory_per_thread=c.memory_per_thread,
        capacity=max_desired_map_size(c.memory_per_thread, c.load_factor),
        min_cleanable_ratio=c.min_cleanable_ratio,
        threads_that_die=a.thread_deaths,
        **_advice_columns(advice, headroom),
        partitions=len(a.partitions),
        size_bytes=sum(p.scan.size_bytes for p in a.partitions),
        segments=sum(len(p.scan.segments) for p in a.partitions),
        groups=groups,
        corrupt_index_files=sum(1 for x in a.indexes if x.verdict.value in CORRUPT_INDEX_VERDICTS),
        exit_status=exit_status(list(a.findings)),
        **_topic_columns(a.topic),
        **_broker_history_columns(a.history),
    )


class AdviceColumns(TypedDict):
    recommended_dedupe_buffer_size: int | None
    recommendation_arithmetic: str | None
    recommended_dedupe_buffer_size_with_headroom: int | None
    recommendation_heap_bytes: int | None
    headroom_arithmetic: str | None


def _advice_columns(advice: BufferAdvice | None, headroom: Headroom | None) -> AdviceColumns:
    """The recommendation and, with a day's growth (``cleaner.headroom``), rounded, its heap."""
    return {
        "recommended_dedupe_buffer_size": None if advice is None else advice.dedupe_buffer_size,
        "recommendation_arithmetic": None if advice is None else advice.arithmetic,
        "recommended_dedupe_buffer_size_with_headroom": None
        if headroom is None
        else headroom.dedupe_buffer_size,
        "recommendation_heap_bytes": None if headroom is None else headroom.heap_bytes,
        "headroom_arithmetic": None if headroom is None else headroom.arithmetic,
    }


class TopicColumns(TypedDict, total=False):
    offsets_partitions_held: tuple[int, ...]
    offsets_topic_num_partitions: int | None
    offsets_topic_num_partitions_origin: str
    kraft_metadata_read_to: int | None
    kraft_offsets_topic_json: str | None


def _topic_columns(topic: TopicEvidence | None) -> TopicColumns:
    """What the log dir tells of the offsets topic (``audit.topic_evidence``)."""
    if topic is None:
        return {}
    e, kraft = topic.evidence, topic.kraft
    return {
        "offsets_partitions_held": tuple(sorted(e.partitions_held)),
        "offsets_topic_num_partitions": e.offsets_topic_partitions,
        "offsets_topic_num_partitions_origin": e.config_origin.value,
        "kraft_metadata_read_to": None if kraft is None else kraft.read_to,
        "kraft_offsets_topic_json": None if kraft is None else json.dumps(kraft_json(kraft)),
    }


class BrokerHistoryColumns(TypedDict, total=False):
    cleaner_log_files_json: str
    cleaner_log_how: str | None
    log_timezone: str
    cleaner_log_as_of_ms: int | None
    cleaner_threads_alive: int | None
    cleaner_threads_dead: int | None
    cleaner_threads_json: str
    cleaner_throughput_bytes_per_second: float | None
    cleaner_capacity_bytes_per_second: float | None
    cleaner_busy_ratio: float | None
    commit_bytes_per_second: float | None
    cleaner_keeps_up: bool | None
    cleaner_keeping_up: str | None
    uncleanable_partitions: int
    load_model: str | None
    load_model_basis: str | None
    load_model_expected_error: float | None


def _broker_history_columns(h: BrokerHistory | None) -> BrokerHistoryColumns:
    """What the broker's own logs say (``history_report``); none where none was read."""
    loads = broker_coordinator_loads(h)
    model = None if loads is None else loads["model"]
    columns: BrokerHistoryColumns = {
        "load_model": None if model is None else model["describe"],
        "load_model_basis": None if model is None else model["basis"],
        "load_model_expected_error": None if model is None else model["expected_error"],
    }
    log = broker_cleaner_log(h)
    if log is None:
        return columns
    pace, commit = log["throughput"], log["commit_rate"]
    return {
        **columns,
        "cleaner_log_files_json": json.dumps(log["files"]),
        "cleaner_log_how": log["how"],
        "log_timezone": log["timezone"],
        "cleaner_log_as_of_ms": log["as_of_ms"],
        "cleaner_threads_alive": log["threads_alive"],
        "cleaner_threads_dead": log["threads_dead"],
        "cleaner_threads_json": json.dumps(log["threads"]),
        "cleaner_throughput_bytes_per_second": None
        if pace is None
        else pace["consumed_bytes_per_second"],
        "cleaner_capacity_bytes_per_second": None
        if pace is None
        else pace["capacity_bytes_per_second"],
        "cleaner_busy_ratio": None if pace is None else pace["busy_ratio"],
        "commit_bytes_per_second": None if commit is None else commit["bytes_per_second"],
        "cleaner_keeps_up": log["keeps_up"],
        "cleaner_keeping_up": log["keeping_up"],
        "uncleanable_partitions": len(log["uncleanable"]),
    }


def partition_rows(
    place: Where,
    a: BrokerAudit,
    load_rate: float,
    unknown_record_types: Mapping[str, Mapping[int, int]],
) -> Iterator[PartitionRow]:
    """The log dir's partitions; ``unknown_record_types``: per partition name, the records of
    each key version the replay did not know (none when absent)."""
    for p in a.partitions:
        yield partition_row(place, p, load_rate, a.history, unknown_record_types.get(p.name, {}))


def partition_row(
    place: Where,
    p: PartitionAudit,
    load_rate: float,
    history: BrokerHistory | None,
    unknown: Mapping[int, int],
) -> PartitionRow:
    e, scan, passes = p.emulated, p.scan, p.passes
    load = load_estimate(p, load_rate, None, history)
    model = load["model"]
    return PartitionRow(
        **place.columns(),
        partition=e.partition.partition,
        name=p.name,
        size_bytes=scan.size_bytes,
        segment_count=len(scan.segments),
        records=scan.records,
        log_end_offset=scan.log_end_offset,
        cleaner_checkpoint=e.checkpoint,
        never_compacted=p.never_compacted,
        dirty_ratio=dirty_ratio(p),
        first_dirty_offset=e.first_dirty,
        first_uncleanable_offset=e.initial.first_uncleanable,
        uncleanable_because=e.initial.blocked_by,
        clean_bytes=e.initial.clean_bytes,
        cleanable_bytes=e.initial.cleanable_bytes,
        outcome=p.outcome.value,
        reason=p.reason,
        capacity=p.capacity,
        needed_entries=e.needed_entries,
        passes=len(passes),
        pass_end_offsets=tuple(x.end_offset for x in passes),
        retained_records=passes[-1].end_records if passes else None,
        retained_bytes=passes[-1].end_bytes if passes else None,
        message=e.failure.message if e.failure else None,
        **_advice_columns(p.advice, None if p.advice is None else p.headroom),
        load_estimate_seconds=load["seconds"],
        load_estimate_seconds_after_cleaning=load["seconds_after_cleaning"],
        load_estimate_basis=load["basis"],
        active_segment_bytes=scan.segments[-1].size,
        floor_bytes=e.size_after_cleaning,
        reclaimable_bytes=reclaimable_bytes(p),
        alternatives_json=json.dumps([x.to_json() for x in p.alternatives]),
        pass_details_json=json.dumps([pass_json(x) for x in passes]),
        top_writers_json=json.dumps(top_writers(p)),
        unknown_record_types=sum(unknown.values()),
        unknown_record_types_json=json.dumps({str(k): v for k, v in unknown.items()}),
        load_estimate_expected_error=None if model is None else model["expected_error"],
        **_partition_history_columns(history, p.name),
    )


class PartitionHistoryColumns(TypedDict, total=False):
    cleanings_in_log: int
    last_cleaning_began_ms: int
    last_cleaning_ended_ms: int | None
    last_cleaning_end: str
    last_cleaning_passes: int
    last_cleaning_start_offset: int | None
    last_cleaning_end_offset: int | None
    last_cleaning_seconds: float
    last_cleaning_mb_per_second: float | None
    last_cleaning_json: str
    last_completed_cleaning_ms: int | None
    prediction_agreement: str
    prediction_difference: str | None
    prediction_detail: str
    prediction_json: str
    marked_uncleanable_since_ms: int | None
    marked_uncleanable_exception: str | None


def _partition_history_columns(history: BrokerHistory | None, name: str) -> PartitionHistoryColumns:
    """The broker's last real cleaning of the partition and its uncleanable mark (its cleaner
    log, ``history_report``); none where none was read."""
    log = partition_cleaner_log(history, name)
    if log is None:
        return {}
    last, prediction = log["last_cleaning"], log["prediction"]
    columns: PartitionHistoryColumns = {
        "cleanings_in_log": log["cleanings"],
        "prediction_agreement": prediction["agreement"],
        "prediction_difference": prediction["difference"],
        "prediction_detail": prediction["detail"],
        "prediction_json": json.dumps(prediction),
        "marked_uncleanable_since_ms": log["uncleanable_since_ms"],
        "marked_uncleanable_exception": log["uncleanable_exception"],
        "last_completed_cleaning_ms": log["last_completed_at_ms"],
    }
    if last is None:
        return columns
    start, end = last["dirty_section"]
    return {
        **columns,
        "last_cleaning_began_ms": last["began_at_ms"],
        "last_cleaning_ended_ms": last["ended_at_ms"],
        "last_cleaning_end": last["end"],
        "last_cleaning_passes": len(last["passes"]),
        "last_cleaning_start_offset": start,
        "last_cleaning_end_offset": end,
        "last_cleaning_seconds": last["elapsed_seconds"],
        "last_cleaning_mb_per_second": last["mb_per_second"],
        "last_cleaning_json": json.dumps(last),
    }


def index_rows(place: Where, a: BrokerAudit) -> Iterator[IndexRow]:
    """The index files of the log dir's offsets partitions and what the next start does."""
    for x in a.indexes:
        yield IndexRow(
            input=place.input,
            log_dir=place.log_dir,
            broker_id=place.broker_id,
            file=x.file,
            partition=x.partition,
            kind=x.kind.value,
            base_offset=x.base_offset,
            verdict=x.verdict.value,
            reason=x.reason,
        )


def finding_rows(place: Where, a: BrokerAudit) -> Iterator[FindingRow]:
    for f in a.findings:
        yield FindingRow.of(place, f)


def cleaning_rows(place: Where, a: BrokerAudit) -> Iterator[CleaningRow]:
    """Each offsets partition's newest cleanings in the broker's cleaner log."""
    for c in cleanings_json(a.history, a.log_dir.broker_id):
        yield CleaningRow(
            **place.columns(),
            partition=c["partition"],
            thread=c["thread"],
            began_at=c["began_at"],
            began_at_ms=c["began_at_ms"],
            ended_at_ms=c["ended_at_ms"],
            end=c["end"],
            start_offset=c["start_offset"],
            upper_bound=c["upper_bound"],
            end_offset=c["end_offset"],
            segments=c["segments"],
            buffer_utilization=c["buffer_utilization"],
            start_mb=c["start_mb"],
            start_messages=c["start_messages"],
            end_mb=c["end_mb"],
            end_messages=c["end_messages"],
            mb_read=c["mb_read"],
            seconds=c["seconds"],
            mb_per_second=c["mb_per_second"],
            failure=c["failure"],
            file=c["file"],
            position=c["position"],
        )
