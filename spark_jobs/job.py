"""The scan: broker log dirs read on Spark, audited with the core's stages, published.

Driver: plan each log dir (``audit_plan.plan_audit``, its own version detection), list its
``__consumer_offsets`` partitions, pack the segments into slots. Executors: stage A per segment
(``mapInArrow``), stage B per partition (``applyInArrow``). Driver: stage C per log dir
(``audit_stages.conclude``), the findings across log dirs (``replicas``), the tables, publish.

Runs as ``offsets-auditor scan`` and, unchanged, as ``spark-submit spark_jobs/scan.py`` (both
through ``spark_jobs.cli``).
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from offsets_auditor import published
from offsets_auditor.audit.partition import BrokerAudit
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.replicas import Holder, replica_findings
from offsets_auditor.audit.report import DEFAULT_LOAD_BYTES_PER_SECOND, report_json
from offsets_auditor.audit.stages import (
    PartitionOutcome,
    audit_partition,
    conclude,
    log_dir_work,
    read_segment_result,
)
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir.model import offsets_partitions, open_partition
from offsets_auditor.reader.reading import DEFAULT_READ, ReadOptions
from offsets_auditor.versions import KafkaVersion
from spark_jobs import cache, group_parts, publish, rerun
from spark_jobs.work import Context, Input, PartitionWork, list_partition, pack

#: Spark rounds for partitions that change while read, before the driver reads them itself.
ROUNDS = 3
#: This package: its code shapes the tables as much as the core's does.
_SCAN_CODE = Path(__file__).parent
#: Target bytes of one slot (one Spark task): a segment is never split, slots are not larger.
SLOT_BYTES = 256 * 1024 * 1024


class ExecutorError(RuntimeError):
    """An internal error on an executor, as one line (``cli.internal_error.one_line``, with the
    segment or partition it was working on)."""


@dataclass(frozen=True, slots=True)
class ScanOptions:
    log_dirs: tuple[Path, ...]
    #: the results dir (``--out``); this scan writes only under ``home``
    out: Path
    #: who publishes (``--publisher``): ``RESULTS/publishers/<publisher>/``; ``""``: the results
    #: dir itself, the layout before publishers (tests)
    publisher: str = ""
    properties: tuple[tuple[str, str], ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()
    versions: dict[Path, KafkaVersion | None] = field(default_factory=dict)
    #: each log dir's ``--server-log`` (None: one found beside it, if any)
    server_logs: dict[Path, Path | None] = field(default_factory=dict)
    #: each log dir's ``--cleaner-log`` files (empty: one found beside it, if any)
    cleaner_logs: dict[Path, tuple[Path, ...]] = field(default_factory=dict)
    #: the zone the brokers' logs are written in (``--log-timezone``)
    log_timezone: str = "UTC"
    with_groups: bool = True
    read: ReadOptions = DEFAULT_READ
    load_rate: float = DEFAULT_LOAD_BYTES_PER_SECOND
    keep: int = 10
    now_ms: int | None = None
    #: ``--cluster-id``: the cluster of log dirs whose meta.properties does not say (brokers
    #: before 2.4), so that the service tells clusters apart
    cluster_id: str | None = None

    @property
    def home(self) -> Path:
        """Where this scan's runs, failures and cache live."""
        return published.publisher_home(self.out, self.publisher)


@dataclass(frozen=True)
class ScanResult:
    run_id: str
    run_dir: Path
    manifest: dict[str, Any]
    scanned_reports: tuple[dict[str, Any], ...] | None = None  # None: republished

    @cached_property
    def reports(self) -> tuple[dict[str, Any], ...]:
        """Each input's audit report (read from the run when it was republished)."""
        if self.scanned_reports is not None:
            return self.scanned_reports
        folder = self.run_dir / published.REPORTS
        return tuple(
            json.loads((folder / f"{i}.json").read_text(encoding="utf-8"))
            for i in range(len(self.manifest["inputs"]))
        )


