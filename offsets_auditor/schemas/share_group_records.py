"""Share-group (KIP-932) records of the new group coordinator: types 9-15.

Declared field by field from ``group-coordinator/src/main/resources/common/message/`` at A:3.9
(branch head c821449fb7c: types 9-11 only, early access), C:v8.0.0 (AK 4.0: types 9-15),
C:v8.1.0 (AK 4.1: type 9 removed, type 11 gains a non-tagged ``MetadataHash``, type 15 gains
``InitializingTopics`` in front), unchanged in layout through C:v8.3.1 except tag 0
``AssignmentTimestamp`` of type 12 (C:v8.3.0, KIP-1263). Those JSON files say "KIP-932 is in
development. This schema is subject to non-backwards-compatible changes."; the layouts changed
without a version bump, hence several per type.
"""

from __future__ import annotations

from typing import Final

from offsets_auditor.schemas.consumer_group_records import TOPIC_METADATA, TOPIC_PARTITION
from offsets_auditor.schemas.coordinator_spec import (
    Layout,
    RecordType,
    key_message,
    tagged,
    value_message,
)
from offsets_auditor.schemas.message import (
    ALL,
    INT8,
    INT32,
    INT64,
    STRING,
    UUID,
    ArrayOf,
    Field,
    Struct,
)

_SRC: Final = "group-coordinator/src/main/resources/common/message/"

_TOPIC_PARTITIONS_INFO: Final = Struct(
    "TopicPartitionsInfo",
    (Field("topic_id", UUID), Field("topic_name", STRING), Field("partitions", ArrayOf(INT32))),
)
_TOPIC_INFO: Final = Struct("TopicInfo", (Field("topic_id", UUID), Field("topic_name", STRING)))

# -- 9 ShareGroupPartitionMetadata (3.9 and 4.0 only) ------------------------------------------

SHARE_GROUP_PARTITION_METADATA: Final = RecordType(
    9,
    "share_group_partition_metadata",
    key_message("ShareGroupPartitionMetadataKey", "group_id", source=f"A:3.9 {_SRC}"),
    (
        Layout(
            "4.0",
            value_message(
                "ShareGroupPartitionMetadataValue",
                Field("topics", ArrayOf(TOPIC_METADATA)),
                source=f"C:v8.0.0 {_SRC}ShareGroupPartitionMetadataValue.json",
            ),
        ),
        Layout(
            "3.9",
            value_message(
                "ShareGroupPartitionMetadataValue",
                Field("initialized_topics", ArrayOf(_TOPIC_PARTITIONS_INFO)),
                Field("deleting_topics", ArrayOf(_TOPIC_INFO)),
                source=f"A:3.9 {_SRC}ShareGroupPartitionMetadataValue.json",
            ),
        ),
    ),
)

# -- 10 ShareGroupMemberMetadata ---------------------------------------------------------------

SHARE_GROUP_MEMBER_METADATA: Final = RecordType(
    10,
    "share_group_member_metadata",
    key_message("ShareGroupMemberMetadataKey", "group_id", "member_id", source=f"A:3.9 {_SRC}"),
    (
        Layout(
            None,
            value_message(
                "ShareGroupMemberMetadataValue",
                Field("rack_id", STRING, nullable=ALL),
                Field("client_id", STRING),
                Field("client_host", STRING),
                Field("subscribed_topic_names", ArrayOf(STRING)),
                source=f"A:3.9, C:v8.1.0 {_SRC}ShareGroupMemberMetadataValue.json",
            ),
        ),
    ),
)

# -- 11 ShareGroupMetadata ---------------------------------------------------------------------

SHARE_GROUP_METADATA: Final = RecordType(
    11,
    "share_group_metadata",
    key_message("ShareGroupMetadataKey", "group_id", source=f"A:3.9 {_SRC}"),
    (
        Layout(
            "4.1+",
            value_message(
                "ShareGroupMetadataValue",
                Field("epoch", INT32),
                Field("metadata_hash", INT64),
                source=f"C:v8.1.0 {_SRC}ShareGroupMetadataValue.json",
            ),
        ),
        Layout(
            "3.9-4.0",
            value_message(
                "ShareGroupMetadataValue",
                Field("epoch", INT32),
                source=f"A:3.9, C:v8.0.0 {_SRC}ShareGroupMetadataValue.json",
            ),
        ),
    ),
)

