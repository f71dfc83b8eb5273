"""Replay one ``__consumer_offsets`` partition the way the coordinator loads it.

:class:`GroupsFold` takes the partition's :class:`~offsets_auditor.groups.delta.GroupsDelta`\\ s
(one per segment, see :mod:`offsets_auditor.groups.delta`) in offset order and applies the
loader's rules (:class:`offsets_auditor.groups.rules.LoaderRules`; their module docstring cites
the Kafka source for each):

- a key's last non-transactional record wins (a tombstone removes it), applied with numpy for
  every key no open transaction touches;
- transactional commits wait in their producer's pending set; a COMMIT marker moves them into
  the committed offsets (a pending one replaces a committed one only if that one is ``olderThan``
  it), any marker drops the producer's pending set. Keys with pending commits, and the records
  of those keys, are replayed one by one in offset order;
- the group's latest metadata record decides its state and members.

Nothing here reads files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

import numpy as np
import numpy.typing as npt

from offsets_auditor import _native
from offsets_auditor.constants import OFFSETS_TOPIC
from offsets_auditor.coordinator import coordinator_partitions
from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding, FindingKind, Severity
from offsets_auditor.groups.classic_groups import classic_group
from offsets_auditor.groups.commit_record import (
    FIELDS,
    Commit,
    columns_of,
    committed_offsets,
)
from offsets_auditor.groups.consumer_groups import ConsumerGroupReplay
from offsets_auditor.groups.delta import (
    CommitColumns,
    GroupsDelta,
    Marker,
    Note,
    TransactionalCommit,
)
from offsets_auditor.groups.model import (
    CommittedOffset,
    CommittedTable,
    GroupState,
    GroupStateName,
    PartitionGroups,
    PendingTransactionalOffset,
)
from offsets_auditor.groups.rules import LoaderRules
from offsets_auditor.reader.tables import GrowingColumns, Interner
from offsets_auditor.schemas import RecordValue


class Listing(Enum):
    """What :meth:`GroupsFold.result` lists of the groups."""

    #: each group, with its committed offsets as objects (``audit --json``, ``groups``)
    OFFSETS = "offsets"
    #: each group, its committed offsets as the result's columns (the scan's part files)
    OFFSET_COLUMNS = "offset columns"
    #: no group, only the findings about them, misplaced groups included (the text ``audit``,
    #: whose report lists none: a partition of 200,000 groups builds no object per group)
    NONE = "none"


def misplaced_finding(group: str, partition: int, expected: int, partitions: int) -> Finding:
    """Group ``group`` has records in offsets partition ``partition``, where ``partitionFor``
    sends it to ``expected`` with ``partitions`` partitions."""
    return Finding(
        FindingKind.MISPLACED_GROUP,
        Severity.WARNING,
        f"group {group!r} has records in {OFFSETS_TOPIC}-{partition}, but partitionFor sends it"
        f" to {OFFSETS_TOPIC}-{expected} with {partitions} partitions: its coordinator never"
        " reads these",
        partition=f"{OFFSETS_TOPIC}-{partition}",
        group=group,
    )


@dataclass(frozen=True, slots=True)
class _Pending:
    commit: Commit
    producer_epoch: int


class _Committed:
    """The committed offsets, one row per key id (``_KeyIds``): the commit record's fields,
    whether the key has one, the producer whose transaction committed it (-1: none) and its
    metadata."""

    def __init__(self) -> None:
        self.table = GrowingColumns(
            {
                **FIELDS,
                "present": (np.bool_, False),
                "producer_id": (np.int64, -1),
                "metadata": (object, ""),
            }
        )

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        return self.table["present"]

    def grow(self, size: int) -> None:
        self.table.reserve(size)

    def scatter(
        self,
        ids: npt.NDArray[np.int32],
        columns: CommitColumns,
        rows: npt.NDArray[np.intp] | None = None,
    ) -> None:
        """Rows of ``columns`` (all of them when ``rows`` is None) applied to keys ``ids``
        (one row per key): a commit replaces the key's offset, a tombstone removes it."""
        table = self.table
        tombstone = columns.tombstone if rows is None else columns.tombstone[rows]
        table["present"][ids] = ~tombstone
        chosen: npt.NDArray[np.intp] | slice
        if rows is None and not tombstone.any():  # every row a commit: no gathering
            sets, chosen = ids, slice(None)
        else:
            kept = np.flatnonzero(~tombstone)
            sets, chosen = ids[kept], kept if rows is None else rows[kept]
        for name in FIELDS:
            table[name][sets] = columns.values[name][chosen]
        table["producer_id"][sets] = -1
        table["metadata"][sets] = columns.metadata[chosen]

    def set(self, kid: int, commit: Commit, producer_id: int) -> None:
        table = self.table
        table["present"][kid] = True
        for name, value in zip(FIELDS, commit.values, strict=True):
            table[name][kid] = value
        table["producer_id"][kid] = producer_id
        table["metadata"][kid] = commit.metadata


