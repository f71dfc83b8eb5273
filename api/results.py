"""One published run read with pyarrow (never Spark): its manifest and the tables of
``offsets_auditor.published``, checked against that contract, held in memory for the API.

Every table but ``groups`` is small (rows per partition, segment, index file or finding) and is
kept as rows. ``groups`` has one row per group, log dir and committed topic-partition, millions
on a big cluster: it stays an Arrow table, its repetitive string columns dictionary-encoded,
and a group's rows are found by binary search over the sorted distinct ids (``GroupIndex``).
"""

from __future__ import annotations

import json
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from offsets_auditor import published
from offsets_auditor.constants import OFFSETS_TOPIC

_TYPES = {
    "int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "string": pa.string(),
    "list<int64>": pa.list_(pa.int64()),
}


class UnreadableRun(Exception):
    """A run the service cannot serve: missing or damaged files, or another schema version."""


def partition_name(number: int) -> str:
    return f"{OFFSETS_TOPIC}-{number}"


def cluster_key(value: str | None) -> str:
    """A cluster id as the API and the metrics name it: empty when ``meta.properties`` has
    none."""
    return value or ""


@dataclass(frozen=True, slots=True)
class GroupIndex:
    """A group's rows without sorting (copying) the table: ``ids`` the distinct group ids in
    order, ``order`` the table's row numbers grouped by id in that order, ``starts[i]`` where the
    rows of ``ids[i]`` begin in ``order`` (``starts[-1] == len(order)``)."""

    table: pa.Table
    ids: np.ndarray
    order: np.ndarray
    starts: np.ndarray

    @classmethod
    def build(cls, table: pa.Table) -> GroupIndex:
        column = pc.fill_null(table["group"], "").combine_chunks()
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        codes = column.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        # the distinct ids in order: pyarrow sorts strings by UTF-8 bytes, the same order as
        # Python's by code point
        by_name = pc.sort_indices(column.dictionary).to_numpy()
        ids = np.array(column.dictionary.take(pa.array(by_name)).to_pylist(), dtype=object)
        rank = np.empty(len(by_name), dtype=np.int64)
        rank[by_name] = np.arange(len(by_name))
        row_ranks = rank[codes]
        order = np.argsort(row_ranks, kind="stable")
        counts = np.bincount(row_ranks, minlength=len(ids))
        starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        table = table.set_column(table.schema.get_field_index("group"), "group", column)
        return cls(table, ids, order, starts)

    def __len__(self) -> int:
        """The number of distinct groups."""
        return len(self.ids)

    def rows(self, group: str) -> list[dict[str, Any]]:
        i = int(np.searchsorted(self.ids, group))
        if i == len(self.ids) or self.ids[i] != group:
            return []
        rows = self.order[self.starts[i] : self.starts[i + 1]]
        found: list[dict[str, Any]] = self.table.take(pa.array(rows)).to_pylist()
        return found

    def names(self, prefix: str, offset: int, limit: int) -> tuple[int, list[str]]:
        """(how many groups start with ``prefix``, a page of them in order)."""
        lo = bisect_left(self.ids, prefix) if prefix else 0
        hi = bisect_left(self.ids, _after_prefix(prefix)) if prefix else len(self.ids)
        page = self.ids[lo + offset : min(lo + offset + limit, hi)]
        return hi - lo, [str(x) for x in page]


def _after_prefix(prefix: str) -> str:
    """The smallest string greater than every string starting with ``prefix``."""
    return prefix + "\U0010ffff" * 2


@dataclass(frozen=True, slots=True)
class RunTables:
    """What every kept run is read for (the history behind trends and alerts): its manifest and
    its small tables."""

    run_id: str
    publisher: str
    path: Path
    manifest: dict[str, Any]
    brokers: list[dict[str, Any]]
    partitions: list[dict[str, Any]]
    findings: list[dict[str, Any]]

    @property
    def finished_at(self) -> float:
        """The run's end, Unix seconds."""
        return iso_seconds(self.manifest["finished_at"])


@dataclass(frozen=True, slots=True)
class LoadedRun:
    """A run as served: its small tables and the rest (segments, index files, groups)."""

    tables: RunTables
    segments: list[dict[str, Any]]
    indexes: list[dict[str, Any]]
    groups: pa.Table
    cleanings: list[dict[str, Any]] = field(default_factory=list)
    loaded_at: float = field(default_factory=time.time)

    @property
    def run_id(self) -> str:
        return self.tables.run_id

    @property
    def finished_at(self) -> float:
        return self.tables.finished_at


