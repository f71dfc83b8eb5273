"""Classic keys (versions 0-2) and values, from golden bytes written field by field.

Field orders from Kafka's JSON: A:2.8.0 core/src/main/resources/common/message/
OffsetCommitKey.json, GroupMetadataKey.json, OffsetCommitValue.json, GroupMetadataValue.json;
v4 and tag 0 topicId from C:v8.1.0 group-coordinator/src/main/resources/common/message/.
"""

from __future__ import annotations

import pytest

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value

from .wire import NO_TAGS, b, ca, cb, cs, i16, i32, i64, kafka_uuid, s, tags, uvarint

OFFSET_KEY = RecordKey(
    "offset_commit", 1, "g", "t", 0, {"group": "g", "topic": "t", "partition": 0}
)
GROUP_KEY = RecordKey("group_metadata", 2, "g", fields={"group": "g"})


def _value(key: RecordKey, raw: bytes) -> RecordValue:
    value = decode_value(key, raw)
    assert isinstance(value, RecordValue), value
    return value


# -- keys --------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1])
def test_offset_commit_key(version: int) -> None:
    raw = i16(version) + s("my-group") + s("orders") + i32(7)
    key = decode_key(raw)
    assert key == RecordKey(
        key_type="offset_commit",
        version=version,
        group="my-group",
        topic="orders",
        partition=7,
        fields={"group": "my-group", "topic": "orders", "partition": 7},
    )


def test_group_metadata_key() -> None:
    key = decode_key(i16(2) + s("usercenter"))
    assert key == RecordKey("group_metadata", 2, "usercenter", fields={"group": "usercenter"})
    assert key.topic is None and key.partition is None


def test_unknown_key_type() -> None:
    assert decode_key(i16(42) + b"whatever") == RecordKey("unknown", 42, None)
    assert decode_key(i16(-1)) == RecordKey("unknown", -1, None)


def test_trailing_bytes_after_a_key_are_corrupt() -> None:
    raw = i16(2) + s("g") + b"\x00"
    with pytest.raises(CorruptError) as error:
        decode_key(raw)
    assert error.value.position == len(raw) - 1


def test_truncated_key_names_field_and_position() -> None:
    raw = i16(1) + s("my-group") + s("orders") + i32(7)
    with pytest.raises(TruncatedError) as error:
        decode_key(raw[:-2])
    assert error.value.field == "OffsetCommitKey.partition"
    assert error.value.position == 2 + 10 + 8
    with pytest.raises(TruncatedError) as error:
        decode_key(raw[:5])
    assert error.value.field == "OffsetCommitKey.group"
    assert error.value.position == 2
    with pytest.raises(TruncatedError) as error:
        decode_key(b"\x00")
    assert error.value.position == 0


def test_null_group_in_key_is_corrupt() -> None:
    with pytest.raises(CorruptError) as error:
        decode_key(i16(2) + s(None))
    assert error.value.field == "GroupMetadataKey.group"


def test_key_string_length_beyond_input_is_truncated_not_allocated() -> None:
    with pytest.raises(TruncatedError):
        decode_key(i16(1) + i16(0x7FFF) + b"ab")


# -- OffsetCommitValue v0-v4 -------------------------------------------------------------------


def test_offset_commit_value_v0() -> None:
    # offset int64, metadata string, commitTimestamp int64
    value = _value(OFFSET_KEY, i16(0) + i64(5) + s("meta") + i64(1_600_000_000_000))
    assert value == RecordValue(
        0, {"offset": 5, "metadata": "meta", "commit_timestamp": 1_600_000_000_000}
    )


def test_offset_commit_value_v1_has_expire_timestamp() -> None:
    value = _value(OFFSET_KEY, i16(1) + i64(5) + s("") + i64(100) + i64(200))
    assert value.fields == {
        "offset": 5,
        "metadata": "",
        "commit_timestamp": 100,
        "expire_timestamp": 200,
    }


def test_offset_commit_value_v2() -> None:
    value = _value(OFFSET_KEY, i16(2) + i64(-1) + s("m") + i64(100))
    assert value.fields == {"offset": -1, "metadata": "m", "commit_timestamp": 100}


def test_offset_commit_value_v3_has_leader_epoch_before_metadata() -> None:
    value = _value(OFFSET_KEY, i16(3) + i64(11) + i32(-1) + s("m") + i64(100))
    assert value.fields == {
        "offset": 11,
        "leader_epoch": -1,
        "metadata": "m",
        "commit_timestamp": 100,
    }


def test_offset_commit_value_v4_flexible_without_tags() -> None:
    raw = i16(4) + i64(11) + i32(3) + cs("m") + i64(100) + NO_TAGS
    value = _value(OFFSET_KEY, raw)
    assert value.fields == {
        "offset": 11,
        "leader_epoch": 3,
        "metadata": "m",
        "commit_timestamp": 100,
    }
    assert value.unknown_tagged_fields == {}


