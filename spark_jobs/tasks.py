"""What runs on the executors: the core's stages A and B, nothing else.

``read_slots`` (``mapPartitions`` over slot ids): each slot is a pack of segments; each segment
is opened by name, checked to be the file listed, then read by
``audit_stages.read_segment_result`` in bounded windows (or its result taken from the cache),
and shipped as one row naming its cache entry (or holding the pickled result).
``fold_partition`` (``mapPartitions``, a partition's rows a task's): stage B,
``audit_stages.audit_partition``, over the partition's results in offset order, shipped back as
one row holding the pickled (light) outcome and the segments' rows; the partition's groups go to
their own file (``group_parts``), not through Spark. A big partition with several configs to
emulate (a detected version range) is only folded there (``FOLDED``): the fold is kept in the
folds dir and ``emulate_slots`` (a second ``mapPartitions``) emulates it at each config in a
task of its own, so one hot partition's emulations spread over the executors; the driver
finishes it (``audit_stages.finish_partition``). A big partition's emulation, in either task,
forks its independent parts (``cleaner.cores``) over an executor's cores, shared among the
emulation tasks that run at once (``Context.emulation_cores``).

A partition of ``Context.split`` (a big one, its groups recovered) is folded by two tasks at
once, its results going to a task per role: one folds the cleaner's facts (``SCAN``, the fold kept
for the emulations), the other replays the groups (``GROUPS``); the driver joins them.

A segment renamed, replaced or shortened since it was listed (the cleaner of a running broker
does that) makes its partition ``changed``: the driver lists it again and retries.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict

from offsets_auditor.audit.collector import cyclic_gc_paused
from offsets_auditor.audit.parallel import ForkedCores
from offsets_auditor.audit.partition import Emulated
from offsets_auditor.audit.shared_emulations import config_groups, emulate_group
from offsets_auditor.audit.stages import (
    FoldedPartition,
    SegmentResult,
    emulate_each,
    emulate_folded,
    finish_partition,
    fold_segments,
    read_segment_result,
    replay_segments,
)
from offsets_auditor.cleaner.arrays import Arrays, FileArrays, in_memory
from offsets_auditor.cleaner.config import CleanerConfig
from offsets_auditor.cleaner.cores import ONE_CORE, Cores
from offsets_auditor.cleaner.segment_facts import CleanerColumns
from offsets_auditor.cleaner.spilled_columns import SpilledColumns, empty_columns
from offsets_auditor.cli.internal_error import one_line
from offsets_auditor.groups.delta import GroupsDelta
from offsets_auditor.groups.replay import Listing
from offsets_auditor.logdir import fs
from offsets_auditor.reader.reading import segment_label
from spark_jobs import cache, group_parts
from spark_jobs.work import Context, EmulationTask, SegmentTask

#: FOLDED: stage B folded the partition and left its emulations to ``EmulationTask``\ s
OK, CHANGED, FAILED, FOLDED = "ok", "changed", "failed", "folded"

#: Who folds a partition's results: one task (WHOLE), or two at once (``Context.split``): the
#: cleaner's facts (SCAN) and the groups' replay (GROUPS)
WHOLE, SCAN, GROUPS = 0, 1, 2

#: The fields of the rows the tasks exchange with the driver (dicts; :func:`row_of`). Stage A's
#: (``read_slots``), a segment's in one role:
SEGMENT_RESULTS = (
    "input",
    "partition",
    "position",
    "role",
    "status",
    "reused",
    "cache_key",
    "size",
    "result",
    "error",  # FAILED: the internal error, one line
)

#: Stage B's (``fold_partition``), a fold's:
PARTITION_OUTCOMES = (
    "input",
    "partition",
    "role",
    "status",
    "outcome",  # OK: the outcome (GROUPS: the replay, light); FOLDED: the partition folded, light
    "groups",
    "segments_json",
    "error",
    "fold_key",  # FOLDED: the fold's entry in the folds dir
)

#: An emulation apart's (``emulate_slots``):
EMULATIONS = (
    "input",
    "partition",
    "config",
    "status",
    "emulated",  # OK: the (light) emulation, or None
    "error",
)


@contextmanager
def _task(context: Callable[[], Context]) -> Iterator[Context]:
    """A task's run: the cyclic collector paused (``audit.collector``: what a task builds holds
    no cycles and is freed by reference counting), and the broadcast context, with every object
    alive beside it (the modules'), frozen out of its sight (``gc.freeze``): pyspark's daemon
    runs a full collection after each task of a reused worker (``pyspark/daemon.py``), which
    walked them all, 30-70 ms a task."""
    with cyclic_gc_paused():
        ctx = context()
        gc.freeze()
        yield ctx


def row_of(fields: tuple[str, ...], **values: Any) -> dict[str, Any]:
    """A row of ``fields``: ``values``, the others None (the driver reads every field)."""
    return {**dict.fromkeys(fields), **values}


def read_slots(
    context: Callable[[], Context], progress: Callable[[int, int], None]
) -> Callable[[Iterator[int]], Iterator[dict[str, Any]]]:
    """The ``mapPartitions`` function over slot ids (``context()`` reads the broadcast;
    ``progress(segments, bytes)`` adds to the driver's counters): a row of
    ``SEGMENT_RESULTS``'s fields per segment and role. A plain Python function of the RDD, so
    that stage A and the keying of its rows for stage B run in one Python worker (as
    ``mapInArrow``, each row went through the JVM and a second worker, to become a dict)."""

    def run(slots: Iterator[int]) -> Iterator[dict[str, Any]]:
        with _task(context) as ctx:
            for slot in slots:
                for task in ctx.slots[slot]:
                    try:
                        row = read_task(ctx, task)
                    except Exception as error:  # a bug: one line to the driver, not a task
                        row = _failed_segment(task, error)
                    progress(1, task.size)
                    split = (task.input, task.partition) in ctx.split
                    for role in (SCAN, GROUPS) if split else (WHOLE,):
                        yield row_of(SEGMENT_RESULTS, **row, role=role)

    return run


def read_task(ctx: Context, task: SegmentTask) -> dict[str, Any]:
    """Stage A for one segment. Its result goes to the cache (``result`` stays empty in the
    row) or, when the cache cannot be written, travels in the row."""
    row: dict[str, Any] = {
        "input": task.input,
        "partition": task.partition,
        "position": task.position,
        "status": CHANGED,
        "reused": False,
        "cache_key": None,
        "size": task.size,
        "result": None,
    }
    try:
        source = fs.open_as_listed(task.path, task.identity, task.size)
    except FileNotFoundError:
        return row
    except fs.FileChangedError:
        return row
    except OSError:
        source = None  # unreadable: the core's reader says so, as a finding
    if source is not None and not task.active:
        source.read_once()  # rolled: its pages leave the page cache as they were
    partition = ctx.partitions[(task.input, task.partition)]
    segment = partition.segments[task.position]
    work = ctx.works[task.input]
    if source is None:
        result = read_segment_result(partition, segment, work.groups_plan, ctx.read.segment)
        return {**row, "status": OK, "result": cache.dumps(result)}
    with source:
        if source.size < task.size:  # truncated since listed: list it again
            return row
        cache_dir = Path(ctx.cache_dir)
        key = cache.segment_key(source, task.size, task.mtime_ms, task.context)
        if cache.exists(cache_dir, key):
            return {**row, "status": OK, "reused": True, "cache_key": key}
        label = segment_label(partition, segment)
        with cache.scratch(cache_dir) as scratch:
            result = read_segment_result(
                partition,
                segment,
                work.groups_plan,
                lambda _p, _s: ctx.read.source(source, label),
                SpilledColumns(scratch) if scratch is not None else None,
            )
            if store_result(cache_dir, key, result):
                return {**row, "status": OK, "cache_key": key}
            return {**row, "status": OK, "result": cache.dumps(result)}


def store_result(cache_dir: Path, key: str, result: SegmentResult) -> bool:
    """A segment's result kept in three parts: its cleaner columns, the rest of its facts, its
    groups' delta; so that an emulation task loads the columns alone, and the fold of the
    cleaner's facts none of the delta (many Python objects to unpickle)."""
    rest = replace(result, facts=replace(result.facts, columns=empty_columns()), delta=None)
    return cache.store(cache_dir, key, result.facts.columns, rest, (result.delta,))


def load_columns(cache_dir: Path, key: str) -> CleanerColumns | None:
    """The cleaner columns :func:`store_result` kept (None: gone or unreadable)."""
    columns: CleanerColumns | None = cache.load(cache_dir, key, 0)
    return columns


def load_result(cache_dir: Path, key: str, with_delta: bool = True) -> SegmentResult | None:
    """What :func:`store_result` kept (None: gone or unreadable); without its delta unless
    ``with_delta``."""
    columns = load_columns(cache_dir, key)
    rest: SegmentResult | None = cache.load(cache_dir, key, 1)
    if columns is None or rest is None:
        return None
    result = replace(rest, facts=replace(rest.facts, columns=columns))
    if not with_delta:
        return result
    delta = load_delta(cache_dir, key)
    return None if delta is None else replace(result, delta=delta[0])


def load_delta(cache_dir: Path, key: str) -> tuple[GroupsDelta | None] | None:
    """The groups' delta :func:`store_result` kept, as a 1-tuple (its delta is None when read
    without groups); None: gone or unreadable."""
    delta: tuple[GroupsDelta | None] | None = cache.load(cache_dir, key, 2)
    return delta


def _failed_segment(task: SegmentTask, error: Exception) -> dict[str, Any]:
    where = f"reading {task.partition}/{task.path.name}"
    return {
        "input": task.input,
        "partition": task.partition,
        "position": task.position,
        "status": FAILED,
        "size": task.size,
        "error": f"{one_line(error)}, {where}",
    }


def fold_partition(
    context: Callable[[], Context],
) -> Callable[[Iterator[tuple[int, dict[str, Any]]]], Iterator[dict[str, Any]]]:
    """The ``mapPartitions`` function over one fold's segment rows (a Spark partition holds one
    fold's, ``job.one_task_per_fold``): its outcome row (``PARTITION_OUTCOMES``)."""

    def run(keyed: Iterator[tuple[int, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
        rows = [row for _, row in keyed]
        if not rows:
            return
        try:
            with _task(context) as ctx:
                outcome = fold(ctx, rows)
        except Exception as error:  # a bug: one line to the driver, not a failed task
            outcome = row_of(
                PARTITION_OUTCOMES,
                input=rows[0]["input"],
                partition=rows[0]["partition"],
                role=rows[0]["role"],
                status=FAILED,
                error=f"{one_line(error)}, folding {rows[0]['partition']}",
            )
        yield outcome

    return run


def fold(ctx: Context, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Stage B of one partition, or of its role (``SCAN``, ``GROUPS``), over its segments' rows:
    its outcome row (CHANGED when it must be read again)."""
    rows = sorted(rows, key=lambda r: r["position"])
    index, name, role = rows[0]["input"], rows[0]["partition"], rows[0]["role"]
    out = row_of(PARTITION_OUTCOMES, input=index, partition=name, role=role, status=CHANGED)
    partition = ctx.partitions[(index, name)]
    failed = next((r for r in rows if r["status"] == FAILED), None)
    if failed is not None:  # an internal error reading a segment: said once, by the driver
        return {**out, "status": FAILED, "error": failed["error"]}
    changed = {**out, "segments_json": "[]"}
    if len(rows) != len(partition.segments) or any(r["status"] != OK for r in rows):
        return changed
    cache_dir = Path(ctx.cache_dir)
    try:
        if role == GROUPS:
            row = _replay(ctx, rows, out)
        else:
            with cache.scratch(cache_dir) as scratch:
                arrays = FileArrays(scratch) if scratch is not None else in_memory
                row = _fold(ctx, rows, out, arrays)
    except _EntryGone:  # the cache entry is gone (or not shared): read the segment again
        return changed
    return changed if row is None else row


def _fold(
    ctx: Context, rows: list[dict[str, Any]], out: dict[str, Any], arrays: Arrays
) -> dict[str, Any] | None:
    """The partition folded (WHOLE), or its cleaner's facts alone (SCAN: the groups are the
    GROUPS task's); emulated here, or kept for the emulations to run apart (FOLDED). None:
    the groups cannot be written, or a SCAN task cannot keep the fold."""
    index, role = out["input"], out["role"]
    partition = ctx.partitions[(index, out["partition"])]
    cache_dir = Path(ctx.cache_dir)
    segments: list[SegmentFacts] = []

    def results() -> Iterator[SegmentResult]:
        """One at a time (stage B keeps only their columns, mapped from the cache)."""
        for i, r in enumerate(rows):
            result = (
                cache.loads(r["result"])
                if r["result"] is not None
                else load_result(cache_dir, r["cache_key"], with_delta=role == WHOLE)
            )
            if result is None:
                raise _EntryGone(r["cache_key"])
            segments.append(segment_row(result, r["reused"], r["cache_key"], i == len(rows) - 1))
            yield result if role == WHOLE else replace(result, delta=None)

    plan, work = ctx.plans[index], ctx.works[index]
    if role == SCAN:
        work = replace(work, groups_plan=None)
    # the groups go to their part file as columns (group_parts.write)
    folded = fold_segments(work, partition, results(), arrays, Listing.OFFSET_COLUMNS)
    try:
        folded, groups = group_parts.set_apart(Path(ctx.parts_dir), index, work, folded)
    except OSError:  # --out not writable here: the driver reads the partition itself
        return None
    fold_key = _keep_for_emulations(ctx, folded, rows, always=role == SCAN)
    if fold_key is not None:
        return {
            **out,
            "status": FOLDED,
            "outcome": cache.dumps(folded.light()),
            "groups": groups,
            "segments_json": json.dumps(segments),
            "fold_key": fold_key,
        }
    if role == SCAN:
        return None
    emulated = emulate_each(work, folded, plan.configs, plan.now_ms, arrays, _cores(ctx, folded))
    outcome = finish_partition(work, folded, plan.configs, plan.now_ms, emulated)
    return {
        **out,
        "status": OK,
        "outcome": cache.dumps(outcome),
        "groups": groups,
        "segments_json": json.dumps(segments),
    }


def _cores(ctx: Context, folded: FoldedPartition) -> Cores:
    """Where a partition's emulation runs: a big one's independent parts on
    ``Context.emulation_cores`` processes (forked as ``audit --jobs`` forks them), a small one's
    here."""
    if ctx.emulation_cores < 2 or folded.scan.records < ctx.emulations_apart_records:
        return ONE_CORE
    return ForkedCores(ctx.emulation_cores)


def _replay(ctx: Context, rows: list[dict[str, Any]], out: dict[str, Any]) -> dict[str, Any] | None:
    """The GROUPS task of a split partition: its segments' deltas replayed, the groups set
    apart; the row holds the replay, light. None: the groups cannot be written."""
    index = out["input"]
    partition = ctx.partitions[(index, out["partition"])]
    work = ctx.works[index]
    cache_dir = Path(ctx.cache_dir)

    def deltas() -> Iterator[GroupsDelta | None]:
        for r in rows:
            if r["result"] is not None:
                yield cache.loads(r["result"]).delta
                continue
            delta = load_delta(cache_dir, r["cache_key"])
            if delta is None:
                raise _EntryGone(r["cache_key"])
            yield delta[0]

    replay = replay_segments(work, partition, deltas(), Listing.OFFSET_COLUMNS)
    if replay is None:
        return {**out, "status": OK, "outcome": cache.dumps(None), "groups": 0}
    try:
        light, groups = group_parts.set_apart_replay(
            Path(ctx.parts_dir), index, work, partition.name, replay
        )
    except OSError:  # --out not writable here: the driver reads the partition itself
        return None
    return {**out, "status": OK, "outcome": cache.dumps(light), "groups": groups}


def _keep_for_emulations(
    ctx: Context, folded: FoldedPartition, rows: list[dict[str, Any]], always: bool = False
) -> str | None:
    """Where ``folded`` is kept for its emulations to run apart (``emulate_slots``), or None
    when they run here: unless ``always`` (a split partition's fold, which cannot emulate
    here), one group of configs (``audit.shared_emulations``) or a small partition; a segment
    whose columns are not in the cache (they travelled in its row) or a folds dir that cannot
    be written."""
    plan = ctx.plans[rows[0]["input"]]
    if (
        (len(config_groups(plan.configs)) < 2 and not always)
        or (folded.scan.records < ctx.emulations_apart_records and not always)
        or not ctx.folds_dir
        or any(r["cache_key"] is None for r in rows)
    ):
        return None
    key = fold_key(rows[0]["input"], folded.partition.name)
    # the key ids go with the fold (written out of the pickle: mapped where loaded); the
    # columns stay in the segments' entries
    kept = replace(folded, scan=replace(folded.scan, columns=()))
    return key if cache.store(Path(ctx.folds_dir), key, kept) else None


def fold_key(index: int, partition: str) -> str:
    return f"{index}-{partition}"


def emulate_slots(
    context: Callable[[], Context],
) -> Callable[[Iterator[int]], Iterator[dict[str, Any]]]:
    """The ``mapPartitions`` function over ``Context.emulations`` indexes: each a folded
    partition emulated at one config, a row of ``EMULATIONS``'s fields."""

    def run(slots: Iterator[int]) -> Iterator[dict[str, Any]]:
        with _task(context) as ctx:
            for slot in slots:
                task = ctx.emulations[slot]
                try:
                    rows = emulate_task(ctx, task)
                except Exception as error:  # a bug: one line to the driver, not a task
                    rows = [
                        {
                            **_emulation_row(task, config),
                            "status": FAILED,
                            "error": f"{one_line(error)}, emulating {task.partition}"
                            f" at configs {task.configs}",
                        }
                        for config in task.configs
                    ]
                for row in rows:
                    yield row_of(EMULATIONS, **row)

    return run


def emulate_task(ctx: Context, task: EmulationTask) -> list[dict[str, Any]]:
    """The folded partition of ``task`` emulated at its group of configs, a row per config
    (CHANGED: an entry is gone)."""
    gone = [_emulation_row(task, config) for config in task.configs]
    folded: FoldedPartition | None = cache.load(Path(ctx.folds_dir), task.fold_key)
    if folded is None:
        return gone
    cache_dir = Path(ctx.cache_dir)
    columns = []
    for key in task.segment_keys:
        part = load_columns(cache_dir, key)
        if part is None:
            return gone
        columns.append(part)
    folded = replace(folded, scan=replace(folded.scan, columns=tuple(columns)))
    plan, work = ctx.plans[task.input], ctx.works[task.input]
    with cache.scratch(cache_dir) as scratch:
        arrays = FileArrays(scratch) if scratch is not None else in_memory
        cores = _cores(ctx, folded)

        def emulate(config: CleanerConfig) -> Emulated | None:
            return emulate_folded(work, folded, config, plan.now_ms, arrays, cores)

        emulated = emulate_group(emulate, plan.configs, task.configs)
    return [
        {**row, "status": OK, "emulated": cache.dumps(e)}
        for row, e in zip(gone, emulated, strict=True)
    ]


def _emulation_row(task: EmulationTask, config: int) -> dict[str, Any]:
    return {
        "input": task.input,
        "partition": task.partition,
        "config": config,
        "status": CHANGED,
        "emulated": None,
    }


class _EntryGone(Exception):
    """A segment's cache entry could not be loaded after all."""


class SegmentFacts(TypedDict):
    """A row of the ``segments`` table less where it is, which the driver adds
    (``published.rows.SegmentRow``), and the key of the segment's cached result (None: not
    cached). Crosses from the executors as JSON (``segments_json``)."""

    file: str
    base_offset: int
    size_bytes: int
    mtime_ms: int
    records: int
    batches: int
    next_offset: int
    largest_timestamp: int
    active: bool
    reused: bool
    problems: int
    cache_key: str | None


def segment_row(
    result: SegmentResult, reused: bool, cache_key: str | None, active: bool
) -> SegmentFacts:
    """The segment's row of the ``segments`` table (less where it is)."""
    stats, log = result.facts.stats, result.segment.log
    return {
        "file": log.name,
        "base_offset": result.segment.base_offset,
        "size_bytes": log.size,
        "mtime_ms": log.mtime_ms,
        "records": stats.records,
        "batches": stats.batches,
        "next_offset": stats.last_offset + 1,
        "largest_timestamp": stats.largest_timestamp,
        "active": active,
        "reused": reused,
        "problems": len(result.facts.errors),
        "cache_key": cache_key,
    }