def iso_seconds(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """A run's manifest, checked; ``UnreadableRun`` says what is wrong with it."""
    try:
        manifest = json.loads((run_dir / published.MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UnreadableRun(f"{run_dir.name}/{published.MANIFEST}: {error}") from error
    if not isinstance(manifest, dict):
        raise UnreadableRun(f"{run_dir.name}/{published.MANIFEST}: not a JSON object")
    version = manifest.get("schema_version")
    if version != published.SCHEMA_VERSION:
        raise UnreadableRun(
            f"{run_dir.name}: schema_version {version!r}, this service reads"
            f" {published.SCHEMA_VERSION}"
        )
    missing = [f for f in ("run_id", "finished_at") if not isinstance(manifest.get(f), str)]
    if missing:
        raise UnreadableRun(f"{run_dir.name}/{published.MANIFEST}: no {', '.join(missing)}")
    try:
        iso_seconds(manifest["finished_at"])
    except ValueError as error:
        raise UnreadableRun(f"{run_dir.name}: finished_at: {error}") from error
    return manifest


def read_run_tables(run_dir: Path, publisher: str = "") -> RunTables:
    """A run's manifest and small tables; ``UnreadableRun`` says what is wrong."""
    manifest = read_manifest(run_dir)
    tables = {name: read_table(run_dir, name).to_pylist() for name in _SMALL}
    return RunTables(
        run_id=run_dir.name,
        publisher=publisher,
        path=run_dir,
        manifest=manifest,
        brokers=tables["brokers"],
        partitions=tables["partitions"],
        findings=tables["findings"],
    )


_SMALL = ("brokers", "partitions", "findings")


def load_run(run_dir: Path, publisher: str = "", tables: RunTables | None = None) -> LoadedRun:
    """Read a published run whole (``tables``: its small tables, when already read);
    ``UnreadableRun`` says what is wrong with it."""
    small = read_run_tables(run_dir, publisher) if tables is None else tables
    rest = {
        name: read_table(run_dir, name, dictionary=_REPETITIVE.get(name, ()))
        for name in published.TABLES
        if name not in _SMALL
    }
    run = LoadedRun(
        tables=small,
        segments=rest["segments"].to_pylist(),
        indexes=rest["indexes"].to_pylist(),
        groups=rest["groups"],
        cleanings=rest["cleanings"].to_pylist(),
    )
    pa.default_memory_pool().release_unused()  # what reading took and freed
    return run


#: string columns of the groups table with few distinct values (kept dictionary-encoded: the
#: same log dir, state or topic name is not held once per row)
_REPETITIVE: dict[str, tuple[str, ...]] = {
    "groups": (
        "log_dir",
        "cluster_id",
        "group",
        "state",
        "group_type",
        "protocol_type",
        "protocol",
        "topic",
        "metadata",
    )
}


def read_table(
    run_dir: Path, name: str, columns: list[str] | None = None, dictionary: tuple[str, ...] = ()
) -> pa.Table:
    """One table of a run, with the published columns and types (extra columns, which a newer
    scan may add without a new schema version, are left out; the tables and columns added
    since version 1, which a run of an older scan lacks, read as empty and null:
    ``published.ADDED_TABLES``, ``ADDED_COLUMNS``); ``dictionary``: string columns to keep
    dictionary-encoded."""
    wanted = [(c, t) for c, t in published.TABLES[name] if columns is None or c in columns]
    path = run_dir / f"{name}.parquet"
    if name in published.ADDED_TABLES and not path.exists():
        return pa.table({c: pa.array([], _TYPES[t]) for c, t in wanted})
    added = published.ADDED_COLUMNS.get(name, frozenset())
    try:
        present = set(pq.read_schema(path).names)
        absent = [(c, t) for c, t in wanted if c not in present and c in added]
        table = pq.read_table(
            path,
            columns=[c for c, _ in wanted if (c, _) not in absent],
            read_dictionary=list(dictionary) or None,
        )
        for column, kind in absent:  # a run published before the column was added
            table = table.append_column(column, pa.nulls(table.num_rows, _TYPES[kind]))
        table = table.select([c for c, _ in wanted])
        if dictionary:
            table = table.unify_dictionaries().combine_chunks()
    except (OSError, pa.ArrowException) as error:
        raise UnreadableRun(f"{run_dir.name}/{path.name}: {error}") from error
    if "cluster_id" in table.column_names:  # one convention in every table: "" for none
        where = table.schema.get_field_index("cluster_id")
        table = table.set_column(where, "cluster_id", pc.fill_null(table["cluster_id"], ""))
    for column, kind in wanted:
        found = table.schema.field(column).type
        if pa.types.is_dictionary(found):
            found = found.value_type
        if found != _TYPES[kind]:
            raise UnreadableRun(
                f"{run_dir.name}/{path.name}: column {column} is {found}, the contract says {kind}"
            )
    return table
