"""The C text lane (``_speedups.render_offset_commits``) changes nothing in ``dump``'s text.

For every real segment, for synthetic mixes of what the lane takes and what it must leave to
Python, and for mutated bytes (hypothesis), ``render.segment_text`` gives the same lines and the
same located errors, in the same order, with the lane as without it; and so does ``dump``.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from types import ModuleType

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offsets_auditor import fastlane, render
from offsets_auditor.cli.main import main
from offsets_auditor.errors import DecodeError
from offsets_auditor.records.log_file import BytesSource
from tests.conftest import FIXTURES
from tests.test_fastlane import (
    GZIP,
    SEEDS,
    TIMESTAMP,
    commit_key,
    commit_value,
    commits_v2,
    control_batch,
    group_metadata_key,
    group_metadata_value,
    kafka_python_legacy,
    kafka_python_v2,
    legacy,
    mixed_segment,
    mutate,
    mutation,
    v2_batch,
    v2_record,
    varint,
)

REAL_SEGMENTS = sorted(FIXTURES.glob("kafka-*/*/kafka-logs*/__consumer_offsets-*/*.log"))

Item = str | tuple[str, str, str, int | None, str | None]


@pytest.fixture(scope="module")
def speedups() -> ModuleType:
    return pytest.importorskip("offsets_auditor._speedups")


def text(data: bytes, *, accelerate: bool, blocks: bool = False, **limits: int) -> list[Item]:
    items: list[Item] = []
    for item in render.segment_text(
        BytesSource(data), file="seg.log", accelerate=accelerate, blocks=blocks, **limits
    ):
        if isinstance(item, DecodeError):
            items.append((type(item).__name__, item.message, item.field, item.position, item.file))
        else:
            items.append(item)
    return items


def joined(items: list[Item]) -> list[Item]:
    """Blocks of lines split into lines."""
    out: list[Item] = []
    for item in items:
        out.extend(item.split("\n") if isinstance(item, str) else [item])
    return out


def assert_same(data: bytes, **limits: int) -> list[Item]:
    slow = text(data, accelerate=False, **limits)
    assert text(data, accelerate=True, **limits) == slow
    assert joined(text(data, accelerate=True, blocks=True, **limits)) == slow
    return slow


def taken(speedups: ModuleType, data: bytes) -> tuple[int, str]:
    next_rel, lines = speedups.render_offset_commits(data, 0, len(data), 0)
    assert isinstance(lines, str)
    return next_rel, lines


def pure_lines(data: bytes) -> str:
    items = text(data, accelerate=False)
    assert all(isinstance(item, str) for item in items)
    return "".join(f"{item}\n" for item in items)


# -- building entries that test_fastlane's helpers do not make ----------------------------------


def resign_legacy(entry: bytes) -> bytes:
    return entry[:12] + struct.pack(">I", zlib.crc32(entry[16:])) + entry[16:]


def legacy_v1_at(offset: int, timestamp: int, *, attributes: int = 0) -> bytes:
    entry = legacy(offset, commit_key(), commit_value(1), magic=1, attributes=attributes)
    return resign_legacy(entry[:18] + struct.pack(">q", timestamp) + entry[26:])


def resign_v2(batch: bytes, *, base_timestamp: int, max_timestamp: int) -> bytes:
    rest = batch[21:27] + struct.pack(">qq", base_timestamp, max_timestamp) + batch[43:]
    return batch[:17] + struct.pack(">I", crc32c(rest)) + rest


def v2_timed_record(offset_delta: int, timestamp_delta: int, key: bytes, value: bytes) -> bytes:
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta)
    body += varint(len(key)) + key + varint(len(value)) + value + varint(0)
    return varint(len(body)) + body


def raw_key(group: bytes, topic: bytes, version: int = 1) -> bytes:
    return (
        struct.pack(">hh", version, len(group))
        + group
        + struct.pack(">h", len(topic))
        + topic
        + struct.pack(">i", 7)
    )


def raw_value(metadata: bytes) -> bytes:
    return struct.pack(">hqh", 1, 3, len(metadata)) + metadata + struct.pack(">qq", TIMESTAMP, -1)


# -- real segments --------------------------------------------------------------------------------


def test_there_are_real_segments() -> None:
    assert len(REAL_SEGMENTS) > 10


@pytest.mark.parametrize("segment", REAL_SEGMENTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_real_segment_text_is_the_same_with_the_lane(segment: Path, speedups: ModuleType) -> None:
    assert_same(segment.read_bytes())


def test_the_lane_renders_a_whole_090_segment(speedups: ModuleType, cleaner_died: Path) -> None:
    data = (cleaner_died / "kafka-logs/__consumer_offsets-2/00000000000000000000.log").read_bytes()
    next_rel, lines = taken(speedups, data)
    assert next_rel == len(data)
    assert lines.count("\n") == 61_680
    assert lines == pure_lines(data)


# -- synthetic mixes ------------------------------------------------------------------------------


def every_kind() -> bytes:
    """Each thing the lane takes, and each it must leave to Python, with damage in between."""
    parts = [
        legacy(0, commit_key(version=0), commit_value(0)),
        legacy(1, commit_key(), commit_value(1, metadata="meta data")),
        legacy(2, commit_key(), commit_value(2)),
        legacy(3, commit_key(), commit_value(3, leader_epoch=-1)),
        legacy(4, commit_key(), None),
        legacy(5, commit_key(group="grüppe"), commit_value(1)),  # non-ASCII: Python's
        legacy(6, commit_key(topic="it's"), commit_value(1)),  # repr is "it's"
        legacy(7, commit_key(), commit_value(1, metadata="back\\slash")),
        legacy(8, commit_key(), commit_value(1, metadata="tab\there")),
        legacy(9, commit_key(), commit_value(1, metadata='say "hi"')),  # taken: repr '...'
        legacy(10, commit_key(group=""), commit_value(0, offset=-1, metadata="")),
        legacy_v1_at(11, TIMESTAMP),
        legacy_v1_at(12, TIMESTAMP, attributes=0x08),
        legacy_v1_at(13, -1),
        legacy_v1_at(14, -5, attributes=0x08),
        legacy(15, group_metadata_key(), group_metadata_value()),
        kafka_python_legacy(0, GZIP, 16, 3),
        kafka_python_legacy(1, 0, 19, 2),
        legacy(21, commit_key(), commit_value(1), crc=12345),
        legacy(22, commit_key(), commit_value(3) + b"trailing bytes"),
        legacy(23, commit_key(), commit_value(4)),  # v4 (flexible): Python's
        commits_v2(24, 5),
        commits_v2(29, 3, version=1),
        commits_v2(32, 2, version=0),
        commits_v2(34, 2, version=2),
        kafka_python_v2(0, 36, 4, tombstone_at=2),
        kafka_python_v2(GZIP, 40, 3),
        commits_v2(43, 2, attributes=0x10, producer_id=9),
        control_batch(45),
        resign_v2(commits_v2(46, 3, attributes=0x08), base_timestamp=5, max_timestamp=TIMESTAMP),
        resign_v2(commits_v2(49, 2), base_timestamp=-1, max_timestamp=-1),
        v2_batch(
            51,
            [
                v2_timed_record(0, 17, commit_key(), commit_value(3)),
                v2_timed_record(1, -3, commit_key(version=0), commit_value(1)),
            ],
        ),
        v2_batch(53, [v2_record(0, group_metadata_key(), group_metadata_value())]),
        v2_batch(54, [], last_offset_delta=3),
        v2_batch(58, [v2_record(0, commit_key(), commit_value(3), [(b"h", b"v"), (b"n", None)])]),
        v2_batch(59, [v2_record(0, commit_key(), commit_value(3)), v2_record(1, None, None)]),
        v2_batch(61, [v2_record(0, raw_key(b"g", b"caf\xc3\xa9"), commit_value(3))]),
        v2_batch(62, [v2_record(0, raw_key(b"\xff", b"t"), commit_value(3))]),
        legacy(63, raw_key(b"g\x7f", b"t"), commit_value(1)),
        legacy(64, raw_key(b"g", b"t"), raw_value(b"\x00")),
        commits_v2(65, 2, version=3),
        legacy(67, commit_key(partition=-1), commit_value(1, offset=-(2**63))),
        legacy(68, commit_key(), commit_value(1)),
    ]
    data = b"".join(parts)
    return data + legacy(69, commit_key(), commit_value(1))[:30]  # a partial write at the end


@pytest.mark.parametrize("window_bytes", [8 * 1024 * 1024, 1000, 200, 97, 18])
def test_every_kind_is_the_same_with_the_lane(speedups: ModuleType, window_bytes: int) -> None:
    items = assert_same(every_kind(), window_bytes=window_bytes)
    assert any(isinstance(item, tuple) for item in items)  # the damage is reported
    assert any("transactional producerId: 9" in item for item in items if isinstance(item, str))


@pytest.mark.parametrize("max_batch_bytes", [0, 60, 110, 160])
def test_entries_over_the_size_limit_stay_errors(
    speedups: ModuleType, max_batch_bytes: int
) -> None:
    items = assert_same(every_kind(), max_batch_bytes=max_batch_bytes)
    assert any(isinstance(item, tuple) and "limit" in item[1] for item in items)


def test_mixed_segment_is_the_same(speedups: ModuleType) -> None:
    assert_same(mixed_segment())
    assert_same(mixed_segment(), window_bytes=100)


def test_runs_longer_than_a_chunk_keep_file_order(speedups: ModuleType) -> None:
    entries = [
        legacy(i, commit_key(group=f"group-{i % 97}", partition=i % 13), commit_value(1, i))
        for i in range(30_000)
    ]
    entries[12_345] = legacy(12_345, commit_key(), commit_value(1), crc=1)
    entries[20_000] = legacy(20_000, group_metadata_key(), group_metadata_value())
    data = b"".join(entries)
    assert len(data) > 2 * fastlane.TEXT_CHUNK_BYTES
    items = assert_same(data)
    assert len(items) == 30_000  # a line per record, the bad CRC's error in its place
    assert isinstance(items[12_345], tuple) and items[12_345][2] == "crc"
    assert_same(data, window_bytes=300_000)


def test_off_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fastlane.ENV_SWITCH, "0")
    assert fastlane.text_fast_lane() is None


# -- what the lane takes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "takes"),
    [
        (legacy(0, commit_key(), commit_value(1)), True),
        (legacy(0, commit_key(), None, magic=1), True),
        (legacy(0, commit_key(), commit_value(3) + b"xx"), True),
        (commits_v2(0, 3), True),
        (commits_v2(0, 2, attributes=0x10, producer_id=4), True),
        (legacy(0, commit_key(group="é"), commit_value(1)), False),
        (legacy(0, commit_key(topic="a'b"), commit_value(1)), False),
        (legacy(0, commit_key(), commit_value(1, metadata="a\\b")), False),
        (legacy(0, commit_key(), commit_value(1, metadata="a\nb")), False),
        (legacy(0, commit_key(), commit_value(4)), False),
        (legacy(0, commit_key(), commit_value(1), crc=7), False),
        (legacy(0, group_metadata_key(), group_metadata_value()), False),
        (kafka_python_legacy(1, GZIP, 0, 2), False),
        (kafka_python_v2(GZIP, 0, 2), False),
        (control_batch(0), False),
        (commits_v2(0, 3)[:-1], False),  # not whole
    ],
)
def test_what_the_lane_takes(speedups: ModuleType, entry: bytes, takes: bool) -> None:
    next_rel, lines = taken(speedups, entry)
    if takes:
        assert next_rel == len(entry)
        assert lines == pure_lines(entry)
    else:
        assert (next_rel, lines) == (0, "")


def test_positions_and_window_offsets(speedups: ModuleType) -> None:
    first = legacy(0, commit_key(), commit_value(1))
    second = commits_v2(1, 2)
    data = b"junk" + first + second + b"\x00" * 10
    next_rel, lines = speedups.render_offset_commits(data, 4, len(data), 1000)
    assert next_rel == 4 + len(first) + len(second)
    assert lines.startswith("offset: 0 position: 1000 magic: 0 codec: none key: ")
    assert f" position: {1000 + len(first)} magic: 2 codec: none CreateTime: " in lines
    assert lines.count("\n") == 3 and lines.endswith("\n")
    assert speedups.render_offset_commits(data, 4, 4 + len(first) - 1, 0) == (4, "")
    with pytest.raises(ValueError):
        speedups.render_offset_commits(data, 5, 4, 0)


def test_exact_lines(speedups: ModuleType) -> None:
    key = commit_key(group="g", topic="t", partition=3)
    assert taken(speedups, legacy(7, key, commit_value(1, 42, "m")))[1] == (
        "offset: 7 position: 0 magic: 0 codec: none key: offset_commit/v1 group='g' topic='t'"
        f" partition=3 value: v1 offset=42 metadata='m' commit_timestamp={TIMESTAMP}"
        f" expire_timestamp={TIMESTAMP + 1000}\n"
    )
    batch = resign_v2(
        v2_batch(
            5,
            [v2_record(0, key, commit_value(3, 9, "", 2)), v2_record(1, key, None)],
            attributes=0x18,
            producer_id=11,
        ),
        base_timestamp=1,
        max_timestamp=TIMESTAMP,
    )
    head = "position: 0 magic: 2 codec: none LogAppendTime: {} transactional producerId: 11"
    assert taken(speedups, batch)[1] == (
        f"offset: 5 {head.format(TIMESTAMP)} key: offset_commit/v1 group='g' topic='t'"
        f" partition=3 value: v3 offset=9 leader_epoch=2 metadata='' commit_timestamp={TIMESTAMP}\n"
        f"offset: 6 {head.format(TIMESTAMP)} key: offset_commit/v1 group='g' topic='t'"
        " partition=3 value: <tombstone>\n"
    )


# -- the dump command -----------------------------------------------------------------------------


def test_dump_prints_the_same(
    speedups: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    segment = tmp_path / "00000000000000000000.log"
    segment.write_bytes(every_kind() + b"".join(commits_v2(100 + 3 * i, 3) for i in range(3000)))
    assert main(["dump", str(segment)]) == 1
    fast = capsys.readouterr()
    monkeypatch.setenv(fastlane.ENV_SWITCH, "0")
    assert main(["dump", str(segment)]) == 1
    slow = capsys.readouterr()
    assert fast.out == slow.out
    assert fast.err == slow.err
    assert fast.out.endswith("\n") and "\n\n" not in fast.out


# -- hypothesis: mutated bytes --------------------------------------------------------------------

TEXT_SEEDS = [*SEEDS, every_kind()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.sampled_from(range(len(TEXT_SEEDS))),
    other=st.sampled_from(range(len(TEXT_SEEDS))),
    ops=st.lists(mutation, min_size=1, max_size=4),
    window_bytes=st.sampled_from([8 * 1024 * 1024, 97, 1000]),
    start=st.integers(0, 1 << 16),
    span=st.integers(0, 1 << 16),
)
def test_mutated_segments_are_the_same_with_the_lane(
    seed: int, other: int, ops: list[tuple[str, int, int]], window_bytes: int, start: int, span: int
) -> None:
    speedups = pytest.importorskip("offsets_auditor._speedups")
    data = TEXT_SEEDS[seed]
    for op in ops:
        data = mutate(data, TEXT_SEEDS[other], op)
    assert_same(data, window_bytes=window_bytes)
    begin = start % (len(data) + 1)
    end = min(len(data), begin + span)
    next_rel, lines = speedups.render_offset_commits(data, begin, end, 0)
    assert begin <= next_rel <= end
    scanned, _ = speedups.scan_offset_commits(data, begin, next_rel, 0)
    assert scanned == next_rel  # only what the summary lane takes
    assert lines == pure_lines(data[begin:next_rel])
