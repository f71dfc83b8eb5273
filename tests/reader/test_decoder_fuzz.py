"""Fuzzing the decoder: truncated, bit-flipped, spliced and random segments, on both readers.

Whatever the bytes, decoding a segment finishes, yields only records and the decoder's own
documented errors (``TruncatedError``/``CorruptError``, never raised out of the walk), gives
the same records and errors with the C reader as with the Python reference decoders, and
allocates nothing in proportion to a length field: a declared length of 2^31 must cost nothing.
Mutations are also made with every CRC recomputed afterwards, so that they get past the CRC
check to the length and count guards behind it.
"""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from offsets_auditor.errors import CorruptError, DecodeError, TruncatedError
from offsets_auditor.reader.decode import DecodedRecord, decode_segment
from offsets_auditor.reader.options import Backend, Limits
from offsets_auditor.reader.segment import BytesSource
from tests.support.segments import fix_crcs

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _key(group: bytes, topic: bytes, partition: int) -> bytes:
    return (
        struct.pack(">hh", 1, len(group))
        + group
        + struct.pack(">h", len(topic))
        + topic
        + struct.pack(">i", partition)
    )


def _value(offset: int) -> bytes:
    return (
        struct.pack(">hqh", 3, offset, 0)[:10]
        + struct.pack(">i", -1)
        + struct.pack(">hq", 0, 1_700_000_000_000)
    )


def _legacy(magic: int, codec: int, base: int) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(4):
        builder.append(
            base + i,
            timestamp=1_700_000_000_000 + i,
            key=_key(b"g", b"t", i),
            value=_value(i) if i != 2 else None,
        )
    return bytes(builder.build())


def _v2(codec: int, base: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(4):
        builder.append(
            i, timestamp=1_700_000_000_000 + i, key=_key(b"g", b"t", i), value=_value(i), headers=[]
        )
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    return bytes(data)


def _samples() -> list[bytes]:
    samples = [
        _legacy(0, 0, 0) + _legacy(0, 1, 10) + _legacy(1, 2, 20) + _legacy(1, 3, 30),
        _v2(0, 0) + _v2(1, 4) + _v2(2, 8) + _v2(3, 12) + _v2(4, 16),
    ]
    for path in (
        FIXTURES
        / "kafka-0.9.0.1/cleaner-died/kafka-logs/__consumer_offsets-0/00000000000000000000.log",
        FIXTURES
        / "kafka-2.3.0/small-gzip/kafka-logs/__consumer_offsets-2/00000000000000001448.log",
    ):
        data = path.read_bytes()
        ends = [
            i.batch.position + i.batch.size
            for i in decode_segment(BytesSource(data))
            if isinstance(i, DecodedRecord) and i.batch.position + i.batch.size <= 16384
        ]
        samples.append(data[: max(ends)])  # whole entries only
    return samples


SAMPLES = _samples()


def decode_all(data: bytes, window_bytes: int = 4096) -> list[object]:
    """Everything decode_segment yields, with each reader; any exception escaping it fails the
    test, and both readers must yield the same. Small windows put entries right at a window's
    end, where a decoder may read past what it has."""
    results = []
    for backend in Backend:
        items = list(
            decode_segment(
                BytesSource(data),
                file="fuzz.log",
                backend=backend,
                limits=Limits(window_bytes=window_bytes),
            )
        )
        for item in items:
            assert isinstance(item, DecodedRecord | TruncatedError | CorruptError), type(item)
            if not isinstance(item, DecodedRecord):
                assert item.file == "fuzz.log"
                assert item.position is not None and 0 <= item.position <= len(data)
        results.append(items)
    native, python = results
    assert [_comparable(i) for i in native] == [_comparable(i) for i in python]
    return native


def _comparable(item: object) -> object:
    if isinstance(item, DecodeError):
        return (type(item).__name__, item.message, item.field, item.position, item.file)
    assert isinstance(item, DecodedRecord)
    return (*item[:6], None if item.error is None else _comparable(item.error))


def test_samples_decode_cleanly() -> None:
    for sample in SAMPLES:
        items = decode_all(sample)
        assert items and all(isinstance(i, DecodedRecord) for i in items)


@settings(max_examples=300)
@given(sample=st.sampled_from(SAMPLES), cut=st.integers(min_value=0, max_value=16384))
def test_truncated(sample: bytes, cut: int) -> None:
    data = sample[: min(cut, len(sample))]
    items = decode_all(data)
    decoded = [i for i in items if isinstance(i, DecodedRecord)]
    whole = [i for i in decode_all(sample) if isinstance(i, DecodedRecord)]
    # a cut never invents records, and keeps every whole entry before it
    assert len(decoded) <= len(whole)
    assert all(d.batch.position + d.batch.size <= len(data) for d in decoded)


@settings(max_examples=500)
@given(
    sample=st.sampled_from(SAMPLES),
    flips=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=7)),
        min_size=1,
        max_size=8,
    ),
    window=st.sampled_from([18, 61, 100, 4096]),
)
def test_bit_flipped(sample: bytes, flips: list[tuple[int, int]], window: int) -> None:
    data = bytearray(sample)
    for position, bit in flips:
        data[position % len(data)] ^= 1 << bit
    decode_all(bytes(data), window)


