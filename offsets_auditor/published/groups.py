"""The ``groups`` table's columns of the groups themselves (``GroupState``), column by column:
a run holds millions of group offsets, never one Python object per row (``GroupRow`` names the
columns; the scan writes them as Arrow columns, ``spark_jobs.group_parts``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import Any, Final

from offsets_auditor.groups.model import CommittedOffset, GroupState
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
        head = (
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
        rows.extend([(*head, *o, False) for o in g.offsets])
        rows.extend([(*head, *p.offset, True) for p in g.pending_transactional_offsets])
        if not g.offsets and not g.pending_transactional_offsets:
            rows.append((*head, *_NO_OFFSET))
    by_column = zip(*rows, strict=True) if rows else ([] for _ in GROUP_COLUMNS)
    return {c: list(values) for c, values in zip(GROUP_COLUMNS, by_column, strict=True)}


#: the offset's columns and ``pending`` of a group without offsets
_NO_OFFSET: Final = (None,) * (len(OFFSET_COLUMNS) + 1)
