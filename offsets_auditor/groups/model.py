"""What recovering groups from ``__consumer_offsets`` produces: typed, JSON-ready models.

Timestamps are milliseconds since the epoch as the broker wrote them. ``log_offset`` is always
an offset in the ``__consumer_offsets`` partition (where the record sits), never an offset of
the consumed topic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from offsets_auditor.errors import DecodeError
from offsets_auditor.findings import Finding


class GroupStateName(StrEnum):
    """The state the coordinator's loader concludes, in Kafka's names (``GroupState`` of the
    classic coordinator, ``ConsumerGroup.ConsumerGroupState`` of the new one), plus the
    offsets-only case, which Kafka loads as a group without metadata."""

    STABLE = "Stable"
    EMPTY = "Empty"
    DEAD = "Dead"
    #: 0.10.1+: offsets (or pending transactional offsets) but no live group metadata record;
    #: the loader creates the group in state Empty (2.3.0 ``doLoadGroupsAndOffsets``
    #: ``new GroupMetadata(groupId, Empty, time)``).
    EMPTY_NO_METADATA = "Empty (no group metadata)"
    #: 0.9/0.10.0: offsets but no group metadata. These loaders keep the offsets in the offsets
    #: cache and no group object at all; DescribeGroup answers ``Dead``
    #: (0.9.0.1 ``GroupCoordinator.handleDescribeGroup``: ``GroupCoordinator.DeadGroup``).
    DEAD_NO_METADATA = "Dead (no group metadata)"
    #: New coordinator consumer groups (KIP-848), 3.7+.
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int

    def to_json(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition}


class CommittedOffset(NamedTuple):
    """One offset of a group for one topic-partition (a ``NamedTuple``: a big group's recovery
    builds one per topic-partition, and a tuple is built three times faster than a frozen
    dataclass).

    ``expire_timestamp`` exists only in OffsetCommitValue v1 and is ``None`` when absent or
    ``-1`` (``OffsetCommitRequest.DEFAULT_TIMESTAMP``). ``leader_epoch`` is ``None`` when
    absent (v0-v2) or ``-1``. Nothing is ever dropped by time here: the broker's expiry writes
    tombstones, and those are replayed. ``producer_id`` is set for offsets committed by a
    transaction (TxnOffsetCommit)."""

    topic: str
    partition: int
    offset: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None
    leader_epoch: int | None
    log_offset: int
    value_version: int
    producer_id: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "metadata": self.metadata,
            "commit_timestamp": self.commit_timestamp,
            "expire_timestamp": self.expire_timestamp,
            "leader_epoch": self.leader_epoch,
            "log_offset": self.log_offset,
            "value_version": self.value_version,
            "producer_id": self.producer_id,
        }


@dataclass(frozen=True, slots=True)
class PendingTransactionalOffset:
    """A transactional offset commit with no COMMIT/ABORT marker for its producer by the end
    of the log: the loader keeps it pending (not visible to OffsetFetch) until a marker comes."""

    producer_id: int
    producer_epoch: int
    offset: CommittedOffset

    def to_json(self) -> dict[str, object]:
        return {
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            **self.offset.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Member:
    """A group member as its group's latest metadata record describes it.

    Classic groups: ``assignment`` is the decoded ConsumerProtocol assignment (``None`` when
    the protocol type is not ``consumer`` or the bytes do not parse). New-coordinator consumer
    groups: ``assignment`` is the member's current assignment with topic ids resolved to names
    where the group's partition metadata names them (else the topic id), ``member_epoch`` set.
    """

    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None = None
    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None
    assignment: tuple[TopicPartition, ...] | None = None
    subscribed_topics: tuple[str, ...] | None = None
    member_epoch: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "member_id": self.member_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "group_instance_id": self.group_instance_id,
            "session_timeout_ms": self.session_timeout_ms,
            "rebalance_timeout_ms": self.rebalance_timeout_ms,
            "assignment": None
            if self.assignment is None
            else [tp.to_json() for tp in self.assignment],
            "subscribed_topics": None
            if self.subscribed_topics is None
            else list(self.subscribed_topics),
            "member_epoch": self.member_epoch,
        }


@dataclass(frozen=True, slots=True)
class GroupState:
    """One group as the coordinator would load it from its ``__consumer_offsets`` partition.

    ``coordinator_partition`` is the partition whose records were replayed (where the group
    was found); ``expected_partition`` is where ``partitionFor`` sends the group's requests for
    the partition count given (they differ only for misplaced records, or a wrong count).
    ``group_type`` is ``classic`` or ``consumer`` (new coordinator, KIP-848).
    ``metadata_log_offset`` is the log offset of the group metadata record the state comes
    from; ``removed_at_log_offset`` that of the tombstone that removed the group (Dead).
    ``offsets`` are sorted by topic and partition.
    """

    group: str
    coordinator_partition: int
    expected_partition: int
    state: GroupStateName
    group_type: str = "classic"
    protocol_type: str | None = None
    protocol: str | None = None
    generation: int | None = None
    leader: str | None = None
    current_state_timestamp: int | None = None
    members: tuple[Member, ...] = ()
    offsets: tuple[CommittedOffset, ...] = ()
    pending_transactional_offsets: tuple[PendingTransactionalOffset, ...] = ()
    metadata_log_offset: int | None = None
    removed_at_log_offset: int | None = None

    @property
    def has_group_metadata(self) -> bool:
        return self.metadata_log_offset is not None

    def offset_for(self, topic: str, partition: int) -> CommittedOffset | None:
        return next((o for o in self.offsets if (o.topic, o.partition) == (topic, partition)), None)

    def to_json(self) -> dict[str, object]:
        """The audit JSON shape: ``group``, ``coordinator_partition``, ``state``, ``offsets``
        (each with ``topic``, ``partition``, ``offset``, ``metadata``, ``commit_timestamp`` and
        the rest), then everything else."""
        return {
            "group": self.group,
            "coordinator_partition": self.coordinator_partition,
            "state": self.state.value,
            "offsets": [o.to_json() for o in self.offsets],
            "expected_partition": self.expected_partition,
            "group_type": self.group_type,
            "protocol_type": self.protocol_type,
            "protocol": self.protocol,
            "generation": self.generation,
            "leader": self.leader,
            "current_state_timestamp": self.current_state_timestamp,
            "members": [m.to_json() for m in self.members],
            "pending_transactional_offsets": [
                p.to_json() for p in self.pending_transactional_offsets
            ],
            "metadata_log_offset": self.metadata_log_offset,
            "removed_at_log_offset": self.removed_at_log_offset,
        }


@dataclass(frozen=True, slots=True)
class CommittedTable:
    """A replay's committed offsets as columns, one row per :class:`CommittedOffset` in the
    order the groups hold them: by group (``group``: its index in ``PartitionGroups.groups``),
    topic and partition. ``values`` are ``commit_record.FIELDS`` (absent: -1 for
    ``expire_timestamp``, below 0 for ``leader_epoch``); ``producer_id`` is -1 for a commit no
    transaction made. What a big partition's groups hold, without a Python object per offset
    (the scan writes them out as Arrow columns)."""

    group: npt.NDArray[np.intp]
    topic: list[str]
    partition: npt.NDArray[np.int64]
    metadata: list[str]
    values: dict[str, npt.NDArray[Any]]
    producer_id: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.group)


@dataclass(frozen=True, slots=True)
class PartitionGroups:
    """The replay of one ``__consumer_offsets`` partition.

    ``records`` counts the data records replayed, ``log_end_offset`` is the offset after the
    last record replayed (0 for none), ``unknown_record_types`` how many records of
    each key type the loader did not know (skipped), ``findings`` what the real loader would
    have stumbled on (e.g. a pre-3.5 loader failing on an unknown key type); ``problems`` the
    damaged entries the segment walk met and ``record_problems`` the records whose key or value
    is no offsets schema, located (``offsets_auditor.audit.damage`` turns them into findings).
    ``committed``: the groups' committed offsets as columns, when the replay was asked for them
    so (``GroupsFold.result``); each group's ``offsets`` is empty then."""

    partition: int
    groups: tuple[GroupState, ...]
    records: int
    log_end_offset: int = 0
    unknown_record_types: dict[int, int] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    problems: tuple[DecodeError, ...] = ()
    record_problems: tuple[DecodeError, ...] = ()
    committed: CommittedTable | None = field(default=None, compare=False)