class Counters:
    """What the executors report as they go (Spark accumulators), read by the progress line."""

    def __init__(self, spark: Any) -> None:
        context = spark.sparkContext
        self.segments = context.accumulator(0)
        self.bytes = context.accumulator(0)

    def adder(self) -> Callable[[int, int], None]:
        segments, size = self.segments, self.bytes

        def add(n: int, b: int) -> None:
            segments.add(n)
            size.add(b)

        return add


@dataclass(frozen=True, slots=True)
class Start:
    """A scan as it starts: when, its run id, its code and the key of its inputs, taken before
    anything is read (``rerun.run_key``)."""

    started: float
    now_ms: int
    run_id: str
    code: str
    key: str


def start(options: ScanOptions) -> Start:
    started = time.time()
    now_ms = options.now_ms if options.now_ms is not None else int(started * 1000)
    run_id = new_run_id(started)
    code = cache.code_digest()
    key = rerun.run_key(options.log_dirs, options, code + cache.code_digest(_SCAN_CODE))
    return Start(started, now_ms, run_id, code, key)


def new_run_id(at: float) -> str:
    """A run's id: its start, so that ids sort by time to the millisecond (a republished run
    takes less than a second), and a random tail."""
    return (
        time.strftime("%Y%m%dT%H%M%S", time.gmtime(at))
        + f".{int(at * 1000) % 1000:03d}Z-{uuid.uuid4().hex[:6]}"
    )


def republish_unchanged(options: ScanOptions, begun: Start) -> ScanResult | None:
    """When nothing the latest run depends on changed, that run published again as this one
    (no Spark needed); else None."""
    previous = rerun.reusable(options.home, begun.key, begun.now_ms)
    if previous is None:
        return None
    finished = time.time()
    run_dir, manifest = rerun.republish(
        options.home,
        begun.run_id,
        previous,
        _iso(begun.started),
        _iso(finished),
        finished - begun.started,
        options.keep,
    )
    return ScanResult(begun.run_id, run_dir, manifest)


