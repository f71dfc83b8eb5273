"""The Prometheus rules of offsets-auditor, from one source: the alerting rules for every alert of
``docs/metrics.md`` and the recording rules the Grafana dashboard reads. Writes them twice:

    deploy/prometheus/offsets-auditor.rules.yml   a plain rules file (``rule_files:``)
    deploy/k8s/base/prometheusrule.yaml           the same groups as a PrometheusRule resource
                                                  (prometheus-operator)

    python scripts/deploy/rules.py            write both
    python scripts/deploy/rules.py --check    exit 1 when a written file differs from the source

Thresholds live here (the service evaluates nothing): change one below and regenerate. Every
alert carries ``severity`` (as in docs/metrics.md), ``summary``, ``description`` and
``runbook_url`` (``RUNBOOK_BASE`` + ``<alertname>.md``, the page in docs/runbooks/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[2]
RULES_FILE = ROOT / "deploy" / "prometheus" / "offsets-auditor.rules.yml"
PROMETHEUS_RULE = ROOT / "deploy" / "k8s" / "base" / "prometheusrule.yaml"

#: Where runbook_url points: the runbooks as they are in the repository. Operators who publish
#: the docs elsewhere regenerate with ``--runbook-base https://...``.
RUNBOOK_BASE = "docs/runbooks/"

#: OffsetsPartitionNeverCompacted: a never-compacted partition smaller than this is not worth
#: a page (default 100 MiB, as the service's /alerts).
NEVER_COMPACTED_BYTES = 100 * 1024 * 1024
#: OffsetsCoordinatorLoadSlow: consumers give up on a coordinator after session.timeout.ms
#: (10 s by default for the Java consumer up to 2.8, 45 s from 3.0): the failover outage.
LOAD_SLOW_SECONDS = 10
#: OffsetsScanStale: the newest run is older than this (scan it at least hourly).
STALE_SECONDS = 2 * 3600
#: OffsetsCleanerStuck: the window over which a checkpoint that did not move while the dirty
#: bytes grew counts as stuck (several scans must fall inside it).
STUCK_WINDOW = "6h"

_PARTITION = "{{ $labels.partition }}"
_BROKER = "{{ $labels.broker_id }}"
_WHERE = "broker {{ $labels.broker_id }} ({{ $labels.log_dir }})"


class Alert(NamedTuple):
    name: str
    severity: str
    for_: str  # Prometheus' ``for``: "0s" fires at the first evaluation (a scan is the evidence)
    expr: str
    summary: str
    description: str
    #: more labels; an alert with several rules tells them apart by one (promtool refuses two
    #: rules with the same name and labels)
    labels: tuple[tuple[str, str], ...] = ()


#: In the order of docs/metrics.md.
ALERTS: tuple[Alert, ...] = (
    Alert(
        "OffsetsCleanerThreadDeath",
        "critical",
        "0s",
        'offsets_auditor_partition_cleaner_verdict{outcome="thread-death"} == 1',
        f"__consumer_offsets-{_PARTITION} kills a log cleaner thread on {_WHERE}",
        f"Cleaning __consumer_offsets-{_PARTITION} throws on this broker's Kafka version (before"
        " 2.1 the exception kills the cleaner thread for good: 'offset map can fit only ...'), so"
        " this partition and every partition the thread would have cleaned after it stop"
        " compacting and grow until a coordinator failover takes longer than consumers wait. The"
        " scan's recommendation says which log.cleaner.dedupe.buffer.size fixes it.",
    ),
    Alert(
        "OffsetsPartitionBlocked",
        "critical",
        "0s",
        'offsets_auditor_partition_cleaner_verdict{outcome="blocked"} == 1',
        f"__consumer_offsets-{_PARTITION} has no cleaner thread left on {_WHERE}",
        f"__consumer_offsets-{_PARTITION} would compact, but every cleaner thread dies on another"
        " partition first (or log.cleaner.enable=false, or 2.1+ marked it uncleanable): it grows"
        " without bound.",
    ),
    Alert(
        "OffsetsPartitionNeverCompacted",
        "warning",
        "0s",
        f"offsets_auditor_partition_log_size_bytes > {NEVER_COMPACTED_BYTES}"
        " and offsets_auditor_partition_never_compacted == 1",
        f"__consumer_offsets-{_PARTITION} on {_WHERE} was never compacted"
        " ({{ $value | humanize1024 }}B)",
        f"__consumer_offsets-{_PARTITION} holds {{{{ $value | humanize1024 }}}}B and has no cleaner"
        f" checkpoint: the cleaner never finished a pass over it. Over"
        f" {NEVER_COMPACTED_BYTES // 1048576} MiB a coordinator failover re-reads all of it.",
    ),
    Alert(
        "OffsetsCleanerMultiPass",
        "warning",
        "0s",
        'offsets_auditor_partition_cleaner_verdict{outcome="multi-pass"} == 1',
        f"__consumer_offsets-{_PARTITION} needs several passes of the offset map on {_WHERE}",
        f"The dirty section of __consumer_offsets-{_PARTITION} does not fit one pass of the"
        " cleaner's offset map: records stay uncompacted once the dirty ratio drops below"
        " min.cleanable.dirty.ratio before the last pass. A larger log.cleaner.dedupe.buffer.size"
        " makes it one pass.",
    ),
    Alert(
        "OffsetsHangingTransaction",
        "warning",
        "0s",
        'sum without (severity) (offsets_auditor_findings{kind="hanging-transaction"}) > 0',
        f"A hanging transaction pins compaction of __consumer_offsets on {_WHERE}",
        "{{ $value }} open transaction(s) in __consumer_offsets never ended: the last stable"
        " offset stays behind them and nothing after it compacts.",
    ),
    Alert(
        "OffsetsCorruptIndexes",
        "warning",
        "0s",
        "offsets_auditor_broker_corrupt_index_files > 0",
        f"{{{{ $value }}}} index file(s) of {_WHERE} need a rebuild",
        "The next start of this broker rebuilds these offset/time indexes (and re-reads their"
        " segments) before it serves: a longer restart and a longer coordinator failover.",
        (("reason", "corrupt-index"),),
    ),
    Alert(
        "OffsetsCorruptIndexes",
        "warning",
        "0s",
        "offsets_auditor_broker_clean_shutdown == 0",
        f"{_WHERE} did not shut down cleanly",
        "The log dir has no .kafka_cleanshutdown marker: the next start runs log recovery and"
        " rebuilds the indexes of every segment after the recovery point.",
        (("reason", "unclean-shutdown"),),
    ),
    Alert(
        "OffsetsCoordinatorLoadSlow",
        "warning",
        "0s",
        f"offsets_auditor_partition_coordinator_load_seconds > {LOAD_SLOW_SECONDS}",
        f"Loading __consumer_offsets-{_PARTITION} on a coordinator failover takes about"
        " {{ $value | humanizeDuration }}",
        f"A new coordinator for the groups of __consumer_offsets-{_PARTITION} re-reads the whole"
        f" partition before it answers; over {LOAD_SLOW_SECONDS} s (the consumers'"
        " session.timeout.ms) the groups fail with 'obsolete coordinator information'.",
    ),
    Alert(
        "OffsetsScanStale",
        "warning",
        "0s",
        f"time() - offsets_auditor_run_timestamp_seconds > {STALE_SECONDS}",
        "The latest offsets-auditor scan finished {{ $value | humanizeDuration }} ago",
        f"No scan has been published for more than {STALE_SECONDS // 3600} h: every other"
        " offsets-auditor alert describes old data.",
    ),
    Alert(
        "OffsetsResultsUnreadable",
        "warning",
        "0s",
        "offsets_auditor_results_last_load_error == 1",
        "The newest offsets-auditor run cannot be read",
        "The service keeps serving the previous run; the newest one in RESULTS/runs/ failed to"
        " load (see the service's log and GET /readyz).",
    ),
    Alert(
        "OffsetsReplicaDivergence",
        "warning",
        "0s",
        "offsets_auditor_replica_divergences > 0",
        f"Replicas of __consumer_offsets-{_PARTITION} disagree",
        f"{{{{ $value }}}} divergence(s) between the log dirs holding"
        f" __consumer_offsets-{_PARTITION} below both log ends: the replicas hold different"
        " records at the same offsets.",
    ),
    Alert(
        "OffsetsCleanerStuck",
        "warning",
        "0s",
        "offsets_auditor_partition_dirty_bytes"
        f" > offsets_auditor_partition_dirty_bytes offset {STUCK_WINDOW}"
        " and offsets_auditor_partition_cleaner_checkpoint_offset"
        f" == offsets_auditor_partition_cleaner_checkpoint_offset offset {STUCK_WINDOW}"
        f" and changes(offsets_auditor_partition_cleaner_checkpoint_offset[{STUCK_WINDOW}]) == 0",
        f"The cleaner has not moved on __consumer_offsets-{_PARTITION} ({_WHERE}) for"
        f" {STUCK_WINDOW}",
        f"Across scans the cleaner checkpoint of __consumer_offsets-{_PARTITION} stayed put for"
        f" {STUCK_WINDOW} while its dirty bytes grew to {{{{ $value | humanize1024 }}}}B: the"
        " partition is uncleanable until the cleaner (or the broker) restarts.",
    ),
    Alert(
        "OffsetsUnknownRecordTypes",
        "info",
        "0s",
        "offsets_auditor_unknown_record_types > 0",
        f"{{{{ $value }}}} __consumer_offsets record(s) of unknown type on {_WHERE}",
        "The decoder met record key types the coordinator's loader of this Kafka version does"
        " not know (counted, never dropped): a newer broker wrote them, or the version is wrong.",
    ),
)

#: (record, expr): what the dashboard reads besides the raw series.
RECORDING: tuple[tuple[str, str], ...] = (
    ("offsets_auditor:run_age_seconds", "time() - offsets_auditor_run_timestamp_seconds"),
    (
        "broker:offsets_auditor_partition_log_size_bytes:sum",
        "sum without (partition) (offsets_auditor_partition_log_size_bytes)",
    ),
    (
        "broker:offsets_auditor_partition_reclaimable_bytes:sum",
        "sum without (partition) (offsets_auditor_partition_reclaimable_bytes)",
    ),
    (
        "broker:offsets_auditor_partition_never_compacted:sum",
        "sum without (partition) (offsets_auditor_partition_never_compacted)",
    ),
    (
        "broker:offsets_auditor_partition_coordinator_load_seconds:max",
        "max without (partition) (offsets_auditor_partition_coordinator_load_seconds)",
    ),
)


def groups(runbook_base: str = RUNBOOK_BASE) -> list[dict[str, Any]]:
    """The rule groups, as Prometheus' rules file has them."""
    alerts = [
        {
            "alert": a.name,
            "expr": a.expr,
            **({"for": a.for_} if a.for_ != "0s" else {}),
            "labels": {"severity": a.severity, **dict(a.labels)},
            "annotations": {
                "summary": a.summary,
                "description": a.description,
                "runbook_url": f"{runbook_base}{a.name}.md",
            },
        }
        for a in ALERTS
    ]
    recording = [{"record": record, "expr": expr} for record, expr in RECORDING]
    return [
        # the global evaluation_interval (a group interval would also delay the first evaluation
        # by a hash of the group's name, up to a whole interval)
        {"name": "offsets-auditor.recording", "rules": recording},
        {"name": "offsets-auditor.alerts", "rules": alerts},
    ]


def rules_file(runbook_base: str = RUNBOOK_BASE) -> str:
    head = "# Generated by scripts/deploy/rules.py: edit that, then run it.\n"
    return head + _dump({"groups": groups(runbook_base)})


def prometheus_rule(runbook_base: str = RUNBOOK_BASE) -> str:
    head = (
        "# Generated by scripts/deploy/rules.py from the same source as"
        " deploy/prometheus/offsets-auditor.rules.yml.\n"
    )
    resource = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "offsets-auditor",
            "labels": {"app.kubernetes.io/name": "offsets-auditor"},
        },
        "spec": {"groups": groups(runbook_base)},
    }
    return head + _dump(resource)


def _dump(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, width=1 << 20, allow_unicode=True)


def outputs(runbook_base: str = RUNBOOK_BASE) -> dict[Path, str]:
    return {RULES_FILE: rules_file(runbook_base), PROMETHEUS_RULE: prometheus_rule(runbook_base)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--runbook-base", default=RUNBOOK_BASE, metavar="URL")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs(args.runbook_base).items():
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        print(f"{path.relative_to(ROOT)} differs from scripts/deploy/rules.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