def test_offset_commit_value_v4_with_topic_id_tag_and_an_unknown_tag() -> None:
    topic_id = bytes(range(1, 17))
    raw = i16(4) + i64(11) + i32(3) + cs("") + i64(100) + tags((0, topic_id), (9, b"\xab\xcd"))
    value = _value(OFFSET_KEY, raw)
    assert value.fields["topic_id"] == kafka_uuid(topic_id) == "AQIDBAUGBwgJCgsMDQ4PEA"
    assert value.unknown_tagged_fields == {9: b"\xab\xcd"}


def test_topic_id_tag_of_wrong_size_is_corrupt() -> None:
    raw = i16(4) + i64(11) + i32(3) + cs("") + i64(100) + tags((0, b"\x00" * 17))
    with pytest.raises(CorruptError) as error:
        decode_value(OFFSET_KEY, raw)
    assert error.value.field == "OffsetCommitValue.topic_id"


def test_offset_commit_value_for_key_version_0() -> None:
    key = decode_key(i16(0) + s("g") + s("t") + i32(0))
    assert _value(key, i16(0) + i64(1) + s("") + i64(2)).fields["offset"] == 1


def test_unknown_offset_commit_value_version() -> None:
    assert decode_value(OFFSET_KEY, i16(7) + b"\x00" * 30) == UnknownValue(
        7, "unknown value version 7 for offset_commit"
    )
    assert decode_value(OFFSET_KEY, i16(-1)) == UnknownValue(
        -1, "unknown value version -1 for offset_commit"
    )


def test_value_of_unknown_key_type() -> None:
    key = RecordKey("unknown", 42, None)
    assert decode_value(key, i16(3) + b"zz") == UnknownValue(3, "unknown key type 42")
    assert decode_value(key, b"\x01") == UnknownValue(None, "unknown key type 42")


def test_value_shorter_than_its_version_is_truncated() -> None:
    with pytest.raises(TruncatedError) as error:
        decode_value(OFFSET_KEY, b"\x00")
    assert error.value.position == 0


def test_truncated_value_names_field_and_position() -> None:
    raw = i16(1) + i64(5) + s("meta") + i64(100) + i64(200)
    with pytest.raises(TruncatedError) as error:
        decode_value(OFFSET_KEY, raw[:-1])
    assert (error.value.field, error.value.position) == ("OffsetCommitValue.expire_timestamp", 24)


def test_trailing_bytes_after_a_classic_value_are_ignored_like_kafka() -> None:
    # Kafka's Schema.read (0.9) and generated readers (2.8+) never check remaining().
    value = _value(OFFSET_KEY, i16(0) + i64(5) + s("") + i64(1) + b"\xde\xad")
    assert value.fields == {"offset": 5, "metadata": "", "commit_timestamp": 1}


# -- GroupMetadataValue v0-v4 ------------------------------------------------------------------

# ConsumerProtocolSubscription v1 (clients/.../ConsumerProtocolSubscription.json):
# topics []string, userData nullable bytes, ownedPartitions []{topic, partitions []int32}
SUBSCRIPTION_V1 = i16(1) + i32(1) + s("t1") + b(None) + i32(1) + s("t1") + i32(1) + i32(0)
SUBSCRIPTION_V1_DECODED = {
    "version": 1,
    "topics": ["t1"],
    "user_data": None,
    "owned_partitions": [{"topic": "t1", "partitions": [0]}],
}
# ConsumerProtocolAssignment v0: assignedPartitions []{topic, partitions []int32}, userData
ASSIGNMENT_V0 = i16(0) + i32(1) + s("t1") + i32(2) + i32(0) + i32(1) + b(b"ud")
ASSIGNMENT_V0_DECODED = {
    "version": 0,
    "assigned_partitions": [{"topic": "t1", "partitions": [0, 1]}],
    "user_data": b"ud",
}


def _member(version: int, n: int, *, flexible: bool = False) -> bytes:
    """MemberMetadata at ``version``: memberId, groupInstanceId (3+), clientId, clientHost,
    rebalanceTimeout (1+), sessionTimeout, subscription, assignment [, tagged fields]."""
    string, blob = (cs, cb) if flexible else (s, b)
    out = string(f"member-{n}")
    if version >= 3:
        out += string(None if n == 1 else f"instance-{n}")
    out += string(f"client-{n}") + string(f"/10.0.0.{n}")
    if version >= 1:
        out += i32(300_000)
    out += i32(10_000) + blob(SUBSCRIPTION_V1) + blob(ASSIGNMENT_V0)
    if flexible:
        out += NO_TAGS
    return out