def run_scan(
    spark: Any,
    options: ScanOptions,
    on_total: Callable[[int, int], None] = lambda segments, size: None,
    counters: Counters | None = None,
    begun: Start | None = None,
) -> ScanResult:
    """Scan and publish; or, when nothing changed, publish the latest run again. ``begun``:
    the start the caller took, having found nothing to republish (``republish_unchanged``)."""
    if begun is None:
        begun = start(options)
        republished = republish_unchanged(options, begun)
        if republished is not None:
            return republished
    now_ms, run_id, code = begun.now_ms, begun.run_id, begun.code
    inputs = [_plan_input(i, path, options, now_ms) for i, path in enumerate(options.log_dirs)]
    counters = counters or Counters(spark)
    cache_dir = options.home / published.CACHE
    parts = group_parts.parts_dir(options.home, run_id)
    outcomes: dict[tuple[int, str], PartitionOutcome] = {}
    group_counts: dict[tuple[int, str], int] = {}
    segment_rows: dict[tuple[int, str], list[dict[str, Any]]] = {}
    read_findings: dict[int, list[Finding]] = defaultdict(list)
    pending = [
        (source, listed) for source in inputs for listed in offsets_partitions(source.work.model)
    ]
    first = True
    for round_number in range(1, ROUNDS + 1):
        if not pending:
            break
        listed = [list_partition(s, p, code, options.read) for s, p in pending]
        if first:
            on_total(
                sum(len(w.tasks) for w in listed), sum(t.size for w in listed for t in w.tasks)
            )
            first = False
        done, changed = _spark_round(spark, inputs, listed, options, cache_dir, parts, counters)
        for work in listed:
            key = (work.input, work.partition.name)
            if key in done:
                outcomes[key], segment_rows[key], group_counts[key] = done[key]
                read_findings[work.input].extend(work.findings)
                if round_number > 1:
                    read_findings[work.input].append(_retried(work, round_number))
        pending = [
            (inputs[w.input], w.partition) for w in listed if (w.input, w.partition.name) in changed
        ]
    for source, partition in pending:  # still changing: read on the driver, files held open
        key = (source.index, partition.name)
        outcomes[key], segment_rows[key], group_counts[key], found = _read_on_driver(
            source, partition, options, parts
        )
        read_findings[source.index].extend(found)
    reports = []
    audits: list[BrokerAudit] = []
    order: list[tuple[int, str]] = []  # (input, partition) as the reports list their groups
    for source in inputs:
        mine = [
            (source.index, p.name)
            for p in offsets_partitions(source.work.model)
            if (source.index, p.name) in outcomes
        ]
        order.extend(mine)
        audit = conclude(
            source.plan, source.work, [outcomes[k] for k in mine], read_findings[source.index]
        )
        detection = source.plan.detection
        audit = replace(audit, findings=(*detection.findings(), *audit.findings))
        audits.append(audit)
        report = report_json(
            [audit],
            options.load_rate,
            None,
            detection,
            source.plan.emulated_versions,
            with_groups=False,  # taken apart: the groups table (``group_parts``)
        )
        reports.append(report)

    def commits(index: int, partition: int) -> dict[tuple[str, str, int], tuple[int, int]]:
        return group_parts.latest_commits(parts, index, f"{OFFSETS_TOPIC}-{partition}")

    for index, finding in replica_findings([_holder(a) for a in audits], commits):
        reports[index]["findings"].append(finding.to_dict())
    for report in reports:
        report["exit_status"] = max(
            (Severity(f["severity"]).exit_status for f in report["findings"]), default=0
        )
    tables = _tables(reports, inputs, segment_rows)
    groups_per_input: dict[int, int] = defaultdict(int)
    for (index, _), count in group_counts.items():
        groups_per_input[index] += count
    for row in tables["brokers"]:
        row["groups"] = groups_per_input[row["input"]]
    for row in tables["partitions"]:
        replay = outcomes[(row["input"], row["name"])].replay
        unknown = {} if replay is None else replay.unknown_record_types
        row["unknown_record_types"] = sum(unknown.values())
        row["unknown_record_types_json"] = json.dumps({str(k): v for k, v in unknown.items()})
    finished = time.time()
    used_keys = {r["cache_key"] for rows in segment_rows.values() for r in rows if r["cache_key"]}
    reads_clock = any(o.reads_clock for o in outcomes.values())
    manifest = _manifest(
        begun,
        finished,
        inputs,
        options,
        reports,
        tables,
        segment_rows,
        reads_clock,
        group_parts.distinct_groups(
            parts,
            order,
            {i: published.where(i, r)["cluster_id"] or "" for i, r in enumerate(reports)},
        ),
    )
    run_dir = publish.publish(
        options.home,
        run_id,
        {
            **{name: publish.to_arrow(name, rows) for name, rows in tables.items()},
            "groups": group_parts.table_chunks(
                parts, order, {i: published.where(i, r) for i, r in enumerate(reports)}
            ),
        },
        reports,
        manifest,
        options.keep,
    )
    shutil.rmtree(parts, ignore_errors=True)
    cache.prune(cache_dir, used_keys)
    return ScanResult(run_id, run_dir, manifest, tuple(reports))


def _holder(a: BrokerAudit) -> Holder:
    """What the findings across log dirs read of one (``audit.replicas``)."""
    return Holder(
        a.log_dir.broker_id,
        a.log_dir.cluster_id,
        str(a.log_dir.path),
        tuple((p.emulated.partition.partition, p.scan.log_end_offset) for p in a.partitions),
    )


