"""Layout detection for values whose layout changed without a version bump: bytes written in the
3.7 layout (A:3.7.0 JSON) must decode as "3.7" and bytes in the 3.8+ layout as "3.8+", for any
field values (property-based: hypothesis searches for ambiguous encodings)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from offsets_auditor.errors import DecodeError
from offsets_auditor.schemas import RecordValue, coordinator_records, decode_key, decode_value
from offsets_auditor.schemas.message import read_message
from offsets_auditor.schemas.primitives import Reader

from .wire import NO_TAGS, ca, cb, cs, i8, i16, i32, kafka_uuid, s

epochs = st.integers(-(2**31), 2**31 - 1)
small_text = st.text(max_size=5)
uuids = st.binary(min_size=16, max_size=16)
partitions = st.lists(st.integers(-(2**31), 2**31 - 1), max_size=3)
topic_partitions = st.lists(st.tuples(uuids, partitions), max_size=3)


def _encode_topic_partitions(items: list[tuple[bytes, list[int]]]) -> bytes:
    # []{TopicId uuid, Partitions []int32} + tagged fields per struct
    out = ca(len(items))
    for topic_id, parts in items:
        out += topic_id + ca(len(parts)) + b"".join(i32(p) for p in parts) + NO_TAGS
    return out


def _decoded(items: list[tuple[bytes, list[int]]]) -> list[dict[str, object]]:
    return [{"topic_id": kafka_uuid(t), "partitions": p} for t, p in items]


def _decode(record_type: int, key_strings: tuple[str, ...], raw: bytes) -> RecordValue:
    key = decode_key(i16(record_type) + b"".join(s(x) for x in key_strings))
    value = decode_value(key, raw)
    assert isinstance(value, RecordValue)
    return value


# Found by hypothesis: error 1, no topics, assignor version -1 and empty metadata read in the
# 3.8+ layout too (valid in both: the newest layout first, see test_type4_layouts).
@example(error=1, tps=[], mv=-1, md=b"")
@settings(max_examples=300)
@given(st.integers(-128, 127), topic_partitions, st.integers(-(2**15), 2**15 - 1), st.binary())
def test_type7_37_layout(
    error: int, tps: list[tuple[bytes, list[int]]], mv: int, md: bytes
) -> None:
    raw = i16(0) + i8(error) + _encode_topic_partitions(tps) + i16(mv) + cb(md) + NO_TAGS
    value = _decode(7, ("g", "m"), raw)
    if _fits_newest(7, raw):
        assert value.layout == "3.8+"  # ambiguous bytes: newest layout first
        return
    assert value.layout == "3.7"
    assert value.fields["topic_partitions"] == _decoded(tps)


@settings(max_examples=300)
@given(topic_partitions)
def test_type7_38_layout(tps: list[tuple[bytes, list[int]]]) -> None:
    value = _decode(7, ("g", "m"), i16(0) + _encode_topic_partitions(tps) + NO_TAGS)
    assert value.layout == "3.8+"
    assert value.fields == {"topic_partitions": _decoded(tps)}


@settings(max_examples=300)
@given(epochs, epochs, epochs, topic_partitions, topic_partitions, st.integers(-128, 127))
def test_type8_37_layout(
    member: int,
    previous: int,
    target: int,
    assigned: list[tuple[bytes, list[int]]],
    pending: list[tuple[bytes, list[int]]],
    error: int,
) -> None:
    raw = (
        i16(0) + i32(member) + i32(previous) + i32(target)
        + _encode_topic_partitions(assigned) + _encode_topic_partitions(pending) + ca(0)
        + i8(error) + i16(0) + cb(b"") + NO_TAGS
    )  # fmt: skip
    value = _decode(8, ("g", "m"), raw)
    if _fits_newest(8, raw):
        assert value.layout == "3.8+"  # ambiguous bytes: newest layout first
        return
    assert value.layout == "3.7"
    assert value.fields["target_member_epoch"] == target


@settings(max_examples=300)
@given(epochs, epochs, st.integers(-128, 127), topic_partitions, topic_partitions)
def test_type8_38_layout(
    member: int,
    previous: int,
    state: int,
    assigned: list[tuple[bytes, list[int]]],
    pending: list[tuple[bytes, list[int]]],
) -> None:
    raw = i16(0) + i32(member) + i32(previous) + i8(state)
    raw += _encode_topic_partitions(assigned) + _encode_topic_partitions(pending) + NO_TAGS
    value = _decode(8, ("g", "m"), raw)
    assert value.layout == "3.8+"
    assert value.fields["state"] == state
    assert value.fields["assigned_partitions"] == _decoded(assigned)


def _encode_topic_metadata(
    items: list[tuple[bytes, str, int, list[tuple[int, list[str]]]]],
) -> bytes:
    out = ca(len(items))
    for topic_id, name, count, partition_metadata in items:
        out += topic_id + cs(name) + i32(count) + ca(len(partition_metadata))
        for partition, racks in partition_metadata:
            out += i32(partition) + ca(len(racks)) + b"".join(cs(r) for r in racks) + NO_TAGS
        out += NO_TAGS
    return out


topic_metadata = st.lists(
    st.tuples(
        uuids,
        small_text,
        st.integers(0, 1000),
        st.lists(st.tuples(st.integers(0, 1000), st.lists(small_text, max_size=2)), max_size=2),
    ),
    max_size=2,
)


def _fits_newest(record_type: int, raw: bytes) -> bool:
    """Whether ``raw`` (a value, version included) decodes to its last byte in the type's
    newest layout alone."""
    spec = coordinator_records.RECORD_TYPES[record_type]
    reader = Reader(raw)
    version = reader.int16("version")
    try:
        read_message(reader, spec.layouts[0].value, version)
        reader.expect_end(spec.layouts[0].value.name)
    except DecodeError:
        return False
    return True


# Found by hypothesis: a 3.7 value whose epoch's first byte (0x03) reads as a 3.8+ compact
# array of two topics, which the rest of the bytes complete. Such bytes are valid in both
# layouts: no decoder can tell them apart without the broker's version, and the decoder's rule
# (the newest layout that consumes every byte) gives 3.8+.
@example(
    epoch=50331648,
    topics=[(b"\x00" * 12 + b"\x07\x00\x00\x00", "\x80", 0, []), (b"\x00" * 16, "", 0, [])],
)
@settings(max_examples=300)
@given(epochs, topic_metadata)
def test_type4_layouts(
    epoch: int, topics: list[tuple[bytes, str, int, list[tuple[int, list[str]]]]]
) -> None:
    raw_37 = i16(0) + i32(epoch) + _encode_topic_metadata(topics) + NO_TAGS
    old = _decode(4, ("g",), raw_37)
    if _fits_newest(4, raw_37):
        assert old.layout == "3.8+"  # ambiguous bytes: newest layout first
        return
    assert old.layout == "3.7"
    assert old.fields["epoch"] == epoch
    new = _decode(4, ("g",), i16(0) + _encode_topic_metadata(topics) + NO_TAGS)
    assert new.layout == "3.8+"
    assert len(new.fields["topics"]) == len(topics)  # type: ignore[arg-type]
