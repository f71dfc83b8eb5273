"""What the service serves: the newest run of every publisher, as one view of the clusters they
scanned. Each row keeps where it comes from (``cluster_id``, ``broker_id``, ``log_dir``), and
broker rows also say which publisher's run they come from and when it finished (the broker's
data age).

A log dir is one broker's, whoever scans it: when several publishers' newest runs hold the same
``(cluster_id, broker_id, log_dir)`` (a move from one scan of many log dirs to one scan per
broker host, say), the newest run's rows stand and the older ones' are left out.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from api.divergence import cross_run_divergences
from api.results import GroupIndex, LoadedRun, RunTables, cluster_key, partition_name

#: where a row comes from, across publishers
LogDirKey = tuple[str, int | None, str]


def log_dir_key(row: dict[str, Any]) -> LogDirKey:
    return (cluster_key(row.get("cluster_id")), row.get("broker_id"), row.get("log_dir") or "")


def current_log_dirs(members: Sequence[RunTables]) -> dict[LogDirKey, RunTables]:
    """Each log dir with the newest of ``members`` holding it."""
    owner: dict[LogDirKey, RunTables] = {}
    for run in sorted(members, key=lambda r: (r.finished_at, r.run_id)):
        for broker in run.brokers:
            owner[log_dir_key(broker)] = run
    return owner


def merged_rows(
    members: Sequence[RunTables], table: str, owner: dict[LogDirKey, RunTables]
) -> list[dict[str, Any]]:
    """``table``'s rows of every member, less those of log dirs a newer member holds."""
    rows = []
    for run in members:
        for row in getattr(run, table):
            if owner.get(log_dir_key(row)) is run:
                rows.append(row)
    return rows


