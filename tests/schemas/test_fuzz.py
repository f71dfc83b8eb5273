"""Random and truncated bytes: decode_key / decode_value fail only with the documented errors."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor.errors import CorruptError, TruncatedError
from offsets_auditor.schemas import RecordKey, RecordValue, UnknownValue, decode_key, decode_value

from .test_classic import ASSIGNMENT_V0, SUBSCRIPTION_V1, _member
from .wire import cs, i16, i32, i64, s, tags

VALID_KEYS = [
    i16(0) + s("g") + s("t") + i32(1),
    i16(1) + s("group") + s("topic") + i32(9),
    i16(2) + s("usercenter"),
]

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
]

ALL_KEYS: list[RecordKey] = [OFFSET_KEY, GROUP_KEY, RecordKey("unknown", 99, None)]


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
