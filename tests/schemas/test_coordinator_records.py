"""New-coordinator record types 3-23, from golden bytes written field by field from Kafka's JSON
(group-coordinator/src/main/resources/common/message/ at A:3.7.0, A:3.8.0, A:3.9, C:v8.0.0,
C:v8.1.0, C:v8.2.0, C:v8.3.0). Every value is version 0, flexible: compact strings/arrays, and a
tagged-field section after every struct."""

from __future__ import annotations

import pytest

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value

from .wire import NO_TAGS, ca, cb, cs, i8, i16, i32, i64, kafka_uuid, s, tags, u16, uvarint

U1 = bytes(range(16))
U2 = bytes(range(100, 116))
ID1 = kafka_uuid(U1)
ID2 = kafka_uuid(U2)


def _key(record_type: int, *strings: str) -> RecordKey:
    return decode_key(i16(record_type) + b"".join(s(text) for text in strings))


def _value(key: RecordKey, raw: bytes) -> RecordValue:
    value = decode_value(key, raw)
    assert isinstance(value, RecordValue), value
    return value


# -- keys (a tombstone is exactly such a key with a null value) --------------------------------

KEYS = [
    (3, "consumer_group_metadata", ("group_id",)),
    (4, "consumer_group_partition_metadata", ("group_id",)),
    (5, "consumer_group_member_metadata", ("group_id", "member_id")),
    (6, "consumer_group_target_assignment_metadata", ("group_id",)),
    (7, "consumer_group_target_assignment_member", ("group_id", "member_id")),
    (8, "consumer_group_current_member_assignment", ("group_id", "member_id")),
    (9, "share_group_partition_metadata", ("group_id",)),
    (10, "share_group_member_metadata", ("group_id", "member_id")),
    (11, "share_group_metadata", ("group_id",)),
    (12, "share_group_target_assignment_metadata", ("group_id",)),
    (13, "share_group_target_assignment_member", ("group_id", "member_id")),
    (14, "share_group_current_member_assignment", ("group_id", "member_id")),
    (15, "share_group_state_partition_metadata", ("group_id",)),
    (16, "consumer_group_regular_expression", ("group_id", "regular_expression")),
    (17, "streams_group_metadata", ("group_id",)),
    (19, "streams_group_member_metadata", ("group_id", "member_id")),
    (20, "streams_group_target_assignment_metadata", ("group_id",)),
    (21, "streams_group_target_assignment_member", ("group_id", "member_id")),
    (22, "streams_group_current_member_assignment", ("group_id", "member_id")),
    (23, "streams_group_topology", ("group_id",)),
]


@pytest.mark.parametrize(("record_type", "key_type", "names"), KEYS)
def test_key(record_type: int, key_type: str, names: tuple[str, ...]) -> None:
    # Keys are non-flexible: int16 type, then int16-length strings (GroupId, MemberId, ...).
    sample = {"group_id": "grp", "member_id": "member-1", "regular_expression": "^topic-.*"}
    values = tuple(sample[name] for name in names)
    raw = i16(record_type) + b"".join(s(v) for v in values)
    key = decode_key(raw)
    assert key == RecordKey(
        key_type, record_type, "grp", fields=dict(zip(names, values, strict=True))
    )
    with pytest.raises(CorruptError):  # trailing byte
        decode_key(raw + b"\x00")
    with pytest.raises(TruncatedError):
        decode_key(raw[:-1])


@pytest.mark.parametrize("record_type", [18, 24, 100, 32767])
def test_unused_and_future_types_are_unknown(record_type: int) -> None:
    key = decode_key(i16(record_type) + s("grp"))
    assert key == RecordKey("unknown", record_type, None)
    assert decode_value(key, i16(0) + b"\x00") == UnknownValue(0, f"unknown key type {record_type}")


# -- 3 ConsumerGroupMetadataValue: Epoch int32; tag 0 MetadataHash int64 (4.1+) -----------------


def test_consumer_group_metadata() -> None:
    key = _key(3, "grp")
    assert _value(key, i16(0) + i32(10) + NO_TAGS) == RecordValue(0, {"epoch": 10})
    tagged = _value(key, i16(0) + i32(10) + tags((0, i64(-5))))
    assert tagged.fields == {"epoch": 10, "metadata_hash": -5}
    assert tagged.layout is None