@dataclass(frozen=True)
class View:
    """The served view: ``runs`` (the newest readable run of each publisher) merged."""

    runs: tuple[LoadedRun, ...]
    brokers: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    segments: list[dict[str, Any]]
    indexes: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    groups: GroupIndex
    #: distinct group ids per cluster, summed: the run's "groups" wherever it is shown
    group_count: int = 0
    #: findings the service made: replicas of a partition from different runs that diverge
    #: (``api.divergence``; also in ``findings``)
    cross_findings: list[dict[str, Any]] = field(default_factory=list)
    #: each offsets partition's newest cleanings in its broker's cleaner log
    cleanings: list[dict[str, Any]] = field(default_factory=list)
    loaded_at: float = field(default_factory=time.time)

    @property
    def newest(self) -> LoadedRun:
        return max(self.runs, key=lambda r: (r.finished_at, r.run_id))

    @property
    def run_id(self) -> str:
        """The newest of the runs (the one a response names; ``run_ids`` has them all)."""
        return self.newest.run_id

    @property
    def run_ids(self) -> dict[str, str]:
        """publisher -> its run served."""
        return {r.tables.publisher: r.run_id for r in self.runs}

    @property
    def finished_at(self) -> float:
        return self.newest.finished_at

    @property
    def manifest(self) -> dict[str, Any]:
        return self.newest.tables.manifest

    def clusters(self) -> list[str]:
        found = {cluster_key(b["cluster_id"]) for b in self.brokers}
        found |= {cluster_key(p["cluster_id"]) for p in self.partitions}
        return sorted(found)

    def partitions_of(self, cluster: str) -> Iterator[dict[str, Any]]:
        return (p for p in self.partitions if cluster_key(p["cluster_id"]) == cluster)

    @cached_property
    def _by_partition(self) -> dict[tuple[str, int], list[dict[str, Any]]]:
        found: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for p in self.partitions:
            found.setdefault((cluster_key(p["cluster_id"]), p["partition"]), []).append(p)
        return found

    def cleanings_of(self, row: dict[str, Any], partition: int) -> list[dict[str, Any]]:
        """The broker's newest cleanings of one offsets partition of the log dir ``row`` comes
        from (cluster, broker, log dir), oldest first."""
        place = log_dir_key(row)
        return [
            c for c in self.cleanings if c["partition"] == partition and log_dir_key(c) == place
        ]

    def partition_rows(self, cluster: str, partition: int) -> list[dict[str, Any]]:
        """The rows of ``__consumer_offsets-<partition>`` of ``cluster``: one per log dir."""
        return self._by_partition.get((cluster, partition), [])

    @cached_property
    def _brokers_by_log_dir(self) -> dict[LogDirKey, dict[str, Any]]:
        return {log_dir_key(b): b for b in self.brokers}

    def broker_row(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """The brokers row of the log dir ``row`` comes from."""
        return self._brokers_by_log_dir.get(log_dir_key(row))

    @cached_property
    def _findings_by_place(self) -> dict[tuple[LogDirKey, str | None], list[dict[str, Any]]]:
        found: dict[tuple[LogDirKey, str | None], list[dict[str, Any]]] = {}
        for f in self.findings:
            found.setdefault((log_dir_key(f), f["partition"]), []).append(f)
        return found

    def findings_of(self, row: dict[str, Any], partition: int | None) -> list[dict[str, Any]]:
        """The findings of the log dir ``row`` comes from (cluster, broker, log dir: brokers
        scanned on their own hosts may all have the same path), about one offsets partition
        (or about the log dir as a whole when ``partition`` is None)."""
        name = None if partition is None else partition_name(partition)
        return self._findings_by_place.get((log_dir_key(row), name), [])


def broker_rows(
    members: Sequence[RunTables], owner: dict[LogDirKey, RunTables]
) -> list[dict[str, Any]]:
    """The brokers table of the view: each row with its publisher, run and that run's end."""
    return [
        {
            **row,
            "publisher": run.publisher,
            "run_id": run.run_id,
            "run_finished_at": run.finished_at,
        }
        for run in members
        for row in run.brokers
        if owner.get(log_dir_key(row)) is run
    ]


def merge(runs: Sequence[LoadedRun]) -> View:
    """The view of ``runs`` (at least one)."""
    members = [r.tables for r in runs]
    owner = current_log_dirs(members)
    segments, indexes, groups, cleanings = [], [], [], []
    for run in runs:
        mine = {k for k, v in owner.items() if v is run.tables}
        segments += [s for s in run.segments if log_dir_key(s) in mine]
        indexes += [i for i in run.indexes if log_dir_key(i) in mine]
        cleanings += [c for c in run.cleanings if log_dir_key(c) in mine]
        whole = all(log_dir_key(b) in mine for b in run.tables.brokers)
        groups.append(run.groups if whole else _only(run.groups, {k[2] for k in mine}))
    brokers = broker_rows(members, owner)
    partitions = merged_rows(members, "partitions", owner)
    table = pa.concat_tables(groups).unify_dictionaries()
    cross = cross_run_divergences(brokers, partitions, table) if len(runs) > 1 else []
    return View(
        runs=tuple(runs),
        brokers=brokers,
        partitions=partitions,
        segments=segments,
        indexes=indexes,
        findings=merged_rows(members, "findings", owner) + cross,
        groups=GroupIndex.build(table),
        cross_findings=cross,
        group_count=group_count(table),
        cleanings=cleanings,
    )


def group_count(table: pa.Table) -> int:
    """Distinct ``(cluster_id, group)`` of a groups table: a group that replicas of its
    partition hold in several log dirs counts once (the scan's ``counts.groups`` alike)."""
    return int(
        table.select(["cluster_id", "group"])
        .group_by(["cluster_id", "group"])
        .aggregate([])
        .num_rows
    )


def _only(table: pa.Table, log_dirs: set[str]) -> pa.Table:
    """The rows of ``table`` from ``log_dirs``."""
    column = table["log_dir"]
    if pa.types.is_dictionary(column.type):
        column = column.cast(pa.string())
    return table.filter(pc.is_in(column, value_set=pa.array(sorted(log_dirs), pa.string())))