def _expected_member(version: int, n: int) -> dict[str, object]:
    member: dict[str, object] = {"member_id": f"member-{n}"}
    if version >= 3:
        member["group_instance_id"] = None if n == 1 else f"instance-{n}"
    member["client_id"] = f"client-{n}"
    member["client_host"] = f"/10.0.0.{n}"
    if version >= 1:
        member["rebalance_timeout"] = 300_000
    member["session_timeout"] = 10_000
    member["subscription"] = SUBSCRIPTION_V1_DECODED
    member["assignment"] = ASSIGNMENT_V0_DECODED
    return member


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_group_metadata_value_non_flexible(version: int) -> None:
    # protocolType, generation, protocol (nullable), leader (nullable),
    # currentStateTimestamp (2+), members []MemberMetadata
    raw = i16(version) + s("consumer") + i32(4) + s("range") + s("member-1")
    if version >= 2:
        raw += i64(1_700_000_000_000)
    raw += i32(2) + _member(version, 1) + _member(version, 2)
    value = _value(GROUP_KEY, raw)
    expected: dict[str, object] = {
        "protocol_type": "consumer",
        "generation": 4,
        "protocol": "range",
        "leader": "member-1",
    }
    if version >= 2:
        expected["current_state_timestamp"] = 1_700_000_000_000
    expected["members"] = [_expected_member(version, 1), _expected_member(version, 2)]
    assert value == RecordValue(version, expected)


def test_group_metadata_value_v4_flexible() -> None:
    raw = (
        i16(4)
        + cs("consumer")
        + i32(4)
        + cs("range")
        + cs("member-1")
        + i64(-1)
        + ca(2)
        + _member(4, 1, flexible=True)
        + _member(4, 2, flexible=True)
        + tags((5, b"x"))
    )
    value = _value(GROUP_KEY, raw)
    assert value.fields["members"] == [_expected_member(4, 1), _expected_member(4, 2)]
    assert value.fields["current_state_timestamp"] == -1
    assert value.unknown_tagged_fields == {5: b"x"}


def test_empty_group_with_null_protocol_and_leader() -> None:
    # 0.10.1+ writes an Empty group with int16 -1 for protocol and leader (0.9 declared STRING).
    value = _value(GROUP_KEY, i16(0) + s("consumer") + i32(0) + s(None) + s(None) + i32(0))
    assert value.fields == {
        "protocol_type": "consumer",
        "generation": 0,
        "protocol": None,
        "leader": None,
        "members": [],
    }


def test_non_consumer_protocol_keeps_raw_blobs() -> None:
    raw = i16(0) + s("connect") + i32(1) + s("default") + s("member-1") + i32(1) + _member(0, 1)
    member = _value(GROUP_KEY, raw).fields["members"][0]  # type: ignore[index]
    assert member["subscription"] == SUBSCRIPTION_V1
    assert member["assignment"] == ASSIGNMENT_V0


def test_unparseable_consumer_blobs_stay_bytes() -> None:
    member = s("m") + s("c") + s("h") + i32(1) + b(b"\x00") + b(i16(-3))
    raw = i16(0) + s("consumer") + i32(1) + s("range") + s("m") + i32(1) + member
    decoded = _value(GROUP_KEY, raw).fields["members"][0]  # type: ignore[index]
    assert decoded["subscription"] == b"\x00"
    assert decoded["assignment"] == i16(-3)


def test_members_count_beyond_input_is_truncated() -> None:
    raw = i16(0) + s("consumer") + i32(1) + s("r") + s("m") + i32(2**31 - 1) + b"\x00" * 4
    with pytest.raises(TruncatedError) as error:
        decode_value(GROUP_KEY, raw)
    assert error.value.field == "GroupMetadataValue.members"


def test_truncated_member_reports_path() -> None:
    raw = i16(1) + s("consumer") + i32(4) + s("range") + s("member-1") + i32(2)
    raw += _member(1, 1) + _member(1, 2)
    with pytest.raises(TruncatedError) as error:
        decode_value(GROUP_KEY, raw[:-3])
    assert error.value.field == "GroupMetadataValue.members[1].assignment"


def test_unknown_group_metadata_value_version() -> None:
    assert decode_value(GROUP_KEY, i16(5)) == UnknownValue(
        5, "unknown value version 5 for group_metadata"
    )


def test_flexible_value_with_compact_null_in_non_nullable_is_corrupt() -> None:
    raw = i16(4) + uvarint(0)
    with pytest.raises(CorruptError) as error:
        decode_value(GROUP_KEY, raw)
    assert (error.value.field, error.value.position) == ("GroupMetadataValue.protocol_type", 2)