def test_unknown_value_version_of_new_type() -> None:
    key = _key(3, "grp")
    assert decode_value(key, i16(1) + i32(10) + NO_TAGS) == UnknownValue(
        1, "unknown value version 1 for consumer_group_metadata"
    )


def test_unknown_tag_kept_raw() -> None:
    value = _value(_key(3, "grp"), i16(0) + i32(1) + tags((0, i64(7)), (42, b"\x01\x02\x03")))
    assert value.fields["metadata_hash"] == 7
    assert value.unknown_tagged_fields == {42: b"\x01\x02\x03"}


# -- 4 ConsumerGroupPartitionMetadataValue -----------------------------------------------------

# TopicMetadata {TopicId uuid, TopicName string, NumPartitions int32,
#                PartitionMetadata []{Partition int32, Racks []string}}
TOPIC_METADATA = (
    U1 + cs("orders") + i32(2)
    + ca(1) + i32(0) + ca(2) + cs("r1") + cs("r2") + NO_TAGS
    + NO_TAGS
)  # fmt: skip
TOPIC_METADATA_DECODED = {
    "topic_id": ID1,
    "topic_name": "orders",
    "num_partitions": 2,
    "partition_metadata": [{"partition": 0, "racks": ["r1", "r2"]}],
}


def test_partition_metadata_38_layout() -> None:
    value = _value(_key(4, "grp"), i16(0) + ca(1) + TOPIC_METADATA + NO_TAGS)
    assert value == RecordValue(0, {"topics": [TOPIC_METADATA_DECODED]}, layout="3.8+")


def test_partition_metadata_37_layout_has_epoch() -> None:
    value = _value(_key(4, "grp"), i16(0) + i32(12) + ca(1) + TOPIC_METADATA + NO_TAGS)
    assert value == RecordValue(0, {"epoch": 12, "topics": [TOPIC_METADATA_DECODED]}, layout="3.7")


# -- 5 ConsumerGroupMemberMetadataValue --------------------------------------------------------

# InstanceId?, RackId?, ClientId, ClientHost, SubscribedTopicNames []string,
# SubscribedTopicRegex?, RebalanceTimeoutMs int32, ServerAssignor?
MEMBER_COMMON = (
    cs("instance-1") + cs(None) + cs("client") + cs("/127.0.0.1")
    + ca(2) + cs("a") + cs("b") + cs(None) + i32(45_000) + cs("uniform")
)  # fmt: skip
MEMBER_COMMON_DECODED = {
    "instance_id": "instance-1",
    "rack_id": None,
    "client_id": "client",
    "client_host": "/127.0.0.1",
    "subscribed_topic_names": ["a", "b"],
    "subscribed_topic_regex": None,
    "rebalance_timeout_ms": 45_000,
    "server_assignor": "uniform",
}


def test_member_metadata_38_layout_without_tag() -> None:
    value = _value(_key(5, "grp", "m"), i16(0) + MEMBER_COMMON + NO_TAGS)
    assert value == RecordValue(0, MEMBER_COMMON_DECODED, layout="3.8+")


def test_member_metadata_38_layout_with_classic_member_metadata_tag() -> None:
    # tag 0 ClassicMemberMetadata (nullable struct): size, varint 1 (not null), then
    # SessionTimeoutMs int32, SupportedProtocols []{Name, Metadata bytes} (+ tags each).
    classic = (
        uvarint(1) + i32(10_000)
        + ca(1) + cs("range") + cb(b"\x00\x01") + NO_TAGS
        + NO_TAGS
    )  # fmt: skip
    value = _value(_key(5, "grp", "m"), i16(0) + MEMBER_COMMON + tags((0, classic)))
    assert value.layout == "3.8+"
    assert value.fields["classic_member_metadata"] == {
        "session_timeout_ms": 10_000,
        "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
    }


def test_member_metadata_explicit_null_classic_member_metadata() -> None:
    # A tagged nullable struct is preceded by an unsigned varint, 0 = null (generateStructReader).
    value = _value(_key(5, "grp", "m"), i16(0) + MEMBER_COMMON + tags((0, uvarint(0))))
    assert value.fields["classic_member_metadata"] is None


