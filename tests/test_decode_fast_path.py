"""The fast path for classic offset commits (``decode.offset_commit_key``/``offset_commit_value``
and the offset-commit text in ``render``) gives exactly what the schema decoder and the generic
renderer give, or steps aside (``None``) and lets them decide."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offsets_auditor import fs, render
from offsets_auditor.decode import (
    DecodedRecord,
    decode_segment,
    offset_commit_key,
    offset_commit_value,
)
from offsets_auditor.errors import DecodeError
from offsets_auditor.records.log_file import BytesSource
from offsets_auditor.records.model import BatchHeader, Record
from offsets_auditor.schemas import RecordKey, RecordValue, decode_key, decode_value
from tests.conftest import FIXTURES

REAL_SEGMENTS = sorted(FIXTURES.glob("**/__consumer_offsets-*/*.log"))


def generic_key(raw: bytes) -> RecordKey | DecodeError:
    try:
        return decode_key(raw)
    except DecodeError as error:
        return error


def generic_value(key: RecordKey, raw: bytes) -> object:
    try:
        return decode_value(key, raw)
    except DecodeError as error:
        return error


def check_key(raw: bytes) -> RecordKey | None:
    fast = offset_commit_key(raw)
    if fast is not None:
        assert fast == generic_key(raw)
    return fast


def check_value(key: RecordKey, raw: bytes) -> RecordValue | None:
    fast = offset_commit_value(raw)
    if fast is not None:
        assert fast == generic_value(key, raw)
    return fast


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_record_of_real_segments_decodes_as_the_schema_decoder_says(segment: Path) -> None:
    with fs.ReadOnlyFile(segment) as source:
        for item in decode_segment(source, file=str(segment)):
            if isinstance(item, DecodeError) or item.control is not None or item.error:
                continue
            raw_key, raw_value = item.record.key, item.record.value
            assert raw_key is not None
            assert item.key == decode_key(raw_key)
            if raw_value is not None:
                assert item.key is not None
                assert item.value == decode_value(item.key, raw_value)
                if item.key.key_type == "offset_commit":
                    check_value(item.key, raw_value)
            check_key(raw_key)


def test_the_fast_path_takes_the_common_records(cleaner_died: Path) -> None:
    data = (cleaner_died / "kafka-logs/__consumer_offsets-2/00000000000000000000.log").read_bytes()
    taken = 0
    for item in decode_segment(BytesSource(data[:20_000])):
        if isinstance(item, DecodeError):  # the cut at 20,000 bytes
            continue
        assert isinstance(item, DecodedRecord)
        assert item.record.key is not None and item.record.value is not None
        key = check_key(item.record.key)
        assert key is not None
        taken += check_value(key, item.record.value) is not None
    assert taken > 100


# -- generated keys and values -------------------------------------------------------------------


def string(raw: bytes) -> bytes:
    return struct.pack(">h", len(raw)) + raw


texts = st.one_of(
    st.text(max_size=20).map(str.encode),
    st.binary(max_size=20),  # often not UTF-8: the schema decoder replaces as the JDK does
)
tails = st.one_of(st.just(b""), st.binary(min_size=1, max_size=6))


@st.composite
def keys(draw: st.DrawFn) -> bytes:
    version = draw(st.sampled_from([0, 1, 1, 2, 3, -1, 256]))
    raw = struct.pack(">h", version) + string(draw(texts)) + string(draw(texts))
    raw += struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
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


@settings(max_examples=500, deadline=None)
@given(keys())
def test_generated_keys(raw: bytes) -> None:
    check_key(raw)


@settings(max_examples=500, deadline=None)
@given(values(), st.sampled_from([0, 1]))
def test_generated_values_and_their_text(raw: bytes, key_version: int) -> None:
    key = RecordKey(
        "offset_commit", key_version, "g", "t", 0, {"group": "g", "topic": "t", "partition": 0}
    )
    value = check_value(key, raw)
    generic = generic_value(key, raw)
    if isinstance(generic, RecordValue):  # the text for it is the generic text
        header = BatchHeader(
            position=0,
            size=0,
            magic=0,
            base_offset=0,
            last_offset=0,
            codec=0,
            timestamp_type=-1,
            max_timestamp=-1,
            crc=0,
        )
        item = DecodedRecord(None, header, Record(0, -1, b"k", raw, 0), key, generic)
        text = render.record_to_text(item)
        assert text.endswith(f" value: v{generic.version} {render._fields_text(generic.fields)}")
        if value is not None:
            assert render.record_to_text(item._replace(value=value)) == text


def test_common_forms_take_the_fast_path() -> None:
    key = string(b"group") + string(b"topic") + struct.pack(">i", 3)
    assert check_key(struct.pack(">h", 1) + key) is not None
    assert check_key(struct.pack(">h", 0) + key) is not None
    for version, body in [
        (0, struct.pack(">qh", 5, 1) + b"m" + struct.pack(">q", 9)),
        (1, struct.pack(">qh", 5, 0) + struct.pack(">qq", 9, 10)),
        (2, struct.pack(">qh", 5, 0) + struct.pack(">q", 9)),
        (3, struct.pack(">qih", 5, -1, 2) + "é".encode() + struct.pack(">q", 9)),
    ]:
        parsed = offset_commit_key(struct.pack(">h", 1) + key)
        assert parsed is not None
        assert check_value(parsed, struct.pack(">h", version) + body) is not None


# -- the text dump's shortcut --------------------------------------------------------------------


def slow_text(data: bytes, **limits: int) -> list[str]:
    lines = []
    for item in decode_segment(BytesSource(data), file="seg.log", **limits):
        lines.append(str(item) if isinstance(item, DecodeError) else render.record_to_text(item))
    return lines


def fast_text(data: bytes, **limits: int) -> list[str]:
    return [str(item) for item in render.segment_text(BytesSource(data), file="seg.log", **limits)]


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_segment_text_is_the_text_of_every_decoded_record(segment: Path) -> None:
    data = segment.read_bytes()
    assert fast_text(data) == slow_text(data)


def test_segment_text_of_everything_and_damage() -> None:
    from tests.test_fastlane import mixed_segment

    data = mixed_segment()
    assert fast_text(data) == slow_text(data)
    assert fast_text(data, window_bytes=100) == slow_text(data, window_bytes=100)


@settings(max_examples=300, deadline=None)
@given(keys(), st.one_of(st.none(), values()), st.sampled_from([0, 1, 2]))
def test_segment_text_of_generated_records(key: bytes, value: bytes | None, magic: int) -> None:
    from tests.test_fastlane import commit_key, legacy, v2_batch, v2_record

    if magic == 2:
        entry = v2_batch(5, [v2_record(0, key, value), v2_record(1, commit_key(), value)])
    else:
        entry = legacy(5, key, value, magic=magic)
    data = entry + legacy(9, key, value)
    assert fast_text(data) == slow_text(data)