# -- 12 ShareGroupTargetAssignmentMetadata -----------------------------------------------------

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: Final = RecordType(
    12,
    "share_group_target_assignment_metadata",
    key_message("ShareGroupTargetAssignmentMetadataKey", "group_id", source=f"C:v8.0.0 {_SRC}"),
    (
        Layout(
            None,
            value_message(
                "ShareGroupTargetAssignmentMetadataValue",
                Field("assignment_epoch", INT32),
                tagged("assignment_timestamp", INT64, 0),  # C:v8.3.0 (KIP-1263)
                source=f"C:v8.0.0, C:v8.3.0 {_SRC}ShareGroupTargetAssignmentMetadataValue.json",
            ),
        ),
    ),
)

# -- 13 ShareGroupTargetAssignmentMember -------------------------------------------------------

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = RecordType(
    13,
    "share_group_target_assignment_member",
    key_message(
        "ShareGroupTargetAssignmentMemberKey", "group_id", "member_id", source=f"C:v8.0.0 {_SRC}"
    ),
    (
        Layout(
            None,
            value_message(
                "ShareGroupTargetAssignmentMemberValue",
                Field("topic_partitions", ArrayOf(TOPIC_PARTITION)),
                source=f"C:v8.0.0 {_SRC}ShareGroupTargetAssignmentMemberValue.json",
            ),
        ),
    ),
)

# -- 14 ShareGroupCurrentMemberAssignment ------------------------------------------------------

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = RecordType(
    14,
    "share_group_current_member_assignment",
    key_message(
        "ShareGroupCurrentMemberAssignmentKey", "group_id", "member_id", source=f"C:v8.0.0 {_SRC}"
    ),
    (
        Layout(
            None,
            value_message(
                "ShareGroupCurrentMemberAssignmentValue",
                Field("member_epoch", INT32),
                Field("previous_member_epoch", INT32),
                Field("state", INT8),
                Field("assigned_partitions", ArrayOf(TOPIC_PARTITION)),
                source=f"C:v8.0.0 {_SRC}ShareGroupCurrentMemberAssignmentValue.json",
            ),
        ),
    ),
)

# -- 15 ShareGroupStatePartitionMetadata -------------------------------------------------------

SHARE_GROUP_STATE_PARTITION_METADATA: Final = RecordType(
    15,
    "share_group_state_partition_metadata",
    key_message("ShareGroupStatePartitionMetadataKey", "group_id", source=f"C:v8.0.0 {_SRC}"),
    (
        Layout(
            "4.1+",
            value_message(
                "ShareGroupStatePartitionMetadataValue",
                Field("initializing_topics", ArrayOf(_TOPIC_PARTITIONS_INFO)),
                Field("initialized_topics", ArrayOf(_TOPIC_PARTITIONS_INFO)),
                Field("deleting_topics", ArrayOf(_TOPIC_INFO)),
                source=f"C:v8.1.0 {_SRC}ShareGroupStatePartitionMetadataValue.json",
            ),
        ),
        Layout(
            "4.0",
            value_message(
                "ShareGroupStatePartitionMetadataValue",
                Field("initialized_topics", ArrayOf(_TOPIC_PARTITIONS_INFO)),
                Field("deleting_topics", ArrayOf(_TOPIC_INFO)),
                source=f"C:v8.0.0 {_SRC}ShareGroupStatePartitionMetadataValue.json",
            ),
        ),
    ),
)

RECORD_TYPES: Final = (
    SHARE_GROUP_PARTITION_METADATA,
    SHARE_GROUP_MEMBER_METADATA,
    SHARE_GROUP_METADATA,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    SHARE_GROUP_STATE_PARTITION_METADATA,
)
