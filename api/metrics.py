"""``GET /metrics``: a prometheus_client custom collector over the served run, registered on a
private registry. Every family is built afresh from the run on each scrape, so a partition or
broker that leaves the run leaves the exposition too, and the series are bounded by brokers x
offsets partitions (never a group id or a file name as a label). Names and labels:
docs/metrics.md, the contract with ``deploy/prometheus`` and ``deploy/grafana``.

A sample of its exposition::

    # HELP offsets_auditor_partition_log_size_bytes Size of the __consumer_offsets ...
    # TYPE offsets_auditor_partition_log_size_bytes gauge
    offsets_auditor_partition_log_size_bytes{broker_id="0",...,partition="2"} 4.760452e+06
    # HELP offsets_auditor_partition_cleaner_verdict The cleaner's verdict: 1 for ...
    # TYPE offsets_auditor_partition_cleaner_verdict gauge
    offsets_auditor_partition_cleaner_verdict{...,partition="2",outcome="thread-death"} 1.0
    offsets_auditor_partition_cleaner_verdict{...,partition="2",outcome="blocked"} 0.0
    # HELP offsets_auditor_results_load_errors_total Runs the service could not read ...
    # TYPE offsets_auditor_results_load_errors_total counter
    offsets_auditor_results_load_errors_total 0.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from api.results import LoadedRun, cluster_key
from api.store import ResultsStore
from offsets_auditor.cleaner.verdict import Outcome

P = "offsets_auditor_"
BROKER_LABELS = ["cluster_id", "broker_id", "log_dir"]
PARTITION_LABELS = [*BROKER_LABELS, "partition"]

#: (name, help, value of a partitions row; None: no series for that row)
_PARTITION_GAUGES: list[tuple[str, str, Callable[[dict[str, Any]], float | None]]] = [
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
]

_BROKER_GAUGES: list[tuple[str, str, Callable[[dict[str, Any]], float | None]]] = [
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
]

OUTCOMES = [o.value for o in Outcome]


def broker_label_values(row: dict[str, Any]) -> list[str]:
    broker = row.get("broker_id")
    return [
        cluster_key(row.get("cluster_id")),
        "" if broker is None else str(broker),
        row.get("log_dir") or "",
    ]


class RunCollector(Collector):
    """The served run's numbers and the service's own (those exist at 0 from the start)."""

    def __init__(self, store: ResultsStore) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        store = self._store
        run = store.current
        loaded = GaugeMetricFamily(
            P + "results_loaded", "1 when a run is loaded and served (what /readyz says)."
        )
        loaded.add_metric([], 1.0 if run is not None else 0.0)
        yield loaded
        errors = CounterMetricFamily(
            P + "results_load_errors",
            "Runs the service could not read (it keeps serving the last good one).",
        )
        errors.add_metric([], float(store.load_errors_total))
        yield errors
        last = GaugeMetricFamily(
            P + "results_last_load_error", "1 while the newest published run is unreadable."
        )
        last.add_metric([], 1.0 if store.newest_error is not None else 0.0)
        yield last
        if run is not None:
            yield from run_metrics(run)


def run_metrics(run: LoadedRun) -> Iterator[Metric]:
    for name, help_text, value in _PARTITION_GAUGES:
        family = GaugeMetricFamily(P + name, help_text, labels=PARTITION_LABELS)
        for p in run.partitions:
            v = value(p)
            if v is not None:
                family.add_metric([*broker_label_values(p), str(p["partition"])], float(v))
        yield family
    verdict = GaugeMetricFamily(
        P + "partition_cleaner_verdict",
        "The cleaner's verdict: 1 for the partition's current outcome, 0 for the others.",
        labels=[*PARTITION_LABELS, "outcome"],
    )
    for p in run.partitions:
        labels = [*broker_label_values(p), str(p["partition"])]
        for outcome in OUTCOMES:
            verdict.add_metric([*labels, outcome], 1.0 if p["outcome"] == outcome else 0.0)
    yield verdict
    for name, help_text, value in _BROKER_GAUGES:
        family = GaugeMetricFamily(P + name, help_text, labels=BROKER_LABELS)
        for b in run.brokers:
            v = value(b)
            if v is not None:
                family.add_metric(broker_label_values(b), float(v))
        yield family
    yield from finding_metrics(run)
    yield from run_info_metrics(run)


def finding_metrics(run: LoadedRun) -> Iterator[Metric]:
    counts = Counter(
        (*broker_label_values(f), f["kind"] or "", f["severity"] or "") for f in run.findings
    )
    findings = GaugeMetricFamily(
        P + "findings",
        "The run's findings of this kind and severity in this log dir.",
        labels=[*BROKER_LABELS, "kind", "severity"],
    )
    for labels, count in sorted(counts.items()):
        findings.add_metric(list(labels), float(count))
    yield findings
    unknown = GaugeMetricFamily(
        P + "unknown_record_types",
        "Records whose key type the coordinator's loader does not know (counted, never dropped).",
        labels=BROKER_LABELS,
    )
    per_broker: Counter[tuple[str, ...]] = Counter()
    for b in run.brokers:
        per_broker[tuple(broker_label_values(b))] += 0
    for p in run.partitions:
        per_broker[tuple(broker_label_values(p))] += p["unknown_record_types"] or 0
    for labels, count in sorted(per_broker.items()):
        unknown.add_metric(list(labels), float(count))
    yield unknown
    divergences = GaugeMetricFamily(
        P + "replica_divergences",
        "Findings of kind replica-divergence: replicas of the partition disagree below both"
        " log ends.",
        labels=["cluster_id", "partition"],
    )
    per_partition: Counter[tuple[str, str]] = Counter()
    for p in run.partitions:
        per_partition[(cluster_key(p["cluster_id"]), str(p["partition"]))] += 0
    for f in run.findings:
        if f["kind"] == "replica-divergence":
            name = f["partition"] or ""
            per_partition[(cluster_key(f["cluster_id"]), name.rpartition("-")[2])] += 1
    for labels, count in sorted(per_partition.items()):
        divergences.add_metric(list(labels), float(count))
    yield divergences


def run_info_metrics(run: LoadedRun) -> Iterator[Metric]:
    finished = GaugeMetricFamily(
        P + "run_timestamp_seconds", "When the served run finished, Unix seconds."
    )
    finished.add_metric([], run.finished_at)
    yield finished
    duration = GaugeMetricFamily(
        P + "run_duration_seconds", "How long the served run's scan took (manifest)."
    )
    if run.manifest.get("duration_seconds") is not None:
        duration.add_metric([], float(run.manifest["duration_seconds"]))
    yield duration
    info = GaugeMetricFamily(
        P + "run_info", "The served run: 1.", labels=["run_id", "schema_version"]
    )
    info.add_metric([run.run_id, str(run.manifest.get("schema_version"))], 1.0)
    yield info
