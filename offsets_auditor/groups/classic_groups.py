"""A classic group's metadata record (GroupMetadataValue v0-v4) as the loader reads it.

State (rule 5 in :mod:`offsets_auditor.groups.rules`): A:0.10.1.0+ ``readGroupMessageValue``
``if (members.isEmpty) Empty else Stable``; A:0.9.0.1/A:0.10.0.1 every loaded group ``Stable``.
A v0 member has no rebalance timeout: the loader uses its session timeout (A:2.3.0
``readGroupMessageValue``). ``current_state_timestamp`` is reported as written (2.3.0's reader
only keeps it for v2; -1 means none).
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from offsets_auditor.groups.model import GroupState, GroupStateName, Member, TopicPartition
from offsets_auditor.groups.rules import LoaderRules
from offsets_auditor.schemas import RecordValue


def classic_group(
    base: GroupState, value: RecordValue, log_offset: int, rules: LoaderRules
) -> GroupState:
    """``base`` with what the group metadata record ``value`` (at ``log_offset``) says."""
    fields = value.fields
    raw_members = cast(list[dict[str, object]], fields.get("members") or [])
    if rules.empty_state:
        state = GroupStateName.STABLE if raw_members else GroupStateName.EMPTY
    else:
        state = GroupStateName.STABLE
    timestamp = cast(int | None, fields.get("current_state_timestamp"))
    protocol_type = cast(str, fields["protocol_type"])
    return replace(
        base,
        state=state,
        protocol_type=protocol_type or None,
        protocol=cast(str | None, fields.get("protocol")),
        generation=cast(int, fields["generation"]),
        leader=cast(str | None, fields.get("leader")),
        current_state_timestamp=None if timestamp is None or timestamp < 0 else timestamp,
        members=tuple(classic_member(m) for m in raw_members),
        metadata_log_offset=log_offset,
    )


def classic_member(member: dict[str, object]) -> Member:
    assignment = member.get("assignment")
    partitions = None
    if isinstance(assignment, dict):
        partitions = tuple(
            TopicPartition(cast(str, entry["topic"]), partition)
            for entry in cast(list[dict[str, object]], assignment.get("assigned_partitions") or [])
            for partition in cast(list[int], entry["partitions"])
        )
    subscription = member.get("subscription")
    topics = None
    if isinstance(subscription, dict):
        topics = tuple(cast(list[str], subscription.get("topics") or []))
    session = cast(int, member["session_timeout"])
    return Member(
        member_id=cast(str, member["member_id"]),
        client_id=cast(str, member["client_id"]),
        client_host=cast(str, member["client_host"]),
        group_instance_id=cast(str | None, member.get("group_instance_id")),
        session_timeout_ms=session,
        # v0 has no rebalance timeout: the loader uses the session timeout (2.3.0)
        rebalance_timeout_ms=cast(int, member.get("rebalance_timeout", session)),
        assignment=partitions,
        subscribed_topics=topics,
    )
