"""The scan: broker log dirs read on Spark, audited with the core's stages, published.

Driver: plan each log dir (``audit_plan.plan_audit``, its own version detection), list its
``__consumer_offsets`` partitions, pack the segments into slots. Executors: stage A per segment
(``mapPartitions`` over slots), stage B per partition (a task each: ``one_task_per_fold``).
Driver: stage C per log dir (``audit_stages.conclude``), the findings across log dirs
(``replicas``), the tables, publish.

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
from typing import Any, TypedDict

from offsets_auditor import published
from offsets_auditor.audit import rows as audit_rows
from offsets_auditor.audit.partition import BrokerAudit, Emulated
from offsets_auditor.audit.plan import AuditSettings, plan_audit
from offsets_auditor.audit.replicas import Holder, replica_findings
from offsets_auditor.audit.report import DEFAULT_LOAD_BYTES_PER_SECOND, report_json
from offsets_auditor.audit.shared_emulations import config_groups
from offsets_auditor.audit.stages import (
    EMULATIONS_APART_RECORDS,
    PartitionOutcome,
    audit_partition,
    conclude,
    finish_partition,
    log_dir_work,
    read_segment_result,
)
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.logdir.model import offsets_partitions, open_partition
from offsets_auditor.published.rows import (
    BrokerRow,
    CleaningRow,
    FindingRow,
    IndexRow,
    PartitionRow,
    SegmentRow,
    Where,
)
from offsets_auditor.reader.reading import DEFAULT_READ, ReadOptions
from offsets_auditor.versions import KafkaVersion
from spark_jobs import cache, group_parts, publish, rerun
from spark_jobs.tasks import SegmentFacts
from spark_jobs.work import (
    Context,
    EmulationTask,
    Input,
    PartitionWork,
    emulation_cores,
    list_partition,
    pack,
)

#: Spark rounds for partitions that change while read, before the driver reads them itself.
ROUNDS = 3
#: This package: its code shapes the tables as much as the core's does.
_SCAN_CODE = Path(__file__).parent
#: Target bytes of one slot (one Spark task): a segment is never split, slots are not larger.
SLOT_BYTES = 256 * 1024 * 1024
#: A partition this big is folded by two tasks at once (its groups' replay beside the
#: cleaner's fold): the fold is one core's work between the stages.
FOLD_APART_BYTES = 128 * 1024 * 1024


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
    #: from this many records on, a partition's emulations at several configs run as Spark
    #: tasks of their own (``spark_jobs.tasks``); tests lower it
    emulations_apart_records: int = EMULATIONS_APART_RECORDS
    #: from this many bytes on, a partition is folded by two Spark tasks at once, the
    #: cleaner's facts and the groups' replay (``spark_jobs.tasks``); tests lower it
    fold_apart_bytes: int = FOLD_APART_BYTES

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

    def __init__(self, sc: Any) -> None:
        self.segments = sc.accumulator(0)
        self.bytes = sc.accumulator(0)

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
    sc: Any,
    options: ScanOptions,
    on_total: Callable[[int, int], None] = lambda segments, size: None,
    counters: Counters | None = None,
    begun: Start | None = None,
    planned: Sequence[Input] | None = None,
) -> ScanResult:
    """Scan and publish; or, when nothing changed, publish the latest run again. ``begun``:
    the start the caller took, having found nothing to republish (``republish_unchanged``);
    ``planned``: its log dirs' plans (``plan_inputs``), made while Spark started."""
    if begun is None:
        begun = start(options)
        republished = republish_unchanged(options, begun)
        if republished is not None:
            return republished
    now_ms, run_id, code = begun.now_ms, begun.run_id, begun.code
    inputs = list(planned) if planned is not None else plan_inputs(options, now_ms)
    counters = counters or Counters(sc)
    cache_dir = options.home / published.CACHE
    parts = group_parts.parts_dir(options.home, run_id)
    outcomes: dict[tuple[int, str], PartitionOutcome] = {}
    group_counts: dict[tuple[int, str], int] = {}
    segment_rows: dict[tuple[int, str], list[SegmentFacts]] = {}
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
        done, changed = _spark_round(sc, inputs, listed, options, cache_dir, parts, counters)
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
        audits.append(replace(audit, findings=(*detection.findings(), *audit.findings)))

    def commits(index: int, partition: int) -> dict[tuple[str, str, int], tuple[int, int]]:
        return group_parts.latest_commits(parts, index, f"{OFFSETS_TOPIC}-{partition}")

    across = replica_findings([_holder(a) for a in audits], commits)
    audits = [
        replace(a, findings=(*a.findings, *(f for i, f in across if i == index)))
        for index, a in enumerate(audits)
    ]
    reports = [
        report_json(
            [audit],
            options.load_rate,
            None,
            source.plan.detection,
            source.plan.emulated_versions,
            with_groups=False,  # taken apart: the groups table (``group_parts``)
        )
        for source, audit in zip(inputs, audits, strict=True)
    ]
    places = [audit_rows.where(i, a) for i, a in enumerate(audits)]
    tables = _tables(audits, inputs, places, segment_rows, outcomes, group_counts, options)
    finished = time.time()
    used_keys = {r["cache_key"] for done in segment_rows.values() for r in done if r["cache_key"]}
    reads_clock = any(o.reads_clock for o in outcomes.values())
    manifest = _manifest(
        begun,
        finished,
        inputs,
        options,
        reports,
        audits,
        tables,
        segment_rows,
        reads_clock,
        group_parts.distinct_groups(parts, order, {p.input: p.cluster_id or "" for p in places}),
    )
    run_dir = publish.publish(
        options.home,
        run_id,
        {
            "brokers": publish.to_arrow("brokers", tables["brokers"]),
            "partitions": publish.to_arrow("partitions", tables["partitions"]),
            "segments": publish.to_arrow("segments", tables["segments"]),
            "indexes": publish.to_arrow("indexes", tables["indexes"]),
            "groups": group_parts.table_chunks(parts, order, places),
            "findings": publish.to_arrow("findings", tables["findings"]),
            "cleanings": publish.to_arrow("cleanings", tables["cleanings"]),
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


def plan_inputs(options: ScanOptions, now_ms: int) -> list[Input]:
    """Each log dir planned: its version detected (or given), its config, its model and
    groups' plan; no Spark needed."""
    return [_plan_input(i, path, options, now_ms) for i, path in enumerate(options.log_dirs)]


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
    sc: Any,
    inputs: Sequence[Input],
    listed: Sequence[PartitionWork],
    options: ScanOptions,
    cache_dir: Path,
    parts: Path,
    counters: Counters,
) -> tuple[
    dict[tuple[int, str], tuple[PartitionOutcome, list[SegmentFacts], int]],
    set[tuple[int, str]],
]:
    from spark_jobs.tasks import (
        FAILED,
        FOLDED,
        OK,
        fold_partition,
        read_slots,
    )

    tasks = [t for w in listed for t in w.tasks]
    # bytes to read per (input, partition) with segments: the slots, which to split, stage B's order
    sizes = {(w.input, w.partition.name): sum(t.size for t in w.tasks) for w in listed if w.tasks}
    parallelism = sc.defaultParallelism
    slots = pack(tasks, max(2 * parallelism, sum(sizes.values()) // SLOT_BYTES + 1))
    folds = group_parts.folds_dir(parts)
    context = Context(
        plans={s.index: s.plan for s in inputs},
        works={s.index: s.work for s in inputs},
        partitions={(w.input, w.partition.name): w.partition for w in listed},
        read=options.read,
        cache_dir=str(cache_dir),
        parts_dir=str(parts),
        folds_dir=str(folds),
        emulations_apart_records=options.emulations_apart_records,
        emulation_cores=_emulation_cores(sc, tasks=1),
        split=frozenset(
            (index, name)
            for (index, name), size in sizes.items()
            if inputs[index].work.groups_plan is not None
            and size >= max(options.fold_apart_bytes, 1)
        ),
        slots=slots,
    )
    broadcast = sc.broadcast(context)

    def get() -> Context:
        value: Context = broadcast.value
        return value

    results = sc.parallelize(range(len(slots)), max(len(slots), 1))
    order = fold_order(sizes, context.split)
    outcomes = (
        one_task_per_fold(results.mapPartitions(read_slots(get, counters.adder())), order)
        .mapPartitions(fold_partition(get))
        .collect()
        if tasks
        else []
    )
    broadcast.unpersist()
    done: dict[tuple[int, str], tuple[PartitionOutcome, list[SegmentFacts], int]] = {}
    changed: set[tuple[int, str]] = set()
    rows = _joined(outcomes)
    failed = next((row["error"] for row in rows if row["status"] == FAILED), None)
    if failed is not None:
        raise ExecutorError(failed)
    emulated = _emulate_apart(sc, context, [r for r in rows if r["status"] == FOLDED])
    for row in rows:
        key = (row["input"], row["partition"])
        groups_found = row["groups"] == 0 or group_parts.part_path(parts, *key).is_file()
        if row["status"] == OK and groups_found:
            outcome = cache.loads(row["outcome"])
        elif row["status"] == FOLDED and groups_found and key in emulated:
            source = inputs[row["input"]]
            outcome = finish_partition(
                source.work,
                row["folded"],
                source.plan.configs,
                source.plan.now_ms,
                emulated[key],
            )
        else:  # changed while read, or its groups written where the driver cannot see them
            changed.add(key)
            continue
        done[key] = (outcome, json.loads(row["segments_json"]), row["groups"])
    shutil.rmtree(folds, ignore_errors=True)
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


#: A fold of stage B: (input, partition, role), a partition's or, split, one role's
Fold = tuple[int, str, int]


def fold_order(
    sizes: dict[tuple[int, str], int], split: frozenset[tuple[int, str]]
) -> dict[Fold, int]:
    """Each fold's Spark partition in stage B, from the bytes of each (input, partition) read:
    the largest folds first (Spark starts a stage's tasks in that order, so the longest start
    first and the short fill the gaps)."""
    from spark_jobs.tasks import GROUPS, SCAN, WHOLE

    folds = [
        ((index, name, role), size)
        for (index, name), size in sizes.items()
        for role in ((SCAN, GROUPS) if (index, name) in split else (WHOLE,))
    ]
    ordered = sorted(folds, key=lambda fold_size: -fold_size[1])
    return {fold: place for place, (fold, _) in enumerate(ordered)}


def one_task_per_fold(rows: Any, order: dict[Fold, int]) -> Any:
    """Stage A's rows (an RDD of dicts) keyed by their fold's place in ``order`` and put in a
    Spark partition of its own, so that each fold is a task of its own. Grouped by a DataFrame
    instead, the folds shared tasks: hashed into buckets at random, and, as stage A's rows are
    a small shuffle, Spark's adaptive execution coalesced them all into one task, one core
    folding every partition in turn (a hot partition's two roles one after the other)."""
    return rows.map(
        lambda row: (order[(row["input"], row["partition"], row["role"])], row)
    ).partitionBy(max(len(order), 1), _same)


def _same(index: int) -> int:
    return index


def _joined(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stage B's rows, one per partition: a split partition's SCAN and GROUPS rows joined
    (FOLDED when both did their part, else the first failure, else CHANGED); a FOLDED row's
    fold, its replay put back, in ``folded``."""
    from spark_jobs.tasks import CHANGED, FAILED, FOLDED, GROUPS, OK, SCAN

    by_role: dict[tuple[int, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_role[(row["input"], row["partition"])][row["role"]] = row
    joined = []
    for roles in by_role.values():
        scan, groups = roles.get(SCAN), roles.get(GROUPS)
        if scan is None or groups is None:
            (row,) = roles.values()
            folded = cache.loads(row["outcome"]) if row["status"] == FOLDED else None
            joined.append({**row, "folded": folded})
        elif scan["status"] == FOLDED and groups["status"] == OK:
            folded = replace(cache.loads(scan["outcome"]), replay=cache.loads(groups["outcome"]))
            joined.append({**scan, "groups": groups["groups"], "folded": folded})
        else:
            failed = next((r for r in (scan, groups) if r["status"] == FAILED), None)
            joined.append(failed if failed is not None else {**scan, "status": CHANGED})
    return joined


def _emulate_apart(
    sc: Any, context: Context, folded: Sequence[dict[str, Any]]
) -> dict[tuple[int, str], list[Emulated | None]]:
    """The partitions stage B folded (``FOLDED`` rows) emulated at each of their plan's configs,
    a Spark task per group of configs (``audit.shared_emulations``); a partition is left out
    when an emulation found an entry gone."""
    from spark_jobs.tasks import FAILED, OK, emulate_slots

    emulations = [
        EmulationTask(
            input=row["input"],
            partition=row["partition"],
            configs=group,
            fold_key=row["fold_key"],
            segment_keys=tuple(s["cache_key"] for s in json.loads(row["segments_json"])),
        )
        for row in folded
        for group in config_groups(context.plans[row["input"]].configs)
    ]
    if not emulations:
        return {}
    cores = _emulation_cores(sc, tasks=len(emulations))
    broadcast = sc.broadcast(
        replace(context, slots=[], emulations=emulations, emulation_cores=cores)
    )

    def get() -> Context:
        value: Context = broadcast.value
        return value

    n = len(emulations)
    rows = sc.parallelize(range(n), n).mapPartitions(emulate_slots(get)).collect()
    broadcast.unpersist()
    failed = next((row["error"] for row in rows if row["status"] == FAILED), None)
    if failed is not None:
        raise ExecutorError(failed)
    by_partition: dict[tuple[int, str], dict[int, Emulated | None]] = defaultdict(dict)
    gone = set()
    for row in rows:
        key = (row["input"], row["partition"])
        if row["status"] == OK:
            by_partition[key][row["config"]] = cache.loads(row["emulated"])
        else:
            gone.add(key)
    return {
        key: [found[i] for i in sorted(found)]
        for key, found in by_partition.items()
        if key not in gone
    }


def _emulation_cores(sc: Any, tasks: int) -> int:
    """``work.emulation_cores`` of this Spark context."""
    executor_cores = sc.getConf().get("spark.executor.cores")
    return emulation_cores(sc.master, sc.defaultParallelism, executor_cores, tasks)


def _read_on_driver(
    source: Input, listed: Any, options: ScanOptions, parts: Path
) -> tuple[PartitionOutcome, list[SegmentFacts], int, list[Finding]]:
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


class ScanTables(TypedDict):
    """The rows of a run's tables, the groups' aside (``group_parts``, column by column)."""

    brokers: list[BrokerRow]
    partitions: list[PartitionRow]
    segments: list[SegmentRow]
    indexes: list[IndexRow]
    findings: list[FindingRow]
    cleanings: list[CleaningRow]


def _tables(
    audits: Sequence[BrokerAudit],
    inputs: Sequence[Input],
    places: Sequence[Where],
    segment_rows: dict[tuple[int, str], list[SegmentFacts]],
    outcomes: dict[tuple[int, str], PartitionOutcome],
    group_counts: dict[tuple[int, str], int],
    options: ScanOptions,
) -> ScanTables:
    """The rows of each table but the groups (written apart, ``group_parts``)."""
    tables = ScanTables(
        brokers=[], partitions=[], segments=[], indexes=[], findings=[], cleanings=[]
    )
    for index, (source, audit, place) in enumerate(zip(inputs, audits, places, strict=True)):
        groups = sum(n for (i, _), n in group_counts.items() if i == index)
        unknown = {
            name: outcome.replay.unknown_record_types
            for (i, name), outcome in outcomes.items()
            if i == index and outcome.replay is not None
        }
        detection = source.plan.detection
        tables["brokers"].append(audit_rows.broker_row(place, audit, detection, groups))
        tables["partitions"].extend(
            audit_rows.partition_rows(place, audit, options.load_rate, unknown)
        )
        tables["indexes"].extend(audit_rows.index_rows(place, audit))
        tables["findings"].extend(audit_rows.finding_rows(place, audit))
        tables["cleanings"].extend(audit_rows.cleaning_rows(place, audit))
    for (index, name), facts in sorted(segment_rows.items()):
        source = inputs[index]
        number = int(name.rsplit("-", 1)[1])
        tables["segments"].extend(
            SegmentRow(
                input=index,
                log_dir=str(source.path),
                broker_id=source.work.model.broker_id,
                partition=number,
                file=r["file"],
                base_offset=r["base_offset"],
                size_bytes=r["size_bytes"],
                mtime_ms=r["mtime_ms"],
                records=r["records"],
                batches=r["batches"],
                next_offset=r["next_offset"],
                largest_timestamp=r["largest_timestamp"],
                active=r["active"],
                reused=r["reused"],
                problems=r["problems"],
            )
            for r in facts
        )
    return tables


def _manifest(
    begun: Start,
    finished: float,
    inputs: Sequence[Input],
    options: ScanOptions,
    reports: Sequence[dict[str, Any]],
    audits: Sequence[BrokerAudit],
    tables: ScanTables,
    segment_rows: dict[tuple[int, str], list[SegmentFacts]],
    reads_clock: bool,
    groups: int,
) -> dict[str, Any]:
    started = begun.started
    segments = [r for done in segment_rows.values() for r in done]
    reused = [r for r in segments if r["reused"]]
    findings = [f for a in audits for f in a.findings]
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
            "findings": {s.value: sum(f.severity == s for f in findings) for s in Severity},
            "never_compacted": sum(bool(p.never_compacted) for p in tables["partitions"]),
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
