"""The service's metrics as plain data (:class:`Family`): what ``GET /metrics`` exposes
(``api.metrics`` renders them) and what ``GET /alerts`` evaluates the alert rules over, at the
time of each run of the history (``api.alerts``). Built afresh from a state: the merged rows of
the runs served (``api.view``), each publisher's runs and failures, and the service's own.
Names and labels: docs/metrics.md; never a group id or a file name as a label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from api.cluster import ClusterState
from api.promql import Labels, Vector
from api.results import cluster_key
from offsets_auditor.cleaner.verdict import Outcome
from offsets_auditor.findings import FindingKind

P: Final = "offsets_auditor_"
BROKER_LABELS: Final = ("cluster_id", "broker_id", "log_dir")
PARTITION_LABELS: Final = (*BROKER_LABELS, "partition")


@dataclass(frozen=True, slots=True)
class Family:
    """One metric: ``name`` as exposed (a counter's ends in ``_total``), its series as label
    values (in ``labels`` order) -> value."""

    name: str
    kind: str  # "gauge" or "counter"
    help: str
    labels: tuple[str, ...]
    series: tuple[tuple[tuple[str, ...], float], ...]

    def vector(self) -> Vector:
        """The series keyed as PromQL sees them (``api.promql``)."""
        return {_labels(self.labels, values): value for values, value in self.series}


def _labels(names: Sequence[str], values: Sequence[str]) -> Labels:
    return tuple(sorted(zip(names, values, strict=True)))


def gauge(
    name: str, help_text: str, labels: Sequence[str], series: Iterable[tuple[Sequence[str], float]]
) -> Family:
    return Family(
        P + name,
        "gauge",
        help_text,
        tuple(labels),
        tuple((tuple(values), float(v)) for values, v in series),
    )


@dataclass(frozen=True, slots=True)
class PublisherAt:
    """A publisher at one moment: its newest run then (None before its first) and its failures
    since that run."""

    name: str
    run_id: str | None
    run_finished_at: float | None
    run_duration_seconds: float | None
    failures: int
    last_failure_at: float | None


#: (name, help, value of a partitions row; None: no series for that row)
_PARTITION_GAUGES: Final[list[tuple[str, str, Callable[[dict[str, Any]], float | None]]]] = [
    (
        "partition_log_size_bytes",
        "Size of the __consumer_offsets partition in this log dir (partitions.size_bytes).",
        lambda p: p["size_bytes"],
    ),
    (
        "partition_segments",
        "Segments of the partition (partitions.segment_count).",
        lambda p: p["segment_count"],
    ),
    (
        "partition_dirty_ratio",
        "Dirty bytes over cleanable bytes, as the log cleaner computes it"
        " (partitions.dirty_ratio).",
        lambda p: p["dirty_ratio"],
    ),
    (
        "partition_never_compacted",
        "1 when no cleaner checkpoint covers any of the partition (partitions.never_compacted).",
        lambda p: None if p["never_compacted"] is None else float(p["never_compacted"]),
    ),
    (
        "partition_cleaner_passes",
        "Passes of the offset map the dirty section needs (partitions.passes).",
        lambda p: p["passes"],
    ),
    (
        "partition_offset_map_needed_entries",
        "Offset map entries the largest dirty section needs (partitions.needed_entries).",
        lambda p: p["needed_entries"],
    ),
    (
        "partition_offset_map_capacity_entries",
        "Entries one cleaner thread's offset map holds (partitions.capacity).",
        lambda p: p["capacity"],
    ),
    (
        "partition_offset_map_headroom_ratio",
        "1 - needed / capacity entries; negative: the dirty section does not fit one pass.",
        lambda p: (
            1 - p["needed_entries"] / p["capacity"]
            if p["needed_entries"] is not None and p["capacity"]
            else None
        ),
    ),
    (
        "partition_reclaimable_bytes",
        "Bytes compaction would reclaim (partitions.reclaimable_bytes).",
        lambda p: p["reclaimable_bytes"],
    ),
    (
        "partition_coordinator_load_seconds",
        "Estimated time a new coordinator takes to load the partition"
        " (partitions.load_estimate_seconds).",
        lambda p: p["load_estimate_seconds"],
    ),
    (
        "partition_cleaner_checkpoint_offset",
        "The log cleaner's checkpoint for the partition (absent when there is none).",
        lambda p: p["cleaner_checkpoint"],
    ),
    (
        "partition_dirty_bytes",
        "Bytes of the dirty section the cleaner would clean (partitions.cleanable_bytes).",
        lambda p: p["cleanable_bytes"],
    ),
    (
        "partition_last_cleaning_timestamp_seconds",
        "When the broker's cleaner last completed a cleaning of the partition, Unix seconds"
        " (its cleaner log; partitions.last_completed_cleaning_ms).",
        lambda p: (
            None
            if p.get("last_completed_cleaning_ms") is None
            else p["last_completed_cleaning_ms"] / 1000
        ),
    ),
    (
        "partition_marked_uncleanable",
        "1 while the broker's cleaner log shows the partition marked uncleanable since the"
        " broker's last start, else 0 (absent without a cleaner log).",
        lambda p: (
            None
            if p.get("cleanings_in_log") is None
            else float(p.get("marked_uncleanable_since_ms") is not None)
        ),
    ),
]

_BROKER_GAUGES: Final[list[tuple[str, str, Callable[[dict[str, Any]], float | None]]]] = [
    (
        "broker_corrupt_index_files",
        "Index files the broker's next start finds corrupt and rebuilds"
        " (brokers.corrupt_index_files).",
        lambda b: b["corrupt_index_files"],
    ),
    (
        "broker_cleaner_threads_dying",
        "Cleaner threads that die on a partition of this log dir (brokers.threads_that_die).",
        lambda b: b["threads_that_die"],
    ),
    (
        "broker_cleaner_threads",
        "The broker's log.cleaner.threads (brokers.cleaner_threads).",
        lambda b: b["cleaner_threads"],
    ),
    (
        "broker_clean_shutdown",
        "1 when the log dir has the clean-shutdown marker (brokers.clean_shutdown).",
        lambda b: None if b["clean_shutdown"] is None else float(b["clean_shutdown"]),
    ),
    (
        "broker_cleaner_threads_alive",
        "Cleaner threads alive at the end of the broker's cleaner log (its last run;"
        " brokers.cleaner_threads_alive).",
        lambda b: b.get("cleaner_threads_alive"),
    ),
    (
        "broker_cleaner_threads_dead",
        "Cleaner threads the broker's cleaner log shows dead in its last run, with their"
        " exception (brokers.cleaner_threads_dead): dead until the broker restarts.",
        lambda b: b.get("cleaner_threads_dead"),
    ),
    (
        "broker_cleaner_throughput_bytes_per_second",
        "Dirty bytes one cleaner thread consumes per second of cleaning, measured from the"
        " broker's cleaner log (brokers.cleaner_throughput_bytes_per_second).",
        lambda b: b.get("cleaner_throughput_bytes_per_second"),
    ),
    (
        "broker_cleaner_capacity_bytes_per_second",
        "Dirty bytes the live cleaner threads can consume per second: the throughput times the"
        " threads alive (brokers.cleaner_capacity_bytes_per_second).",
        lambda b: b.get("cleaner_capacity_bytes_per_second"),
    ),
    (
        "broker_cleaner_busy_ratio",
        "Share of its last run the cleaner threads spent cleaning (brokers.cleaner_busy_ratio).",
        lambda b: b.get("cleaner_busy_ratio"),
    ),
    (
        "broker_commit_rate_bytes_per_second",
        "Bytes per second the offsets partitions of the log dir grew by, from their uncleaned"
        " segments' record timestamps (brokers.commit_bytes_per_second).",
        lambda b: b.get("commit_bytes_per_second"),
    ),
]

OUTCOMES: Final = [o.value for o in Outcome]


def broker_label_values(row: dict[str, Any]) -> tuple[str, str, str]:
    broker = row.get("broker_id")
    return (
        cluster_key(row.get("cluster_id")),
        "" if broker is None else str(broker),
        row.get("log_dir") or "",
    )


def partition_label_values(row: dict[str, Any]) -> tuple[str, ...]:
    return (*broker_label_values(row), str(row["partition"]))


def data_families(
    brokers: Sequence[dict[str, Any]],
    partitions: Sequence[dict[str, Any]],
    findings: Sequence[dict[str, Any]],
) -> list[Family]:
    """The families of the served rows (what the scans found)."""
    families = [
        gauge(
            name,
            help_text,
            PARTITION_LABELS,
            ((partition_label_values(p), v) for p in partitions if (v := value(p)) is not None),
        )
        for name, help_text, value in _PARTITION_GAUGES
    ]
    families.append(
        gauge(
            "partition_cleaner_verdict",
            "The cleaner's verdict: 1 for the partition's current outcome, 0 for the others.",
            (*PARTITION_LABELS, "outcome"),
            (
                ((*partition_label_values(p), o), 1.0 if p["outcome"] == o else 0.0)
                for p in partitions
                for o in OUTCOMES
            ),
        )
    )
    families += [
        gauge(
            name,
            help_text,
            BROKER_LABELS,
            ((broker_label_values(b), v) for b in brokers if (v := value(b)) is not None),
        )
        for name, help_text, value in _BROKER_GAUGES
    ]
    families.append(
        gauge(
            "broker_run_timestamp_seconds",
            "When the run holding this log dir finished, Unix seconds (its data's age:"
            " time() - this).",
            BROKER_LABELS,
            (
                (broker_label_values(b), b["run_finished_at"])
                for b in brokers
                if b.get("run_finished_at") is not None
            ),
        )
    )
    families += finding_families(brokers, partitions, findings)
    return families


def finding_families(
    brokers: Sequence[dict[str, Any]],
    partitions: Sequence[dict[str, Any]],
    findings: Sequence[dict[str, Any]],
) -> list[Family]:
    counts = Counter(
        (*broker_label_values(f), f["kind"] or "", f["severity"] or "") for f in findings
    )
    per_broker: Counter[tuple[str, ...]] = Counter()
    for b in brokers:
        per_broker[broker_label_values(b)] += 0
    for p in partitions:
        per_broker[broker_label_values(p)] += p["unknown_record_types"] or 0
    hanging: Counter[tuple[str, ...]] = Counter()
    for p in partitions:
        hanging[partition_label_values(p)] += 0
    for f in findings:
        number = _partition_number(f["partition"])
        if f["kind"] == FindingKind.HANGING_TRANSACTION and number is not None:
            hanging[(*broker_label_values(f), number)] += 1
    return [
        gauge(
            "findings",
            "The run's findings of this kind and severity in this log dir.",
            (*BROKER_LABELS, "kind", "severity"),
            sorted(counts.items()),
        ),
        gauge(
            "unknown_record_types",
            "Records whose key type the coordinator's loader does not know (counted, never"
            " dropped).",
            BROKER_LABELS,
            sorted(per_broker.items()),
        ),
        gauge(
            "partition_hanging_transactions",
            "Transactions open in the partition past transaction.max.timeout.ms (findings of"
            " kind hanging-transaction): nothing after the first compacts.",
            PARTITION_LABELS,
            sorted(hanging.items()),
        ),
    ]


def cluster_families(
    partitions: Sequence[dict[str, Any]],
    findings: Sequence[dict[str, Any]],
    clusters: Mapping[str, ClusterState],
) -> list[Family]:
    """What only shows across the runs of every publisher: per cluster, the offsets topic's
    partition count (``api.cluster``), the brokers known to exist that no served run holds,
    and the partitions whose replicas diverge (the scans' findings and the service's own,
    ``api.divergence``: replicas scanned by different publishers)."""
    per_partition: Counter[tuple[str, str]] = Counter()
    for p in partitions:
        per_partition[(cluster_key(p["cluster_id"]), str(p["partition"]))] += 0
    for f in findings:
        if f["kind"] == FindingKind.REPLICA_DIVERGENCE:
            name = f["partition"] or ""
            per_partition[(cluster_key(f["cluster_id"]), name.rpartition("-")[2])] += 1
    missing = [
        ((name, str(broker)), 0.0 if broker not in state.missing else 1.0)
        for name, state in sorted(clusters.items())
        for broker in state.known
    ]
    return [
        gauge(
            "replica_divergences",
            "Findings of kind replica-divergence: replicas of the partition disagree below both"
            " log ends (within a scan, or between the runs of different publishers).",
            ("cluster_id", "partition"),
            sorted(per_partition.items()),
        ),
        gauge(
            "broker_missing",
            "1 for a broker of the cluster known to exist (from the live cluster's metadata, a"
            " KRaft metadata log, or earlier runs) that no served run holds; 0 for one that is"
            " served.",
            ("cluster_id", "broker_id"),
            missing,
        ),
        gauge(
            "cluster_offsets_partitions",
            "The __consumer_offsets partition count decided from every broker of the cluster"
            " (absent when no count is supported).",
            ("cluster_id",),
            (
                ((name,), float(state.count.count))
                for name, state in sorted(clusters.items())
                if state.count.count is not None
            ),
        ),
        gauge(
            "cluster_offsets_partitions_uncertain",
            "1 when the evidence for that count is incomplete or disagrees (GET /clusters says"
            " why).",
            ("cluster_id",),
            (((name,), float(state.count.uncertain)) for name, state in sorted(clusters.items())),
        ),
    ]


def _partition_number(name: str | None) -> str | None:
    topic, _, number = (name or "").rpartition("-")
    return number if topic == "__consumer_offsets" and number.isdigit() else None


def publisher_families(publishers: Sequence[PublisherAt]) -> list[Family]:
    """Each publisher's newest run and failures: the scans' own health."""
    ran = [p for p in publishers if p.run_finished_at is not None]
    return [
        gauge(
            "publisher_run_timestamp_seconds",
            "When the publisher's newest run finished, Unix seconds (absent before its first).",
            ("publisher",),
            (((p.name,), at) for p in ran if (at := p.run_finished_at) is not None),
        ),
        gauge(
            "publisher_run_duration_seconds",
            "How long the publisher's newest run took (its manifest).",
            ("publisher",),
            (((p.name,), d) for p in ran if (d := p.run_duration_seconds) is not None),
        ),
        gauge(
            "publisher_run_info",
            "The publisher's newest run: 1.",
            ("publisher", "run_id"),
            (((p.name, p.run_id or ""), 1.0) for p in ran),
        ),
        gauge(
            "scan_failures",
            "Scans of the publisher that failed since its newest run (its failure records).",
            ("publisher",),
            (((p.name,), p.failures) for p in publishers),
        ),
        gauge(
            "scan_last_failure_timestamp_seconds",
            "When the publisher's last failed scan failed, Unix seconds (absent when none has).",
            ("publisher",),
            (((p.name,), at) for p in publishers if (at := p.last_failure_at) is not None),
        ),
    ]


def service_families(
    loaded: bool, load_errors_total: int, unreadable: dict[str, str], newest_run_at: float | None
) -> list[Family]:
    """The service's own numbers (they exist from the start, at 0)."""
    families = [
        gauge(
            "results_loaded",
            "1 when a run is loaded and served (what /readyz says).",
            (),
            [((), float(loaded))],
        ),
        Family(
            P + "results_load_errors_total",
            "counter",
            "Runs the service could not read (it keeps serving the last good one).",
            (),
            (((), float(load_errors_total)),),
        ),
        gauge(
            "results_last_load_error",
            "1 while a publisher's newest published run is unreadable.",
            (),
            [((), float(bool(unreadable)))],
        ),
        gauge(
            "results_unreadable_run",
            "1 for each publisher's newest run while it is unreadable (the publisher's previous"
            " run stays served).",
            ("publisher", "run_id"),
            (((p, r), 1.0) for p, r in sorted(unreadable.items())),
        ),
    ]
    if newest_run_at is not None:
        families.append(
            gauge(
                "run_timestamp_seconds",
                "When the newest run served finished, Unix seconds.",
                (),
                [((), newest_run_at)],
            )
        )
    return families
