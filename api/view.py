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
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

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

    def cleanings_of(self, log_dir: str, partition: int) -> list[dict[str, Any]]:
        """The broker's newest cleanings of one offsets partition of one log dir, oldest first."""
        return [
            c for c in self.cleanings if c["log_dir"] == log_dir and c["partition"] == partition
        ]

    def findings_of(self, log_dir: str, partition: int | None) -> list[dict[str, Any]]:
        """The findings of one log dir, about one offsets partition (or about the log dir as a
        whole when ``partition`` is None)."""
        name = None if partition is None else partition_name(partition)
        return [f for f in self.findings if f["log_dir"] == log_dir and f["partition"] == name]

    def configured_partitions(self, cluster: str | None = None) -> int | None:
        """``offsets.topic.num.partitions`` as the scans of ``cluster`` were given it (``--set``
        or ``--broker-config``), if they were."""
        for run in sorted(self.runs, key=lambda r: r.finished_at, reverse=True):
            if cluster is not None and all(
                cluster_key(b["cluster_id"]) != cluster for b in run.tables.brokers
            ):
                continue
            config = run.tables.manifest.get("config") or {}
            for source in ("overrides", "properties"):
                value = (config.get(source) or {}).get("offsets.topic.num.partitions")
                if value is not None:
                    try:
                        return int(str(value).strip())
                    except ValueError:
                        return None
        return None


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
    return View(
        runs=tuple(runs),
        brokers=broker_rows(members, owner),
        partitions=merged_rows(members, "partitions", owner),
        segments=segments,
        indexes=indexes,
        findings=merged_rows(members, "findings", owner),
        groups=GroupIndex.build(pa.concat_tables(groups).unify_dictionaries()),
        cleanings=cleanings,
    )


def _only(table: pa.Table, log_dirs: set[str]) -> pa.Table:
    """The rows of ``table`` from ``log_dirs``."""
    column = table["log_dir"]
    if pa.types.is_dictionary(column.type):
        column = column.cast(pa.string())
    return table.filter(pc.is_in(column, value_set=pa.array(sorted(log_dirs), pa.string())))
