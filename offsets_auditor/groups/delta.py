"""What one segment contributes to the groups the coordinator loads, independently of the others.

A segment's records are reduced to a :class:`GroupsDelta` that
:class:`offsets_auditor.groups.replay.GroupsFold` applies in offset order, segment after
segment. The reduction is exact because the loader's rules only look at the latest record of a
key (rule 2 of :mod:`offsets_auditor.groups.rules`), except where transactions are involved:

- ``commits``: for each offset-commit key, its LAST non-transactional record in the segment (a
  commit or a tombstone; what came before in the segment is overwritten by it). Columns, one
  row per key, in record-offset order.
- ``transactional``: every transactional offset commit (they wait for their marker), and
  ``controls``: every COMMIT/ABORT marker the loader reads, in order.
- ``metadata``: the last group metadata record (or tombstone) of each group.
- ``consumer_group_records``: the new coordinator's records, in order (3.7+, few).
- ``removals``: per group, the offset of its last tombstone of any kind.
- counts and the first occurrence of each thing the loader would stumble on.

Rows the reader decoded into columns (an OK OffsetCommitKey with an OK value or a tombstone)
are reduced with numpy; the others are decoded by ``decode.RowDecoder`` (the schemas).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from offsets_auditor import _folds, _native
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import FindingKind
from offsets_auditor.groups.commit_record import (
    FIELDS,
    READER_COLUMNS,
    Commit,
    Key,
    columns_of,
    commit_of,
)
from offsets_auditor.groups.consumer_groups import CONSUMER_GROUP_TYPES
from offsets_auditor.groups.rules import CommitOffsetOf, LoaderRules
from offsets_auditor.reader.columns import Chunk, ValueStatus
from offsets_auditor.reader.decode import DecodedRecord, RowDecoder
from offsets_auditor.reader.tables import GrowingColumns, Interner, decoded_texts
from offsets_auditor.records.model import NO_PRODUCER_ID
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue
from offsets_auditor.schemas.java_utf8 import java_utf8

#: ``_folds.commit_rows``' batch states (and ``end_offset`` when there is none).
_BATCH_PLAIN: Final = 0
_BATCH_APART: Final = 1
_BATCH_UNREAD: Final = 2
_NO_END: Final = (1 << 63) - 1

#: Control record type ids the loader acts on (``ControlRecordType``).
ABORT: Final = 0
COMMIT: Final = 1


class Unreadable:
    """A value the loader cannot read (an unknown value version)."""


UNREADABLE: Final = Unreadable()


@dataclass(frozen=True, slots=True)
class TransactionalCommit:
    """A transactional offset commit (``commit`` None: a tombstone) of producer ``producer_id``."""

    log_offset: int
    producer_id: int
    producer_epoch: int
    key: Key
    commit: Commit | None


@dataclass(frozen=True, slots=True)
class Marker:
    """A transaction marker the loader reads: COMMIT or ABORT (or, classic loader, any first
    control record of a batch: it drops the producer's pending offsets)."""

    log_offset: int
    producer_id: int
    commit: bool


@dataclass(frozen=True, slots=True)
class Note:
    """The first record of its kind the loader would stumble on (one finding each)."""

    kind: FindingKind
    once_per: str
    detail: str
    file: str | None
    position: int
    group: str | None


@dataclass(frozen=True, slots=True)
class CommitColumns:
    """The last non-transactional commit or tombstone of each key, one row per key in
    record-offset order: the key (strings index ``names``), ``values`` (the commit record's
    ``FIELDS``, absent for a tombstone) and ``metadata`` (strings, an object array: the fold
    scatters it as it is)."""

    names: tuple[str, ...]
    group: npt.NDArray[np.int32]
    topic: npt.NDArray[np.int32]
    partition: npt.NDArray[np.int32]
    tombstone: npt.NDArray[np.bool_]
    values: dict[str, npt.NDArray[Any]]
    metadata: npt.NDArray[np.object_]

    def __len__(self) -> int:
        return len(self.tombstone)

    @property
    def log_offset(self) -> npt.NDArray[np.int64]:
        return self.values["log_offset"]

    def key(self, row: int) -> Key:
        return (
            self.names[int(self.group[row])],
            self.names[int(self.topic[row])],
            int(self.partition[row]),
        )


@dataclass(frozen=True, slots=True)
class GroupsDelta:
    commits: CommitColumns
    transactional: tuple[TransactionalCommit, ...]
    controls: tuple[Marker, ...]
    metadata: dict[str, tuple[int, RecordValue | None]]
    consumer_group_records: tuple[tuple[RecordKey, RecordValue | None, int], ...]
    removals: dict[str, int]
    records: int
    log_end_offset: int
    unknown_record_types: dict[int, int]
    notes: tuple[Note, ...]
    #: what the segment walk reported (entries it could not read, CRC mismatches)
    problems: tuple[DecodeError, ...]
    #: records whose key or value is no offsets schema (the loader throws on them)
    record_problems: tuple[DecodeError, ...] = ()


@dataclass
class DeltaBuilder:
    """Reduces the chunks of one segment (``add``), then :meth:`result`.

    ``start_offset``: batches ending below it are not read (the loader starts at the log start
    offset, rule 1); ``end_offset``: records at or above it are not read (the state as of that
    offset)."""

    rules: LoaderRules
    file: str | None
    start_offset: int | None = None
    end_offset: int | None = None
    _rows: RowDecoder = field(init=False)
    _latest: _LatestCommits = field(default_factory=lambda: _LatestCommits())
    _names: Interner = field(default_factory=Interner)
    _string_names: GrowingColumns = field(
        default_factory=lambda: GrowingColumns({"name": (np.int32, -1)})
    )
    _transactional: list[TransactionalCommit] = field(default_factory=list)
    _controls: list[Marker] = field(default_factory=list)
    _metadata: dict[str, tuple[int, RecordValue | None]] = field(default_factory=dict)
    _metadata_texts: _MetadataTexts = field(default_factory=lambda: _MetadataTexts())
    _consumer: list[tuple[RecordKey, RecordValue | None, int]] = field(default_factory=list)
    _removals: dict[str, int] = field(default_factory=dict)
    _records: int = 0
    _log_end: int = 0
    _unknown: Counter[int] = field(default_factory=Counter)
    _notes: dict[tuple[str, str], Note] = field(default_factory=dict)
    _problems: list[DecodeError] = field(default_factory=list)
    _record_problems: list[DecodeError] = field(default_factory=list)
    _named_strings: int = 0  # the string ids named so far (``_names_of_strings``)
    _open_batch: tuple[int, int] = (-1, 0)  # (entry ordinal, offset of its first record read)
    _record_batch: tuple[str | None, int] = (None, -1)  # (file, position) of the last record
    _record_batch_first: int = -1

    def __post_init__(self) -> None:
        self._rows = RowDecoder(self.file)

    def add(self, item: Chunk | DecodeError) -> None:
        if isinstance(item, DecodeError):
            self._problems.append(item)
        else:
            self._chunk(item)

    def add_record(self, item: DecodedRecord | DecodeError) -> None:
        """One decoded record (or problem), read in offset order: the same rules as for the
        rows of a chunk, one record at a time (the rules' proof tables feed records so)."""
        if isinstance(item, DecodeError):
            self._problems.append(item)
            return
        if item.error is not None:
            self._record_problems.append(item.error)
            return
        header = item.batch
        offset = item.record.offset
        if self.start_offset is not None and header.next_offset <= self.start_offset:
            return
        if self.end_offset is not None and offset >= self.end_offset:
            return
        self._log_end = max(self._log_end, offset + 1)
        if (item.file, header.position) != self._record_batch:
            self._record_batch = (item.file, header.position)
            self._record_batch_first = offset
        order = {
            CommitOffsetOf.RECORD: offset,
            CommitOffsetOf.BATCH_BASE_OFFSET: header.base_offset,
            CommitOffsetOf.FIRST_RECORD_OF_BATCH: self._record_batch_first,
        }[self.rules.commit_offset_of]
        self._apply(item, order, self._record_batch_first)

    def _name_id(self, name: str) -> int:
        return self._names.id(name)

    def _names_of_strings(self, chunk: Chunk) -> npt.NDArray[np.int32]:
        """The delta's name id of each string id of the segment's table (its chunks share it):
        the strings added since the last chunk named, each decoded once, in one call."""
        table, named = self._string_names, self._named_strings
        count = len(chunk.strings)
        if count > named:
            table.reserve(count)
            new = np.arange(named, count)
            table["name"][new] = self._names.ids(decoded_texts(chunk.strings, new, java_utf8))
            self._named_strings = count
        return table["name"]

    # -- one chunk --------------------------------------------------------------------------

    def _chunk(self, chunk: Chunk) -> None:
        r = chunk.records
        plain, others, first_read, last_batch, log_end = _folds.commit_rows(
            r.batch,
            r.offset,
            r.key_status,
            r.value_status,
            r.topic,
            self._batch_states(chunk),
            _NO_END if self.end_offset is None else self.end_offset,
        )
        if last_batch < 0:  # nothing read
            return
        self._log_end = max(self._log_end, log_end)
        first_of_batch = self._first_of_batch(
            chunk, np.frombuffer(first_read, np.int64), last_batch
        )
        candidates = np.frombuffer(plain, dtype=np.int64)
        self._records += len(candidates)
        self._removals_of(chunk, candidates[r.value_status[candidates] == ValueStatus.NULL])
        names = self._names_of_strings(chunk)
        keys = np.frombuffer(
            _folds.commit_keys(candidates, r.group, r.topic, r.partition, names), dtype=np.int32
        ).reshape(-1, 4)
        self._latest.add(
            keys,
            r.offset[candidates],
            _column_fields(chunk, candidates, self._order(chunk, candidates, first_of_batch)),
            lambda chosen: self._metadata_texts.of(chunk, candidates[chosen]),
        )
        if len(others):
            self._one_by_one(chunk, np.frombuffer(others, dtype=np.int64), first_of_batch)

    def _batch_states(self, chunk: Chunk) -> npt.NDArray[np.int8]:
        """Per batch, for ``_folds.commit_rows``: read apart (control batches, and transactions
        by the rules), not read (ending below the load's start), or plain."""
        b = chunk.batches
        apart = b.control != 0
        if self.rules.new_coordinator:
            apart |= b.producer_id != NO_PRODUCER_ID
        elif self.rules.transactions:
            apart |= b.transactional != 0
        states = np.where(apart, _BATCH_APART, _BATCH_PLAIN).astype(np.int8)
        if self.start_offset is not None:
            states[b.last_offset + 1 <= self.start_offset] = _BATCH_UNREAD
        return states

    def _first_of_batch(
        self, chunk: Chunk, first_read: npt.NDArray[np.int64], last_batch: int
    ) -> npt.NDArray[np.int64]:
        """Per batch: the offset of the first record read from it (a batch split over chunks
        continues from the previous one); ``first_read`` is what this chunk read first of
        each, ``last_batch`` the batch of the last record it read."""
        b = chunk.batches
        first = first_read.copy()
        ordinal, offset = self._open_batch
        for row in np.flatnonzero(b.continued != 0).tolist():
            if int(b.ordinal[row]) == ordinal:
                first[row] = offset
        self._open_batch = (int(b.ordinal[last_batch]), int(first[last_batch]))
        return first

    def _order(
        self, chunk: Chunk, rows: npt.NDArray[np.int64], first_of_batch: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """Per record of ``rows``: the offset ``olderThan`` compares (rules 4 and 7)."""
        r, b = chunk.records, chunk.batches
        if self.rules.commit_offset_of is CommitOffsetOf.RECORD:
            return r.offset[rows]
        if self.rules.commit_offset_of is CommitOffsetOf.BATCH_BASE_OFFSET:
            return b.base_offset[r.batch[rows]]
        return first_of_batch[r.batch[rows]]

    def _removals_of(self, chunk: Chunk, rows: npt.NDArray[np.int64]) -> None:
        """The plain tombstones ``rows``: each group's last."""
        if not len(rows):
            return
        ids, of_row = np.unique(chunk.records.group[rows], return_inverse=True)
        lasts = np.full(len(ids), np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(lasts, of_row, chunk.records.offset[rows])
        for group_id, last in zip(ids.tolist(), lasts.tolist(), strict=True):
            name = self._rows.text(chunk, group_id)
            self._removals[name] = max(self._removals.get(name, -1), last)

    def _one_by_one(
        self, chunk: Chunk, rows: npt.NDArray[np.int64], first_of_batch: npt.NDArray[np.int64]
    ) -> None:
        """The records the columns do not settle: decoded, then the loader's rules one by one
        (``first_of_batch`` per batch)."""
        order = self._order(chunk, rows, first_of_batch).tolist()
        firsts = first_of_batch[chunk.records.batch[rows]].tolist()
        decoded = self._rows.decoded(chunk, rows.tolist())
        for item, row_order, first in zip(decoded, order, firsts, strict=True):
            if item.error is not None:
                self._record_problems.append(item.error)
                continue
            self._apply(item, row_order, first)

    def _apply(self, item: DecodedRecord, order: int, first_of_batch: int) -> None:
        """The loader's rules for one record (``order``: the offset ``olderThan`` compares)."""
        if item.error is not None:
            return
        if item.batch.is_control:
            self._control(item, first_of_batch)
            return
        key = item.key
        if key is None:
            return
        self._records += 1
        if key.key_type == "offset_commit":
            self._offset_commit(item, key, order)
        elif key.key_type == "group_metadata":
            value = self._known_value(item, key)
            if not isinstance(value, Unreadable):
                group = str(key.group)
                self._metadata[group] = (item.record.offset, value)
                if value is None:
                    self._removals[group] = max(self._removals.get(group, -1), item.record.offset)
        elif self.rules.new_coordinator and key.key_type in CONSUMER_GROUP_TYPES:
            value = self._known_value(item, key)
            if not isinstance(value, Unreadable) and key.group is not None:
                self._consumer.append((key, value, item.record.offset))
        else:
            self._unknown_type(item, key)

    def _transactional_batch(self, item: DecodedRecord) -> bool:
        header = item.batch
        if self.rules.new_coordinator:
            return header.producer_id != NO_PRODUCER_ID
        return self.rules.transactions and header.is_transactional

    def _offset_commit(self, item: DecodedRecord, key: RecordKey, order: int) -> None:
        value = self._known_value(item, key)
        if isinstance(value, Unreadable):
            return
        k: Key = (str(key.group), str(key.topic), int(key.partition or 0))
        offset = item.record.offset
        if value is None:
            self._removals[k[0]] = max(self._removals.get(k[0], -1), offset)
        commit = None if value is None else commit_of(k, offset, order, value)
        if self._transactional_batch(item):
            header = item.batch
            self._transactional.append(
                TransactionalCommit(offset, header.producer_id, header.producer_epoch, k, commit)
            )
        else:
            values = columns_of([commit])
            values["log_offset"][0], values["order"][0] = offset, order
            values["tombstone"] = np.array([commit is None])
            metadata = ["" if commit is None else commit.metadata]
            self._latest.add(
                np.array([[self._name_id(k[0]), self._name_id(k[1]), k[2], 0]], dtype=np.int32),
                values["log_offset"],
                lambda chosen: {name: values[name][chosen] for name in _WINNER_FIELDS},
                lambda chosen: metadata,
            )

    def _control(self, item: DecodedRecord, first_of_batch: int) -> None:
        control = item.control
        if control is None or not self.rules.transactions:
            return
        if self.rules.new_coordinator:
            if control.type_id not in (ABORT, COMMIT):
                return
        elif item.record.offset != first_of_batch:
            return  # the classic loader reads only the first record of a control batch
        self._controls.append(
            Marker(item.record.offset, item.batch.producer_id, control.type_id == COMMIT)
        )

    def _known_value(self, item: DecodedRecord, key: RecordKey) -> RecordValue | Unreadable | None:
        """The value (None: a tombstone), or :data:`UNREADABLE` when the loader cannot read it:
        an unknown value version makes every Kafka loader throw there."""
        value = item.value
        if isinstance(value, UnknownValue):
            self._note(
                FindingKind.UNKNOWN_VALUE_VERSION,
                f"{key.key_type}:{value.version}",
                f"record at offset {item.record.offset} of group {key.group!r}: {value.reason};"
                f" {self.rules.label}'s loader throws there (e.g. 2.3.0 'Unknown offset message"
                f" version'): {self.rules.after_load_error()}; the record is skipped here",
                item,
                key.group,
            )
            return UNREADABLE
        return value

    def _unknown_type(self, item: DecodedRecord, key: RecordKey) -> None:
        self._unknown[key.version] += 1
        if self.rules.unknown_key_fails_load:
            self._note(
                FindingKind.UNKNOWN_RECORD_TYPE,
                str(key.version),
                f"record at offset {item.record.offset} has key version {key.version}, unknown to"
                f" {self.rules.label}: its loader throws 'Unknown group metadata message version:"
                f" {key.version}' (ignored with a warning from 3.5.0):"
                f" {self.rules.after_load_error()}; skipped here",
                item,
                key.group,
            )

    def _note(
        self, kind: FindingKind, once_per: str, detail: str, item: DecodedRecord, group: str | None
    ) -> None:
        self._notes.setdefault(
            (kind, once_per),
            Note(kind, once_per, detail, item.file, item.batch.position, group),
        )

    # -- the result ---------------------------------------------------------------------------

    def result(self) -> GroupsDelta:
        return GroupsDelta(
            commits=self._latest.result(tuple(self._names.names)),
            transactional=tuple(self._transactional),
            controls=tuple(self._controls),
            metadata=self._metadata,
            consumer_group_records=tuple(self._consumer),
            removals=self._removals,
            records=self._records,
            log_end_offset=self._log_end,
            unknown_record_types=dict(self._unknown),
            notes=tuple(self._notes.values()),
            problems=tuple(self._problems),
            record_problems=tuple(self._record_problems),
        )


# -- the latest commit of each key -------------------------------------------------------------


#: What the latest commit of a key is kept as: the commit record's fields, then its key.
_COLUMNS: Final = {
    **FIELDS,
    "tombstone": (np.bool_, False),
    "group": (np.int32, 0),
    "topic": (np.int32, 0),
    "partition": (np.int32, 0),
}


class _LatestCommits:
    """The latest non-transactional commit (or tombstone) of each (group, topic, partition) of
    one segment, kept as columns by a dense key id (``_native.KeyTable`` over the key's string
    ids and partition): memory in proportion to the segment's keys, not its records."""

    def __init__(self) -> None:
        self._ids = _native.KeyTable()
        #: "last" is ``_folds.latest``'s scratch: -1 for every key between calls
        self._table = GrowingColumns({**_COLUMNS, "metadata": (object, ""), "last": (np.int32, -1)})

    def add(
        self,
        keys: npt.NDArray[np.int32],
        log_offset: npt.NDArray[np.int64],
        fields: Callable[[npt.NDArray[np.intp]], dict[str, npt.NDArray[Any]]],
        metadata: Callable[[npt.NDArray[np.intp]], Sequence[str] | npt.NDArray[np.object_]],
    ) -> None:
        """Candidates, in record order, by key (rows of int32: group name id, topic name id,
        partition, 0) and log offset: each key keeps its latest. ``fields(rows)`` gives the
        other columns (:data:`_WINNER_FIELDS`) of the candidate rows that win,
        ``metadata(rows)`` their metadata strings: only winners are gathered."""
        if not len(keys):
            return
        ids = np.empty(len(keys), dtype=np.int32)
        table = self._table
        table.reserve(self._ids.ids(keys, ids))
        won, winners = _folds.latest(ids, log_offset, table["log_offset"], table["last"])
        key_ids, rows = np.frombuffer(won, np.int64), np.frombuffer(winners, np.int64)
        if not len(rows):
            return
        for column, name in enumerate(("group", "topic", "partition")):
            table[name][key_ids] = keys[rows, column]
        table["log_offset"][key_ids] = log_offset[rows]
        for name, values in fields(rows).items():
            table[name][key_ids] = values
        texts = np.empty(len(rows), dtype=object)
        texts[:] = metadata(rows)
        table["metadata"][key_ids] = texts

    def result(self, names: tuple[str, ...]) -> CommitColumns:
        table = self._table
        present = np.flatnonzero(table["log_offset"][: len(self._ids)] >= 0)
        present = present[np.argsort(table["log_offset"][present], kind="stable")]
        return CommitColumns(
            names=names,
            group=table["group"][present],
            topic=table["topic"][present],
            partition=table["partition"][present],
            tombstone=table["tombstone"][present],
            values={name: table[name][present] for name in FIELDS},
            metadata=table["metadata"][present],
        )


#: The columns of a winning candidate besides its key and log offset.
_WINNER_FIELDS: Final = tuple(
    name for name in _COLUMNS if name not in ("group", "topic", "partition", "log_offset")
)


def _column_fields(
    chunk: Chunk, rows: npt.NDArray[np.int64], order: npt.NDArray[np.int64]
) -> Callable[[npt.NDArray[np.intp]], dict[str, npt.NDArray[Any]]]:
    """The :data:`_WINNER_FIELDS` of candidate rows (indexes into ``rows``, decoded
    OffsetCommitKeys with an OK value or a tombstone; ``order[i]`` is ``rows[i]``'s)."""

    def fields(chosen: npt.NDArray[np.intp]) -> dict[str, npt.NDArray[Any]]:
        picked = rows[chosen]
        r = chunk.records
        return {
            **{name: getattr(r, column)[picked] for name, column in READER_COLUMNS.items()},
            "order": order[chosen],
            "tombstone": r.value_status[picked] == ValueStatus.NULL,
        }

    return fields


class _MetadataTexts:
    """The commits' metadata strings of one segment, each distinct one Java-decoded once (they
    repeat: client names), interned in C from the chunks' buffers."""

    def __init__(self) -> None:
        self._raw = _native.StringTable()
        self._texts: npt.NDArray[np.object_] = np.empty(0, dtype=object)

    def of(self, chunk: Chunk, rows: npt.NDArray[np.intp]) -> npt.NDArray[np.object_]:
        """The metadata string of each of ``rows`` (decoded commits of ``chunk``)."""
        r = chunk.records
        out = np.full(len(rows), "", dtype=object)  # most commits carry none
        sizes = r.metadata_size[rows]
        some = np.flatnonzero(sizes > 0)
        if not len(some):
            return out
        picked = rows[some]
        ids = np.empty(len(some), dtype=np.int32)
        count = self._raw.intern_slices(
            chunk.buffers,
            np.ascontiguousarray(r.buffer[picked]),
            np.ascontiguousarray(r.metadata_start[picked]),
            np.ascontiguousarray(sizes[some]),
            ids,
        )
        known = len(self._texts)
        if count > known:
            new = np.empty(count - known, dtype=object)
            new[:] = decoded_texts(self._raw, np.arange(known, count), java_utf8)
            self._texts = np.concatenate([self._texts, new])
        out[some] = self._texts[ids]
        return out
