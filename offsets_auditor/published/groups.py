"""The ``groups`` table's columns of the groups themselves (``GroupState``), column by column:
a run holds millions of group offsets, never one Python object per row (``GroupRow`` names the
columns; the scan writes them as Arrow columns, ``spark_jobs.group_parts``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from offsets_auditor.groups.commit_record import offset_fields
from offsets_auditor.groups.model import CommittedOffset, CommittedTable, GroupState
from offsets_auditor.published.rows import GroupRow, Where

#: The ``groups`` table's columns that come from the groups themselves (the rest say where).
GROUP_COLUMNS: Final = tuple(
    f.name for f in fields(GroupRow) if f.name not in {w.name for w in fields(Where)}
)
#: the columns of the group itself, then one committed offset's (``CommittedOffset``'s
#: fields, in order), then ``pending``: how ``group_columns`` lays out a row
GROUP_HEAD: Final = (
    "group",
    "coordinator_partition",
    "expected_partition",
    "state",
    "group_type",
    "protocol_type",
    "protocol",
    "generation",
    "members",
)
OFFSET_COLUMNS: Final = CommittedOffset._fields


def group_columns(groups: Iterable[GroupState]) -> dict[str, list[Any]]:
    """The ``groups`` table's rows of ``groups``, column by column (``GROUP_COLUMNS``): one row
    per group and committed topic-partition (``pending``: a transactional offset not yet
    committed), a group without offsets one row with no topic. Values as in the audit JSON
    (``GroupState.to_json``)."""
    rows: list[tuple[Any, ...]] = []
    for g in groups:
        head = _head(g)
        rows.extend([(*head, *o, False) for o in g.offsets])
        rows.extend([(*head, *p.offset, True) for p in g.pending_transactional_offsets])
        if not g.offsets and not g.pending_transactional_offsets:
            rows.append((*head, *_NO_OFFSET))
    by_column = zip(*rows, strict=True) if rows else ([] for _ in GROUP_COLUMNS)
    return {c: list(values) for c, values in zip(GROUP_COLUMNS, by_column, strict=True)}


def _head(g: GroupState) -> tuple[Any, ...]:
    """``GROUP_HEAD``'s values of group ``g``, in order."""
    return (
        g.group,
        g.coordinator_partition,
        g.expected_partition,
        g.state.value,
        g.group_type,
        g.protocol_type,
        g.protocol,
        g.generation,
        len(g.members),
    )


#: the offset's columns and ``pending`` of a group without offsets
_NO_OFFSET: Final = (None,) * (len(OFFSET_COLUMNS) + 1)


def table_columns(groups: Sequence[GroupState], committed: CommittedTable) -> dict[str, list[Any]]:
    """:func:`group_columns` of a replay whose committed offsets are columns (``committed``;
    the groups' own ``offsets`` are empty): the same rows in the same order, built column by
    column without a Python object per offset."""
    count = len(committed)
    pending = [(i, p) for i, g in enumerate(groups) for p in g.pending_transactional_offsets]
    has_rows = np.zeros(len(groups), dtype=np.bool_)
    has_rows[committed.group] = True
    has_rows[[i for i, _ in pending]] = True
    bare = np.flatnonzero(~has_rows)
    # rows as they are built: the committed offsets, the pending ones, the groups without any;
    # then in the groups' order, each group's committed before its pending (a stable sort)
    group_of = np.concatenate(
        [committed.group, np.array([i for i, _ in pending], dtype=np.intp), bare]
    )
    kind = np.repeat(np.arange(3), [count, len(pending), len(bare)])
    order = np.lexsort((kind, group_of))
    rows = group_of[order]
    heads = _heads(groups)
    columns = {name: heads[name][rows].tolist() for name in GROUP_HEAD}
    own = _offset_columns(committed)
    for position, name in enumerate((*OFFSET_COLUMNS, "pending")):
        values = np.empty(len(group_of), dtype=object)  # the groups without offsets: None
        values[:count] = own[name]
        values[count : count + len(pending)] = [
            True if name == "pending" else p.offset[position] for _, p in pending
        ]
        columns[name] = values[order].tolist()
    return {name: columns[name] for name in GROUP_COLUMNS}


def _heads(groups: Sequence[GroupState]) -> dict[str, npt.NDArray[Any]]:
    """``GROUP_HEAD``'s values of each group, a column each (object arrays, to gather by row)."""
    values = zip(*map(_head, groups), strict=True) if groups else ([] for _ in GROUP_HEAD)
    columns = {}
    for name, column in zip(GROUP_HEAD, values, strict=True):
        array = np.empty(len(column), dtype=object)
        array[:] = column
        columns[name] = array
    return columns


def _offset_columns(committed: CommittedTable) -> dict[str, Sequence[Any]]:
    """``OFFSET_COLUMNS`` and ``pending`` of the committed offsets, as ``CommittedOffset``
    holds them."""
    fields = offset_fields(
        committed.topic,
        committed.partition.tolist(),
        committed.metadata,
        committed.values,
        committed.producer_id,
    )
    return {**dict(zip(OFFSET_COLUMNS, fields, strict=True)), "pending": [False] * len(committed)}
