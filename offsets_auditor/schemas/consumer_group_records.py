"""Consumer-group (KIP-848) records of the new group coordinator: types 3-8 and 16.

Declared field by field from ``group-coordinator/src/main/resources/common/message/`` at
A:3.7.0 (the "3.7" layouts; identical in A:3.6.0 and A:3.7.1), A:3.8.0 / A:3.9 / C:v8.0.0 /
C:v8.1.0 (the "3.8+" layouts) and the tagged fields added since: C:v8.1.0 (AK 4.1) tag 0
``MetadataHash`` of type 3; C:v8.3.0 (AK 4.3) tag 0 ``AssignmentEpochs`` of type 8's
``TopicPartitions`` and tag 0 ``AssignmentTimestamp`` of type 6. Type 16 first appears in
C:v8.0.0 (AK 4.0). Type 4 is no longer written from 4.1 (only tombstoned) but still readable.
"""

from __future__ import annotations

from typing import Final

from offsets_auditor.schemas.coordinator_spec import (
    Layout,
    RecordType,
    key_message,
    tagged,
    value_message,
)
from offsets_auditor.schemas.message import (
    ALL,
    BYTES,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UUID,
    ArrayOf,
    Field,
    Struct,
)

_SRC: Final = "group-coordinator/src/main/resources/common/message/"
_OLD: Final = "3.7"
_NEW: Final = "3.8+"

# -- 3 ConsumerGroupMetadata -------------------------------------------------------------------

CONSUMER_GROUP_METADATA: Final = RecordType(
    3,
    "consumer_group_metadata",
    key_message("ConsumerGroupMetadataKey", "group_id", source=f"A:3.7.0 {_SRC}"),
    (
        Layout(
            None,
            value_message(
                "ConsumerGroupMetadataValue",
                Field("epoch", INT32),
                tagged("metadata_hash", INT64, 0),  # C:v8.1.0
                source=f"A:3.7.0, C:v8.1.0 {_SRC}ConsumerGroupMetadataValue.json",
            ),
        ),
    ),
)

# -- 4 ConsumerGroupPartitionMetadata ----------------------------------------------------------

_PARTITION_METADATA: Final = Struct(
    "PartitionMetadata",
    (Field("partition", INT32), Field("racks", ArrayOf(STRING))),
)
TOPIC_METADATA: Final = Struct(
    "TopicMetadata",
    (
        Field("topic_id", UUID),
        Field("topic_name", STRING),
        Field("num_partitions", INT32),
        Field("partition_metadata", ArrayOf(_PARTITION_METADATA)),
    ),
)
"""Shared with share type 9 in 4.0 (C:v8.0.0 ``ShareGroupPartitionMetadataValue.json``)."""

CONSUMER_GROUP_PARTITION_METADATA: Final = RecordType(
    4,
    "consumer_group_partition_metadata",
    key_message("ConsumerGroupPartitionMetadataKey", "group_id", source=f"A:3.7.0 {_SRC}"),
    (
        Layout(
            _NEW,
            value_message(
                "ConsumerGroupPartitionMetadataValue",
                Field("topics", ArrayOf(TOPIC_METADATA)),
                source=f"A:3.8.0 {_SRC}ConsumerGroupPartitionMetadataValue.json",
            ),
        ),
        Layout(
            _OLD,
            value_message(
                "ConsumerGroupPartitionMetadataValue",
                Field("epoch", INT32),
                Field("topics", ArrayOf(TOPIC_METADATA)),
                source=f"A:3.7.0 {_SRC}ConsumerGroupPartitionMetadataValue.json",
            ),
        ),
    ),
)

# -- 5 ConsumerGroupMemberMetadata -------------------------------------------------------------

_MEMBER_COMMON: Final = (
    Field("instance_id", STRING, nullable=ALL),
    Field("rack_id", STRING, nullable=ALL),
    Field("client_id", STRING),
    Field("client_host", STRING),
    Field("subscribed_topic_names", ArrayOf(STRING)),
    Field("subscribed_topic_regex", STRING, nullable=ALL),
    Field("rebalance_timeout_ms", INT32),
    Field("server_assignor", STRING, nullable=ALL),
)
_CLASSIC_MEMBER_METADATA: Final = Struct(
    "ClassicMemberMetadata",
    (
        Field("session_timeout_ms", INT32),
        Field(
            "supported_protocols",
            ArrayOf(Struct("ClassicProtocol", (Field("name", STRING), Field("metadata", BYTES)))),
        ),
    ),
)
_ASSIGNOR: Final = Struct(
    "Assignor",
    (
        Field("name", STRING),
        Field("minimum_version", INT16),
        Field("maximum_version", INT16),
        Field("reason", INT8),
        Field("version", INT16),
        Field("metadata", BYTES),
    ),
)

CONSUMER_GROUP_MEMBER_METADATA: Final = RecordType(
    5,
    "consumer_group_member_metadata",
    key_message(
        "ConsumerGroupMemberMetadataKey", "group_id", "member_id", source=f"A:3.7.0 {_SRC}"
    ),
    (
        Layout(
            _NEW,
            value_message(
                "ConsumerGroupMemberMetadataValue",
                *_MEMBER_COMMON,
                tagged("classic_member_metadata", _CLASSIC_MEMBER_METADATA, 0, nullable=True),
                source=f"A:3.8.0 {_SRC}ConsumerGroupMemberMetadataValue.json",
            ),
        ),
        Layout(
            _OLD,
            value_message(
                "ConsumerGroupMemberMetadataValue",
                *_MEMBER_COMMON,
                Field("assignors", ArrayOf(_ASSIGNOR)),
                source=f"A:3.7.0 {_SRC}ConsumerGroupMemberMetadataValue.json",
            ),
        ),
    ),
)

