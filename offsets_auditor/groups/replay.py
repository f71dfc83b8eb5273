"""Replay one ``__consumer_offsets`` partition's records the way the coordinator loads them.

Feed :class:`PartitionReplay` every item :func:`offsets_auditor.decode.decode_segment` yields
for the partition's segments, in offset order, then call :meth:`PartitionReplay.result`. The
rules per broker version are :class:`offsets_auditor.groups.rules.LoaderRules` (their module
docstring cites the Kafka source for each). Nothing here reads files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import cast

from offsets_auditor.coordinator import coordinator_partition
from offsets_auditor.decode import DecodedRecord
from offsets_auditor.errors import DecodeError, TruncatedError
from offsets_auditor.findings import Finding, Severity
from offsets_auditor.groups.classic_groups import classic_group
from offsets_auditor.groups.consumer_groups import CONSUMER_GROUP_TYPES, ConsumerGroupReplay
from offsets_auditor.groups.model import (
    CommittedOffset,
    GroupState,
    GroupStateName,
    PartitionGroups,
    PendingTransactionalOffset,
)
from offsets_auditor.groups.rules import CommitOffsetOf, LoaderRules
from offsets_auditor.records.control import ControlRecord
from offsets_auditor.records.model import NO_PRODUCER_ID
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue

#: ``OffsetCommitRequest.DEFAULT_TIMESTAMP`` (an absent expire timestamp).
DEFAULT_TIMESTAMP = -1

_Key = tuple[str, str, int]  # group, topic, partition


@dataclass(frozen=True, slots=True)
class _Commit:
    offset: CommittedOffset
    #: the offset ``olderThan`` compares (rules 4 and 7)
    order: int
    producer_epoch: int = -1


@dataclass(frozen=True, slots=True)
class _Metadata:
    value: RecordValue
    log_offset: int


@dataclass(slots=True)
class PartitionReplay:
    """The loader's state for one partition while its records are replayed.

    ``partition`` is the ``__consumer_offsets`` partition number, ``partitions_count`` the
    topic's partition count (for ``expected_partition``), ``end_offset`` an optional bound:
    only records below it are replayed (the state as of that log offset).
    """

    rules: LoaderRules
    partition: int
    partitions_count: int
    end_offset: int | None = None
    records: int = 0
    log_end_offset: int = 0
    committed: dict[_Key, _Commit] = field(default_factory=dict)
    pending: dict[int, dict[_Key, _Commit]] = field(default_factory=dict)
    metadata: dict[str, _Metadata] = field(default_factory=dict)
    consumer_groups: dict[str, ConsumerGroupReplay] = field(default_factory=dict)
    last_removal: dict[str, int] = field(default_factory=dict)
    unknown: Counter[int] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    _batch: tuple[str | None, int] | None = None
    _batch_first_offset: int = -1
    _noted: set[tuple[str, str]] = field(default_factory=set)

    def feed(self, items: Iterable[DecodedRecord | DecodeError]) -> None:
        for item in items:
            if isinstance(item, DecodeError):
                self._decode_problem(item)
            else:
                self.apply(item)

    def apply(self, item: DecodedRecord) -> None:
        """Replay one decoded record (data or control)."""
        offset = item.record.offset
        if self.end_offset is not None and offset >= self.end_offset:
            return
        self.log_end_offset = max(self.log_end_offset, offset + 1)
        batch_id = (item.file, item.batch.position)
        if batch_id != self._batch:
            self._batch = batch_id
            self._batch_first_offset = offset
        if item.error is not None:
            return  # reported by feed() as a DecodeError
        if item.batch.is_control:
            if item.control is not None and self.rules.transactions:
                self._control(item, item.control)
            return
        key = item.key
        if key is None:
            return
        self.records += 1
        if key.key_type == "offset_commit":
            self._offset_commit(item, key)
        elif key.key_type == "group_metadata":
            self._group_metadata(item, key)
        elif self.rules.new_coordinator and key.key_type in CONSUMER_GROUP_TYPES:
            readable, value = self._known_value(item, key)
            if readable and key.group is not None:
                group = self.consumer_groups.setdefault(key.group, ConsumerGroupReplay())
                group.apply(key, value, offset)
                if not group.exists:
                    self.last_removal[key.group] = offset
        else:
            self._unknown(item, key)

    # -- offsets ---------------------------------------------------------------------------

    def _offset_commit(self, item: DecodedRecord, key: RecordKey) -> None:
        group, topic, partition = cast(str, key.group), cast(str, key.topic), key.partition
        k: _Key = (group, topic, cast(int, partition))
        header = item.batch
        transactional = (
            header.producer_id != NO_PRODUCER_ID
            if self.rules.new_coordinator
            else (self.rules.transactions and header.is_transactional)
        )
        readable, value = self._known_value(item, key)
        if not readable:
            return
        if value is None:
            self.last_removal[group] = item.record.offset
            if self.rules.new_coordinator:
                self.committed.pop(k, None)
                for producer_offsets in self.pending.values():
                    producer_offsets.pop(k, None)
            elif transactional:
                self.pending.setdefault(header.producer_id, {}).pop(k, None)
            else:
                self.committed.pop(k, None)
            return
        commit = _Commit(
            _committed_offset(k, value, item, header.producer_id if transactional else None),
            self._order(item),
            header.producer_epoch,
        )
        if transactional:
            self.pending.setdefault(header.producer_id, {})[k] = commit
        else:
            self.committed[k] = commit

    def _order(self, item: DecodedRecord) -> int:
        if self.rules.commit_offset_of is CommitOffsetOf.RECORD:
            return item.record.offset
        if self.rules.commit_offset_of is CommitOffsetOf.BATCH_BASE_OFFSET:
            return item.batch.base_offset
        return self._batch_first_offset

    def _control(self, item: DecodedRecord, control: ControlRecord) -> None:
        producer_id = item.batch.producer_id
        if self.rules.new_coordinator:
            if control.type not in ("commit", "abort"):
                return
        elif item.record.offset != self._batch_first_offset:
            return  # the classic loader reads only the first record of a control batch
        pending = self.pending.pop(producer_id, {})
        if control.type != "commit":
            return
        for k, commit in pending.items():
            existing = self.committed.get(k)
            if existing is None or existing.order < commit.order:
                self.committed[k] = commit

    # -- group metadata --------------------------------------------------------------------

    def _group_metadata(self, item: DecodedRecord, key: RecordKey) -> None:
        group = cast(str, key.group)
        readable, value = self._known_value(item, key)
        if not readable:
            return
        if value is None:
            self.metadata.pop(group, None)
            self.last_removal[group] = item.record.offset
        else:
            self.metadata[group] = _Metadata(value, item.record.offset)

    # -- problems ----------------------------------------------------------------------------

    def _known_value(self, item: DecodedRecord, key: RecordKey) -> tuple[bool, RecordValue | None]:
        """Whether the loader can read the record's value, and the value (``None`` for a
        tombstone). An unknown value version is unreadable: every Kafka loader throws there."""
        value = item.value
        if isinstance(value, UnknownValue):
            self._note(
                "unknown-value-version",
                f"{key.key_type}:{value.version}",
                Severity.CRITICAL,
                f"record at offset {item.record.offset} of group {key.group!r}: {value.reason};"
                f" {self.rules.label}'s loader throws there (e.g. 2.3.0 'Unknown offset message"
                " version') and loads nothing more from this partition; the record is skipped"
                " here",
                item,
                group=key.group,
            )
            return False, None
        return True, value

    def _unknown(self, item: DecodedRecord, key: RecordKey) -> None:
        self.unknown[key.version] += 1
        if self.rules.unknown_key_fails_load:
            self._note(
                "unknown-record-type",
                str(key.version),
                Severity.CRITICAL,
                f"record at offset {item.record.offset} has key version {key.version}, unknown to"
                f" {self.rules.label}: its loader throws 'Unknown group metadata message version:"
                f" {key.version}' and loads nothing more from this partition (ignored with a"
                " warning from 3.5.0); skipped here",
                item,
                group=key.group,
            )

    def _note(
        self,
        kind: str,
        once_per: str,
        severity: Severity,
        detail: str,
        item: DecodedRecord,
        group: str | None = None,
    ) -> None:
        if (kind, once_per) in self._noted:
            return
        self._noted.add((kind, once_per))
        self.findings.append(
            Finding(
                kind,
                severity,
                detail,
                file=item.file,
                position=item.batch.position,
                partition=f"__consumer_offsets-{self.partition}",
                group=group,
            )
        )

    def _decode_problem(self, error: DecodeError) -> None:
        truncated = isinstance(error, TruncatedError)
        self.findings.append(
            Finding(
                "truncated-tail" if truncated else "corrupt-record",
                Severity.WARNING if truncated else Severity.CRITICAL,
                f"{error.message}; the records it held are not replayed",
                file=error.file,
                position=error.position,
                field=error.field,
                partition=f"__consumer_offsets-{self.partition}",
            )
        )

    # -- the result --------------------------------------------------------------------------

    def result(self) -> PartitionGroups:
        """The groups as the loader concludes them at the end of the replayed records."""
        offsets: dict[str, list[CommittedOffset]] = {}
        for (group, _, _), commit in self.committed.items():
            offsets.setdefault(group, []).append(commit.offset)
        pending: dict[str, list[PendingTransactionalOffset]] = {}
        findings = list(self.findings)
        for producer_id, producer_offsets in sorted(self.pending.items()):
            for (group, _, _), commit in producer_offsets.items():
                pending.setdefault(group, []).append(
                    PendingTransactionalOffset(producer_id, commit.producer_epoch, commit.offset)
                )
            if producer_offsets:
                first = min(c.offset.log_offset for c in producer_offsets.values())
                names_of = sorted({g for g, _, _ in producer_offsets})
                findings.append(
                    Finding(
                        "open-transaction",
                        Severity.INFO,
                        f"producer {producer_id} has {len(producer_offsets)} transactional offset"
                        f" commit(s) for {', '.join(map(repr, names_of))} since log offset {first}"
                        " and no COMMIT/ABORT marker by the end of the log: the loader keeps"
                        " them pending (not visible to OffsetFetch), and the cleaner cannot"
                        " compact past the first of them while the transaction stays open",
                        partition=f"__consumer_offsets-{self.partition}",
                        group=names_of[0] if len(names_of) == 1 else None,
                    )
                )
        names = (
            set(offsets)
            | set(pending)
            | set(self.metadata)
            | set(self.last_removal)
            | {g for g, c in self.consumer_groups.items() if c.exists}
        )
        groups = tuple(
            self._group(name, offsets.get(name, []), pending.get(name, []))
            for name in sorted(names)
        )
        return PartitionGroups(
            partition=self.partition,
            groups=groups,
            records=self.records,
            log_end_offset=self.log_end_offset,
            unknown_record_types=dict(sorted(self.unknown.items())),
            findings=tuple(findings),
        )

    def _group(
        self, name: str, offsets: list[CommittedOffset], pending: list[PendingTransactionalOffset]
    ) -> GroupState:
        base = GroupState(
            group=name,
            coordinator_partition=self.partition,
            expected_partition=coordinator_partition(name, self.partitions_count),
            state=GroupStateName.DEAD,
            offsets=tuple(sorted(offsets, key=lambda o: (o.topic, o.partition))),
            pending_transactional_offsets=tuple(
                sorted(pending, key=lambda p: (p.producer_id, p.offset.topic, p.offset.partition))
            ),
        )
        consumer = self.consumer_groups.get(name)
        if consumer is not None and consumer.exists:
            return replace(
                base,
                state=consumer.state(),
                group_type="consumer",
                protocol_type="consumer",
                generation=consumer.epoch,
                members=consumer.member_models(),
                metadata_log_offset=consumer.metadata_log_offset,
            )
        metadata = self.metadata.get(name)
        if metadata is not None:
            return classic_group(base, metadata.value, metadata.log_offset, self.rules)
        if offsets or pending:
            state = (
                GroupStateName.EMPTY_NO_METADATA
                if self.rules.empty_state
                else GroupStateName.DEAD_NO_METADATA
            )
            return replace(base, state=state)
        return replace(base, removed_at_log_offset=self.last_removal.get(name))


def _committed_offset(
    key: _Key, value: RecordValue, item: DecodedRecord, producer_id: int | None
) -> CommittedOffset:
    fields = value.fields
    expire = cast(int | None, fields.get("expire_timestamp"))
    epoch = cast(int | None, fields.get("leader_epoch"))
    return CommittedOffset(
        topic=key[1],
        partition=key[2],
        offset=cast(int, fields["offset"]),
        metadata=cast(str, fields["metadata"]),
        commit_timestamp=cast(int, fields["commit_timestamp"]),
        expire_timestamp=None if expire is None or expire == DEFAULT_TIMESTAMP else expire,
        leader_epoch=None if epoch is None or epoch < 0 else epoch,
        log_offset=item.record.offset,
        value_version=value.version,
        producer_id=producer_id,
    )
