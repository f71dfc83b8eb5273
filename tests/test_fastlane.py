"""The C fast lane (``offsets_auditor._speedups``) changes nothing but speed.

For every real segment, for synthetic segments mixing everything the lane must refuse with what
it takes, and for mutated real bytes (hypothesis), ``summarize_segment`` gives the same totals
and the same located errors with the lane as without it. The table in
``test_what_the_lane_takes`` says, case by case, which entries the lane takes and why.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from offsets_auditor import fastlane
from offsets_auditor.errors import DecodeError
from offsets_auditor.records.log_file import BytesSource
from offsets_auditor.summary import SegmentTotals, summarize_segment
from tests.conftest import FIXTURES

REAL_SEGMENTS = sorted(FIXTURES.glob("**/__consumer_offsets-*/*.log"))
GZIP = 1
TIMESTAMP = 1_763_700_000_000


@pytest.fixture(scope="module")
def speedups() -> ModuleType:
    """The extension; the tests that need it are skipped only if it was not built."""
    return pytest.importorskip("offsets_auditor._speedups")


# -- what the two paths say ----------------------------------------------------------------------

Outcome = tuple[dict[str, Any], list[tuple[str, str, str, int | None, str | None]]]


def outcome(data: bytes, *, accelerate: bool, **limits: int) -> Outcome:
    items = list(
        summarize_segment(BytesSource(data), file="seg.log", accelerate=accelerate, **limits)
    )
    totals = items.pop()
    assert isinstance(totals, SegmentTotals)
    errors = [
        (type(e).__name__, e.message, e.field, e.position, e.file)
        for e in items
        if isinstance(e, DecodeError)
    ]
    assert len(errors) == len(items)
    return totals.to_json(), errors


def assert_same(data: bytes, **limits: int) -> Outcome:
    fast = outcome(data, accelerate=True, **limits)
    slow = outcome(data, accelerate=False, **limits)
    assert fast == slow
    return fast


# -- building entries ----------------------------------------------------------------------------


def string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def commit_key(group: str = "g", topic: str = "t", partition: int = 0, version: int = 1) -> bytes:
    return struct.pack(">h", version) + string(group) + string(topic) + struct.pack(">i", partition)


def group_metadata_key(group: str = "g") -> bytes:
    return struct.pack(">h", 2) + string(group)


def group_metadata_value() -> bytes:
    """GroupMetadataValue v0 of an Empty consumer group without members."""
    return (
        struct.pack(">h", 0)
        + string("consumer")
        + struct.pack(">i", 3)
        + string("range")
        + string("m")
        + struct.pack(">i", 0)
    )


def commit_value(
    version: int = 1, offset: int = 42, metadata: str = "", leader_epoch: int = 5
) -> bytes:
    ts = struct.pack(">q", TIMESTAMP)
    if version == 4:  # flexible: compact string, tagged fields
        raw = metadata.encode()
        return (
            struct.pack(">hqi", 4, offset, leader_epoch)
            + bytes([len(raw) + 1])
            + raw
            + ts
            + b"\x00"
        )
    head = struct.pack(">hq", version, offset)
    if version == 3:
        head += struct.pack(">i", leader_epoch)
    tail = ts + (struct.pack(">q", TIMESTAMP + 1000) if version == 1 else b"")
    return head + string(metadata) + tail


def legacy(
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    magic: int = 0,
    attributes: int = 0,
    crc: int | None = None,
    raw_key_length: int | None = None,
) -> bytes:
    """One magic 0/1 message (our own packing)."""
    body = bytes([magic, attributes])
    if magic == 1:
        body += struct.pack(">q", TIMESTAMP)
    key_length = (-1 if key is None else len(key)) if raw_key_length is None else raw_key_length
    body += struct.pack(">i", key_length) + (key or b"")
    body += struct.pack(">i", -1 if value is None else len(value)) + (value or b"")
    stored = zlib.crc32(body) if crc is None else crc
    return struct.pack(">qiI", offset, 4 + len(body), stored) + body


def varint(value: int) -> bytes:
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


RecordSpec = tuple[int, bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]


def v2_record(
    delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[bytes, bytes | None]] = (),
) -> bytes:
    body = b"\x00" + varint(0) + varint(delta)
    body += varint(-1) if key is None else varint(len(key)) + key
    body += varint(-1) if value is None else varint(len(value)) + value
    headers = list(headers)
    body += varint(len(headers))
    for hk, hv in headers:
        body += varint(len(hk)) + hk + (varint(-1) if hv is None else varint(len(hv)) + hv)
    return varint(len(body)) + body


def v2_batch(
    base_offset: int,
    records: list[bytes],
    *,
    attributes: int = 0,
    count: int | None = None,
    last_offset_delta: int | None = None,
    producer_id: int = -1,
    crc: int | None = None,
) -> bytes:
    """A v2 batch of already encoded records (our own packing)."""
    rest = struct.pack(
        ">hiqqqhii",
        attributes,
        len(records) - 1 if last_offset_delta is None else last_offset_delta,
        TIMESTAMP,
        TIMESTAMP,
        producer_id,
        0 if producer_id >= 0 else -1,
        -1,
        len(records) if count is None else count,
    ) + b"".join(records)
    stored = crc32c(rest) if crc is None else crc
    return struct.pack(">qiibI", base_offset, 4 + 1 + 4 + len(rest), 0, 2, stored) + rest


def commits_v2(
    base_offset: int, n: int, *, version: int = 3, attributes: int = 0, producer_id: int = -1
) -> bytes:
    records = [
        v2_record(i, commit_key(partition=i), commit_value(version, base_offset + i))
        for i in range(n)
    ]
    return v2_batch(base_offset, records, attributes=attributes, producer_id=producer_id)


def control_batch(base_offset: int, producer_id: int = 9) -> bytes:
    """A COMMIT transaction marker (control + transactional)."""
    marker = v2_record(0, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3))
    return v2_batch(base_offset, [marker], attributes=0x30, producer_id=producer_id)


def kafka_python_legacy(magic: int, codec: int, first_offset: int, n: int) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
    for i in range(n):
        builder.append(
            first_offset + i,
            None if magic == 0 else TIMESTAMP,
            commit_key(partition=i),
            commit_value(1, i),
        )
    data = bytearray(builder.build())
    if codec:  # the wrapper's offset is that of its last inner message (the broker sets it)
        data[0:8] = struct.pack(">q", first_offset + n - 1)
    return bytes(data)


def kafka_python_v2(
    codec: int, base_offset: int, n: int, *, tombstone_at: int | None = None
) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 20)
    for i in range(n):
        value = None if i == tombstone_at else commit_value(3, i)
        builder.append(i, TIMESTAMP, commit_key(partition=i), value, [])
    data = bytearray(builder.build())
    data[0:8] = struct.pack(">q", base_offset)  # baseOffset is outside the CRC
    return bytes(data)


def mixed_segment() -> bytes:
    """Everything a real __consumer_offsets segment can hold, in every format, plus damage."""
    parts = [
        legacy(0, commit_key(version=0), commit_value(0)),
        legacy(1, commit_key(), commit_value(1)),
        legacy(2, commit_key(), None),
        legacy(3, group_metadata_key(), group_metadata_value()),
        legacy(4, commit_key(), commit_value(1), magic=1),
        legacy(5, commit_key(), commit_value(1), magic=1, attributes=0x08),
        kafka_python_legacy(0, GZIP, 6, 3),
        kafka_python_legacy(1, 0, 9, 2),
        kafka_python_legacy(1, GZIP, 11, 2),
        legacy(13, commit_key(), commit_value(1), crc=12345),  # bad CRC in the middle
        legacy(14, commit_key(), commit_value(2)),
        commits_v2(15, 5),
        commits_v2(20, 3, version=1),
        kafka_python_v2(0, 23, 4, tombstone_at=2),
        kafka_python_v2(GZIP, 27, 3),
        commits_v2(30, 2, attributes=0x10, producer_id=9),
        control_batch(32),
        v2_batch(33, [v2_record(0, group_metadata_key(), group_metadata_value())]),
        v2_batch(34, [], last_offset_delta=3),  # emptied by the cleaner
        v2_batch(38, [v2_record(0, commit_key(), commit_value(4))]),
        v2_batch(39, [v2_record(0, commit_key(), commit_value(3), [(b"h", b"v"), (b"n", None)])]),
        commits_v2(40, 2, version=3),
        legacy(42, commit_key(), commit_value(1)),
    ]
    data = b"".join(parts)
    return data + legacy(43, commit_key(), commit_value(1))[:30]  # a partial write at the end


# -- real segments -------------------------------------------------------------------------------


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_real_segment_totals_are_the_same_with_the_lane(
    speedups: ModuleType, segment: Path
) -> None:
    assert_same(segment.read_bytes())


def test_the_lane_takes_a_whole_090_segment(speedups: ModuleType, cleaner_died: Path) -> None:
    data = (cleaner_died / "kafka-logs/__consumer_offsets-2/00000000000000000000.log").read_bytes()
    next_rel, totals = speedups.scan_offset_commits(memoryview(data), 0, len(data), 0)
    assert next_rel == len(data)
    assert totals == {
        "batches": 61_680,
        "records": 61_680,
        "tombstones": 0,
        "transactional_records": 0,
        "valid_bytes": len(data),
        "first_offset": 0,
        "last_offset": 61_679,
        "records_by_key": {"offset_commit/v1": 61_680},
        "values_by_version": {"offset_commit/v1:v1": 61_680},
        "codecs": {"none": 61_680},
        "magics": {"0": 61_680},
    }


# -- synthetic segments --------------------------------------------------------------------------


def test_mixed_segment_is_the_same_with_the_lane(speedups: ModuleType) -> None:
    totals, errors = assert_same(mixed_segment())
    assert [kind for kind, *_ in errors] == ["CorruptError", "TruncatedError"]
    # magic 0: 4 plain + gzip wrapper + 2 plain (the bad CRC is an error, not a batch);
    # magic 1: 2 ours + 2 kafka-python + gzip wrapper; magic 2: 11 batches (control included)
    assert totals["magics"] == {"0": 7, "1": 5, "2": 11}
    assert sum(totals["control_records"].values()) == 1


@pytest.mark.parametrize("window_bytes", [17, 18, 64, 100, 333, 1024, 4096])
def test_entries_across_window_edges(speedups: ModuleType, window_bytes: int) -> None:
    assert_same(mixed_segment(), window_bytes=window_bytes)


@pytest.mark.parametrize("max_batch_bytes", [30, 100, 150, 250])
def test_entries_over_the_size_limit_stay_errors(
    speedups: ModuleType, max_batch_bytes: int
) -> None:
    _, errors = assert_same(mixed_segment(), max_batch_bytes=max_batch_bytes)
    assert any("larger than the" in message for _, message, *_ in errors)


def test_off_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fastlane.ENV_SWITCH, "0")
    assert fastlane.summary_fast_lane() is None


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


# name, entry, taken by the lane? (the Python decoder takes every entry the lane does not)
CASES: list[tuple[str, Callable[[], bytes], bool]] = [
    ("v0 commit, key v1 value v1", lambda: legacy(7, commit_key(), commit_value(1)), True),
    ("v0 commit, key v0 value v0", lambda: legacy(7, commit_key(version=0), commit_value(0)), True),
    ("v0 commit, value v2", lambda: legacy(7, commit_key(), commit_value(2)), True),
    ("v0 commit, value v3", lambda: legacy(7, commit_key(), commit_value(3)), True),
    (
        "v0 commit, metadata",
        lambda: legacy(7, commit_key(), commit_value(1, metadata="m" * 300)),
        True,
    ),
    ("v0 tombstone", lambda: legacy(7, commit_key(), None), True),
    ("v1 message (timestamp)", lambda: legacy(7, commit_key(), commit_value(1), magic=1), True),
    (
        "v1 LogAppendTime",
        lambda: legacy(7, commit_key(), commit_value(1), magic=1, attributes=8),
        True,
    ),
    (
        "value with trailing bytes (ignored, as Kafka does)",
        lambda: legacy(7, commit_key(), commit_value(1) + b"xx"),
        True,
    ),
    ("value v4 (flexible)", lambda: legacy(7, commit_key(), commit_value(4)), False),
    ("value version -1", lambda: legacy(7, commit_key(), struct.pack(">h", -1)), False),
    ("value of 1 byte", lambda: legacy(7, commit_key(), b"\x00"), False),
    ("value v1 one byte short", lambda: legacy(7, commit_key(), commit_value(1)[:-1]), False),
    (
        "value v3 metadata length -1",
        lambda: legacy(7, commit_key(), struct.pack(">hqih", 3, 1, 0, -1) + bytes(8)),
        False,
    ),
    (
        "group metadata key (v2)",
        lambda: legacy(7, group_metadata_key(), group_metadata_value()),
        False,
    ),
    (
        "key version 3",
        lambda: legacy(7, struct.pack(">h", 3) + commit_key()[2:], commit_value(1)),
        False,
    ),
    ("key with a trailing byte", lambda: legacy(7, commit_key() + b"\x00", commit_value(1)), False),
    ("key one byte short", lambda: legacy(7, commit_key()[:-1], commit_value(1)), False),
    (
        "key group length -1",
        lambda: legacy(7, struct.pack(">hh", 1, -1) + string("t") + bytes(4), commit_value(1)),
        False,
    ),
    ("null key", lambda: legacy(7, None, commit_value(1)), False),
    ("key length -2", lambda: legacy(7, b"", commit_value(1), raw_key_length=-2), False),
    ("bad CRC-32", lambda: legacy(7, commit_key(), commit_value(1), crc=1), False),
    ("gzip wrapper", lambda: kafka_python_legacy(0, GZIP, 7, 2), False),
    (
        "v1 message below the v1 overhead",
        lambda: struct.pack(">qi", 7, 14) + _crc_body(bytes([1, 0]) + bytes(8)),
        False,
    ),
    ("magic 3", lambda: struct.pack(">qiI", 7, 20, 0) + bytes([3]) + bytes(15), False),
    ("v2 batch of commits", lambda: commits_v2(7, 5), True),
    ("v2 batch, value v1", lambda: commits_v2(7, 2, version=1), True),
    ("v2 batch, kafka-python, tombstone", lambda: kafka_python_v2(0, 7, 3, tombstone_at=1), True),
    ("v2 transactional commits", lambda: commits_v2(7, 2, attributes=0x10, producer_id=4), True),
    ("v2 delete horizon set", lambda: commits_v2(7, 2, attributes=0x40), True),
    ("v2 empty batch", lambda: v2_batch(7, [], last_offset_delta=4), True),
    (
        "v2 record with headers",
        lambda: v2_batch(7, [v2_record(0, commit_key(), None, [(b"a", b"b"), (b"c", None)])]),
        True,
    ),
    (
        "v2 value length -2 reads as null",
        lambda: v2_batch(7, [_raw_record(commit_key(), varint(-2))]),
        True,
    ),
    ("v2 gzip", lambda: kafka_python_v2(GZIP, 7, 2), False),
    ("v2 control batch", lambda: control_batch(7), False),
    (
        "v2 bad CRC-32C",
        lambda: v2_batch(7, [v2_record(0, commit_key(), commit_value(3))], crc=3),
        False,
    ),
    (
        "v2 group metadata record",
        lambda: v2_batch(7, [v2_record(0, group_metadata_key(), group_metadata_value())]),
        False,
    ),
    ("v2 null key", lambda: v2_batch(7, [v2_record(0, None, commit_value(3))]), False),
    (
        "v2 one bad record of three",
        lambda: v2_batch(
            7, [v2_record(i, commit_key(), commit_value(3 if i != 1 else 4)) for i in range(3)]
        ),
        False,
    ),
    (
        "v2 recordsCount too high",
        lambda: v2_batch(7, [v2_record(0, commit_key(), None)], count=2),
        False,
    ),
    (
        "v2 recordsCount too low",
        lambda: v2_batch(7, [v2_record(i, commit_key(), None) for i in range(2)], count=1),
        False,
    ),
    ("v2 recordsCount -1", lambda: v2_batch(7, [], count=-1), False),
    ("v2 recordsCount beyond the bytes", lambda: v2_batch(7, [], count=1000), False),
    (
        "v2 negative header key",
        lambda: v2_batch(
            7, [_raw_record(commit_key(), varint(-1), b"\x02" + varint(-1) + varint(-1))]
        ),
        False,
    ),
    (
        "v2 record length off by one",
        lambda: v2_batch(7, [_raw_record(commit_key(), varint(-1), extra=b"\x00")]),
        False,
    ),
    ("v2 varint of 6 bytes", lambda: v2_batch(7, [b"\x80\x80\x80\x80\x80\x00"]), False),
    (
        "v2 offset overflows int64",
        lambda: v2_batch(2**63 - 1, [v2_record(5, commit_key(), None)]),
        False,
    ),
    ("v2 header only (61 bytes)", lambda: v2_batch(7, [], count=0), True),
    (
        "v2 entry smaller than the batch header",
        lambda: struct.pack(">qiib", 7, 40, 0, 2) + bytes(35),
        False,
    ),
]


def _crc_body(body: bytes) -> bytes:
    return struct.pack(">I", zlib.crc32(body)) + body


def _raw_record(
    key: bytes, value_part: bytes, headers_part: bytes = b"\x00", extra: bytes = b""
) -> bytes:
    """A v2 record with its value length and headers given as raw bytes."""
    body = b"\x00\x00\x00" + varint(len(key)) + key + value_part + headers_part
    return varint(len(body) + len(extra)) + body + extra


@pytest.mark.parametrize(("name", "build", "taken"), CASES, ids=[c[0] for c in CASES])
def test_what_the_lane_takes(
    speedups: ModuleType, name: str, build: Callable[[], bytes], taken: bool
) -> None:
    entry = build()
    before, after = legacy(0, commit_key(), commit_value(1)), commits_v2(100, 2)
    data = before + entry + after
    next_rel, totals = speedups.scan_offset_commits(memoryview(data), len(before), len(data), 1000)
    assert next_rel == (len(data) if taken else len(before))
    assert totals["valid_bytes"] == 1000 + next_rel - len(before)
    assert_same(data)
    assert_same(data, window_bytes=len(before) + 20)


def test_totals_of_a_run(speedups: ModuleType) -> None:
    data = (
        legacy(10, commit_key(version=0), commit_value(0))
        + legacy(11, commit_key(), None, magic=1)
        + commits_v2(12, 3, version=3, attributes=0x10, producer_id=1)
        + v2_batch(15, [], last_offset_delta=0)
        + kafka_python_v2(0, 16, 2, tombstone_at=0)
    )
    next_rel, totals = speedups.scan_offset_commits(data, 0, len(data), 500)
    assert next_rel == len(data)
    assert totals == {
        "batches": 5,
        "records": 7,
        "tombstones": 2,
        "transactional_records": 3,
        "valid_bytes": 500 + len(data),
        "first_offset": 10,
        "last_offset": 17,
        "records_by_key": {"offset_commit/v0": 1, "offset_commit/v1": 6},
        "values_by_version": {"offset_commit/v0:v0": 1, "offset_commit/v1:v3": 4},
        "codecs": {"none": 5},
        "magics": {"0": 1, "1": 1, "2": 3},
    }
    assert set(totals) == set(fastlane.totals_keys())


def test_nothing_taken(speedups: ModuleType) -> None:
    data = control_batch(0)
    assert speedups.scan_offset_commits(data, 0, len(data), 77) == (
        0,
        {
            "batches": 0,
            "records": 0,
            "tombstones": 0,
            "transactional_records": 0,
            "valid_bytes": 77,
            "first_offset": None,
            "last_offset": None,
            "records_by_key": {},
            "values_by_version": {},
            "codecs": {},
            "magics": {},
        },
    )


def test_stops_at_end_and_never_reads_past_it(speedups: ModuleType) -> None:
    one = legacy(0, commit_key(), commit_value(1))
    data = one * 3
    assert speedups.scan_offset_commits(data, 0, len(data) - 1, 0)[0] == 2 * len(one)
    assert speedups.scan_offset_commits(data, len(one), 2 * len(one), 0)[0] == 2 * len(one)
    assert speedups.scan_offset_commits(data, 0, 17, 0)[0] == 0
    assert speedups.scan_offset_commits(data, len(data), len(data), 0)[0] == len(data)
    huge = struct.pack(">qi", 0, 2**31 - 1) + bytes(20)
    assert speedups.scan_offset_commits(huge, 0, len(huge), 0)[0] == 0
    assert speedups.scan_offset_commits(one + huge, 0, 10**9, 0)[0] == len(one)
    with pytest.raises(ValueError):
        speedups.scan_offset_commits(data, 5, 4, 0)
    with pytest.raises(ValueError):
        speedups.scan_offset_commits(data, -1, 4, 0)


# -- a short v2 entry at the end of the window ----------------------------------------------


def test_short_v2_entry_at_the_end_is_corrupt_not_a_crash() -> None:
    """A magic-2 entry shorter than the 61-byte header, at the end of the window: reported as
    corrupt (it used to raise struct.error)."""
    data = legacy(0, commit_key(), commit_value(1)) + struct.pack(">qiib", 1, 18, 0, 2) + bytes(13)
    _, errors = outcome(data, accelerate=False)
    assert [kind for kind, *_ in errors] == ["CorruptError"]


# -- hypothesis: mutated real bytes --------------------------------------------------------------


def _seed_segments() -> list[bytes]:
    seeds = [mixed_segment()]
    wanted = [
        "kafka-0.9.0.1/cleaner-died/kafka-logs/__consumer_offsets-0/00000000000000000000.log",
        "kafka-0.9.0.1/cleaner-died/kafka-logs/__consumer_offsets-2/00000000000000000000.log",
        "kafka-2.3.0/multi-pass/kafka-logs/__consumer_offsets-1/00000000000000000000.log",
        "kafka-2.3.0/small-gzip/kafka-logs/__consumer_offsets-2/00000000000000001448.log",
    ]
    for name in wanted:
        path = FIXTURES / name
        if path.exists():
            seeds.append(path.read_bytes()[:6000])
    return seeds


SEEDS = _seed_segments()

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 1 << 20), st.integers(0, 7)),
    st.tuples(st.just("truncate"), st.integers(0, 1 << 20), st.just(0)),
    st.tuples(st.just("splice"), st.integers(0, 1 << 20), st.integers(0, 1 << 20)),
    st.tuples(st.just("int32"), st.integers(0, 1 << 20), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just("byte"), st.integers(0, 1 << 20), st.integers(0, 255)),
)


def mutate(data: bytes, other: bytes, op: tuple[str, int, int]) -> bytes:
    kind, at, arg = op
    if not data:
        return other[:at]
    at %= len(data)
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ (1 << arg)]) + data[at + 1 :]
    if kind == "truncate":
        return data[:at]
    if kind == "splice":
        return data[:at] + other[arg % max(len(other), 1) :]
    if kind == "int32":
        return data[:at] + struct.pack(">i", arg) + data[at + 4 :]
    return data[:at] + bytes([arg]) + data[at + 1 :]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(range(len(SEEDS))),
    other=st.sampled_from(range(len(SEEDS))),
    ops=st.lists(mutation, min_size=1, max_size=4),
    window_bytes=st.sampled_from([8 * 1024 * 1024, 97, 1000]),
    start=st.integers(0, 1 << 16),
    span=st.integers(0, 1 << 16),
)
def test_mutated_segments_are_the_same_with_the_lane(
    seed: int, other: int, ops: list[tuple[str, int, int]], window_bytes: int, start: int, span: int
) -> None:
    speedups = pytest.importorskip("offsets_auditor._speedups")
    data = SEEDS[seed]
    for op in ops:
        data = mutate(data, SEEDS[other], op)
    slow = outcome(data, accelerate=False, window_bytes=window_bytes)
    assert outcome(data, accelerate=True, window_bytes=window_bytes) == slow
    begin = start % (len(data) + 1)
    end = min(len(data), begin + span)
    next_rel, totals = speedups.scan_offset_commits(data, begin, end, 0)
    assert begin <= next_rel <= end
    assert totals["valid_bytes"] == next_rel - begin