# -- 6 ConsumerGroupTargetAssignmentMetadata ---------------------------------------------------

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: Final = RecordType(
    6,
    "consumer_group_target_assignment_metadata",
    key_message("ConsumerGroupTargetAssignmentMetadataKey", "group_id", source=f"A:3.7.0 {_SRC}"),
    (
        Layout(
            None,
            value_message(
                "ConsumerGroupTargetAssignmentMetadataValue",
                Field("assignment_epoch", INT32),
                tagged("assignment_timestamp", INT64, 0),  # C:v8.3.0 (KIP-1263)
                source=f"A:3.7.0, C:v8.3.0 {_SRC}ConsumerGroupTargetAssignmentMetadataValue.json",
            ),
        ),
    ),
)

# -- 7 ConsumerGroupTargetAssignmentMember -----------------------------------------------------

TOPIC_PARTITION: Final = Struct(
    "TopicPartition", (Field("topic_id", UUID), Field("partitions", ArrayOf(INT32)))
)
"""{TopicId uuid, Partitions []int32}: also share types 13 and 14."""

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = RecordType(
    7,
    "consumer_group_target_assignment_member",
    key_message(
        "ConsumerGroupTargetAssignmentMemberKey", "group_id", "member_id", source=f"A:3.7.0 {_SRC}"
    ),
    (
        Layout(
            _NEW,
            value_message(
                "ConsumerGroupTargetAssignmentMemberValue",
                Field("topic_partitions", ArrayOf(TOPIC_PARTITION)),
                source=f"A:3.8.0 {_SRC}ConsumerGroupTargetAssignmentMemberValue.json",
            ),
        ),
        Layout(
            _OLD,
            value_message(
                "ConsumerGroupTargetAssignmentMemberValue",
                Field("error", INT8),
                Field("topic_partitions", ArrayOf(TOPIC_PARTITION)),
                Field("metadata_version", INT16),
                Field("metadata_bytes", BYTES),
                source=f"A:3.7.0 {_SRC}ConsumerGroupTargetAssignmentMemberValue.json",
            ),
        ),
    ),
)

# -- 8 ConsumerGroupCurrentMemberAssignment ----------------------------------------------------

_TOPIC_PARTITIONS_WITH_EPOCHS: Final = Struct(
    "TopicPartitions",
    (
        Field("topic_id", UUID),
        Field("partitions", ArrayOf(INT32)),
        tagged("assignment_epochs", ArrayOf(INT32), 0, nullable=True),  # C:v8.3.0
    ),
)

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = RecordType(
    8,
    "consumer_group_current_member_assignment",
    key_message(
        "ConsumerGroupCurrentMemberAssignmentKey", "group_id", "member_id", source=f"A:3.7.0 {_SRC}"
    ),
    (
        Layout(
            _NEW,
            value_message(
                "ConsumerGroupCurrentMemberAssignmentValue",
                Field("member_epoch", INT32),
                Field("previous_member_epoch", INT32),
                Field("state", INT8),
                Field("assigned_partitions", ArrayOf(_TOPIC_PARTITIONS_WITH_EPOCHS)),
                Field("partitions_pending_revocation", ArrayOf(_TOPIC_PARTITIONS_WITH_EPOCHS)),
                source=f"A:3.8.0, C:v8.3.0 {_SRC}ConsumerGroupCurrentMemberAssignmentValue.json",
            ),
        ),
        Layout(
            _OLD,
            value_message(
                "ConsumerGroupCurrentMemberAssignmentValue",
                Field("member_epoch", INT32),
                Field("previous_member_epoch", INT32),
                Field("target_member_epoch", INT32),
                Field("assigned_partitions", ArrayOf(TOPIC_PARTITION)),
                Field("partitions_pending_revocation", ArrayOf(TOPIC_PARTITION)),
                Field("partitions_pending_assignment", ArrayOf(TOPIC_PARTITION)),
                Field("error", INT8),
                Field("metadata_version", INT16),
                Field("metadata_bytes", BYTES),
                source=f"A:3.7.0 {_SRC}ConsumerGroupCurrentMemberAssignmentValue.json",
            ),
        ),
    ),
)

# -- 16 ConsumerGroupRegularExpression ---------------------------------------------------------

CONSUMER_GROUP_REGULAR_EXPRESSION: Final = RecordType(
    16,
    "consumer_group_regular_expression",
    key_message(
        "ConsumerGroupRegularExpressionKey",
        "group_id",
        "regular_expression",
        source=f"C:v8.0.0 {_SRC}",
    ),
    (
        Layout(
            None,
            value_message(
                "ConsumerGroupRegularExpressionValue",
                Field("topics", ArrayOf(STRING)),
                Field("version", INT64),
                Field("timestamp", INT64),
                source=f"C:v8.0.0 {_SRC}ConsumerGroupRegularExpressionValue.json",
            ),
        ),
    ),
)

RECORD_TYPES: Final = (
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_PARTITION_METADATA,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
)
