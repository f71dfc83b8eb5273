"""The scan's work, decided on the driver: each input log dir planned as ``audit`` plans it (its
own version detection), its ``__consumer_offsets`` partitions listed as consistent snapshots,
and every segment a task; the tasks packed into slots of similar size for the executors.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from offsets_auditor.audit.plan import AuditPlan
from offsets_auditor.audit.stages import EMULATIONS_APART_RECORDS, LogDirWork
from offsets_auditor.findings import Finding
from offsets_auditor.logdir.model import PartitionDir, Segment, open_partition
from offsets_auditor.reader.reading import ReadOptions
from spark_jobs import cache


@dataclass(frozen=True, slots=True)
class Input:
    """One log dir to scan (``index``: its place on the command line)."""

    index: int
    path: Path
    plan: AuditPlan
    work: LogDirWork


@dataclass(frozen=True, slots=True)
class SegmentTask:
    """One segment to read: where it is, as listed, and whether its result may be reused."""

    input: int
    partition: str
    position: int  # the segment's place in its partition (offset order)
    path: Path
    size: int
    mtime_ms: int
    identity: tuple[int, int]
    active: bool  # the partition's last segment: the broker may append to it
    context: str  # cache.context_digest of what its result depends on


@dataclass(frozen=True, slots=True)
class EmulationTask:
    """A big partition, folded by its stage B task and kept in the folds dir under
    ``fold_key``, to be emulated at its plan's ``configs`` (a group of
    ``audit.shared_emulations.config_groups``) by a task of its own (so that the groups'
    emulations run side by side); its columns are in its segments' cache entries
    (``segment_keys``, in offset order)."""

    input: int
    partition: str
    configs: tuple[int, ...]
    fold_key: str
    segment_keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PartitionWork:
    """A partition as listed for this round, with its segments' tasks."""

    input: int
    partition: PartitionDir
    tasks: tuple[SegmentTask, ...]
    findings: tuple[Finding, ...]


@dataclass(frozen=True, slots=True)
class Context:
    """What an executor needs besides a task, per input (broadcast once per round)."""

    plans: dict[int, AuditPlan]
    works: dict[int, LogDirWork]
    partitions: dict[tuple[int, str], PartitionDir]
    read: ReadOptions
    cache_dir: str
    parts_dir: str  # where stage B writes each partition's groups (``group_parts``)
    folds_dir: str = ""  # where stage B keeps the partitions it folded for EmulationTasks
    #: from this many records on, a partition's emulations at several configs are
    #: EmulationTasks (``audit.stages.EMULATIONS_APART_RECORDS``; tests lower it)
    emulations_apart_records: int = EMULATIONS_APART_RECORDS
    #: the processes a task may run a big partition's emulation on (``cleaner.cores``;
    #: :func:`emulation_cores`)
    emulation_cores: int = 1
    #: (input, partition) folded by two tasks at once: the cleaner's facts and the groups
    split: frozenset[tuple[int, str]] = frozenset()
    slots: list[list[SegmentTask]] = field(default_factory=list)
    emulations: list[EmulationTask] = field(default_factory=list)


def list_partition(
    source: Input, listed: PartitionDir, code: str, read: ReadOptions
) -> PartitionWork:
    """``listed`` re-read as one consistent snapshot (``logdir.open_partition``), its segments
    as tasks. The snapshot's files are closed again: executors open them by name, checking they
    are still the files listed."""
    model = source.work.model
    with open_partition(model, listed, source.plan.config.kafka_version) as snapshot:
        partition = snapshot.partition
        findings = tuple(snapshot.findings)
    groups_plan = source.work.groups_plan
    start = (
        None
        if groups_plan is None
        else groups_plan.log_starts.get((partition.topic, partition.partition))
    )
    context = cache.context_digest(
        code,
        None if groups_plan is None else groups_plan.rules,
        start,
        read,
        partition.name,
    )
    last = len(partition.segments) - 1
    tasks = tuple(
        _task(source.index, partition, i, segment, i == last, context)
        for i, segment in enumerate(partition.segments)
    )
    return PartitionWork(source.index, partition, tasks, findings)


def _task(
    index: int, partition: PartitionDir, position: int, segment: Segment, active: bool, context: str
) -> SegmentTask:
    return SegmentTask(
        input=index,
        partition=partition.name,
        position=position,
        path=partition.path / segment.log.name,
        size=segment.log.size,
        mtime_ms=segment.log.mtime_ms,
        identity=segment.log.identity,
        active=active,
        context=context,
    )


def pack(tasks: Sequence[SegmentTask], slots: int) -> list[list[SegmentTask]]:
    """``tasks`` in at most ``slots`` groups of similar total size (largest first, each to the
    lightest group), so one huge partition spreads over every executor."""
    ordered = sorted(tasks, key=lambda t: t.size, reverse=True)
    count = max(min(slots, len(ordered)), 1)
    groups: list[list[SegmentTask]] = [[] for _ in range(count)]
    heap = [(0, i) for i in range(count)]
    for task in ordered:
        load, i = heapq.heappop(heap)
        groups[i].append(task)
        heapq.heappush(heap, (load + max(task.size, 1), i))
    return [g for g in groups if g]


def emulation_cores(master: str, parallelism: int, executor_cores: str | None, tasks: int) -> int:
    """The processes each of ``tasks`` tasks running at once may spread a big partition's
    emulation over (``cleaner.cores``): the scan's cores (``parallelism``) shared among them,
    at most an executor's. A big partition's emulation is the scan's last, longest work (stage
    B folds the largest partition first, the other folds are done when it emulates): on one
    core it kept that core busy for seconds while the others sat idle. ``master``: Spark's
    (``local[N]``: the one executor has every core); on a cluster an executor has
    ``spark.executor.cores`` (unset: 1, as Spark's standalone default of every core of the
    worker cannot be told here)."""
    share = max(parallelism // max(tasks, 1), 1)
    if master.startswith("local"):
        return share
    try:
        return max(min(int(executor_cores or 1), share), 1)
    except ValueError:
        return 1