@settings(max_examples=500)
@given(
    sample=st.sampled_from(SAMPLES),
    flips=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=7)),
        min_size=1,
        max_size=6,
    ),
    window=st.sampled_from([18, 61, 100, 4096]),
)
def test_bit_flipped_with_crcs_recomputed(
    sample: bytes, flips: list[tuple[int, int]], window: int
) -> None:
    """Past the CRC: lengths, counts, varints and key/value layouts mutated, both readers."""
    data = bytearray(sample)
    for position, bit in flips:
        data[position % len(data)] ^= 1 << bit
    decode_all(fix_crcs(bytes(data)), window)


@settings(max_examples=300)
@given(
    sample=st.sampled_from(SAMPLES),
    at=st.integers(min_value=0),
    value=st.sampled_from([-(2**31), -2, -1, 0, 1, 2, 127, 128, 2**15, 2**31 - 1]),
)
def test_int_fields_overwritten_with_crcs_recomputed(sample: bytes, at: int, value: int) -> None:
    """An int16 or int32 anywhere set to an edge value, CRCs recomputed: both readers agree."""
    data = bytearray(sample)
    position = at % max(len(data) - 4, 1)
    struct.pack_into(">i", data, position, value)
    decode_all(fix_crcs(bytes(data)))
    data = bytearray(sample)
    struct.pack_into(">h", data, position, max(min(value, 2**15 - 1), -(2**15)))
    decode_all(fix_crcs(bytes(data)))


WINDOWS = st.sampled_from([18, 61, 100, 4096])


@settings(max_examples=300)
@given(data=st.binary(max_size=4096), window=WINDOWS)
def test_random_bytes(data: bytes, window: int) -> None:
    decode_all(data, window)


@settings(max_examples=200)
@given(
    a=st.sampled_from(SAMPLES),
    b=st.sampled_from(SAMPLES),
    i=st.integers(min_value=0),
    j=st.integers(min_value=0),
)
def test_spliced(a: bytes, b: bytes, i: int, j: int) -> None:
    decode_all(a[: i % len(a)] + b[j % len(b) :])


HUGE = [2**31 - 1, 2**31 - 64, -2, -(2**31)]


@pytest.mark.parametrize("length", HUGE)
@pytest.mark.parametrize(
    "where",
    [
        "entry size",  # the log overhead's size field
        "legacy key length",
        "legacy value length",
        "v2 recordsCount",
    ],
)
def test_huge_length_fields_allocate_nothing(where: str, length: int) -> None:
    if where == "entry size":
        data = bytearray(_legacy(0, 0, 0))
        struct.pack_into(">i", data, 8, length)
    elif where == "legacy key length":
        data = bytearray(_legacy(0, 0, 0))
        struct.pack_into(">i", data, 18, length)
    elif where == "legacy value length":
        data = bytearray(_legacy(0, 0, 0))
        key_length = struct.unpack_from(">i", data, 18)[0]
        struct.pack_into(">i", data, 22 + key_length, length)
    else:
        data = bytearray(_v2(0, 0))
        struct.pack_into(">i", data, 57, length)
    tracemalloc.start()
    try:
        items = decode_all(bytes(data) * 3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert any(not isinstance(i, DecodedRecord) for i in items)


def test_huge_varint_lengths_inside_a_v2_record_allocate_nothing() -> None:
    """A v2 record whose key length varint says 2^31-1 (CRC recomputed so it is read)."""
    from crc32c import crc32c

    data = bytearray(_v2(0, 0))
    # first record starts at 61: length varint, attributes, timestampDelta, offsetDelta, keyLength
    body = bytearray(data[61:])
    huge = bytes([0xFE, 0xFF, 0xFF, 0xFF, 0x0F])  # zig-zag varint of 2^31-1
    # replace the first record's keyLength (after length(1) attr(1) tsDelta(1) offDelta(1))
    body[4:5] = huge
    data = data[:61] + body
    struct.pack_into(">i", data, 8, len(data) - 12)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    tracemalloc.start()
    try:
        items = decode_all(bytes(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024
    assert any(isinstance(i, TruncatedError | CorruptError) for i in items)