def test_member_metadata_37_layout_with_assignors() -> None:
    # 3.7: ... ServerAssignor, Assignors []{Name, MinimumVersion int16, MaximumVersion int16,
    # Reason int8, Version int16, Metadata bytes}
    assignors = ca(1) + cs("client-side") + i16(0) + i16(3) + i8(1) + i16(2) + cb(b"md") + NO_TAGS
    value = _value(_key(5, "grp", "m"), i16(0) + MEMBER_COMMON + assignors + NO_TAGS)
    assert value.layout == "3.7"
    assert value.fields == {
        **MEMBER_COMMON_DECODED,
        "assignors": [
            {
                "name": "client-side",
                "minimum_version": 0,
                "maximum_version": 3,
                "reason": 1,
                "version": 2,
                "metadata": b"md",
            }
        ],
    }


def test_member_metadata_37_layout_with_no_assignors() -> None:
    value = _value(_key(5, "grp", "m"), i16(0) + MEMBER_COMMON + ca(0) + NO_TAGS)
    assert value.layout == "3.7"
    assert value.fields["assignors"] == []


# -- 6 ConsumerGroupTargetAssignmentMetadataValue: AssignmentEpoch; tag 0 AssignmentTimestamp --


def test_target_assignment_metadata() -> None:
    value = _value(_key(6, "grp"), i16(0) + i32(4) + tags((0, i64(1_700_000_000_000))))
    assert value.fields == {"assignment_epoch": 4, "assignment_timestamp": 1_700_000_000_000}


# -- 7 ConsumerGroupTargetAssignmentMemberValue ------------------------------------------------

TOPIC_PARTITIONS = ca(2) + U1 + ca(2) + i32(0) + i32(1) + NO_TAGS + U2 + ca(0) + NO_TAGS
TOPIC_PARTITIONS_DECODED = [
    {"topic_id": ID1, "partitions": [0, 1]},
    {"topic_id": ID2, "partitions": []},
]


def test_target_assignment_member_38_layout() -> None:
    value = _value(_key(7, "grp", "m"), i16(0) + TOPIC_PARTITIONS + NO_TAGS)
    assert value == RecordValue(0, {"topic_partitions": TOPIC_PARTITIONS_DECODED}, layout="3.8+")


def test_target_assignment_member_37_layout() -> None:
    # Error int8, TopicPartitions [], MetadataVersion int16, MetadataBytes bytes
    raw = i16(0) + i8(0) + TOPIC_PARTITIONS + i16(1) + cb(b"\xff") + NO_TAGS
    value = _value(_key(7, "grp", "m"), raw)
    assert value == RecordValue(
        0,
        {
            "error": 0,
            "topic_partitions": TOPIC_PARTITIONS_DECODED,
            "metadata_version": 1,
            "metadata_bytes": b"\xff",
        },
        layout="3.7",
    )


# -- 8 ConsumerGroupCurrentMemberAssignmentValue -----------------------------------------------


def test_current_member_assignment_38_layout_with_assignment_epochs_tag() -> None:
    # MemberEpoch, PreviousMemberEpoch, State int8, AssignedPartitions [],
    # PartitionsPendingRevocation []; TopicPartitions tag 0 AssignmentEpochs []int32 (4.3)
    assigned = ca(1) + U1 + ca(2) + i32(0) + i32(1) + tags((0, ca(2) + i32(7) + i32(8)))
    raw = i16(0) + i32(9) + i32(8) + i8(0) + assigned + ca(0) + NO_TAGS
    value = _value(_key(8, "grp", "m"), raw)
    assert value == RecordValue(
        0,
        {
            "member_epoch": 9,
            "previous_member_epoch": 8,
            "state": 0,
            "assigned_partitions": [
                {"topic_id": ID1, "partitions": [0, 1], "assignment_epochs": [7, 8]}
            ],
            "partitions_pending_revocation": [],
        },
        layout="3.8+",
    )


