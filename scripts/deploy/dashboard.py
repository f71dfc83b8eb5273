"""The Grafana dashboard of offsets-auditor: deploy/grafana/dashboards/offsets-auditor.json.

    python scripts/deploy/dashboard.py            write it
    python scripts/deploy/dashboard.py --check    exit 1 when the written file differs

Every query reads the metrics of docs/metrics.md or a recording rule of scripts/deploy/rules.py.
The datasource is a variable (``$datasource``), and so are the cluster and the broker
(``$cluster``, ``$broker``: regexes, "All" is ``.*``, which also matches an empty label).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboards" / "offsets-auditor.json"

UID = "offsets-auditor"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
#: the selector every per-partition and per-broker query carries
F = 'cluster_id=~"$cluster",broker_id=~"$broker"'
#: legend of a per-partition series
PARTITION = "broker {{broker_id}} p{{partition}}"
BROKER = "broker {{broker_id}} {{log_dir}}"
LOAD_SLOW_SECONDS = 10  # as OffsetsCoordinatorLoadSlow


def target(expr: str, legend: str = "", *, instant: bool = False, table: bool = False) -> dict:
    t: dict[str, Any] = {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
    if instant or table:
        t |= {"instant": True, "range": False}
    if table:
        t["format"] = "table"
    return t


def panel(
    kind: str,
    title: str,
    description: str,
    targets: list[dict],
    grid: tuple[int, int, int, int],
    unit: str = "short",
    thresholds: list[tuple[float | None, str]] | None = None,
    options: dict | None = None,
) -> dict:
    x, y, w, h = grid
    steps = [{"color": c, "value": v} for v, c in (thresholds or [(None, "green")])]
    return {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "targets": [{**t, "refId": chr(ord("A") + i)} for i, t in enumerate(targets)],
        "fieldConfig": {
            "defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
            "overrides": [],
        },
        "options": options or {},
    }


def row(title: str, y: int) -> dict:
    return {
        "type": "row",
        "title": title,
        "collapsed": False,
        "gridPos": {"x": 0, "y": y, "w": 24, "h": 1},
        "panels": [],
    }


RED_FROM_1 = [(None, "green"), (1, "red")]


def panels() -> list[dict]:
    out = [
        row("Cleaner health", 0),
        panel(
            "stat",
            "Partitions never compacted",
            "__consumer_offsets partitions with no cleaner checkpoint: the cleaner never finished"
            " a pass over them.",
            [target(f"sum(broker:offsets_auditor_partition_never_compacted:sum{{{F}}})")],
            (0, 1, 6, 4),
            thresholds=RED_FROM_1,
        ),
        panel(
            "stat",
            "Partitions the cleaner will not compact",
            "Verdict thread-death (cleaning it kills a cleaner thread) or blocked (no thread"
            " left for it).",
            [
                target(
                    "sum(offsets_auditor_partition_cleaner_verdict"
                    f'{{{F},outcome=~"thread-death|blocked"}})'
                )
            ],
            (6, 1, 6, 4),
            thresholds=RED_FROM_1,
        ),
        panel(
            "stat",
            "Bytes compaction would reclaim",
            "What every pass the cleaner can run would remove, summed over the partitions.",
            [target(f"sum(broker:offsets_auditor_partition_reclaimable_bytes:sum{{{F}}})")],
            (12, 1, 6, 4),
            unit="bytes",
        ),
        panel(
            "stat",
            "Last scan",
            "Age of the oldest publisher's newest run (OffsetsScanStale fires after three scan"
            " intervals, 3 h by default) and how long the slowest took.",
            [
                target("max(offsets_auditor:publisher_run_age_seconds)", "age"),
                target("max(offsets_auditor_publisher_run_duration_seconds)", "duration"),
            ],
            (18, 1, 6, 4),
            unit="s",
            thresholds=[(None, "green"), (10800, "red")],
        ),
        panel(
            "table",
            "Partitions never compacted, by size",
            "Size of each never-compacted partition (the coordinator re-reads all of it on a"
            " failover).",
            [
                target(
                    f"sort_desc(offsets_auditor_partition_log_size_bytes{{{F}}}"
                    f" and offsets_auditor_partition_never_compacted{{{F}}} == 1)",
                    table=True,
                )
            ],
            (0, 5, 12, 8),
            unit="bytes",
        ),
        panel(
            "table",
            "Cleaner verdict per partition",
            "The cleaner's outcome for each partition on the broker's Kafka version and config.",
            [target(f"offsets_auditor_partition_cleaner_verdict{{{F}}} == 1", table=True)],
            (12, 5, 12, 8),
        ),
        row("Offset map", 13),
        panel(
            "bargauge",
            "Offset map headroom",
            "1 - needed / capacity of one cleaner thread's offset map for the largest dirty"
            " section; below 0 it does not fit one pass (before 0.10.1: the thread dies).",
            [target(f"offsets_auditor_partition_offset_map_headroom_ratio{{{F}}}", PARTITION)],
            (0, 14, 12, 8),
            unit="percentunit",
            thresholds=[(None, "red"), (0, "orange"), (0.2, "green")],
            options={"displayMode": "basic", "orientation": "horizontal"},
        ),
        panel(
            "timeseries",
            "Offset map entries needed vs capacity",
            "Map entries the largest dirty section needs, per partition, against what one"
            " thread's map holds (log.cleaner.dedupe.buffer.size / threads / 24 * load factor).",
            [
                target(f"offsets_auditor_partition_offset_map_needed_entries{{{F}}}", PARTITION),
                target(
                    "max without (partition) "
                    f"(offsets_auditor_partition_offset_map_capacity_entries{{{F}}})",
                    f"capacity, {BROKER}",
                ),
            ],
            (12, 14, 12, 8),
        ),
        panel(
            "timeseries",
            "Dirty ratio",
            "cleanable bytes / (clean + cleanable): the cleaner picks a partition when this is"
            " over min.cleanable.dirty.ratio.",
            [target(f"offsets_auditor_partition_dirty_ratio{{{F}}}", PARTITION)],
            (0, 22, 12, 8),
            unit="percentunit",
        ),
        panel(
            "bargauge",
            "Coordinator load estimate",
            "Seconds a new coordinator needs to load each partition on a failover; over the"
            " consumers' session.timeout.ms their groups fail meanwhile.",
            [
                target(
                    f"broker:offsets_auditor_partition_coordinator_load_seconds:max{{{F}}}",
                    f"slowest, {BROKER}",
                ),
                target(f"offsets_auditor_partition_coordinator_load_seconds{{{F}}}", PARTITION),
            ],
            (12, 22, 12, 8),
            unit="s",
            thresholds=[(None, "green"), (LOAD_SLOW_SECONDS, "red")],
            options={"displayMode": "basic", "orientation": "horizontal"},
        ),
        row("Size", 30),
        panel(
            "timeseries",
            "Size per partition",
            "__consumer_offsets partition sizes across scans.",
            [target(f"offsets_auditor_partition_log_size_bytes{{{F}}}", PARTITION)],
            (0, 31, 12, 8),
            unit="bytes",
        ),
        panel(
            "timeseries",
            "Size per broker",
            "All __consumer_offsets partitions of each log dir across scans.",
            [target(f"broker:offsets_auditor_partition_log_size_bytes:sum{{{F}}}", BROKER)],
            (12, 31, 12, 8),
            unit="bytes",
        ),
        panel(
            "bargauge",
            "Bytes compaction would reclaim, per partition",
            "Size minus what remains once every pass the cleaner can run has run.",
            [target(f"offsets_auditor_partition_reclaimable_bytes{{{F}}}", PARTITION)],
            (0, 39, 12, 8),
            unit="bytes",
            options={"displayMode": "basic", "orientation": "horizontal"},
        ),
        panel(
            "timeseries",
            "Bytes compaction would reclaim, per broker",
            "Summed over each log dir's partitions, across scans.",
            [target(f"broker:offsets_auditor_partition_reclaimable_bytes:sum{{{F}}}", BROKER)],
            (12, 39, 12, 8),
            unit="bytes",
        ),
        row("Broker restarts and findings", 47),
        panel(
            "stat",
            "Corrupt index files",
            "Index files the next start rebuilds; an unclean shutdown rebuilds more.",
            [
                target(f"offsets_auditor_broker_corrupt_index_files{{{F}}}", BROKER),
                target(f"1 - offsets_auditor_broker_clean_shutdown{{{F}}}", f"unclean, {BROKER}"),
            ],
            (0, 48, 8, 6),
            thresholds=RED_FROM_1,
        ),
        panel(
            "table",
            "Findings by kind",
            "The run's findings (GET /findings has each one).",
            [target(f"sum by (kind, severity) (offsets_auditor_findings{{{F}}})", table=True)],
            (8, 48, 8, 6),
        ),
        panel(
            "stat",
            "Cleaner threads that die",
            "Threads of each broker the emulated cleaner loses, of its log.cleaner.threads.",
            [
                target(f"offsets_auditor_broker_cleaner_threads_dying{{{F}}}", f"dying, {BROKER}"),
                target(f"offsets_auditor_broker_cleaner_threads{{{F}}}", f"threads, {BROKER}"),
            ],
            (16, 48, 8, 6),
        ),
        row("Run freshness", 54),
        panel(
            "timeseries",
            "Age of each publisher's newest run",
            "Seconds since each scan's newest run finished; a saw-tooth while it publishes"
            " (stale after three scan intervals, 3 h by default).",
            [target("offsets_auditor:publisher_run_age_seconds", "{{publisher}}")],
            (0, 55, 12, 7),
            unit="s",
            thresholds=[(None, "green"), (10800, "red")],
        ),
        panel(
            "timeseries",
            "Results the service loads",
            "1 while a run is loaded (/readyz); last load error 1 while a publisher's newest"
            " run is unreadable (its previous one is served); each publisher's scans failed"
            " since its newest run.",
            [
                target("offsets_auditor_results_loaded", "loaded {{instance}}"),
                target("offsets_auditor_results_last_load_error", "load error {{instance}}"),
                target("offsets_auditor_scan_failures", "failed scans {{publisher}}"),
            ],
            (12, 55, 12, 7),
        ),
        row("What the broker's cleaner did (its log-cleaner.log)", 62),
        panel(
            "bargauge",
            "Since the last real cleaning",
            "Seconds since the broker's cleaner last completed a cleaning of each partition,"
            " as its own log-cleaner.log says (read by the scan beside the log dir).",
            [
                target(
                    f"time() - offsets_auditor_partition_last_cleaning_timestamp_seconds{{{F}}}",
                    PARTITION,
                )
            ],
            (0, 63, 8, 8),
            unit="s",
            options={"displayMode": "basic", "orientation": "horizontal"},
        ),
        panel(
            "timeseries",
            "Cleaner's pace against the commits",
            "Dirty bytes per second the live cleaner threads can consume (their measured"
            " throughput x threads alive) against the bytes per second the offsets partitions"
            " grow by: below it, the cleaner falls behind (finding cleaner-falling-behind).",
            [
                target(
                    f"offsets_auditor_broker_cleaner_capacity_bytes_per_second{{{F}}}",
                    f"cleaner, {BROKER}",
                ),
                target(
                    f"offsets_auditor_broker_commit_rate_bytes_per_second{{{F}}}",
                    f"commits, {BROKER}",
                ),
            ],
            (8, 63, 8, 8),
            unit="Bps",
        ),
        panel(
            "stat",
            "Dead cleaner threads, uncleanable partitions, cleaner busy",
            "Cleaner threads the broker's log shows dead in its last run"
            " (OffsetsCleanerThreadDied), partitions it marked uncleanable since its last start"
            " (OffsetsPartitionUncleanable), and the share of the run its threads spent"
            " cleaning.",
            [
                target(f"offsets_auditor_broker_cleaner_threads_dead{{{F}}}", f"dead, {BROKER}"),
                target(
                    "sum without (partition)"
                    f" (offsets_auditor_partition_marked_uncleanable{{{F}}})",
                    f"uncleanable, {BROKER}",
                ),
                target(f"offsets_auditor_broker_cleaner_busy_ratio{{{F}}}", f"busy, {BROKER}"),
            ],
            (16, 63, 8, 8),
            thresholds=RED_FROM_1,
        ),
    ]
    for i, p in enumerate(out, start=1):
        p["id"] = i
    return out


def variables() -> list[dict]:
    def query(name: str, label: str, expr: str) -> dict:
        return {
            "type": "query",
            "name": name,
            "label": label,
            "datasource": DATASOURCE,
            "query": {"query": expr, "refId": f"{name}-variable"},
            "definition": expr,
            "refresh": 2,
            "includeAll": True,
            "allValue": ".*",
            "multi": True,
            "current": {"text": "All", "value": "$__all"},
            "sort": 1,
        }

    return [
        {
            "type": "datasource",
            "name": "datasource",
            "label": "Prometheus",
            "query": "prometheus",
            "current": {},
            "refresh": 1,
        },
        query(
            "cluster",
            "Cluster",
            "label_values(offsets_auditor_partition_log_size_bytes, cluster_id)",
        ),
        query(
            "broker",
            "Broker",
            'label_values(offsets_auditor_partition_log_size_bytes{cluster_id=~"$cluster"},'
            " broker_id)",
        ),
    ]


def dashboard() -> dict:
    return {
        "uid": UID,
        "title": "Kafka __consumer_offsets (offsets-auditor)",
        "description": "Cleaner health of __consumer_offsets from offsets-auditor's scans"
        " (docs/metrics.md). Generated by scripts/deploy/dashboard.py.",
        "tags": ["kafka", "offsets-auditor"],
        "timezone": "utc",
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "1m",
        "time": {"from": "now-7d", "to": "now"},
        "templating": {"list": variables()},
        "annotations": {"list": []},
        "links": [],
        "panels": panels(),
    }


def text() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    if args.check:
        if not DASHBOARD.is_file() or DASHBOARD.read_text() != text():
            print(f"{DASHBOARD.relative_to(ROOT)} differs from {__file__}", file=sys.stderr)
            return 1
        return 0
    DASHBOARD.parent.mkdir(parents=True, exist_ok=True)
    DASHBOARD.write_text(text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
