"""The alerts of docs/metrics.md, derived from the served run, the kept runs and the store's own
state, in Alertmanager's shape (``labels``, ``annotations``, ``startsAt``) so ``GET /alerts``
can be polled or pushed to Alertmanager's ``/api/v2/alerts`` as it is.

Each rule is a small pure function over rows; the numbered comments say why it fires.
``startsAt`` is when the run showing the condition finished (``OffsetsScanStale``: when the run
became older than the threshold; ``OffsetsResultsUnreadable``: when the service failed to read
it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from api.history import PartitionKey, RunTrend, partition_key
from api.results import LoadedRun, cluster_key, partition_name
from api.settings import Settings
from api.store import LoadError

CRITICAL, WARNING, INFO = "critical", "warning", "info"
#: alert names, as in docs/metrics.md
THREAD_DEATH = "OffsetsCleanerThreadDeath"
BLOCKED = "OffsetsPartitionBlocked"
NEVER_COMPACTED = "OffsetsPartitionNeverCompacted"
MULTI_PASS = "OffsetsCleanerMultiPass"
HANGING_TRANSACTION = "OffsetsHangingTransaction"
CORRUPT_INDEXES = "OffsetsCorruptIndexes"
LOAD_SLOW = "OffsetsCoordinatorLoadSlow"
STALE = "OffsetsScanStale"
UNREADABLE = "OffsetsResultsUnreadable"
REPLICA_DIVERGENCE = "OffsetsReplicaDivergence"
CLEANER_STUCK = "OffsetsCleanerStuck"
UNKNOWN_RECORD_TYPES = "OffsetsUnknownRecordTypes"

ALERT_NAMES = (
    THREAD_DEATH,
    BLOCKED,
    NEVER_COMPACTED,
    MULTI_PASS,
    HANGING_TRANSACTION,
    CORRUPT_INDEXES,
    LOAD_SLOW,
    STALE,
    UNREADABLE,
    REPLICA_DIVERGENCE,
    CLEANER_STUCK,
    UNKNOWN_RECORD_TYPES,
)


@dataclass(frozen=True, slots=True)
class Alert:
    name: str
    severity: str
    summary: str
    description: str
    starts_at: float
    where: tuple[tuple[str, str], ...] = ()

    def to_alertmanager(self, runbook_base_url: str) -> dict[str, Any]:
        return {
            "labels": {"alertname": self.name, "severity": self.severity, **dict(self.where)},
            "annotations": {
                "summary": self.summary,
                "description": self.description,
                "runbook_url": f"{runbook_base_url}{self.name}.md",
            },
            "startsAt": iso(self.starts_at),
        }


def iso(seconds: float) -> str:
    return (
        datetime.fromtimestamp(seconds, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _broker_labels(row: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    broker = row.get("broker_id")
    return (
        ("cluster_id", cluster_key(row.get("cluster_id"))),
        ("broker_id", "" if broker is None else str(broker)),
        ("log_dir", row.get("log_dir") or ""),
    )


def _partition_labels(row: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return (*_broker_labels(row), ("partition", str(row["partition"])))


def _where(row: dict[str, Any]) -> str:
    broker = row.get("broker_id")
    return f"{partition_name(row['partition'])} on broker {broker} ({row['log_dir']})"


def partition_alerts(run: LoadedRun, settings: Settings) -> Iterator[Alert]:
    at = run.finished_at
    for p in run.partitions:
        labels, where = _partition_labels(p), _where(p)
        # 1. a thread-death verdict: the clean of this partition kills a cleaner thread for good
        #    (before 2.1), predicted from the map's capacity or already seen in the files
        if p["outcome"] == "thread-death":
            yield Alert(
                THREAD_DEATH,
                CRITICAL,
                f"{where}: the log cleaner thread dies cleaning it",
                _verdict_text(p),
                at,
                labels,
            )
        # 2. blocked: no cleaner thread is left to compact it (all died elsewhere, the cleaner
        #    is disabled, or 2.1+ marked the partition uncleanable)
        if p["outcome"] == "blocked":
            yield Alert(
                BLOCKED,
                CRITICAL,
                f"{where}: no cleaner thread compacts it",
                _verdict_text(p),
                at,
                labels,
            )
        # 3. never compacted and big: its coordinator re-reads all of it on every failover
        size = p["size_bytes"] or 0
        if p["never_compacted"] and size > settings.never_compacted_threshold_bytes:
            yield Alert(
                NEVER_COMPACTED,
                WARNING,
                f"{where}: never compacted, {size:,} bytes",
                f"{size:,} bytes, over the threshold of"
                f" {settings.never_compacted_threshold_bytes:,}; {_verdict_text(p)}",
                at,
                labels,
            )
        # 4. more than one pass of the offset map: compaction lags, and stops early when the
        #    dirty ratio falls below min.cleanable.dirty.ratio between passes
        if (p["passes"] or 0) > 1:
            yield Alert(
                MULTI_PASS,
                WARNING,
                f"{where}: the cleaner needs {p['passes']} passes of its offset map",
                _verdict_text(p) + _advice(p),
                at,
                labels,
            )
        # 7. a coordinator failover here outlasts what consumers wait (session.timeout.ms):
        #    the "obsolete coordinator information" outage
        seconds = p["load_estimate_seconds"]
        if seconds is not None and seconds > settings.coordinator_load_threshold_seconds:
            yield Alert(
                LOAD_SLOW,
                WARNING,
                f"{where}: a coordinator failover loads for about {seconds:,.1f} s",
                f"load estimate {seconds:,.1f} s, over"
                f" {settings.coordinator_load_threshold_seconds:g} s"
                f" ({p['load_estimate_basis']}); after cleaning:"
                f" {p['load_estimate_seconds_after_cleaning']} s",
                at,
                labels,
            )


def _verdict_text(p: dict[str, Any]) -> str:
    text = f"cleaner verdict {p['outcome']}: {p['reason']}"
    if p.get("message") and p["message"] not in (p["reason"] or ""):
        text += f" (Kafka: {p['message']})"
    return text


def _advice(p: dict[str, Any]) -> str:
    """The recommendation's arithmetic (the reason may name the buffer already, not how)."""
    if p.get("recommended_dedupe_buffer_size") and p.get("recommendation_arithmetic"):
        return (
            f"; log.cleaner.dedupe.buffer.size={p['recommended_dedupe_buffer_size']}"
            f" ({p['recommendation_arithmetic']})"
        )
    return ""