@dataclass(frozen=True, slots=True)
class _SortedCommits:
    """The rows of ``_Committed`` that hold an offset (``present``), sorted by group, topic and
    partition: each row's topic and partition, and each group's block of rows (``starts`` to
    ``ends``, its name in ``groups``)."""

    present: npt.NDArray[np.intp]
    topics: list[str]
    partitions: npt.NDArray[np.int64]
    starts: npt.NDArray[np.intp]
    ends: npt.NDArray[np.intp]
    groups: list[str]

    def offsets(self, committed: _Committed) -> dict[str, tuple[CommittedOffset, ...]]:
        """Each group's committed offsets, as the report's objects."""
        rows = self.present
        made = committed_offsets(
            self.topics,
            self.partitions.tolist(),
            committed.table["metadata"][rows].tolist(),
            {name: committed.table[name][rows] for name in FIELDS},
            committed.table["producer_id"][rows],
        )
        return {
            group: tuple(made[start:end])
            for group, start, end in zip(
                self.groups, self.starts.tolist(), self.ends.tolist(), strict=True
            )
        }

    def table(self, committed: _Committed, position: dict[str, int]) -> CommittedTable:
        """The committed offsets as columns, each row's group given by its ``position`` in the
        groups' order."""
        rows = self.present
        blocks = np.array([position[g] for g in self.groups], dtype=np.intp)
        return CommittedTable(
            group=np.repeat(blocks, self.ends - self.starts),
            topic=self.topics,
            partition=self.partitions,
            metadata=committed.table["metadata"][rows].tolist(),
            values={name: committed.table[name][rows] for name in FIELDS},
            producer_id=committed.table["producer_id"][rows],
        )


