"""Replica divergence across publishers: replicas of one offsets partition scanned by different
scans (each broker on its own host) meet only in the service, so the service compares them,
with the scan's own rule (``offsets_auditor.audit.replicas``: a group's latest commit for a
topic-partition below both replicas' log ends must be the same offset from the same log offset).

Each pair of log dirs of one cluster holding the same partition, from different runs and
brokers, is compared: Arrow joins find the commits whose values differ (so no Python object is
made per commit), and the rule decides on those. The findings are rows of the findings table,
placed on the first log dir of the pair, as the scan places its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from itertools import combinations
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from api.results import cluster_key
from offsets_auditor.audit.replicas import Holder, replica_findings
from offsets_auditor.findings import FindingKind
from offsets_auditor.published.rows import FindingRow, Where

#: (group, topic, partition) -> (committed offset, log offset of the commit)
Commits = dict[tuple[str, str, int], tuple[int, int]]
_KEYS = ["group", "topic", "partition"]


def cross_run_divergences(
    brokers: Sequence[Mapping[str, Any]],
    partitions: Sequence[Mapping[str, Any]],
    groups: pa.Table,
) -> list[dict[str, Any]]:
    """Findings rows of kind ``replica-divergence`` between replicas from different runs
    (``brokers`` rows carry ``run_id``; ``groups`` is the view's groups table)."""
    run_of = {_place(b): b.get("run_id") for b in brokers}
    replicas: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for p in partitions:
        replicas.setdefault((cluster_key(p["cluster_id"]), p["partition"]), []).append(p)
    committed = None
    out: list[dict[str, Any]] = []
    for (_cluster, number), rows in sorted(replicas.items()):
        for a, b in combinations(sorted(rows, key=_place), 2):
            if run_of.get(_place(a)) == run_of.get(_place(b)):
                continue  # the same run: its scan compared them already
            if a["broker_id"] == b["broker_id"] or None in (
                a["log_end_offset"],
                b["log_end_offset"],
            ):
                continue
            if committed is None:
                committed = _committed(groups)
            left = _commits_of(committed, a, number)
            right = _commits_of(committed, b, number)
            differ = _differing(left, right)
            if differ.num_rows == 0:
                continue
            out += _findings(a, b, number, differ)
    return out


def _place(row: Mapping[str, Any]) -> tuple[str, int, str]:
    broker = row.get("broker_id")
    return (cluster_key(row.get("cluster_id")), -1 if broker is None else broker, row["log_dir"])


def _committed(groups: pa.Table) -> pa.Table:
    """The committed (not pending) offsets of the groups table, as plain columns."""
    wanted = ["cluster_id", "broker_id", "log_dir", "coordinator_partition", *_KEYS]
    table = groups.select([*wanted, "offset", "log_offset", "pending"])
    table = table.filter(pc.and_(pc.equal(table["pending"], False), pc.is_valid(table["topic"])))
    columns = []
    for name in table.column_names:
        column = table[name]
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _commits_of(committed: pa.Table, row: Mapping[str, Any], number: int) -> pa.Table:
    mask = pc.and_(
        pc.equal(committed["log_dir"], row["log_dir"]),
        pc.equal(committed["coordinator_partition"], number),
    )
    mask = pc.and_(mask, _equal_or_null(committed["broker_id"], row["broker_id"]))
    mask = pc.and_(mask, _equal_or_null(committed["cluster_id"], row.get("cluster_id")))
    return committed.filter(mask).select([*_KEYS, "offset", "log_offset"])


def _equal_or_null(column: pa.ChunkedArray, value: Any) -> pa.ChunkedArray:
    if value is None:
        return pc.is_null(column)
    return pc.fill_null(pc.equal(column, value), False)


def _differing(left: pa.Table, right: pa.Table) -> pa.Table:
    """The keys both hold with another (offset, log offset)."""
    joined = left.join(right, keys=_KEYS, join_type="inner", right_suffix="_r")
    differ = pc.or_(
        pc.not_equal(joined["offset"], joined["offset_r"]),
        pc.not_equal(joined["log_offset"], joined["log_offset_r"]),
    )
    return joined.filter(pc.fill_null(differ, True))


def _findings(
    a: Mapping[str, Any], b: Mapping[str, Any], number: int, differ: pa.Table
) -> list[dict[str, Any]]:
    """The rule of ``audit.replicas`` over the two replicas, given the commits that differ."""
    commits: dict[int, Commits] = {0: {}, 1: {}}
    for r in differ.to_pylist():
        key = (r["group"], r["topic"], r["partition"])
        commits[0][key] = (r["offset"], r["log_offset"])
        commits[1][key] = (r["offset_r"], r["log_offset_r"])
    found = replica_findings([_holder(a, number), _holder(b, number)], lambda i, _p: commits[i])
    rows = []
    for index, finding in found:
        if finding.kind != FindingKind.REPLICA_DIVERGENCE:
            continue
        place = (a, b)[index]
        where = Where(
            input=place["input"],
            log_dir=place["log_dir"],
            broker_id=place["broker_id"],
            cluster_id=place.get("cluster_id"),
        )
        rows.append(asdict(FindingRow.of(where, finding)))
    return rows


def _holder(row: Mapping[str, Any], number: int) -> Holder:
    """The little of a log dir the rule reads: its partitions row of ``number``."""
    return Holder(
        row["broker_id"],
        row.get("cluster_id"),
        row["log_dir"],
        ((number, row["log_end_offset"]),),
    )
