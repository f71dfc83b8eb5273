"""The offset-commit record as the coordinator's loader keeps it, written down once: its fields,
where each is read from, and the two forms the replay moves it between (one commit, and columns
of many).

What the loader keeps of an OffsetCommitValue is ``CommitRecordMetadataAndOffset`` (A:2.3.0
``GroupMetadata.scala``: the offset the record sits at and ``OffsetAndMetadata``: offset, leader
epoch, metadata, commit and expire timestamps); the value's fields are those of
``OffsetCommitValue`` v0-v4 (``schemas.classic``). :data:`FIELDS` are the integer fields, each
with its dtype and the value a tombstone or an absent field has; ``metadata`` (a string) is kept
beside them. The reader decodes v0-v3 values into its own columns (:data:`READER_COLUMNS`), the
schemas every version (:data:`SCHEMA_FIELDS`); :func:`committed_offsets` turns columns into the
report's :class:`~offsets_auditor.groups.model.CommittedOffset`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from offsets_auditor.groups.model import CommittedOffset
from offsets_auditor.schemas import RecordValue

Key = tuple[str, str, int]  # group, topic, partition

#: The integer fields, in this order everywhere: name -> (dtype, value when absent).
FIELDS: Final[Mapping[str, tuple[Any, int]]] = {
    #: where the record sits in the ``__consumer_offsets`` partition
    "log_offset": (np.int64, -1),
    #: the offset ``olderThan`` compares (``appendedBatchOffset``: rules 4 and 7 of ``rules``)
    "order": (np.int64, 0),
    #: the committed offset
    "offset": (np.int64, 0),
    "commit_timestamp": (np.int64, 0),
    #: v1 only; -1 (``OffsetCommitRequest.DEFAULT_TIMESTAMP``) when absent
    "expire_timestamp": (np.int64, -1),
    #: v3+; -1 when absent
    "leader_epoch": (np.int32, -1),
    "value_version": (np.int16, -1),
}
#: The reader's record column (``reader.columns.RecordColumns``) of each field of the value.
READER_COLUMNS: Final[Mapping[str, str]] = {
    "offset": "committed_offset",
    "commit_timestamp": "commit_timestamp",
    "expire_timestamp": "expire_timestamp",
    "leader_epoch": "leader_epoch",
    "value_version": "value_version",
}
#: The schemas' name (``OffsetCommitValue``) of each field of the value it has.
SCHEMA_FIELDS: Final[Mapping[str, str]] = {
    "offset": "offset",
    "commit_timestamp": "commit_timestamp",
    "expire_timestamp": "expire_timestamp",
    "leader_epoch": "leader_epoch",
}
#: ``OffsetCommitRequest.DEFAULT_TIMESTAMP`` (an absent expire timestamp).
DEFAULT_TIMESTAMP: Final = -1


@dataclass(frozen=True, slots=True)
class Commit:
    """One offset commit as the loader keeps it: ``values`` are :data:`FIELDS`, in order."""

    key: Key
    metadata: str
    values: tuple[int, ...]

    @property
    def log_offset(self) -> int:
        return self.values[0]

    @property
    def order(self) -> int:
        return self.values[1]


def commit_of(key: Key, log_offset: int, order: int, value: RecordValue) -> Commit:
    """The commit an OffsetCommitValue decoded by the schemas holds (at ``log_offset``)."""
    fields = value.fields
    values = {"log_offset": log_offset, "order": order, "value_version": value.version}
    for name, schema_name in SCHEMA_FIELDS.items():
        found = fields.get(schema_name)
        values[name] = FIELDS[name][1] if found is None else int(found)  # type: ignore[call-overload]
    return Commit(key, str(fields["metadata"]), tuple(values[name] for name in FIELDS))


def columns_of(commits: Sequence[Commit | None]) -> dict[str, npt.NDArray[Any]]:
    """:data:`FIELDS` of ``commits`` as columns (a tombstone, None: every field absent)."""
    return {
        name: np.array([fill if c is None else c.values[i] for c in commits], dtype=dtype).reshape(
            -1
        )
        for i, (name, (dtype, fill)) in enumerate(FIELDS.items())
    }


def committed_offsets(
    topics: Sequence[str],
    partitions: Sequence[int],
    metadata: Sequence[str],
    columns: Mapping[str, npt.NDArray[Any]],
    producer_ids: npt.NDArray[np.int64],
) -> list[CommittedOffset]:
    """The report's committed offsets of rows of :data:`FIELDS` columns (``producer_ids``: -1
    for a commit no transaction made)."""
    fields = offset_fields(topics, partitions, metadata, columns, producer_ids)
    # tuple.__new__ on each row, as CommittedOffset._make does, without a Python call per
    # row (0.26 us a row against 0.40 us; a broker holds millions of committed offsets)
    return list(map(tuple.__new__, repeat(CommittedOffset), zip(*fields, strict=True)))


def offset_fields(
    topics: Sequence[str],
    partitions: Sequence[int],
    metadata: Sequence[str],
    columns: Mapping[str, npt.NDArray[Any]],
    producer_ids: npt.NDArray[np.int64],
) -> list[Sequence[Any]]:
    """:func:`committed_offsets` column by column: a list per field of ``CommittedOffset``, in
    its order (an absent expire timestamp, leader epoch or producer: None)."""

    def optional(values: npt.NDArray[Any], absent: npt.NDArray[np.bool_]) -> list[Any]:
        out = values.astype(object)
        out[absent] = None
        return list(out.tolist())

    expire, epoch = columns["expire_timestamp"], columns["leader_epoch"]
    return [
        topics,
        partitions,
        columns["offset"].tolist(),
        metadata,
        columns["commit_timestamp"].tolist(),
        optional(expire, expire == DEFAULT_TIMESTAMP),
        optional(epoch, epoch < 0),
        columns["log_offset"].tolist(),
        columns["value_version"].tolist(),
        optional(producer_ids, producer_ids < 0),
    ]
