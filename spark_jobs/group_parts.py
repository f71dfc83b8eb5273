"""Each partition's groups as a table of their own, on disk (``RESULTS/.staging/<run>.groups``).

Stage B (on an executor) writes the groups it replayed for one partition of one input as an Arrow
file, column by column (``published.groups.group_columns``); the driver never holds them as Python
objects. It reads the files back (memory-mapped) in the report's order to write the run's
``groups`` table one partition at a time, and to compare replicas' latest commits.

A file is written to a temporary name and renamed, so a retried task or a partition read again
replaces it whole. Like the segment cache, the directory must be one every executor sees.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from offsets_auditor import published
from offsets_auditor.audit.group_recovery import without_groups
from offsets_auditor.audit.stages import FoldedPartition, LogDirWork, PartitionOutcome
from offsets_auditor.groups.model import PartitionGroups
from offsets_auditor.published.groups import group_columns, table_columns
from offsets_auditor.published.rows import Where
from spark_jobs.publish import arrow_schema, column

#: The part files' schema: the ``groups`` table's, less the columns saying where.
PART_SCHEMA = pa.schema(
    [f for f in arrow_schema("groups") if f.name not in published.WHERE_COLUMNS]
)


def parts_dir(results: Path, run_id: str) -> Path:
    return results / published.STAGING / f"{run_id}.groups"


def folds_dir(parts: Path) -> Path:
    """Where stage B keeps the partitions it folded for their emulations to run apart
    (``spark_jobs.tasks``), beside the groups' part files; removed after each round (a killed
    scan's, with the staging dir's leftovers)."""
    return parts.with_name(f"{parts.name}.folds")


def part_path(parts: Path, index: int, partition: str) -> Path:
    return parts / f"{index}-{partition}.arrow"


def write(parts: Path, index: int, partition: str, replay: PartitionGroups) -> None:
    """``replay``'s groups as the part of ``partition`` of input ``index`` (from its committed
    offsets' columns when the replay kept them so)."""
    columns = (
        group_columns(replay.groups)
        if replay.committed is None
        else table_columns(replay.groups, replay.committed)
    )
    table = pa.table([column(columns[f.name], f.type) for f in PART_SCHEMA], schema=PART_SCHEMA)
    target = part_path(parts, index, partition)
    tmp = parts / f".{target.name}.{os.getpid()}.tmp"
    parts.mkdir(parents=True, exist_ok=True)
    try:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, PART_SCHEMA) as writer:
            writer.write_table(table)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def read(parts: Path, index: int, partition: str) -> pa.Table:
    """The part of ``partition`` of input ``index`` (memory-mapped; empty when it has none)."""
    path = part_path(parts, index, partition)
    if not path.is_file():
        return PART_SCHEMA.empty_table()
    # not closed here: the table's buffers are the mapping's pages
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


def table_chunks(
    parts: Path, order: Iterable[tuple[int, str]], where: Sequence[Where]
) -> Iterator[pa.Table]:
    """The ``groups`` table, one partition at a time in ``order`` ((input, partition name)),
    with ``where[input]``'s columns first."""
    schema = arrow_schema("groups")
    for index, partition in order:
        part = read(parts, index, partition)
        constants = [
            pa.array([getattr(where[index], name)] * len(part), type=schema.field(name).type)
            for name in published.WHERE_COLUMNS
        ]
        yield pa.table([*constants, *part.columns], schema=schema)


def distinct_groups(
    parts: Path, order: Iterable[tuple[int, str]], clusters: Mapping[int, str]
) -> int:
    """How many groups the run holds: the distinct group ids of each cluster (``clusters``:
    input -> its cluster id, "" for none), summed. A group whose partition several log dirs
    hold (replicas, or one broker's log dir scanned twice) counts once, as the service counts
    it (``api.view.View.group_count``). In Arrow: no Python object per group."""
    by_cluster: dict[str, list[pa.Array]] = {}
    for index, partition in order:
        part = read(parts, index, partition)
        if len(part):
            names = pc.unique(part["group"].combine_chunks())
            by_cluster.setdefault(clusters[index], []).append(names)
    return sum(len(pc.unique(pa.chunked_array(names))) for names in by_cluster.values())


def latest_commits(
    parts: Path, index: int, partition: str
) -> dict[tuple[str, str, int], tuple[int, int]]:
    """(group, topic, partition) -> (committed offset, log offset of the commit): the offsets a
    coordinator loads from this partition of this input (not the pending ones)."""
    part = read(parts, index, partition)
    committed = part.filter(pc.equal(part["pending"], False))
    keys = zip(
        committed["group"].to_pylist(),
        committed["topic"].to_pylist(),
        committed["partition"].to_pylist(),
        strict=True,
    )
    values = zip(committed["offset"].to_pylist(), committed["log_offset"].to_pylist(), strict=True)
    return dict(zip(keys, values, strict=True))


_Replayed = TypeVar("_Replayed", PartitionOutcome, FoldedPartition)


def set_apart(
    parts: Path, index: int, work: LogDirWork, outcome: _Replayed
) -> tuple[_Replayed, int]:
    """``outcome`` (of a partition of input ``index``, whose work is ``work``: its stage B's
    outcome, or the partition folded) with its groups
    written to their part file and taken out of its replay (their findings kept); and how
    many groups there were."""
    if outcome.replay is None:
        return outcome, 0
    light, groups = set_apart_replay(parts, index, work, outcome.partition.name, outcome.replay)
    return replace(outcome, replay=light), groups


def set_apart_replay(
    parts: Path, index: int, work: LogDirWork, partition: str, replay: PartitionGroups
) -> tuple[PartitionGroups, int]:
    """:func:`set_apart` of a replay alone (``partition``'s, of input ``index``)."""
    if work.groups_plan is None:
        return replay, 0
    partitions_count = work.groups_plan.partitions_count
    if partitions_count <= 0:  # no groups are recovered then (``audit_stages.conclude``)
        return replace(replay, groups=(), committed=None), 0
    write(parts, index, partition, replay)
    return without_groups(replay, partitions_count), len(replay.groups)
