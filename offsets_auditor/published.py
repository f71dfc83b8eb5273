"""What a scan publishes, and how: the contract between the Spark job (writer) and the service
(reader). Plain Python, no framework: the tables' columns and types, the rows of each table
built from an audit report (``audit_report.report_json``) or, for the groups, from the groups
themselves (``group_columns``), and the layout of the results dir.

Layout of ``RESULTS`` (``offsets-auditor scan --out RESULTS --publisher P``), each publisher
under ``RESULTS/publishers/P/`` (``HOME`` below):

    HOME/LATEST                    the id of the newest complete run (replaced atomically)
    HOME/runs/<run_id>/            one complete run (renamed into place when whole)
        manifest.json              MANIFEST_FIELDS; "schema_version": SCHEMA_VERSION
        <table>.parquet            one per TABLES entry (a run of an older scan lacks the
                                   tables and columns added since: ADDED_TABLES, ADDED_COLUMNS)
        reports/<n>.json           the audit report of input n (the JSON of ``audit --json``
                                   less ``groups``: those are the groups table's alone)
    HOME/failures/<run_id>.json    a scan that failed (FAILURE_FIELDS), written atomically
    HOME/.staging/<run_id>/        a run being written (never read)
    HOME/cache/                    per-segment results reused by the next scan

A reader lists ``runs/`` or reads ``LATEST``; it never sees a partial run, since a run's dir
appears by one ``rename`` once every file in it is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from offsets_auditor.groups.model import GroupState

#: Bumped when a column changes meaning or disappears (new columns do not bump it).
SCHEMA_VERSION: Final = 1

#: The results dir: ``RESULTS/publishers/<publisher>/`` per scan that publishes (one per broker
#: host when each broker is scanned where its disks are; one for a scan of many log dirs), each
#: with the layout below, written by that scan alone: no lock is shared between publishers. A
#: results dir of before publishers (``RESULTS/runs/``...) is read as the publisher ``""``.
PUBLISHERS: Final = "publishers"
LATEST: Final = "LATEST"
RUNS: Final = "runs"
STAGING: Final = ".staging"
CACHE: Final = "cache"
MANIFEST: Final = "manifest.json"
REPORTS: Final = "reports"
#: ``failures/<run id>.json``: a scan that could not publish says when, for which log dirs and
#: why (:data:`FAILURE_FIELDS`)
FAILURES: Final = "failures"
FAILURE_FIELDS: Final = ("run_id", "publisher", "failed_at", "log_dirs", "exit_status", "reason")

#: A publisher's name: what ``scan --publisher`` takes (a directory name on every filesystem).
PUBLISHER_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: A cluster id ``scan --cluster-id`` takes. Kafka's are URL-safe base64 of a random UUID (2.3.0
#: ``CoreUtils.generateUuidAsBase64``: ``Base64.getUrlEncoder.withoutPadding``), so they may
#: begin with ``_`` or ``-``; never a path component (the default publisher puts
#: ``broker-<id>.`` before it).
CLUSTER_ID: Final = re.compile(r"[A-Za-z0-9._-]{1,100}")


def publisher_home(results: Path, publisher: str) -> Path:
    """Where ``publisher`` keeps its runs, ``LATEST``, failures and cache (``""``: the results
    dir itself, as before publishers)."""
    return results / PUBLISHERS / publisher if publisher else results


#: What the broker's own logs say (``audit.history_report``), per log dir: its cleaner log
#: (``brokers[].cleaner_log``: which files, in which zone, as of when; the threads of its last
#: run; its pace against the commit rate) and the coordinator load model fitted to its own
#: loads (``brokers[].coordinator_loads``). Null where no such log was read.
_BROKER_HISTORY_COLUMNS: Final = (
    ("cleaner_log_files_json", "string"),
    ("cleaner_log_how", "string"),
    ("log_timezone", "string"),
    ("cleaner_log_as_of_ms", "int64"),
    ("cleaner_threads_alive", "int64"),
    ("cleaner_threads_dead", "int64"),
    ("cleaner_threads_json", "string"),
    ("cleaner_throughput_bytes_per_second", "float64"),
    ("cleaner_capacity_bytes_per_second", "float64"),
    ("cleaner_busy_ratio", "float64"),
    ("commit_bytes_per_second", "float64"),
    ("cleaner_keeps_up", "bool"),
    ("cleaner_keeping_up", "string"),
    ("uncleanable_partitions", "int64"),
    ("load_model", "string"),
    ("load_model_basis", "string"),
    ("load_model_expected_error", "float64"),
)
#: Per partition (``partitions[].cleaner_log``): the broker's last real cleaning of it, beside
#: the emulation's, and its uncleanable mark. Null where no cleaner log was read.
_PARTITION_HISTORY_COLUMNS: Final = (
    ("cleanings_in_log", "int64"),
    ("last_cleaning_began_ms", "int64"),
    ("last_cleaning_ended_ms", "int64"),
    ("last_cleaning_end", "string"),
    ("last_cleaning_passes", "int64"),
    ("last_cleaning_start_offset", "int64"),
    ("last_cleaning_end_offset", "int64"),
    ("last_cleaning_seconds", "float64"),
    ("last_cleaning_mb_per_second", "float64"),
    ("last_cleaning_json", "string"),
    ("last_completed_cleaning_ms", "int64"),
    ("prediction_agreement", "string"),
    ("prediction_difference", "string"),
    ("prediction_detail", "string"),
    ("prediction_json", "string"),
    ("marked_uncleanable_since_ms", "int64"),
    ("marked_uncleanable_exception", "string"),
    ("load_estimate_expected_error", "float64"),
)

#: table -> ((column, type), ...). Types: int64, float64, bool, string, list<int64>; every
#: column may be null. Columns named as in the audit JSON (``cleaner.*`` flattened).
TABLES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "brokers": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("cluster_id", "string"),
        ("kafka_version", "string"),
        ("kafka_version_low", "string"),
        ("kafka_version_high", "string"),
        ("kafka_version_basis", "string"),
        ("kafka_version_given", "bool"),
        ("clean_shutdown", "bool"),
        ("cleaner_enabled", "bool"),
        ("cleaner_threads", "int64"),
        ("dedupe_buffer_size", "int64"),
        ("load_factor", "float64"),
        ("memory_per_thread", "int64"),
        ("capacity", "int64"),
        ("min_cleanable_ratio", "float64"),
        ("threads_that_die", "int64"),
        ("recommended_dedupe_buffer_size", "int64"),
        ("recommendation_arithmetic", "string"),
        ("recommended_dedupe_buffer_size_with_headroom", "int64"),
        ("recommendation_heap_bytes", "int64"),
        ("headroom_arithmetic", "string"),
        ("partitions", "int64"),
        ("size_bytes", "int64"),
        ("segments", "int64"),
        ("groups", "int64"),
        ("corrupt_index_files", "int64"),
        ("exit_status", "int64"),
        # what the log dir tells of the offsets topic as a whole (audit.topic_evidence): the
        # service decides the partition count and the coordinators from every broker's
        ("offsets_partitions_held", "list<int64>"),
        ("offsets_topic_num_partitions", "int64"),
        ("offsets_topic_num_partitions_origin", "string"),
        ("kraft_metadata_read_to", "int64"),
        ("kraft_offsets_topic_json", "string"),
        *_BROKER_HISTORY_COLUMNS,
    ),
    "partitions": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("cluster_id", "string"),
        ("partition", "int64"),
        ("name", "string"),
        ("size_bytes", "int64"),
        ("segment_count", "int64"),
        ("records", "int64"),
        ("log_end_offset", "int64"),
        ("cleaner_checkpoint", "int64"),
        ("never_compacted", "bool"),
        ("dirty_ratio", "float64"),
        ("first_dirty_offset", "int64"),
        ("first_uncleanable_offset", "int64"),
        ("uncleanable_because", "string"),
        ("clean_bytes", "int64"),
        ("cleanable_bytes", "int64"),
        ("outcome", "string"),
        ("reason", "string"),
        ("capacity", "int64"),
        ("needed_entries", "int64"),
        ("passes", "int64"),
        ("pass_end_offsets", "list<int64>"),
        ("retained_records", "int64"),
        ("retained_bytes", "int64"),
        ("message", "string"),
        ("recommended_dedupe_buffer_size", "int64"),
        ("recommendation_arithmetic", "string"),
        ("recommended_dedupe_buffer_size_with_headroom", "int64"),
        ("recommendation_heap_bytes", "int64"),
        ("headroom_arithmetic", "string"),
        ("load_estimate_seconds", "float64"),
        ("load_estimate_seconds_after_cleaning", "float64"),
        ("load_estimate_basis", "string"),
        ("active_segment_bytes", "int64"),
        ("floor_bytes", "int64"),
        ("reclaimable_bytes", "int64"),
        ("alternatives_json", "string"),
        ("pass_details_json", "string"),
        ("top_writers_json", "string"),
        ("unknown_record_types", "int64"),
        ("unknown_record_types_json", "string"),
        *_PARTITION_HISTORY_COLUMNS,
    ),
    "segments": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("partition", "int64"),
        ("file", "string"),
        ("base_offset", "int64"),
        ("size_bytes", "int64"),
        ("mtime_ms", "int64"),
        ("records", "int64"),
        ("batches", "int64"),
        ("next_offset", "int64"),
        ("largest_timestamp", "int64"),
        ("active", "bool"),
        ("reused", "bool"),
        ("problems", "int64"),
    ),
    "indexes": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("file", "string"),
        ("partition", "string"),
        ("kind", "string"),
        ("base_offset", "int64"),
        ("verdict", "string"),
        ("reason", "string"),
    ),
    "groups": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("cluster_id", "string"),
        ("group", "string"),
        ("coordinator_partition", "int64"),
        ("expected_partition", "int64"),
        ("state", "string"),
        ("group_type", "string"),
        ("protocol_type", "string"),
        ("protocol", "string"),
        ("generation", "int64"),
        ("members", "int64"),
        ("topic", "string"),
        ("partition", "int64"),
        ("offset", "int64"),
        ("metadata", "string"),
        ("commit_timestamp", "int64"),
        ("expire_timestamp", "int64"),
        ("leader_epoch", "int64"),
        ("log_offset", "int64"),
        ("value_version", "int64"),
        ("producer_id", "int64"),
        ("pending", "bool"),
    ),
    "findings": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("cluster_id", "string"),
        ("kind", "string"),
        ("severity", "string"),
        ("detail", "string"),
        ("partition", "string"),
        ("file", "string"),
        ("position", "int64"),
        ("field", "string"),
        ("group", "string"),
    ),
    "cleanings": (
        ("input", "int64"),
        ("log_dir", "string"),
        ("broker_id", "int64"),
        ("cluster_id", "string"),
        ("partition", "int64"),
        ("thread", "int64"),
        ("began_at", "string"),
        ("began_at_ms", "int64"),
        ("ended_at_ms", "int64"),
        ("end", "string"),
        ("start_offset", "int64"),
        ("upper_bound", "int64"),
        ("end_offset", "int64"),
        ("segments", "int64"),
        ("buffer_utilization", "float64"),
        ("start_mb", "float64"),
        ("start_messages", "int64"),
        ("end_mb", "float64"),
        ("end_messages", "int64"),
        ("mb_read", "float64"),
        ("seconds", "float64"),
        ("mb_per_second", "float64"),
        ("failure", "string"),
        ("file", "string"),
        ("position", "int64"),
    ),
}

#: Tables added since schema version 1: a run of an older scan has none (read as empty).
ADDED_TABLES: Final = ("cleanings",)
#: the recommendation with a day's growth, in both the brokers and the partitions table
_HEADROOM_COLUMNS: Final = (
    "recommended_dedupe_buffer_size_with_headroom",
    "recommendation_heap_bytes",
    "headroom_arithmetic",
)

#: Columns added since their table was first published (``SCHEMA_VERSION`` unchanged): a run
#: published before has none of them, and a reader takes them as null there.
ADDED_COLUMNS: Final[dict[str, frozenset[str]]] = {
    "brokers": frozenset(
        {
            *_HEADROOM_COLUMNS,
            "offsets_partitions_held",
            "offsets_topic_num_partitions",
            "offsets_topic_num_partitions_origin",
            "kraft_metadata_read_to",
            "kraft_offsets_topic_json",
            *(c for c, _ in _BROKER_HISTORY_COLUMNS),
        }
    ),
    "partitions": frozenset({*_HEADROOM_COLUMNS, *(c for c, _ in _PARTITION_HISTORY_COLUMNS)}),
}

#: The manifest's fields (see ``manifest``).
MANIFEST_FIELDS: Final = (
    "schema_version",
    "run_id",
    "publisher",
    "started_at",
    "finished_at",
    "duration_seconds",
    "inputs",
    "config",
    "counts",
    "reuse",
    "tables",
    "exit_status",
)


#: The columns saying where a row comes from (``where``), first in every table that has them.
WHERE_COLUMNS: Final = ("input", "log_dir", "broker_id", "cluster_id")


def where(index: int, report: Mapping[str, Any]) -> dict[str, Any]:
    """Where each row of a report comes from (``WHERE_COLUMNS``): the scan audits each log dir
    on its own, so a report it publishes holds one broker (one log dir)."""
    (broker,) = report["brokers"]
    return {
        "input": index,
        "log_dir": broker["log_dir"],
        "broker_id": broker["broker_id"],
        "cluster_id": broker.get("cluster_id"),
    }


def broker_rows(index: int, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    version = report["kafka_version"]
    for broker in report["brokers"]:
        c = broker["cleaner"]
        r = broker["recommendation"] or {}
        mine = report["partitions"]
        yield {
            **where(index, report),
            "kafka_version": version["used"],
            "kafka_version_low": version["range"][0],
            "kafka_version_high": version["range"][1],
            "kafka_version_basis": version["basis"],
            "kafka_version_given": version["given"] is not None,
            "clean_shutdown": broker["clean_shutdown"],
            "cleaner_enabled": c["enabled"],
            "cleaner_threads": c["threads"],
            "dedupe_buffer_size": c["dedupe_buffer_size"],
            "load_factor": c["load_factor"],
            "memory_per_thread": c["memory_per_thread"],
            "capacity": c["capacity"],
            "min_cleanable_ratio": c["min_cleanable_ratio"],
            "threads_that_die": c["threads_that_die"],
            "recommended_dedupe_buffer_size": r.get("log.cleaner.dedupe.buffer.size"),
            "recommendation_arithmetic": r.get("arithmetic"),
            **headroom_columns(r),
            "partitions": len(mine),
            "size_bytes": sum(p["size_bytes"] for p in mine),
            "segments": sum(p["segment_count"] for p in mine),
            "groups": None,  # counted by the scan, which takes the groups apart
            "corrupt_index_files": sum(
                1 for x in report["indexes"] if x["verdict"] in _CORRUPT_INDEX_VERDICTS
            ),
            "exit_status": report["exit_status"],
            **topic_columns(broker.get("offsets_topic")),
            **broker_history_row(broker),
        }


def topic_columns(topic: Mapping[str, Any] | None) -> dict[str, Any]:
    """The offsets-topic evidence columns of a broker's row (``offsets_topic`` of its report:
    ``audit.topic_evidence``; ``None`` in reports of before it)."""
    if topic is None:
        return {
            "offsets_partitions_held": None,
            "offsets_topic_num_partitions": None,
            "offsets_topic_num_partitions_origin": None,
            "kraft_metadata_read_to": None,
            "kraft_offsets_topic_json": None,
        }
    kraft = topic["kraft_metadata"]
    return {
        "offsets_partitions_held": list(topic["partitions_held"]),
        "offsets_topic_num_partitions": topic["num_partitions"],
        "offsets_topic_num_partitions_origin": topic["num_partitions_origin"],
        "kraft_metadata_read_to": None if kraft is None else kraft["read_to"],
        "kraft_offsets_topic_json": None if kraft is None else json.dumps(kraft),
    }


def broker_history_row(broker: Mapping[str, Any]) -> dict[str, Any]:
    """The broker's history columns (``_BROKER_HISTORY_COLUMNS``) of a report's broker."""
    log = broker.get("cleaner_log")
    loads = broker.get("coordinator_loads") or {}
    model = loads.get("model") or {}
    row: dict[str, Any] = {c: None for c, _ in _BROKER_HISTORY_COLUMNS}
    row["load_model"] = model.get("describe")
    row["load_model_basis"] = model.get("basis")
    row["load_model_expected_error"] = model.get("expected_error")
    if log is None:
        return row
    pace = log["throughput"] or {}
    commit = log["commit_rate"] or {}
    return {
        **row,
        "cleaner_log_files_json": json.dumps(log["files"]),
        "cleaner_log_how": log["how"],
        "log_timezone": log["timezone"],
        "cleaner_log_as_of_ms": log["as_of_ms"],
        "cleaner_threads_alive": log["threads_alive"],
        "cleaner_threads_dead": log["threads_dead"],
        "cleaner_threads_json": json.dumps(log["threads"]),
        "cleaner_throughput_bytes_per_second": pace.get("consumed_bytes_per_second"),
        "cleaner_capacity_bytes_per_second": pace.get("capacity_bytes_per_second"),
        "cleaner_busy_ratio": pace.get("busy_ratio"),
        "commit_bytes_per_second": commit.get("bytes_per_second"),
        "cleaner_keeps_up": log["keeps_up"],
        "cleaner_keeping_up": log["keeping_up"],
        "uncleanable_partitions": len(log["uncleanable"]),
    }


#: index verdicts (``offsets_auditor.startup.indexes.Verdict``) of a file the broker's next
#: start finds damaged: rebuilt, or failing the load. Not ``not-checked`` (2.3.0+ checks no
#: index at load), ``missing``, ``rebuilt`` (a sound sibling of a damaged file) or ``changed``.
_CORRUPT_INDEX_VERDICTS: Final = ("corrupt", "fatal")


def headroom_columns(recommendation: Mapping[str, Any]) -> dict[str, Any]:
    """The recommendation with a day's growth (``cleaner.headroom``), rounded, and its heap."""
    h = recommendation.get("with_headroom") or {}
    return {
        "recommended_dedupe_buffer_size_with_headroom": h.get("log.cleaner.dedupe.buffer.size"),
        "recommendation_heap_bytes": h.get("heap_bytes"),
        "headroom_arithmetic": h.get("arithmetic"),
    }