def broker_alerts(run: LoadedRun) -> Iterator[Alert]:
    at = run.finished_at
    for b in run.brokers:
        labels = _broker_labels(b)
        # 6. corrupt index files, or no clean-shutdown marker: the next start rebuilds indexes
        #    and recovers segments before the broker serves
        corrupt = b["corrupt_index_files"] or 0
        if corrupt or b["clean_shutdown"] is False:
            why = []
            if corrupt:
                why.append(f"{corrupt} corrupt index file(s)")
            if b["clean_shutdown"] is False:
                why.append("no clean-shutdown marker (the broker did not stop cleanly)")
            yield Alert(
                CORRUPT_INDEXES,
                WARNING,
                f"broker {b['broker_id']} ({b['log_dir']}): " + " and ".join(why),
                "the next start rebuilds these indexes and recovers the segments after the"
                " recovery point before it serves; see /indexes",
                at,
                labels,
            )
    unknown: dict[tuple[tuple[str, str], ...], int] = {}
    for p in run.partitions:
        if p.get("unknown_record_types"):
            key = _broker_labels(p)
            unknown[key] = unknown.get(key, 0) + p["unknown_record_types"]
    # 12. record types the coordinator's loader does not know: counted, never dropped
    for labels, count in unknown.items():
        yield Alert(
            UNKNOWN_RECORD_TYPES,
            INFO,
            f"{count} record(s) of a key type the coordinator's loader does not know",
            "counted in partitions.unknown_record_types (never dropped); a newer Kafka wrote"
            " them, or they are damage",
            at,
            labels,
        )


def finding_alerts(run: LoadedRun) -> Iterator[Alert]:
    at = run.finished_at
    divergent: dict[tuple[str, str], list[str]] = {}
    for f in run.findings:
        # 5. an open transaction pins the last stable offset: nothing after it compacts
        if f["kind"] == "hanging-transaction":
            labels = _broker_labels(f) + _finding_partition(f)
            yield Alert(
                HANGING_TRANSACTION,
                WARNING,
                f"{f['partition']} on broker {f['broker_id']}: a hanging transaction pins"
                " compaction",
                f["detail"],
                at,
                labels,
            )
        # 10. replicas disagree below both log ends: one of them lost or invented commits
        if f["kind"] == "replica-divergence":
            key = (cluster_key(f["cluster_id"]), f["partition"] or "")
            divergent.setdefault(key, []).append(f["detail"])
    for (cluster, name), details in divergent.items():
        number = _number(name)
        labels = (("cluster_id", cluster),) + (
            (("partition", str(number)),) if number is not None else ()
        )
        yield Alert(
            REPLICA_DIVERGENCE,
            WARNING,
            f"replicas of {name} disagree below both log ends",
            "; ".join(dict.fromkeys(details)),
            at,
            labels,
        )


