"""The new coordinator's consumer groups (KIP-848, record types 3-8 and 16), replayed.

A:3.8.0 ``group-coordinator/.../GroupMetadataManager.java`` ``replay(...)`` per record type;
tombstones as in docs/kafka-internals.md §2.7. State as A:3.8.0
``consumer/ConsumerGroup.maybeUpdateGroupState``: no members -> Empty; group epoch above the
target assignment epoch -> Assigning; a member not reconciled to the target assignment epoch
(``ConsumerGroupMember.isReconciledTo``: ``state == STABLE && memberEpoch == target``; the 3.7
layout has no member state) -> Reconciling; else Stable. Share and streams groups are counted
but not modelled (their records only ever describe groups that commit no offsets here, or
are streams groups whose offsets are ordinary offset commits, replayed as such).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from offsets_auditor.groups.model import GroupStateName, Member, TopicPartition
from offsets_auditor.schemas import RecordKey, RecordValue

#: ``MemberState.STABLE`` (A:3.8.0 ``consumer/MemberState.java``).
MEMBER_STATE_STABLE = 0

CONSUMER_GROUP_TYPES = frozenset(
    {
        "consumer_group_metadata",
        "consumer_group_partition_metadata",
        "consumer_group_member_metadata",
        "consumer_group_target_assignment_metadata",
        "consumer_group_target_assignment_member",
        "consumer_group_current_member_assignment",
        "consumer_group_regular_expression",
    }
)


@dataclass(slots=True)
class _MemberRecords:
    metadata: RecordValue | None = None
    assignment: RecordValue | None = None


@dataclass(slots=True)
class ConsumerGroupReplay:
    """The records of one consumer group seen so far (mutable while replaying one partition)."""

    epoch: int | None = None
    metadata_log_offset: int | None = None
    target_assignment_epoch: int = -1
    topic_names: dict[str, str] = field(default_factory=dict)
    members: dict[str, _MemberRecords] = field(default_factory=dict)

    @property
    def exists(self) -> bool:
        return self.epoch is not None or bool(self.members)

    def apply(self, key: RecordKey, value: RecordValue | None, log_offset: int) -> None:
        member_id = cast(str | None, key.fields.get("member_id"))
        fields = value.fields if value is not None else {}
        if key.key_type == "consumer_group_metadata":
            if value is None:
                self.epoch = None
                self.metadata_log_offset = None
                self.members.clear()
                self.target_assignment_epoch = -1
            else:
                self.epoch = cast(int, fields["epoch"])
                self.metadata_log_offset = log_offset
        elif key.key_type == "consumer_group_partition_metadata":
            self.topic_names = {}
            for topic in cast(list[dict[str, object]], fields.get("topics") or []):
                self.topic_names[cast(str, topic["topic_id"])] = cast(str, topic["topic_name"])
        elif key.key_type == "consumer_group_target_assignment_metadata":
            self.target_assignment_epoch = (
                -1 if value is None else cast(int, fields["assignment_epoch"])
            )
        elif member_id is not None and key.key_type in (
            "consumer_group_member_metadata",
            "consumer_group_current_member_assignment",
        ):
            records = self.members.setdefault(member_id, _MemberRecords())
            if key.key_type == "consumer_group_member_metadata":
                records.metadata = value
            else:
                records.assignment = value
            if records.metadata is None and records.assignment is None:
                del self.members[member_id]
        # target assignment members (7) and resolved regexes (16) do not change the state

    def state(self) -> GroupStateName:
        members = [m for m in self.members.values() if m.metadata is not None]
        if not members:
            return GroupStateName.EMPTY
        if (self.epoch or 0) > self.target_assignment_epoch:
            return GroupStateName.ASSIGNING
        for member in members:
            if member.assignment is None:
                return GroupStateName.RECONCILING
            fields = member.assignment.fields
            member_state = cast(int, fields.get("state", MEMBER_STATE_STABLE))
            if (
                member_state != MEMBER_STATE_STABLE
                or fields.get("member_epoch") != self.target_assignment_epoch
            ):
                return GroupStateName.RECONCILING
        return GroupStateName.STABLE

    def member_models(self) -> tuple[Member, ...]:
        out = []
        for member_id, records in sorted(self.members.items()):
            if records.metadata is None:
                continue
            fields = records.metadata.fields
            classic = cast(dict[str, object] | None, fields.get("classic_member_metadata"))
            assignment = None
            member_epoch = None
            if records.assignment is not None:
                member_epoch = cast(int, records.assignment.fields.get("member_epoch"))
                assignment = tuple(
                    TopicPartition(self.topic_names.get(topic_id, topic_id), partition)
                    for entry in cast(
                        list[dict[str, object]],
                        records.assignment.fields.get("assigned_partitions") or [],
                    )
                    for topic_id in (cast(str, entry["topic_id"]),)
                    for partition in cast(list[int], entry["partitions"])
                )
            out.append(
                Member(
                    member_id=member_id,
                    client_id=cast(str, fields["client_id"]),
                    client_host=cast(str, fields["client_host"]),
                    group_instance_id=cast(str | None, fields.get("instance_id")),
                    session_timeout_ms=None
                    if classic is None
                    else cast(int, classic.get("session_timeout_ms")),
                    rebalance_timeout_ms=cast(int | None, fields.get("rebalance_timeout_ms")),
                    assignment=assignment,
                    subscribed_topics=tuple(
                        cast(list[str], fields.get("subscribed_topic_names") or [])
                    ),
                    member_epoch=member_epoch,
                )
            )
        return tuple(out)
