"""Streams-group (KIP-1071) records of the new group coordinator: types 17 and 19-23.

Declared field by field from ``group-coordinator/src/main/resources/common/message/`` at
C:v8.1.0 (AK 4.1, first release with them; type 18 is not used by any release read), with the
tagged fields added since: C:v8.2.0 (AK 4.2) tags 0 ``ValidatedTopologyEpoch`` and 1
``LastAssignmentConfigs`` of type 17, tag 0 ``AssignmentEpochs`` of type 22's ``TaskIds``;
C:v8.3.0 (AK 4.3) tag 0 ``AssignmentTimestamp`` of type 20. Non-tagged layouts are identical
from C:v8.1.0 to C:v8.3.1. Tags 2 and 3 of type 17 exist only on the unreleased C:4.4 branch
and are kept raw.
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
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    ArrayOf,
    Field,
    Struct,
)

_SRC: Final = "group-coordinator/src/main/resources/common/message/"
_KEY_SRC: Final = f"C:v8.1.0 {_SRC}"

_KEY_VALUE: Final = Struct("KeyValue", (Field("key", STRING), Field("value", STRING)))
_TASK_IDS: Final = Struct(
    "TaskIds", (Field("subtopology_id", STRING), Field("partitions", ArrayOf(INT32)))
)
_TASK_IDS_WITH_EPOCHS: Final = Struct(
    "TaskIds",
    (
        Field("subtopology_id", STRING),
        Field("partitions", ArrayOf(INT32)),
        tagged("assignment_epochs", ArrayOf(INT32), 0, nullable=True),  # C:v8.2.0
    ),
)

# -- 17 StreamsGroupMetadata -------------------------------------------------------------------

STREAMS_GROUP_METADATA: Final = RecordType(
    17,
    "streams_group_metadata",
    key_message("StreamsGroupMetadataKey", "group_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupMetadataValue",
                Field("epoch", INT32),
                Field("metadata_hash", INT64),
                tagged("validated_topology_epoch", INT32, 0),  # C:v8.2.0
                tagged("last_assignment_configs", ArrayOf(_KEY_VALUE), 1, nullable=True),
                source=f"C:v8.1.0, C:v8.2.0 {_SRC}StreamsGroupMetadataValue.json",
            ),
        ),
    ),
)

# -- 19 StreamsGroupMemberMetadata -------------------------------------------------------------

STREAMS_GROUP_MEMBER_METADATA: Final = RecordType(
    19,
    "streams_group_member_metadata",
    key_message("StreamsGroupMemberMetadataKey", "group_id", "member_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupMemberMetadataValue",
                Field("instance_id", STRING, nullable=ALL),
                Field("rack_id", STRING, nullable=ALL),
                Field("client_id", STRING),
                Field("client_host", STRING),
                Field("rebalance_timeout_ms", INT32),
                Field("topology_epoch", INT32),
                Field("process_id", STRING),
                Field(
                    "user_endpoint",
                    Struct("Endpoint", (Field("host", STRING), Field("port", UINT16))),
                    nullable=ALL,
                ),
                Field("client_tags", ArrayOf(_KEY_VALUE)),
                source=f"C:v8.1.0 {_SRC}StreamsGroupMemberMetadataValue.json",
            ),
        ),
    ),
)

# -- 20 StreamsGroupTargetAssignmentMetadata ---------------------------------------------------

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA: Final = RecordType(
    20,
    "streams_group_target_assignment_metadata",
    key_message("StreamsGroupTargetAssignmentMetadataKey", "group_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupTargetAssignmentMetadataValue",
                Field("assignment_epoch", INT32),
                tagged("assignment_timestamp", INT64, 0),  # C:v8.3.0 (KIP-1263)
                source=f"C:v8.1.0, C:v8.3.0 {_SRC}StreamsGroupTargetAssignmentMetadataValue.json",
            ),
        ),
    ),
)

# -- 21 StreamsGroupTargetAssignmentMember -----------------------------------------------------

STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = RecordType(
    21,
    "streams_group_target_assignment_member",
    key_message("StreamsGroupTargetAssignmentMemberKey", "group_id", "member_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupTargetAssignmentMemberValue",
                Field("active_tasks", ArrayOf(_TASK_IDS)),
                Field("standby_tasks", ArrayOf(_TASK_IDS)),
                Field("warmup_tasks", ArrayOf(_TASK_IDS)),
                source=f"C:v8.1.0 {_SRC}StreamsGroupTargetAssignmentMemberValue.json",
            ),
        ),
    ),
)

# -- 22 StreamsGroupCurrentMemberAssignment ----------------------------------------------------

STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = RecordType(
    22,
    "streams_group_current_member_assignment",
    key_message("StreamsGroupCurrentMemberAssignmentKey", "group_id", "member_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupCurrentMemberAssignmentValue",
                Field("member_epoch", INT32),
                Field("previous_member_epoch", INT32),
                Field("state", INT8),
                Field("active_tasks", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                Field("standby_tasks", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                Field("warmup_tasks", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                Field("active_tasks_pending_revocation", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                Field("standby_tasks_pending_revocation", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                Field("warmup_tasks_pending_revocation", ArrayOf(_TASK_IDS_WITH_EPOCHS)),
                source=f"C:v8.1.0, C:v8.2.0 {_SRC}StreamsGroupCurrentMemberAssignmentValue.json",
            ),
        ),
    ),
)

# -- 23 StreamsGroupTopology -------------------------------------------------------------------

_TOPIC_INFO: Final = Struct(
    "TopicInfo",
    (
        Field("name", STRING),
        Field("partitions", INT32),
        Field("replication_factor", INT16),
        Field("topic_configs", ArrayOf(_KEY_VALUE)),  # TopicConfig {key, value}
    ),
)
_COPARTITION_GROUP: Final = Struct(
    "CopartitionGroup",
    (
        Field("source_topics", ArrayOf(INT16)),
        Field("source_topic_regex", ArrayOf(INT16)),
        Field("repartition_source_topics", ArrayOf(INT16)),
    ),
)
_SUBTOPOLOGY: Final = Struct(
    "Subtopology",
    (
        Field("subtopology_id", STRING),
        Field("source_topics", ArrayOf(STRING)),
        Field("source_topic_regex", ArrayOf(STRING)),
        Field("state_changelog_topics", ArrayOf(_TOPIC_INFO)),
        Field("repartition_sink_topics", ArrayOf(STRING)),
        Field("repartition_source_topics", ArrayOf(_TOPIC_INFO)),
        Field("copartition_groups", ArrayOf(_COPARTITION_GROUP)),
    ),
)

STREAMS_GROUP_TOPOLOGY: Final = RecordType(
    23,
    "streams_group_topology",
    key_message("StreamsGroupTopologyKey", "group_id", source=_KEY_SRC),
    (
        Layout(
            None,
            value_message(
                "StreamsGroupTopologyValue",
                Field("epoch", INT32),
                Field("subtopologies", ArrayOf(_SUBTOPOLOGY)),
                source=f"C:v8.1.0 {_SRC}StreamsGroupTopologyValue.json",
            ),
        ),
    ),
)

RECORD_TYPES: Final = (
    STREAMS_GROUP_METADATA,
    STREAMS_GROUP_MEMBER_METADATA,
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    STREAMS_GROUP_TOPOLOGY,
)