def _plan_input(index: int, path: Path, options: ScanOptions, now_ms: int) -> Input:
    settings = AuditSettings(
        properties=options.properties,
        overrides=options.overrides,
        kafka_version=options.versions.get(path),
        server_log=options.server_logs.get(path),
        cleaner_logs=options.cleaner_logs.get(path, ()),
        log_timezone=options.log_timezone,
        with_groups=options.with_groups,
    )
    plan = plan_audit([path], settings, now_ms)
    work = log_dir_work(path, plan)
    if options.cluster_id is not None:
        work = replace(work, model=replace(work.model, given_cluster_id=options.cluster_id))
    return Input(index, path, plan, work)


def _spark_round(
    spark: Any,
    inputs: Sequence[Input],
    listed: Sequence[PartitionWork],
    options: ScanOptions,
    cache_dir: Path,
    parts: Path,
    counters: Counters,
) -> tuple[
    dict[tuple[int, str], tuple[PartitionOutcome, list[dict[str, Any]], int]],
    set[tuple[int, str]],
]:
    from spark_jobs.tasks import (
        FAILED,
        OK,
        PARTITION_OUTCOMES,
        SEGMENT_RESULTS,
        ddl,
        fold_partition,
        read_slots,
    )

    tasks = [t for w in listed for t in w.tasks]
    parallelism = spark.sparkContext.defaultParallelism
    slots = pack(tasks, max(2 * parallelism, sum(t.size for t in tasks) // SLOT_BYTES + 1))
    context = Context(
        plans={s.index: s.plan for s in inputs},
        works={s.index: s.work for s in inputs},
        partitions={(w.input, w.partition.name): w.partition for w in listed},
        read=options.read,
        cache_dir=str(cache_dir),
        parts_dir=str(parts),
        slots=slots,
    )
    broadcast = spark.sparkContext.broadcast(context)

    def get() -> Context:
        value: Context = broadcast.value
        return value

    results = spark.range(0, len(slots), 1, max(len(slots), 1)).mapInArrow(
        read_slots(get, counters.adder()), ddl(SEGMENT_RESULTS)
    )
    folded = results.groupBy("input", "partition").applyInArrow(
        fold_partition(get), ddl(PARTITION_OUTCOMES)
    )
    table = folded.toArrow() if tasks else None
    broadcast.unpersist()
    done: dict[tuple[int, str], tuple[PartitionOutcome, list[dict[str, Any]], int]] = {}
    changed: set[tuple[int, str]] = set()
    rows = table.to_pylist() if table is not None else []
    failed = next((row["error"] for row in rows if row["status"] == FAILED), None)
    if failed is not None:
        raise ExecutorError(failed)
    for row in rows:
        key = (row["input"], row["partition"])
        if row["status"] == OK and (
            row["groups"] == 0 or group_parts.part_path(parts, *key).is_file()
        ):
            outcome = cache.loads(row["outcome"])
            done[key] = (outcome, json.loads(row["segments_json"]), row["groups"])
        else:  # changed while read, or its groups written where the driver cannot see them
            changed.add(key)
    for w in listed:  # partitions without segments never reach the executors
        key = (w.input, w.partition.name)
        if not w.tasks:
            source = inputs[w.input]
            outcome = audit_partition(
                source.work, w.partition, [], source.plan.configs, source.plan.now_ms
            )
            light, groups = group_parts.set_apart(parts, source.index, source.work, outcome)
            done[key] = (light, [], groups)
    return done, changed


def _read_on_driver(
    source: Input, listed: Any, options: ScanOptions, parts: Path
) -> tuple[PartitionOutcome, list[dict[str, Any]], int, list[Finding]]:
    from spark_jobs.tasks import segment_row

    with open_partition(source.work.model, listed, source.plan.config.kafka_version) as snapshot:
        partition = snapshot.partition
        reader = options.read.from_snapshot(snapshot)
        results = [
            read_segment_result(partition, s, source.work.groups_plan, reader)
            for s in partition.segments
        ]
        found = list(snapshot.findings)
    outcome = audit_partition(
        source.work, partition, results, source.plan.configs, source.plan.now_ms
    )
    rows = [segment_row(r, False, None, i == len(results) - 1) for i, r in enumerate(results)]
    light, groups = group_parts.set_apart(parts, source.index, source.work, outcome)
    return light, rows, groups, found


def _retried(work: PartitionWork, rounds: int) -> Finding:
    return Finding(
        FindingKind.CHANGED_WHILE_READ,
        Severity.INFO,
        f"{work.partition.name} changed while it was read (the log cleaner swapping segments on a"
        f" running broker): listed and read again, {rounds} times in all",
        partition=work.partition.name,
    )


def _tables(
    reports: Sequence[dict[str, Any]],
    inputs: Sequence[Input],
    segment_rows: dict[tuple[int, str], list[dict[str, Any]]],
) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in published.TABLES}
    for index, report in enumerate(reports):
        for name, build in published.ROWS.items():
            tables[name].extend(build(index, report))
    for (index, name), rows in sorted(segment_rows.items()):
        source = inputs[index]
        number = int(name.rsplit("-", 1)[1])
        for row in rows:
            tables["segments"].append(
                {
                    "input": index,
                    "log_dir": str(source.path),
                    "broker_id": source.work.model.broker_id,
                    "partition": number,
                    **row,
                }
            )
    return tables


def _manifest(
    begun: Start,
    finished: float,
    inputs: Sequence[Input],
    options: ScanOptions,
    reports: Sequence[dict[str, Any]],
    tables: dict[str, list[dict[str, Any]]],
    segment_rows: dict[tuple[int, str], list[dict[str, Any]]],
    reads_clock: bool,
    groups: int,
) -> dict[str, Any]:
    started = begun.started
    segments = [r for rows in segment_rows.values() for r in rows]
    reused = [r for r in segments if r["reused"]]
    findings = [f for r in reports for f in r["findings"]]
    return {
        "schema_version": published.SCHEMA_VERSION,
        "run_id": begun.run_id,
        "publisher": options.publisher,
        "started_at": _iso(started),
        "finished_at": _iso(finished),
        "duration_seconds": round(finished - started, 3),
        "inputs": [
            {
                "input": s.index,
                "log_dir": str(s.path),
                "broker_id": s.work.model.broker_id,
                "cluster_id": s.work.model.cluster_id,
                "kafka_version": reports[s.index]["kafka_version"],
            }
            for s in inputs
        ],
        "config": {
            "properties": dict(options.properties),
            "overrides": dict(options.overrides),
            "kafka_versions_given": {str(k): str(v) for k, v in options.versions.items() if v},
            "cluster_id_given": options.cluster_id,
            "with_groups": options.with_groups,
            "reader": str(options.read.backend),
            "load_rate_bytes_per_second": options.load_rate,
            "keep": options.keep,
        },
        "counts": {
            "log_dirs": len(inputs),
            "partitions": len(tables["partitions"]),
            "segments": len(segments),
            "bytes": sum(r["size_bytes"] for r in segments),
            "groups": groups,
            "findings": {
                s.value: sum(f["severity"] == s.value for f in findings) for s in Severity
            },
            "never_compacted": sum(bool(p["never_compacted"]) for p in tables["partitions"]),
        },
        "reuse": {
            "segments_reused": len(reused),
            "segments_read": len(segments) - len(reused),
            "bytes_reused": sum(r["size_bytes"] for r in reused),
            "bytes_read": sum(r["size_bytes"] for r in segments if not r["reused"]),
            "run_key": begun.key,
            "now_ms": begun.now_ms,
            "reads_clock": reads_clock,
            "run_reused": None,
        },
        "tables": sorted(published.TABLES),
        "exit_status": max((r["exit_status"] for r in reports), default=0),
    }


def _iso(seconds: float) -> str:
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int(seconds % 1 * 1000):03d}Z"
    )
