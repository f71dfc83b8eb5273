"""Random and truncated bytes: decode_key / decode_value fail only with the documented errors."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value
from offsets_auditor.schemas.transaction_log import (
    decode_transaction_key,
    decode_transaction_value,
)

from .test_classic import ASSIGNMENT_V0, SUBSCRIPTION_V1, _member
from .test_coordinator_records import (
    MEMBER_COMMON,
    PARTITIONS_INFO,
    TASKS,
    TOPIC_INFO,
    TOPIC_METADATA,
    TOPIC_PARTITIONS,
)
from .wire import NO_TAGS, ca, cb, cs, i8, i16, i32, i64, s, tags, uvarint

VALID_KEYS = [
    i16(0) + s("g") + s("t") + i32(1),
    i16(1) + s("group") + s("topic") + i32(9),
    i16(2) + s("usercenter"),
    i16(5) + s("grp") + s("member"),
    i16(16) + s("grp") + s("^t.*"),
    i16(23) + s("grp"),
]


def _new_key(record_type: int, key_type: str, *names: str) -> RecordKey:
    values = ("grp", "m")[: len(names)]
    return RecordKey(key_type, record_type, "grp", fields=dict(zip(names, values, strict=True)))


MEMBER_KEY = _new_key(5, "consumer_group_member_metadata", "group_id", "member_id")
ASSIGNMENT_KEY = _new_key(8, "consumer_group_current_member_assignment", "group_id", "member_id")
PARTITION_METADATA_KEY = _new_key(4, "consumer_group_partition_metadata", "group_id")
SHARE_STATE_KEY = _new_key(15, "share_group_state_partition_metadata", "group_id")
STREAMS_ASSIGNMENT_KEY = _new_key(
    22, "streams_group_current_member_assignment", "group_id", "member_id"
)

OFFSET_KEY = RecordKey(
    "offset_commit", 1, "g", "t", 0, {"group": "g", "topic": "t", "partition": 0}
)
GROUP_KEY = RecordKey("group_metadata", 2, "g", fields={"group": "g"})

VALID_VALUES: list[tuple[RecordKey, bytes]] = [
    (OFFSET_KEY, i16(0) + i64(5) + s("meta") + i64(1)),
    (OFFSET_KEY, i16(1) + i64(5) + s("") + i64(1) + i64(2)),
    (OFFSET_KEY, i16(3) + i64(5) + i32(0) + s("m") + i64(1)),
    (OFFSET_KEY, i16(4) + i64(5) + i32(0) + cs("m") + i64(1) + tags((0, bytes(16)), (3, b"z"))),
    (
        GROUP_KEY,
        i16(3)
        + s("consumer")
        + i32(1)
        + s("range")
        + s("m")
        + i64(-1)
        + i32(2)
        + _member(3, 1)
        + _member(3, 2),
    ),
    (GROUP_KEY, i16(0) + s("consumer") + i32(0) + s(None) + s(None) + i32(0)),
    (
        MEMBER_KEY,
        i16(0)
        + MEMBER_COMMON
        + tags((0, uvarint(1) + i32(1) + ca(1) + cs("range") + cb(b"x") + NO_TAGS + NO_TAGS)),
    ),
    (MEMBER_KEY, i16(0) + MEMBER_COMMON + ca(0) + NO_TAGS),
    (ASSIGNMENT_KEY, i16(0) + i32(9) + i32(8) + i8(0) + TOPIC_PARTITIONS + ca(0) + NO_TAGS),
    (PARTITION_METADATA_KEY, i16(0) + i32(1) + ca(1) + TOPIC_METADATA + NO_TAGS),
    (SHARE_STATE_KEY, i16(0) + PARTITIONS_INFO + ca(0) + TOPIC_INFO + NO_TAGS),
    (
        STREAMS_ASSIGNMENT_KEY,
        i16(0) + i32(5) + i32(4) + i8(0) + TASKS + TASKS + ca(0) + ca(0) + ca(0) + ca(0) + NO_TAGS,
    ),
]

ALL_KEYS: list[RecordKey] = [
    OFFSET_KEY,
    GROUP_KEY,
    RecordKey("unknown", 99, None),
    MEMBER_KEY,
    ASSIGNMENT_KEY,
    PARTITION_METADATA_KEY,
    SHARE_STATE_KEY,
    STREAMS_ASSIGNMENT_KEY,
]


def _key_or_documented_error(raw: bytes) -> RecordKey | None:
    try:
        return decode_key(raw)
    except (TruncatedError, CorruptError) as error:
        assert error.position is None or 0 <= error.position <= len(raw)
        assert error.field
        return None


def _value_or_documented_error(key: RecordKey, raw: bytes) -> object:
    try:
        result = decode_value(key, raw)
    except (TruncatedError, CorruptError) as error:
        assert error.position is None or 0 <= error.position <= len(raw)
        assert error.field
        return None
    assert isinstance(result, RecordValue | UnknownValue)
    return result


@settings(max_examples=500)
@given(st.binary(max_size=64))
def test_random_key_bytes(raw: bytes) -> None:
    _key_or_documented_error(raw)


@given(st.sampled_from(list(range(len(VALID_KEYS)))), st.data())
def test_truncated_and_mutated_keys(index: int, data: st.DataObject) -> None:
    raw = VALID_KEYS[index]
    cut = data.draw(st.integers(0, len(raw)))
    _key_or_documented_error(raw[:cut])
    position = data.draw(st.integers(0, len(raw) - 1))
    mutated = bytearray(raw)
    mutated[position] = data.draw(st.integers(0, 255))
    _key_or_documented_error(bytes(mutated))


@settings(max_examples=500)
@given(st.sampled_from(ALL_KEYS), st.binary(max_size=96))
def test_random_value_bytes(key: RecordKey, raw: bytes) -> None:
    _value_or_documented_error(key, raw)


@settings(max_examples=500)
@given(st.sampled_from(list(range(len(VALID_VALUES)))), st.data())
def test_truncated_and_mutated_values(index: int, data: st.DataObject) -> None:
    key, raw = VALID_VALUES[index]
    cut = data.draw(st.integers(0, len(raw)))
    _value_or_documented_error(key, raw[:cut])
    mutated = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3))):
        mutated[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    _value_or_documented_error(key, bytes(mutated))


def test_full_valid_values_decode() -> None:
    # The corpus above must itself be valid, or the fuzzing proves little.
    for key, raw in VALID_VALUES:
        assert isinstance(decode_value(key, raw), RecordValue)
    for raw in VALID_KEYS:
        assert decode_key(raw).key_type != "unknown"
    assert SUBSCRIPTION_V1 and ASSIGNMENT_V0


@settings(max_examples=300)
@given(st.binary(max_size=80))
def test_random_transaction_log_bytes(raw: bytes) -> None:
    with contextlib.suppress(TruncatedError, CorruptError):
        decode_transaction_key(raw)
    try:
        result = decode_transaction_value(raw)
    except (TruncatedError, CorruptError):
        return
    assert isinstance(result, RecordValue | UnknownValue)