@dataclass
class _KeyIds:
    """(group, topic, partition) -> dense key id, through the C interning table."""

    table: _native.KeyTable = field(default_factory=_native.KeyTable)
    strings: Interner = field(default_factory=Interner)
    #: by key id: its group's and topic's string ids and its partition
    keys: GrowingColumns = field(
        default_factory=lambda: GrowingColumns(
            {"group": (np.int32, 0), "topic": (np.int32, 0), "partition": (np.int32, 0)}
        )
    )

    @property
    def names(self) -> list[str]:
        return self.strings.names

    def __len__(self) -> int:
        return len(self.table)

    def string_ids(self, names: tuple[str, ...]) -> npt.NDArray[np.int32]:
        return self.strings.ids(names)

    def ids(self, columns: CommitColumns) -> npt.NDArray[np.int32]:
        strings = self.string_ids(columns.names)
        packed = np.zeros((len(columns), 4), dtype=np.int32)
        packed[:, 0] = strings[columns.group]
        packed[:, 1] = strings[columns.topic]
        packed[:, 2] = columns.partition
        return self._intern(packed)

    def id_of(self, key: tuple[str, str, int]) -> int:
        group, topic = self.string_ids((key[0], key[1])).tolist()
        packed = np.array([[group, topic, key[2], 0]], dtype=np.int32)
        return int(self._intern(packed)[0])

    def _intern(self, packed: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        ids = np.empty(len(packed), dtype=np.int32)
        before = len(self.table)
        count = self.table.ids(np.ascontiguousarray(packed), ids)
        if count > before:
            self.keys.reserve(count)
            new = np.flatnonzero(ids >= before)  # a key's rows all hold the same triple
            for column, name in enumerate(("group", "topic", "partition")):
                self.keys[name][ids[new]] = packed[new, column]
        return ids


@dataclass
class GroupsFold:
    """The loader's state for one partition while its segments are applied in offset order.

    ``partition`` is the ``__consumer_offsets`` partition number, ``partitions_count`` the
    topic's partition count (for ``expected_partition``)."""

    rules: LoaderRules
    partition: int
    partitions_count: int
    records: int = 0
    log_end_offset: int = 0
    _keys: _KeyIds = field(default_factory=_KeyIds)
    _committed: _Committed = field(default_factory=lambda: _Committed())
    _pending: dict[int, dict[int, _Pending]] = field(default_factory=dict)
    _metadata: dict[str, tuple[int, RecordValue]] = field(default_factory=dict)
    _consumer_groups: dict[str, ConsumerGroupReplay] = field(default_factory=dict)
    _removals: dict[str, int] = field(default_factory=dict)
    _unknown: Counter[int] = field(default_factory=Counter)
    _findings: list[Finding] = field(default_factory=list)
    _noted: set[tuple[str, str]] = field(default_factory=set)
    _problems: list[DecodeError] = field(default_factory=list)
    _record_problems: list[DecodeError] = field(default_factory=list)

    def add(self, delta: GroupsDelta) -> None:
        """Apply one segment's delta (segments in offset order)."""
        self.records += delta.records
        self.log_end_offset = max(self.log_end_offset, delta.log_end_offset)
        self._unknown.update(delta.unknown_record_types)
        self._problems.extend(delta.problems)
        self._record_problems.extend(delta.record_problems)
        self._findings_of(delta.notes)
        for group, (offset, value) in delta.metadata.items():
            if value is None:
                self._metadata.pop(group, None)
            else:
                self._metadata[group] = (offset, value)
        for group, offset in delta.removals.items():
            self._removals[group] = max(self._removals.get(group, -1), offset)
        for key, value, offset in delta.consumer_group_records:
            group = str(key.group)
            replay = self._consumer_groups.setdefault(group, ConsumerGroupReplay())
            replay.apply(key, value, offset)
            if not replay.exists:
                self._removals[group] = max(self._removals.get(group, -1), offset)
        self._offsets(delta)

    # -- offsets ---------------------------------------------------------------------------

    def _offsets(self, delta: GroupsDelta) -> None:
        commits = delta.commits
        ids = self._keys.ids(commits)
        txn_ids = {self._keys.id_of(t.key): t for t in delta.transactional}
        self._committed.grow(len(self._keys))
        touched = set(txn_ids) | {kid for pending in self._pending.values() for kid in pending}
        in_sequence = (
            np.isin(ids, np.fromiter(touched, dtype=np.int32, count=len(touched)))
            if touched
            else np.zeros(len(ids), dtype=np.bool_)
        )
        if not touched:
            self._committed.scatter(ids, commits)
        else:
            plain = np.flatnonzero(~in_sequence)
            self._committed.scatter(ids[plain], commits, plain)
        if not (touched or delta.controls):
            return
        # keys with transactional commits pending: every record in offset order
        sequenced = np.flatnonzero(in_sequence).tolist()
        events = [(int(commits.log_offset[row]), 0, i) for i, row in enumerate(sequenced)]
        events += [(t.log_offset, 1, i) for i, t in enumerate(delta.transactional)]
        events += [(m.log_offset, 2, i) for i, m in enumerate(delta.controls)]
        events.sort()
        for _, kind, i in events:
            if kind == 0:
                self._plain(int(ids[sequenced[i]]), commits, sequenced[i])
            elif kind == 1:
                self._transactional(delta.transactional[i])
            else:
                self._marker(delta.controls[i])

    def _plain(self, kid: int, columns: CommitColumns, row: int) -> None:
        if columns.tombstone[row]:
            self._committed.present[kid] = False
            if self.rules.new_coordinator:  # rule 7: and every open transaction's pending one
                for producer_offsets in self._pending.values():
                    producer_offsets.pop(kid, None)
            return
        self._committed.scatter(np.array([kid], dtype=np.int32), columns, np.array([row]))

    def _transactional(self, t: TransactionalCommit) -> None:
        kid = self._keys.id_of(t.key)
        if t.commit is None:
            if self.rules.new_coordinator:
                self._committed.present[kid] = False
                for producer_offsets in self._pending.values():
                    producer_offsets.pop(kid, None)
            else:
                self._pending.setdefault(t.producer_id, {}).pop(kid, None)
            return
        self._pending.setdefault(t.producer_id, {})[kid] = _Pending(t.commit, t.producer_epoch)

    def _marker(self, marker: Marker) -> None:
        pending = self._pending.pop(marker.producer_id, {})
        if not marker.commit:
            return
        committed = self._committed
        for kid, entry in pending.items():
            commit = entry.commit
            if not committed.present[kid] or committed.table["order"][kid] < commit.order:
                committed.set(kid, commit, marker.producer_id)

    # -- findings ----------------------------------------------------------------------------

    def _findings_of(self, notes: tuple[Note, ...]) -> None:
        for note in sorted(notes, key=lambda n: n.position):
            if (note.kind, note.once_per) in self._noted:
                continue
            self._noted.add((note.kind, note.once_per))
            self._findings.append(
                Finding(
                    note.kind,
                    Severity.CRITICAL,
                    note.detail,
                    file=note.file,
                    position=note.position,
                    partition=f"__consumer_offsets-{self.partition}",
                    group=note.group,
                )
            )

    # -- the result --------------------------------------------------------------------------

    def result(self, listing: Listing = Listing.OFFSETS) -> PartitionGroups:
        """The groups as the loader concludes them at the end of the replayed records, listed
        as ``listing`` says (with :attr:`Listing.OFFSET_COLUMNS`, their committed offsets are the
        result's ``committed`` columns and each group's ``offsets`` is empty; with
        :attr:`Listing.NONE`, no group is listed and the misplaced ones are findings)."""
        pending: dict[str, list[PendingTransactionalOffset]] = {}
        findings = list(self._findings)
        for producer_id, producer_offsets in sorted(self._pending.items()):
            names_of: set[str] = set()
            first = None
            for entry in producer_offsets.values():
                commit = entry.commit
                group = commit.key[0]
                names_of.add(group)
                pending.setdefault(group, []).append(
                    PendingTransactionalOffset(
                        producer_id, entry.producer_epoch, _committed_offset(commit, producer_id)
                    )
                )
                first = commit.log_offset if first is None else min(first, commit.log_offset)
            if producer_offsets:
                sorted_names = sorted(names_of)
                findings.append(
                    Finding(
                        FindingKind.OPEN_TRANSACTION,
                        Severity.INFO,
                        f"producer {producer_id} has {len(producer_offsets)} transactional offset"
                        f" commit(s) for {', '.join(map(repr, sorted_names))} since log offset"
                        f" {first}"
                        " and no COMMIT/ABORT marker by the end of the log: the loader keeps"
                        " them pending (not visible to OffsetFetch), and the cleaner cannot"
                        " compact past the first of them while the transaction stays open",
                        partition=f"__consumer_offsets-{self.partition}",
                        group=sorted_names[0] if len(sorted_names) == 1 else None,
                    )
                )
        if listing is Listing.NONE:
            names = self._committed_group_names() | self._uncommitted_group_names(pending)
            ordered = sorted(names)
            findings += [
                misplaced_finding(name, self.partition, where, self.partitions_count)
                for name, where in zip(ordered, self._expected(ordered), strict=True)
                if where != self.partition
            ]
            return self._partition_groups((), findings)
        commits = self._sorted_commits()
        committed_groups = set(commits.groups) if commits is not None else set()
        ordered = sorted(committed_groups | self._uncommitted_group_names(pending))
        expected = self._expected(ordered)
        offsets = (
            commits.offsets(self._committed)
            if commits is not None and listing is Listing.OFFSETS
            else {}
        )
        groups = tuple(
            self._group(
                name,
                where,
                offsets.get(name, ()),
                pending.get(name, []),
                committed=name in committed_groups,
            )
            for name, where in zip(ordered, expected, strict=True)
        )
        table = (
            commits.table(self._committed, {name: i for i, name in enumerate(ordered)})
            if commits is not None and listing is Listing.OFFSET_COLUMNS
            else None
        )
        return self._partition_groups(groups, findings, table)

    def _partition_groups(
        self,
        groups: tuple[GroupState, ...],
        findings: list[Finding],
        committed: CommittedTable | None = None,
    ) -> PartitionGroups:
        return PartitionGroups(
            partition=self.partition,
            groups=groups,
            records=self.records,
            log_end_offset=self.log_end_offset,
            unknown_record_types=dict(sorted(self._unknown.items())),
            findings=tuple(findings),
            problems=tuple(self._problems),
            record_problems=tuple(self._record_problems),
            committed=committed,
        )

    def _expected(self, ordered: list[str]) -> list[int]:
        """``partitionFor`` of each of ``ordered``."""
        return coordinator_partitions(ordered, self.partitions_count).tolist() if ordered else []

    def _uncommitted_group_names(
        self, pending: dict[str, list[PendingTransactionalOffset]]
    ) -> set[str]:
        """The groups known other than by a committed offset: pending transactional offsets,
        metadata, removals, the new coordinator's groups."""
        return (
            set(pending)
            | set(self._metadata)
            | set(self._removals)
            | {g for g, c in self._consumer_groups.items() if c.exists}
        )

    def _committed_group_names(self) -> set[str]:
        """The groups with a committed offset, without sorting their keys (:attr:`Listing.NONE`)."""
        keys = self._keys
        present = np.flatnonzero(self._committed.present[: len(keys)])
        names = keys.names
        held = np.zeros(len(names), dtype=np.bool_)
        held[keys.keys["group"][present]] = True
        return {names[i] for i in np.flatnonzero(held).tolist()}

    def _sorted_commits(self) -> _SortedCommits | None:
        """The keys with a committed offset, sorted by (group, topic, partition) with numpy:
        ``None`` when there are none."""
        c = self._committed
        keys = self._keys
        present = np.flatnonzero(c.present[: len(keys)])
        if not len(present):
            return None
        names = keys.names
        triples = np.stack(
            [keys.keys[name][present] for name in ("group", "topic", "partition")], axis=1
        ).astype(np.int64)
        # each string's rank in sorted order, so that keys sort by (group, topic, partition)
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        order = np.lexsort((triples[:, 2], rank[triples[:, 1]], rank[triples[:, 0]]))
        present, triples = present[order], triples[order]
        groups = triples[:, 0]
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
        ends = np.r_[starts[1:], len(groups)]
        text = np.array(names, dtype=object)
        return _SortedCommits(
            present,
            text[triples[:, 1]].tolist(),
            triples[:, 2],
            starts,
            ends,
            [names[int(g)] for g in groups[starts].tolist()],
        )

    def _group(
        self,
        name: str,
        expected_partition: int,
        held: tuple[CommittedOffset, ...],
        pending: list[PendingTransactionalOffset],
        *,
        committed: bool,
    ) -> GroupState:
        """``held``: the group's committed offsets, sorted by topic and partition (empty when
        they are kept as columns); ``committed``: whether it has any. ``expected_partition`` is
        ``partitionFor``'s. Each group's state is built once (a frozen dataclass takes 3 µs to
        build, and a big partition holds hundreds of thousands of groups)."""
        waiting = tuple(
            sorted(pending, key=lambda p: (p.producer_id, p.offset.topic, p.offset.partition))
        )
        consumer = self._consumer_groups.get(name)
        if consumer is not None and consumer.exists:
            return GroupState(
                name,
                self.partition,
                expected_partition,
                consumer.state(),
                group_type="consumer",
                protocol_type="consumer",
                generation=consumer.epoch,
                members=consumer.member_models(),
                offsets=held,
                pending_transactional_offsets=waiting,
                metadata_log_offset=consumer.metadata_log_offset,
            )
        metadata = self._metadata.get(name)
        if metadata is not None:
            log_offset, value = metadata
            base = GroupState(
                name,
                self.partition,
                expected_partition,
                GroupStateName.DEAD,
                offsets=held,
                pending_transactional_offsets=waiting,
            )
            return classic_group(base, value, log_offset, self.rules)
        if committed or waiting:
            return GroupState(
                name,
                self.partition,
                expected_partition,
                GroupStateName.EMPTY_NO_METADATA
                if self.rules.empty_state
                else GroupStateName.DEAD_NO_METADATA,
                offsets=held,
                pending_transactional_offsets=waiting,
            )
        return GroupState(
            name,
            self.partition,
            expected_partition,
            GroupStateName.DEAD,
            removed_at_log_offset=self._removals.get(name),
        )


def _committed_offset(commit: Commit, producer_id: int) -> CommittedOffset:
    (offset,) = committed_offsets(
        [commit.key[1]],
        [commit.key[2]],
        [commit.metadata],
        columns_of([commit]),
        np.array([producer_id], dtype=np.int64),
    )
    return offset