def _finding_partition(f: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    number = _number(f["partition"] or "")
    return (("partition", str(number)),) if number is not None else ()


def _number(name: str) -> int | None:
    topic, _, number = name.rpartition("-")
    return int(number) if topic == "__consumer_offsets" and number.isdigit() else None


def stuck_alerts(run: LoadedRun, trends: Sequence[RunTrend]) -> Iterator[Alert]:
    """11. Across the kept runs up to the served one: a partition whose cleaner checkpoint has
    not moved while its dirty bytes grew (the partition 2.1+ marked uncleanable until a
    restart, or a dead thread's). Partitions the cleaner would not clean anyway
    (``not-eligible``, ``nothing-to-clean``: below the dirty ratio, only an active segment)
    are left out: their dirty bytes grow by design."""
    earlier = [t for t in trends if t.manifest is not None and t.run_id < run.run_id]
    if not earlier:
        return
    for p in run.partitions:
        if p["outcome"] in ("not-eligible", "nothing-to-clean"):
            continue
        since = _unmoved_since(partition_key(p), p["cleaner_checkpoint"], earlier)
        if since is None:
            continue
        first_run, first_dirty = since
        dirty = p["cleanable_bytes"]
        if dirty is not None and first_dirty is not None and dirty > first_dirty:
            yield Alert(
                CLEANER_STUCK,
                WARNING,
                f"{_where(p)}: cleaner checkpoint unmoved since run {first_run}, dirty bytes"
                f" grew {first_dirty:,} -> {dirty:,}",
                f"checkpoint {p['cleaner_checkpoint']} in every run since {first_run}, while the"
                f" dirty section grew; {_verdict_text(p)}. On 2.1+ the partition may be marked"
                " uncleanable until the broker restarts; before 2.1 the cleaner thread may be"
                " dead (the broker's log-cleaner.log says which)",
                run.finished_at,
                _partition_labels(p),
            )


def _unmoved_since(
    key: PartitionKey, checkpoint: int | None, earlier: Sequence[RunTrend]
) -> tuple[str, int | None] | None:
    """The oldest run of the unbroken stretch of runs just before the served one in which the
    partition had this same checkpoint, with its dirty bytes then."""
    found = None
    for trend in reversed(earlier):
        seen = trend.partitions.get(key)
        if seen is None or seen[0] != checkpoint:
            break
        found = (trend.run_id, seen[1])
    return found


def service_alerts(
    run: LoadedRun | None, newest_error: LoadError | None, settings: Settings, now: float
) -> Iterator[Alert]:
    # 8. the latest run is old: the scan stopped publishing, every number here is stale
    if run is not None and now - run.finished_at > settings.stale_run_threshold_seconds:
        age = now - run.finished_at
        yield Alert(
            STALE,
            WARNING,
            f"the latest run, {run.run_id}, finished {age / 60:,.0f} min ago",
            f"older than the threshold of {settings.stale_run_threshold_seconds / 60:,.0f} min:"
            " is the scan job still running?",
            run.finished_at + settings.stale_run_threshold_seconds,  # when it became stale
        )
    # 9. the newest run cannot be read: the service serves the previous one
    if newest_error is not None:
        serving = f"serving {run.run_id}" if run is not None else "no run served"
        yield Alert(
            UNREADABLE,
            WARNING,
            f"run {newest_error.run_id} is unreadable ({serving})",
            newest_error.message,
            newest_error.at,
        )


def all_alerts(
    run: LoadedRun | None,
    trends: Sequence[RunTrend],
    newest_error: LoadError | None,
    settings: Settings,
    now: float,
) -> list[Alert]:
    found: list[Iterable[Alert]] = [service_alerts(run, newest_error, settings, now)]
    if run is not None:
        found += [
            partition_alerts(run, settings),
            broker_alerts(run),
            finding_alerts(run),
            stuck_alerts(run, trends),
        ]
    order = {CRITICAL: 0, WARNING: 1, INFO: 2}
    alerts = [a for source in found for a in source]
    return sorted(alerts, key=lambda a: (order.get(a.severity, 3), a.name, a.where))