def test_current_member_assignment_37_layout() -> None:
    # MemberEpoch, PreviousMemberEpoch, TargetMemberEpoch, AssignedPartitions [],
    # PartitionsPendingRevocation [], PartitionsPendingAssignment [], Error int8,
    # MetadataVersion int16, MetadataBytes bytes
    raw = (
        i16(0) + i32(9) + i32(8) + i32(10)
        + TOPIC_PARTITIONS + ca(0) + ca(0)
        + i8(0) + i16(0) + cb(b"") + NO_TAGS
    )  # fmt: skip
    value = _value(_key(8, "grp", "m"), raw)
    assert value.layout == "3.7"
    assert value.fields == {
        "member_epoch": 9,
        "previous_member_epoch": 8,
        "target_member_epoch": 10,
        "assigned_partitions": TOPIC_PARTITIONS_DECODED,
        "partitions_pending_revocation": [],
        "partitions_pending_assignment": [],
        "error": 0,
        "metadata_version": 0,
        "metadata_bytes": b"",
    }


def test_bytes_fitting_no_layout_raise_and_name_the_layouts() -> None:
    raw = i16(0) + i32(9) + i32(8) + i8(0) + ca(0) + ca(0) + NO_TAGS + b"\x00\x00\x00"
    with pytest.raises(CorruptError) as error:
        decode_value(_key(8, "grp", "m"), raw)
    assert "3.8+" in error.value.message and "3.7" in error.value.message


def test_single_layout_type_ignores_trailing_bytes_like_kafka() -> None:
    value = _value(_key(6, "grp"), i16(0) + i32(4) + NO_TAGS + b"\xee")
    assert value.fields == {"assignment_epoch": 4}


# -- 9 ShareGroupPartitionMetadataValue (3.9, 4.0) ---------------------------------------------


def test_share_partition_metadata_40_layout() -> None:
    value = _value(_key(9, "grp"), i16(0) + ca(1) + TOPIC_METADATA + NO_TAGS)
    assert value == RecordValue(0, {"topics": [TOPIC_METADATA_DECODED]}, layout="4.0")


# TopicPartitionsInfo {TopicId, TopicName, Partitions []int32}; TopicInfo {TopicId, TopicName}
PARTITIONS_INFO = ca(1) + U1 + cs("orders") + ca(1) + i32(3) + NO_TAGS
PARTITIONS_INFO_DECODED = [{"topic_id": ID1, "topic_name": "orders", "partitions": [3]}]
TOPIC_INFO = ca(1) + U2 + cs("gone") + NO_TAGS
TOPIC_INFO_DECODED = [{"topic_id": ID2, "topic_name": "gone"}]


def test_share_partition_metadata_39_layout() -> None:
    value = _value(_key(9, "grp"), i16(0) + PARTITIONS_INFO + TOPIC_INFO + NO_TAGS)
    assert value == RecordValue(
        0,
        {"initialized_topics": PARTITIONS_INFO_DECODED, "deleting_topics": TOPIC_INFO_DECODED},
        layout="3.9",
    )


# -- 10 ShareGroupMemberMetadataValue: RackId?, ClientId, ClientHost, SubscribedTopicNames ------


def test_share_member_metadata() -> None:
    raw = i16(0) + cs("rack") + cs("c") + cs("h") + ca(1) + cs("t") + NO_TAGS
    assert _value(_key(10, "grp", "m"), raw) == RecordValue(
        0,
        {"rack_id": "rack", "client_id": "c", "client_host": "h", "subscribed_topic_names": ["t"]},
    )


# -- 11 ShareGroupMetadataValue: 3.9-4.0 Epoch; 4.1+ Epoch, MetadataHash (not tagged) ----------


def test_share_group_metadata_layouts() -> None:
    key = _key(11, "grp")
    new = _value(key, i16(0) + i32(3) + i64(99) + NO_TAGS)
    assert new == RecordValue(0, {"epoch": 3, "metadata_hash": 99}, layout="4.1+")
    old = _value(key, i16(0) + i32(3) + NO_TAGS)
    assert old == RecordValue(0, {"epoch": 3}, layout="3.9-4.0")


# -- 12-14 share assignment records ------------------------------------------------------------


def test_share_target_assignment_metadata() -> None:
    value = _value(_key(12, "grp"), i16(0) + i32(2) + tags((0, i64(123))))
    assert value.fields == {"assignment_epoch": 2, "assignment_timestamp": 123}


def test_share_target_assignment_member() -> None:
    value = _value(_key(13, "grp", "m"), i16(0) + TOPIC_PARTITIONS + NO_TAGS)
    assert value.fields == {"topic_partitions": TOPIC_PARTITIONS_DECODED}