def partition_rows(index: int, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for p in report["partitions"]:
        cleaner, advice, load, space = (
            p["cleaner"],
            p["recommendation"] or {},
            p["load_estimate"],
            p["space"],
        )
        yield {
            **where(index, report),
            **{k: p.get(k) for k in _PARTITION_FIELDS},
            **{k: cleaner.get(k) for k in _CLEANER_FIELDS},
            "needed_entries": p.get("needed_entries"),
            "recommended_dedupe_buffer_size": advice.get("log.cleaner.dedupe.buffer.size"),
            "recommendation_arithmetic": advice.get("arithmetic"),
            **headroom_columns(advice),
            "load_estimate_seconds": load["seconds"],
            "load_estimate_seconds_after_cleaning": load["seconds_after_cleaning"],
            "load_estimate_basis": load["basis"],
            **{k: space[k] for k in ("active_segment_bytes", "floor_bytes", "reclaimable_bytes")},
            "alternatives_json": json.dumps(cleaner["alternatives"]),
            "pass_details_json": json.dumps(cleaner["pass_details"]),
            "top_writers_json": json.dumps(p["top_writers"]),
            **partition_history_row(p),
        }


def partition_history_row(p: Mapping[str, Any]) -> dict[str, Any]:
    """The partition's history columns (``_PARTITION_HISTORY_COLUMNS``) of a report's
    partition."""
    log = p.get("cleaner_log")
    row: dict[str, Any] = {c: None for c, _ in _PARTITION_HISTORY_COLUMNS}
    row["load_estimate_expected_error"] = (p["load_estimate"].get("model") or {}).get(
        "expected_error"
    )
    if log is None:
        return row
    last, prediction = log["last_cleaning"], log["prediction"]
    row.update(
        cleanings_in_log=log["cleanings"],
        prediction_agreement=prediction["agreement"],
        prediction_difference=prediction["difference"],
        prediction_detail=prediction["detail"],
        prediction_json=json.dumps(prediction),
        marked_uncleanable_since_ms=log["uncleanable_since_ms"],
        marked_uncleanable_exception=log["uncleanable_exception"],
        last_completed_cleaning_ms=log["last_completed_at_ms"],
    )
    if last is not None:
        row.update(
            last_cleaning_began_ms=last["began_at_ms"],
            last_cleaning_ended_ms=last["ended_at_ms"],
            last_cleaning_end=last["end"],
            last_cleaning_passes=len(last["passes"]),
            last_cleaning_start_offset=last["dirty_section"][0],
            last_cleaning_end_offset=last["dirty_section"][1],
            last_cleaning_seconds=last["elapsed_seconds"],
            last_cleaning_mb_per_second=last["mb_per_second"],
            last_cleaning_json=json.dumps(last),
        )
    return row


_PARTITION_FIELDS: Final = (
    "partition",
    "name",
    "size_bytes",
    "segment_count",
    "records",
    "log_end_offset",
    "cleaner_checkpoint",
    "never_compacted",
    "dirty_ratio",
    "first_dirty_offset",
    "first_uncleanable_offset",
    "uncleanable_because",
    "clean_bytes",
    "cleanable_bytes",
)
_CLEANER_FIELDS: Final = (
    "outcome",
    "reason",
    "capacity",
    "passes",
    "pass_end_offsets",
    "retained_records",
    "retained_bytes",
    "message",
)


def index_rows(index: int, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for x in report["indexes"]:
        yield {**where(index, report), **{k: x.get(k) for k in _INDEX_FIELDS}}


_INDEX_FIELDS: Final = ("file", "partition", "kind", "base_offset", "verdict", "reason")


#: The ``groups`` table's columns that come from the groups themselves (the rest say where).
GROUP_COLUMNS: Final = tuple(c for c, _ in TABLES["groups"] if c not in WHERE_COLUMNS)


def group_columns(groups: Iterable[GroupState]) -> dict[str, list[Any]]:
    """The ``groups`` table's rows of ``groups``, column by column (``GROUP_COLUMNS``): one row
    per group and committed topic-partition (``pending``: a transactional offset not yet
    committed), a group without offsets one row with no topic. Values as in the audit JSON
    (``GroupState.to_json``)."""
    rows: list[tuple[Any, ...]] = []
    for g in groups:
        head = (
            g.group,
            g.coordinator_partition,
            g.expected_partition,
            g.state.value,
            g.group_type,
            g.protocol_type,
            g.protocol,
            g.generation,
            len(g.members),
        )
        rows.extend([(*head, *o[:10], False) for o in g.offsets])
        rows.extend([(*head, *p.offset[:10], True) for p in g.pending_transactional_offsets])
        if not g.offsets and not g.pending_transactional_offsets:
            rows.append((*head, *_NO_OFFSET))
    by_column = zip(*rows, strict=True) if rows else ([] for _ in GROUP_COLUMNS)
    return {c: list(values) for c, values in zip(GROUP_COLUMNS, by_column, strict=True)}


#: topic ... producer_id, pending: a group without offsets
_NO_OFFSET: Final = (None,) * 11


def finding_rows(index: int, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    place = where(index, report)
    for f in report["findings"]:
        yield {**place, **{k: f.get(k) for k, _ in TABLES["findings"] if k not in place}}


def cleaning_rows(index: int, report: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The report's ``cleanings`` (each offsets partition's newest cleanings in the broker's
    cleaner log; a report of before them has none)."""
    place = where(index, report)
    for c in report.get("cleanings", ()):
        yield {**place, **{k: c.get(k) for k, _ in TABLES["cleanings"] if k not in place}}


#: table -> the function building its rows from (input index, report); ``groups`` and
#: ``segments`` are built apart (``group_columns``; the scan's per-segment results)
ROWS: Final = {
    "brokers": broker_rows,
    "partitions": partition_rows,
    "indexes": index_rows,
    "findings": finding_rows,
    "cleanings": cleaning_rows,
}
