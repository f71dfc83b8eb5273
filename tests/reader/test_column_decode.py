"""What the reader decodes into columns is what the schemas decode from the same bytes.

``decode.RowDecoder`` builds an OffsetCommitKey/GroupMetadataKey or OffsetCommitValue straight
from the columns when the reader took it (``KeyStatus.OK``, ``ValueStatus.OK``); everything
else goes to ``schemas.decode_key``/``decode_value``. For every record of every real segment,
and for generated keys and values (often malformed, often not UTF-8), both must give the same
key, value and error. The dump's text, made from the columns for offset commits, is the text
``render.record_to_text`` gives for the decoded record.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor.errors import DecodeError
from offsets_auditor.reader import render
from offsets_auditor.reader.decode import DecodedRecord, decode_record, decode_segment
from offsets_auditor.reader.options import Backend, Limits
from offsets_auditor.reader.segment import BytesSource
from tests.conftest import FIXTURES
from tests.support.segments import (
    TIMESTAMP,
    commit_key,
    commit_value,
    legacy,
    mixed_segment,
    v2_batch,
    v2_record,
)

REAL_SEGMENTS = sorted(FIXTURES.glob("**/__consumer_offsets-*/*.log"))


def records(data: bytes, **limits: int) -> list[DecodedRecord | DecodeError]:
    return list(decode_segment(BytesSource(data), file="seg.log", limits=Limits(**limits)))


def assert_columns_decode_as_the_schemas(items: list[DecodedRecord | DecodeError]) -> int:
    """Each record as the schemas decode its raw key and value; returns how many were built
    from the columns (key decoded, not a control record)."""
    checked = 0
    for item in items:
        if isinstance(item, DecodeError):
            continue
        reference = decode_record(item.batch, item.record, item.file)
        assert item.key == reference.key
        assert item.value == reference.value
        assert item.control == reference.control
        assert (item.error is None) == (reference.error is None)
        if item.error is not None and reference.error is not None:
            assert (item.error.message, item.error.field) == (
                reference.error.message,
                reference.error.field,
            )
        checked += item.key is not None and item.key.key_type == "offset_commit"
    return checked


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_record_of_real_segments_decodes_as_the_schemas_say(segment: Path) -> None:
    assert_columns_decode_as_the_schemas(records(segment.read_bytes()))


def test_the_columns_hold_the_common_records(cleaner_died: Path) -> None:
    data = (cleaner_died / "kafka-logs/__consumer_offsets-2/00000000000000000000.log").read_bytes()
    assert assert_columns_decode_as_the_schemas(records(data)) == 61_680


# -- generated keys and values -------------------------------------------------------------------


def string(raw: bytes) -> bytes:
    return struct.pack(">h", len(raw)) + raw


texts = st.one_of(
    st.text(max_size=20).map(str.encode),
    st.binary(max_size=20),  # often not UTF-8: the schemas replace as the JDK does
)
tails = st.one_of(st.just(b""), st.binary(min_size=1, max_size=6))


@st.composite
def keys(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([0, 1, 1, 2, 3, -1, 256]))
    raw = struct.pack(">h", version) + string(draw(texts))
    if version != 2 or draw(st.booleans()):
        raw += string(draw(texts)) + struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
    cut = draw(st.integers(0, len(raw)))
    return draw(st.sampled_from([raw, raw + draw(tails), raw[:cut]]))


@st.composite
def values(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([0, 1, 2, 3, 3, 1, 4, -1, 5, 259]))
    int64 = st.integers(-(2**63), 2**63 - 1)
    raw = struct.pack(">hq", version, draw(int64))
    if version == 3 or draw(st.booleans()):
        raw += struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
    metadata = draw(texts)
    length = draw(st.sampled_from([len(metadata), len(metadata), -1, len(metadata) + 3]))
    raw += struct.pack(">h", length) + metadata
    raw += struct.pack(">qq", draw(int64), draw(int64))
    cut = draw(st.integers(0, len(raw)))
    return draw(st.sampled_from([raw, raw + draw(tails), raw[:cut]]))


def generated_segment(key: bytes, value: bytes | None, magic: int) -> bytes:
    if magic == 2:
        entry = v2_batch(5, [v2_record(0, key, value), v2_record(1, commit_key(), value)])
    else:
        entry = legacy(5, key, value, magic=magic)
    return entry + legacy(9, key, value)


@settings(max_examples=400)
@given(keys(), st.one_of(st.none(), values()), st.sampled_from([0, 1, 2]))
def test_generated_records_decode_as_the_schemas_say(
    key: bytes, value: bytes | None, magic: int
) -> None:
    data = generated_segment(key, value, magic)
    for backend in Backend:
        items = list(decode_segment(BytesSource(data), file="seg.log", backend=backend))
        assert_columns_decode_as_the_schemas(items)


# -- the text dump -------------------------------------------------------------------------------


def record_text(data: bytes, **limits: int) -> list[str]:
    return [
        str(item) if isinstance(item, DecodeError) else render.record_to_text(item)
        for item in records(data, **limits)
    ]


def column_text(data: bytes, **limits: int) -> list[str]:
    return [
        str(item)
        for item in render.segment_text(BytesSource(data), file="seg.log", limits=Limits(**limits))
    ]


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_segment_text_is_the_text_of_every_decoded_record(segment: Path) -> None:
    data = segment.read_bytes()
    assert column_text(data) == record_text(data)


def test_segment_text_of_everything_and_damage() -> None:
    data = mixed_segment()
    assert column_text(data) == record_text(data)
    assert column_text(data, window_bytes=100) == record_text(data, window_bytes=100)


@settings(max_examples=300)
@given(keys(), st.one_of(st.none(), values()), st.sampled_from([0, 1, 2]))
def test_segment_text_of_generated_records(key: bytes, value: bytes | None, magic: int) -> None:
    data = generated_segment(key, value, magic)
    assert column_text(data) == record_text(data)


def test_exact_lines() -> None:
    key = commit_key(group="g", topic="t", partition=3)
    assert column_text(legacy(7, key, commit_value(1, 42, "m"))) == [
        "offset: 7 position: 0 magic: 0 codec: none key: offset_commit/v1 group='g' topic='t'"
        f" partition=3 value: v1 offset=42 metadata='m' commit_timestamp={TIMESTAMP}"
        f" expire_timestamp={TIMESTAMP + 1000}"
    ]
    batch = v2_batch(
        5,
        [v2_record(0, key, commit_value(3, 9, "", 2)), v2_record(1, key, None)],
        attributes=0x18,
        producer_id=11,
    )
    head = "position: 0 magic: 2 codec: none LogAppendTime: {} transactional producerId: 11"
    assert column_text(batch) == [
        f"offset: 5 {head.format(TIMESTAMP)} key: offset_commit/v1 group='g' topic='t'"
        f" partition=3 value: v3 offset=9 leader_epoch=2 metadata='' commit_timestamp={TIMESTAMP}",
        f"offset: 6 {head.format(TIMESTAMP)} key: offset_commit/v1 group='g' topic='t'"
        " partition=3 value: <tombstone>",
    ]