def test_share_current_member_assignment() -> None:
    raw = i16(0) + i32(5) + i32(4) + i8(1) + TOPIC_PARTITIONS + NO_TAGS
    assert _value(_key(14, "grp", "m"), raw).fields == {
        "member_epoch": 5,
        "previous_member_epoch": 4,
        "state": 1,
        "assigned_partitions": TOPIC_PARTITIONS_DECODED,
    }


# -- 15 ShareGroupStatePartitionMetadataValue: 4.0 vs 4.1+ (InitializingTopics in front) --------


def test_share_state_partition_metadata_layouts() -> None:
    key = _key(15, "grp")
    new = _value(key, i16(0) + PARTITIONS_INFO + ca(0) + TOPIC_INFO + NO_TAGS)
    assert new == RecordValue(
        0,
        {
            "initializing_topics": PARTITIONS_INFO_DECODED,
            "initialized_topics": [],
            "deleting_topics": TOPIC_INFO_DECODED,
        },
        layout="4.1+",
    )
    old = _value(key, i16(0) + PARTITIONS_INFO + TOPIC_INFO + NO_TAGS)
    assert old == RecordValue(
        0,
        {"initialized_topics": PARTITIONS_INFO_DECODED, "deleting_topics": TOPIC_INFO_DECODED},
        layout="4.0",
    )


# -- 16 ConsumerGroupRegularExpressionValue: Topics []string, Version int64, Timestamp int64 -----


def test_regular_expression() -> None:
    key = _key(16, "grp", "^t.*")
    assert key.fields == {"group_id": "grp", "regular_expression": "^t.*"}
    raw = i16(0) + ca(2) + cs("t1") + cs("t2") + i64(17) + i64(1_700_000_000_000) + NO_TAGS
    assert _value(key, raw).fields == {
        "topics": ["t1", "t2"],
        "version": 17,
        "timestamp": 1_700_000_000_000,
    }


# -- 17 StreamsGroupMetadataValue: Epoch, MetadataHash; tags 0 ValidatedTopologyEpoch,
#    1 LastAssignmentConfigs []{Key, Value} (4.2) ----------------------------------------------


def test_streams_group_metadata_with_tags() -> None:
    configs = ca(1) + cs("num.standby.replicas") + cs("1") + NO_TAGS
    raw = i16(0) + i32(7) + i64(-1) + tags((0, i32(6)), (1, configs), (2, i32(5)))
    value = _value(_key(17, "grp"), raw)
    assert value.fields == {
        "epoch": 7,
        "metadata_hash": -1,
        "validated_topology_epoch": 6,
        "last_assignment_configs": [{"key": "num.standby.replicas", "value": "1"}],
    }
    assert value.unknown_tagged_fields == {2: i32(5)}  # 4.4 branch only: kept raw


# -- 19 StreamsGroupMemberMetadataValue --------------------------------------------------------


def test_streams_member_metadata() -> None:
    # InstanceId?, RackId?, ClientId, ClientHost, RebalanceTimeoutMs, TopologyEpoch, ProcessId,
    # UserEndpoint? (int8 1 = present; Host string, Port uint16, tags), ClientTags []{Key, Value}
    raw = (
        i16(0) + cs(None) + cs(None) + cs("c") + cs("h") + i32(300_000) + i32(2) + cs("proc-1")
        + i8(1) + cs("app-host") + u16(65_000) + NO_TAGS
        + ca(1) + cs("zone") + cs("a") + NO_TAGS
        + NO_TAGS
    )  # fmt: skip
    assert _value(_key(19, "grp", "m"), raw).fields == {
        "instance_id": None,
        "rack_id": None,
        "client_id": "c",
        "client_host": "h",
        "rebalance_timeout_ms": 300_000,
        "topology_epoch": 2,
        "process_id": "proc-1",
        "user_endpoint": {"host": "app-host", "port": 65_000},
        "client_tags": [{"key": "zone", "value": "a"}],
    }


def test_streams_member_metadata_null_endpoint() -> None:
    raw = i16(0) + cs(None) + cs(None) + cs("c") + cs("h") + i32(1) + i32(2) + cs("p")
    raw += i8(-1) + ca(0) + NO_TAGS
    assert _value(_key(19, "grp", "m"), raw).fields["user_endpoint"] is None


# -- 20-22 streams assignment records ----------------------------------------------------------


def test_streams_target_assignment_metadata() -> None:
    value = _value(_key(20, "grp"), i16(0) + i32(3) + NO_TAGS)
    assert value.fields == {"assignment_epoch": 3}


TASKS = ca(1) + cs("0") + ca(2) + i32(0) + i32(1) + NO_TAGS
TASKS_DECODED = [{"subtopology_id": "0", "partitions": [0, 1]}]


def test_streams_target_assignment_member() -> None:
    raw = i16(0) + TASKS + ca(0) + TASKS + NO_TAGS
    assert _value(_key(21, "grp", "m"), raw).fields == {
        "active_tasks": TASKS_DECODED,
        "standby_tasks": [],
        "warmup_tasks": TASKS_DECODED,
    }


def test_streams_current_member_assignment_with_assignment_epochs() -> None:
    active = ca(1) + cs("0") + ca(1) + i32(4) + tags((0, ca(1) + i32(12)))
    raw = i16(0) + i32(5) + i32(4) + i8(0) + active + ca(0) + ca(0) + ca(0) + ca(0) + ca(0)
    raw += NO_TAGS
    assert _value(_key(22, "grp", "m"), raw).fields == {
        "member_epoch": 5,
        "previous_member_epoch": 4,
        "state": 0,
        "active_tasks": [{"subtopology_id": "0", "partitions": [4], "assignment_epochs": [12]}],
        "standby_tasks": [],
        "warmup_tasks": [],
        "active_tasks_pending_revocation": [],
        "standby_tasks_pending_revocation": [],
        "warmup_tasks_pending_revocation": [],
    }


# -- 23 StreamsGroupTopologyValue --------------------------------------------------------------


def test_streams_topology() -> None:
    # TopicInfo {Name, Partitions int32, ReplicationFactor int16, TopicConfigs []{key, value}}
    changelog = cs("app-store-changelog") + i32(4) + i16(3) + ca(1) + cs("cleanup.policy")
    changelog += cs("compact") + NO_TAGS + NO_TAGS
    # CopartitionGroup {SourceTopics []int16, SourceTopicRegex []int16,
    #                   RepartitionSourceTopics []int16}
    copartition = ca(1) + i16(0) + ca(0) + ca(1) + i16(1) + NO_TAGS
    subtopology = (
        cs("0") + ca(1) + cs("input") + ca(0)
        + ca(1) + changelog
        + ca(1) + cs("app-repartition")
        + ca(0)
        + ca(1) + copartition
        + NO_TAGS
    )  # fmt: skip
    raw = i16(0) + i32(1) + ca(1) + subtopology + NO_TAGS
    assert _value(_key(23, "grp"), raw).fields == {
        "epoch": 1,
        "subtopologies": [
            {
                "subtopology_id": "0",
                "source_topics": ["input"],
                "source_topic_regex": [],
                "state_changelog_topics": [
                    {
                        "name": "app-store-changelog",
                        "partitions": 4,
                        "replication_factor": 3,
                        "topic_configs": [{"key": "cleanup.policy", "value": "compact"}],
                    }
                ],
                "repartition_sink_topics": ["app-repartition"],
                "repartition_source_topics": [],
                "copartition_groups": [
                    {
                        "source_topics": [0],
                        "source_topic_regex": [],
                        "repartition_source_topics": [1],
                    }
                ],
            }
        ],
    }


# -- errors ------------------------------------------------------------------------------------


def test_truncated_new_value_names_the_field() -> None:
    raw = i16(0) + i32(3) + i64(99) + NO_TAGS
    with pytest.raises(TruncatedError) as error:
        decode_value(_key(17, "grp"), raw[:8])
    assert error.value.field == "StreamsGroupMetadataValue.metadata_hash"
    assert error.value.position == 6


def test_huge_compact_array_raises_without_allocating() -> None:
    raw = i16(0) + uvarint(2**31 - 1) + b"\x00" * 4
    with pytest.raises(TruncatedError):
        decode_value(_key(13, "grp", "m"), raw)
